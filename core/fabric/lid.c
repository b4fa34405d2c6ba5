/* SPDX-License-Identifier: BSD-2-Clause */
/* lid.c - the LID manager: decides the LID range of every end port of a generation
 * (guid2lid entry, else a valid LID already on the port, else the lowest free range) and
 * reads/writes OpenSM's guid2lid file, so LIDs stay put across sweeps, restarts and SMs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fabric/lid.h"
#include "base/file_read.h"
#include "base/log.h"

G_DEFINE_QUARK(ibsm-lid-error-quark, lid_error)

#define LID_SPACE      0xC000u      /* LIDs 0 .. 0xBFFF */
#define OWNER_FREE     UINT32_MAX
#define OWNER_RESERVED 0x80000000u  /* | index of the guid2lid entry of an absent GUID */

enum lid_source { SRC_NONE, SRC_GUID2LID, SRC_KEPT, SRC_NEW };

/* One guid2lid line. */
struct g2l_entry {
	uint64_t guid;
	uint16_t min, max;
	uint32_t line;
};

struct lid_ctx {
	struct fabric *f;
	const struct lid_opts *o;
	uint32_t limit;            /* highest usable LID */
	uint32_t *owner;           /* [LID_SPACE]: port id, OWNER_RESERVED | entry, OWNER_FREE */
	uint16_t *base;            /* [n_ports]: base LID chosen, 0 = none yet */
	uint8_t *lmc;              /* [n_ports]: LMC of the end port (log2 of its LID count) */
	uint8_t *src;              /* [n_ports]: enum lid_source */
	uint32_t *order;           /* end ports: the SM's port first, then by port id */
	uint32_t n_order;
	const struct g2l_entry *g2l;
	uint32_t n_g2l;
	const char *g2l_path;
	struct lid_stats *st;
};

/* ---- guid2lid file ---- */

static int parse_number(const char *s, uint64_t max, uint64_t *out)
{
	if (!*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Parses one non-empty line "GUID MINLID MAXLID" (numbers in C syntax, OpenSM writes hex). */
static int parse_g2l_line(char *s, struct g2l_entry *e)
{
	char *save = NULL, *tok[4];
	int n = 0;
	for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 4)
			return -1;
		tok[n++] = t;
	}
	uint64_t guid, min, max;
	if (n != 3 || parse_number(tok[0], UINT64_MAX, &guid) || !guid ||
	    parse_number(tok[1], 0xFFFF, &min) || parse_number(tok[2], 0xFFFF, &max))
		return -1;
	e->guid = guid;
	e->min = (uint16_t)min;
	e->max = (uint16_t)max;
	return 0;
}

/* Reads an OpenSM guid2lid file into an array of entries in file order. A missing file is
 * empty; so is one that cannot be read (not a regular file, over 16 MiB: logged unless quiet).
 * Malformed lines are skipped (logged with file:line unless quiet) and counted. */
static GArray *guid2lid_read(const char *path, int quiet, uint32_t *n_bad)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct g2l_entry));
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	int rc = file_read_capped(path, FILE_CAP_TEXT, "guid2lid file", &text, &len, &err);
	if (rc < 0) {
		if (rc != -ENOENT && !quiet)
			LOG_E("LID-0001", "%s; assigning LIDs without it", err->message);
		g_error_free(err);
		return a;
	}
	uint32_t lineno = 0;
	char *cur = text, *line;
	while ((line = file_next_line(&cur, text + len))) {
		lineno++;
		size_t n = strlen(line); /* a NUL byte ends the line: what follows is junk */
		while (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		char *s = line + strspn(line, " \t");
		if (!*s || *s == '#')
			continue;
		char *copy = g_strdup(s);
		struct g2l_entry e = { .line = lineno };
		if (parse_g2l_line(s, &e) == 0) {
			g_array_append_val(a, e);
		} else {
			if (n_bad)
				(*n_bad)++;
			if (!quiet)
				LOG_E("LID-0002", "%s:%u: malformed guid2lid line skipped "
				      "(want \"0xGUID 0xMINLID 0xMAXLID\"): %.80s", path, lineno, copy);
		}
		g_free(copy);
	}
	g_free(text);
	return a;
}

/* ---- assignment ---- */

uint32_t lid_highest_usable(const struct fabric *f, uint32_t *cap_switch)
{
	uint32_t cap = LID_SPACE, who = IBSM_NONE;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++) {
		if (f->nodes[n].type != IBSM_SWITCH)
			continue;
		uint32_t c = f->nx[n].lft_cap ? f->nx[n].lft_cap : LID_SPACE;
		if (c < cap) {
			cap = c;
			who = n;
		}
	}
	if (cap_switch)
		*cap_switch = who;
	return cap ? cap - 1 : 0;
}

static uint8_t port_lmc(const struct lid_ctx *c, uint32_t p)
{
	const struct ibsm_node *n = &c->f->nodes[c->f->ports[p].node];
	if (n->type == IBSM_SWITCH)
		return c->o->lmc_esp0 && c->f->nx[c->f->ports[p].node].enhanced_sp0 ? c->o->lmc : 0;
	return c->o->lmc;
}

/* Is [lo, lo + n) inside 1..limit and unclaimed? Sets *who to the first holder found. */
static int range_free(const struct lid_ctx *c, uint32_t lo, uint32_t n, uint32_t *who)
{
	*who = OWNER_FREE;
	if (lo == 0 || lo + n - 1 > c->limit)
		return 0;
	for (uint32_t l = lo; l < lo + n; l++)
		if (c->owner[l] != OWNER_FREE) {
			*who = c->owner[l];
			return 0;
		}
	return 1;
}

static void claim(struct lid_ctx *c, uint32_t lo, uint32_t n, uint32_t who)
{
	for (uint32_t l = lo; l < lo + n; l++)
		c->owner[l] = who;
}

/* Describes the holder of a LID for a log line. */
static void describe_owner(const struct lid_ctx *c, uint32_t who, char *buf, size_t len)
{
	if (who == OWNER_FREE)
		snprintf(buf, len, "nobody");
	else if (who & OWNER_RESERVED)
		snprintf(buf, len, "absent 0x%016" PRIx64 " (%s:%u)",
			 c->g2l[who & ~OWNER_RESERVED].guid, c->g2l_path,
			 c->g2l[who & ~OWNER_RESERVED].line);
	else
		snprintf(buf, len, "0x%016" PRIx64, c->f->ports[who].guid);
}

/* Checks that do not depend on the fabric's ports: range legality, LMC alignment, and
 * duplicate GUIDs (the first entry wins). valid[i] says whether entry i survives. */
static void guid2lid_screen(struct lid_ctx *c, uint8_t *valid, int talk)
{
	GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
	uint32_t align = 1u << c->o->lmc;
	for (uint32_t i = 0; i < c->n_g2l; i++) {
		const struct g2l_entry *e = &c->g2l[i];
		valid[i] = 0;
		gpointer first = g_hash_table_lookup(seen, &e->guid);
		if (first) {
			if (talk)
				LOG_E("LID-0003", "%s:%u: duplicate guid2lid entry for 0x%016" PRIx64
				      " (first on line %u), ignored", c->g2l_path, e->line, e->guid,
				      GPOINTER_TO_UINT(first));
		} else if (e->min == 0 || e->min > e->max || e->max > LID_UCAST_MAX) {
			if (talk)
				LOG_E("LID-0004", "%s:%u: guid2lid entry 0x%016" PRIx64 " has an illegal "
				      "LID range 0x%04x-0x%04x, ignored", c->g2l_path, e->line, e->guid,
				      e->min, e->max);
		} else if (e->max > c->limit) {
			if (talk)
				LOG_I("LID-0005", "%s:%u: guid2lid entry 0x%016" PRIx64 " range "
				      "0x%04x-0x%04x is above the highest usable LID 0x%04x, ignored",
				      c->g2l_path, e->line, e->guid, e->min, e->max, c->limit);
		} else if (e->min != e->max && (e->min & (align - 1))) {
			if (talk)
				LOG_I("LID-0006", "%s:%u: guid2lid entry 0x%016" PRIx64 " range "
				      "0x%04x-0x%04x is not aligned to LMC %u, ignored", c->g2l_path,
				      e->line, e->guid, e->min, e->max, c->o->lmc);
		} else {
			valid[i] = 1;
		}
		if (valid[i]) /* a skipped line does not count as the first of its GUID */
			g_hash_table_insert(seen, (gpointer)&e->guid, GUINT_TO_POINTER(e->line));
		else if (talk)
			c->st->guid2lid_ignored++;
	}
	g_hash_table_destroy(seen);
}

/* Priority 1: guid2lid. Entries of present end ports first (file order), then, unless
 * drop_absent, the reservations of GUIDs that are not end ports of this generation. */
static void assign_from_guid2lid(struct lid_ctx *c, int drop_absent, int talk)
{
	uint8_t *valid = g_malloc0(c->n_g2l ? c->n_g2l : 1);
	guid2lid_screen(c, valid, talk);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < c->n_g2l; i++) {
			const struct g2l_entry *e = &c->g2l[i];
			if (!valid[i])
				continue;
			uint32_t p = fabric_port_by_guid(c->f, e->guid);
			int present = p != IBSM_NONE && fabric_is_end_port(c->f, p);
			if (present != (pass == 0))
				continue;
			uint32_t n, who;
			if (present) {
				n = 1u << c->lmc[p];
				if ((e->min & (n - 1)) || (uint32_t)e->max - e->min + 1 < n) {
					if (talk) {
						LOG_I("LID-0007", "%s:%u: guid2lid range 0x%04x-0x%04x of "
						      "0x%016" PRIx64 " does not hold %u LIDs aligned for "
						      "LMC %u, ignored", c->g2l_path, e->line, e->min,
						      e->max, e->guid, n, c->lmc[p]);
						c->st->guid2lid_ignored++;
					}
					continue;
				}
			} else {
				if (drop_absent)
					continue;
				n = (uint32_t)e->max - e->min + 1;
			}
			if (!range_free(c, e->min, n, &who)) {
				if (talk) {
					char holder[128];
					describe_owner(c, who, holder, sizeof(holder));
					LOG_E("LID-0008", "%s:%u: guid2lid range 0x%04x-0x%04x of 0x%016"
					      PRIx64 " overlaps LIDs of %s, ignored", c->g2l_path,
					      e->line, e->min, e->min + n - 1, e->guid, holder);
					c->st->guid2lid_ignored++;
				}
				continue;
			}
			if (present) {
				claim(c, e->min, n, p);
				c->base[p] = e->min;
				c->src[p] = SRC_GUID2LID;
			} else {
				claim(c, e->min, n, OWNER_RESERVED | i);
				c->st->reserved_lids += n;
			}
		}
	}
	g_free(valid);
}

/* Priority 2: a valid LID already on the port, in order (SM port first, then by id). */
static void assign_existing(struct lid_ctx *c, int talk)
{
	for (uint32_t k = 0; k < c->n_order; k++) {
		uint32_t p = c->order[k], who;
		uint32_t lid = c->f->ports[p].lid, n = 1u << c->lmc[p];
		if (c->base[p] || !lid)
			continue;
		if (lid + n - 1 > c->limit) {
			if (talk)
				LOG_I("LID-0009", "port 0x%016" PRIx64 " has LID 0x%04x, above the "
				      "highest usable LID 0x%04x: moving it", c->f->ports[p].guid, lid,
				      c->limit);
		} else if (lid & (n - 1)) {
			if (talk)
				LOG_V("LID-0010", "port 0x%016" PRIx64 " LID 0x%04x is not aligned to "
				      "LMC %u: moving it", c->f->ports[p].guid, lid, c->lmc[p]);
		} else if (!range_free(c, lid, n, &who)) {
			if (talk) {
				char holder[128];
				describe_owner(c, who, holder, sizeof(holder));
				LOG_I("LID-0011", "port 0x%016" PRIx64 " LID range 0x%04x-0x%04x is "
				      "held by %s: moving it", c->f->ports[p].guid, lid, lid + n - 1,
				      holder);
			}
		} else {
			claim(c, lid, n, p);
			c->base[p] = (uint16_t)lid;
			c->src[p] = SRC_KEPT;
		}
	}
}

/* Priority 3: the lowest free range. Multi-LID (aligned) ranges first, so single-LID switch
 * ports fill the holes alignment leaves. Returns 0 or -ENOSPC. */
static int assign_new(struct lid_ctx *c)
{
	uint32_t next_wide = 1u << c->o->lmc, next_single = 1, who;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < c->n_order; k++) {
			uint32_t p = c->order[k], n = 1u << c->lmc[p];
			if (c->base[p] || (n > 1) != (pass == 0))
				continue;
			uint32_t *next = n > 1 ? &next_wide : &next_single;
			while (*next + n - 1 <= c->limit && !range_free(c, *next, n, &who))
				*next += n;
			if (*next + n - 1 > c->limit)
				return -ENOSPC;
			claim(c, *next, n, p);
			c->base[p] = (uint16_t)*next;
			c->src[p] = SRC_NEW;
			*next += n;
		}
	}
	return 0;
}

/* One attempt. level 0: everything; 1: without absent GUIDs' reservations; 2: new LIDs
 * only. Messages are logged on level 0 only. */
static int assign_level(struct lid_ctx *c, int level)
{
	for (uint32_t l = 0; l < LID_SPACE; l++)
		c->owner[l] = OWNER_FREE;
	memset(c->base, 0, sizeof(*c->base) * c->f->pub.n_ports);
	memset(c->src, SRC_NONE, c->f->pub.n_ports);
	c->st->reserved_lids = 0;
	if (level < 2 && !c->o->reassign) {
		assign_from_guid2lid(c, level >= 1, level == 0);
		assign_existing(c, level == 0);
	}
	return assign_new(c);
}

static void fail_no_space(const struct lid_ctx *c, GError **err)
{
	uint32_t need = 0, cap_node;
	for (uint32_t k = 0; k < c->n_order; k++)
		need += 1u << c->lmc[c->order[k]];
	lid_highest_usable(c->f, &cap_node);
	char why[200];
	if (cap_node != IBSM_NONE && c->limit < LID_UCAST_MAX)
		snprintf(why, sizeof(why), "LinearFDBCap %u of switch 0x%016" PRIx64 " \"%s\"",
			 c->f->nx[cap_node].lft_cap, c->f->nodes[cap_node].guid,
			 c->f->nodes[cap_node].desc);
	else
		snprintf(why, sizeof(why), "the end of the unicast LID range");
	g_set_error(err, LID_ERROR, ENOSPC, "not enough LIDs: %u end ports need %u LIDs with "
		    "LMC %u (plus alignment), but the highest usable LID is 0x%04x (%s)",
		    c->n_order, need, c->o->lmc, c->limit, why);
}

int lid_assign(struct fabric *f, const struct lid_opts *o, GError **err)
{
	return lid_assign_stats(f, o, NULL, err);
}

int lid_assign_stats(struct fabric *f, const struct lid_opts *o, struct lid_stats *stats,
		     GError **err)
{
	struct lid_stats local;
	struct lid_ctx c = { .f = f, .o = o, .st = stats ? stats : &local };
	uint32_t np = f->pub.n_ports;
	int rc = 0;

	memset(c.st, 0, sizeof(*c.st));
	if (o->lmc > 7) {
		g_set_error(err, LID_ERROR, EINVAL, "LMC %u is out of range 0..7", o->lmc);
		return -EINVAL;
	}
	c.limit = lid_highest_usable(f, NULL);
	c.st->limit = c.limit;
	c.owner = g_new(uint32_t, LID_SPACE);
	c.base = g_new0(uint16_t, np ? np : 1);
	c.lmc = g_new0(uint8_t, np ? np : 1);
	c.src = g_new0(uint8_t, np ? np : 1);
	c.order = g_new(uint32_t, np ? np : 1);

	uint32_t sm = f->pub.sm_port;
	if (sm != IBSM_NONE && sm < np && fabric_is_end_port(f, sm))
		c.order[c.n_order++] = sm;
	for (uint32_t p = 0; p < np; p++) {
		if (!fabric_is_end_port(f, p))
			continue;
		c.lmc[p] = port_lmc(&c, p);
		if (p != sm)
			c.order[c.n_order++] = p;
	}

	GArray *g2l = NULL;
	char *g2l_path = NULL;
	if (o->cache_dir && !o->reassign) {
		g2l_path = g_build_filename(o->cache_dir, LID_GUID2LID_FILE, NULL);
		g2l = guid2lid_read(g2l_path, 0, &c.st->guid2lid_ignored);
		c.g2l = (const struct g2l_entry *)g2l->data;
		c.n_g2l = g2l->len;
		c.g2l_path = g2l_path;
	}

	int level = 0;
	rc = assign_level(&c, level);
	while (rc == -ENOSPC && level < 2 && !o->reassign) {
		level++;
		LOG_E("LID-0012", "the fabric does not fit below LID 0x%04x keeping %s; retrying "
		      "with %s", c.limit, level == 1 ? "the LIDs of absent guid2lid GUIDs reserved" :
		      "the LIDs ports had", level == 1 ? "those reservations dropped" :
		      "every LID reassigned");
		rc = assign_level(&c, level);
	}
	if (rc < 0) {
		fail_no_space(&c, err);
		goto out;
	}
	c.st->fallback = level;

	for (uint32_t p = 0; p < np; p++) {
		struct ibsm_port *port = &f->ports[p];
		uint16_t old = port->lid;
		if (!fabric_is_end_port(f, p)) {
			port->lid = 0;
			continue;
		}
		port->lid = c.base[p];
		port->lmc = c.lmc[p];
		c.st->end_ports++;
		c.st->from_guid2lid += c.src[p] == SRC_GUID2LID;
		c.st->kept += c.src[p] == SRC_KEPT;
		c.st->fresh += c.src[p] == SRC_NEW;
		uint32_t top = port->lid + (1u << port->lmc) - 1;
		if (top > c.st->max_lid)
			c.st->max_lid = top;
		if (old != port->lid) {
			c.st->changed++;
			LOG_V("LID-0013", "port 0x%016" PRIx64 " (\"%s\" port %u): LID 0x%04x -> 0x%04x",
			      port->guid, f->nodes[port->node].desc, port->num, old, port->lid);
		}
	}
	f->pub.lmc = o->lmc;
	fabric_index_lids(f);
	LOG_V("LID-0014", "LIDs: %u end ports (%u from guid2lid, %u kept, %u new), %u changed, "
	      "highest LID 0x%04x of 0x%04x usable, LMC %u", c.st->end_ports,
	      c.st->from_guid2lid, c.st->kept, c.st->fresh, c.st->changed, c.st->max_lid,
	      c.limit, o->lmc);
out:
	if (g2l)
		g_array_free(g2l, TRUE);
	g_free(g2l_path);
	g_free(c.owner);
	g_free(c.base);
	g_free(c.lmc);
	g_free(c.src);
	g_free(c.order);
	return rc;
}

/* ---- saving ---- */

static int cmp_entry_guid(gconstpointer x, gconstpointer y)
{
	const struct g2l_entry *a = x, *b = y;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Collects the entries to write: end ports of f, then old entries of other GUIDs whose
 * range is legal and overlaps nothing already taken. Sorted by GUID. */
static GArray *guid2lid_collect(const struct fabric *f, const char *path)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct g2l_entry));
	uint8_t *used = g_malloc0(LID_SPACE);
	GHashTable *have = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!fabric_is_end_port(f, p) || !port->lid || !port->guid ||
		    port->lid > LID_UCAST_MAX || g_hash_table_contains(have, &port->guid))
			continue;
		uint32_t top = port->lid + (1u << port->lmc) - 1;
		if (top > LID_UCAST_MAX)
			top = LID_UCAST_MAX;
		struct g2l_entry e = { port->guid, port->lid, (uint16_t)top, 0 };
		g_array_append_val(out, e);
		g_hash_table_add(have, (gpointer)&port->guid);
		memset(used + port->lid, 1, top - port->lid + 1);
	}
	GArray *old = guid2lid_read(path, 1, NULL);
	for (uint32_t i = 0; i < old->len; i++) {
		const struct g2l_entry *e = &g_array_index(old, struct g2l_entry, i);
		if (g_hash_table_contains(have, &e->guid) || e->min == 0 || e->min > e->max ||
		    e->max > LID_UCAST_MAX || memchr(used + e->min, 1, e->max - e->min + 1u))
			continue;
		g_array_append_val(out, *e);
		g_hash_table_add(have, (gpointer)&e->guid); /* old is not resized below */
		memset(used + e->min, 1, e->max - e->min + 1u);
	}
	g_array_sort(out, cmp_entry_guid);
	g_hash_table_destroy(have);
	g_array_free(old, TRUE);
	g_free(used);
	return out;
}

int lid_save_guid2lid(const struct fabric *f, const char *cache_dir, GError **err)
{
	if (!cache_dir)
		return 0;
	char *path = g_build_filename(cache_dir, LID_GUID2LID_FILE, NULL);
	char *tmp = g_strconcat(path, ".tmp.XXXXXX", NULL);
	const char *failed = path, *verb = "write";
	int fd = -1, rc = 0, created = 0;

	GArray *entries = guid2lid_collect(f, path);
	GString *text = g_string_sized_new(entries->len * 40 + 1);
	for (uint32_t i = 0; i < entries->len; i++) {
		const struct g2l_entry *e = &g_array_index(entries, struct g2l_entry, i);
		g_string_append_printf(text, "0x%016" PRIx64 " 0x%04x 0x%04x\n\n", e->guid, e->min,
				       e->max);
	}

	if (g_mkdir_with_parents(cache_dir, 0755) < 0) {
		failed = cache_dir;
		verb = "create directory";
		goto fail;
	}
	failed = tmp;
	fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	created = 1;
	if (write_all(fd, text->str, text->len) < 0 || fsync(fd) < 0)
		goto fail;
	int closed = close(fd);
	fd = -1;
	if (closed < 0)
		goto fail;
	failed = path;
	if (rename(tmp, path) < 0)
		goto fail;
	created = 0;
	/* Make the rename itself durable. */
	failed = cache_dir;
	verb = "sync directory";
	int dfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	if (fsync(dfd) < 0 && errno != EINVAL && errno != EROFS) {
		int e = errno;
		close(dfd);
		errno = e;
		goto fail;
	}
	close(dfd);
	goto out;

fail:
	rc = errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	if (created)
		unlink(tmp);
	g_set_error(err, LID_ERROR, -rc, "cannot %s %s: %s", verb, failed, g_strerror(-rc));
out:
	g_string_free(text, TRUE);
	g_array_free(entries, TRUE);
	g_free(tmp);
	g_free(path);
	return rc;
}
