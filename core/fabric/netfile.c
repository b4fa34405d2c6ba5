/* SPDX-License-Identifier: BSD-2-Clause */
/* netfile.c - reads an ibsim / ibnetdiscover "net" file into the model builder, numbering
 * GUIDs as ibsim 0.10 does (see netfile.h for the grammar and where we differ from ibsim).
 * Three passes: parse every record (GUIDs are handed out here, in file order), resolve the
 * links (peers may be defined later), then fill the builder, so a bad file leaves it alone. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_read.h"
#include "fabric/netfile.h"

#define NF_ID_MAX     64  /* ibsim NODEIDLEN - 1: longer node ids are cut there */
#define NF_DESC_MAX   63  /* ibsim nodedesc[64] */
#define NF_LINE_MAX   254 /* ibsim reads a line into 255 bytes, '\n' included */
#define NF_PREFIX_MAX 20  /* ibsim NODEPREFIX (module="...") */
#define NF_FILES_MAX  9   /* ibsim MAX_INCLUDE: the top file and 8 nested includes */
#define NF_PORTS_MAX  254 /* port 255 would be the LFT's "no route" */

enum { NF_CA = IBSM_CA, NF_SWITCH = IBSM_SWITCH, NF_ROUTER = IBSM_ROUTER, NF_TYPES };

/* PortInfo LinkWidth and LinkSpeed bits */
enum { W_1X = 1, W_4X = 2, W_8X = 4, W_12X = 8, W_2X = 16 };
enum { S_SDR = 1, S_DDR = 2, S_QDR = 4 };

/* What ibsim 0.10 reports before any SM ran (NodeInfo, PortInfo templates of sim_net.c). */
#define NF_REVISION       0xA1
#define NF_CA_PKEY_CAP    64  /* NodeInfo.PartitionCap of CAs and routers */
#define NF_SW_PKEY_CAP    8   /* ... of switches (port 0) */
#define NF_MTU_2048       4
#define NF_MTU_1024       3   /* MTUCap of switch port 0 */
#define NF_VL0_7          4   /* VLCap and OperVLs */
#define NF_PHYS_POLLING   2
#define NF_PHYS_LINKUP    5

struct nf_node;

struct nf_port {
	const char *peer;       /* expanded peer node id; NULL: no port line */
	const char *file;       /* where the port line is */
	int line;
	int peer_port;
	uint16_t lid;           /* CA ports: ibnetdiscover's "lid N lmc M" */
	uint8_t lmc, width_ena, speed_ena;
	struct nf_node *link;   /* filled by the link pass */
	uint8_t link_port, width, speed;
};

struct nf_node {
	const char *id, *file;
	int line;
	uint32_t seq;           /* position in file order */
	char desc[NF_DESC_MAX + 1];
	uint8_t type, nports;
	int esp0;               /* > 0: "enhanced port 0" in the header */
	uint64_t guid, sysimg;
	uint32_t vendor;
	uint16_t device;
	struct nf_port *ports;  /* [nports + 1] */
};

struct nf_parser {
	GPtrArray *nodes;       /* struct nf_node *, file order */
	GHashTable *by_id;      /* id -> node */
	GHashTable *by_guid;    /* &node->guid -> node */
	GHashTable *by_port;    /* end-port GUID (CA, router ports; switch port 0) -> node */
	GStringChunk *strings;
	uint64_t guids[NF_TYPES], absguids[NF_TYPES];
	char prefix[NF_PREFIX_MAX + 1];
	uint32_t vendid;        /* for the next node only (ibsim resets it) */
	uint64_t sysimgguid;    /* for the next node only */
	uint16_t devid;
	uint8_t width, speed;
	int depth;
	size_t bytes_read;      /* of every file so far: together at most FILE_CAP_FABRIC */
};

struct nf_file {
	const char *name;       /* interned */
	char *dir;
	const char *buf;
	gsize len, pos;
	int lineno;
};

G_DEFINE_QUARK(netfile-error-quark, netfile_error)

static int fail(GError **err, int code, const char *file, int line, const char *fmt, ...)
	G_GNUC_PRINTF(5, 6);

static int fail(GError **err, int code, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(err, NETFILE_ERROR, code, "%s:%d: %s", file, line, msg);
	g_free(msg);
	return -1;
}

#define PARSE_FAIL(f, ...) fail(err, NETFILE_ERROR_PARSE, (f)->name, (f)->lineno, __VA_ARGS__)

static const char *type_name(int type)
{
	return type == NF_SWITCH ? "switch" : type == NF_ROUTER ? "router" : "CA";
}

static int blank_or_comment(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s || *s == '#';
}

static void node_free(gpointer data)
{
	struct nf_node *n = data;

	g_free(n->ports);
	g_free(n);
}

/* Reads the next line into out without its '\n' (and trailing '\r').
 * 1: a line, 0: end of file, -1: error. */
static int next_line(struct nf_file *f, char out[NF_LINE_MAX + 2], GError **err)
{
	const char *s = f->buf + f->pos, *nl;
	gsize n, rest = f->len - f->pos;

	if (f->pos >= f->len)
		return 0;
	nl = memchr(s, '\n', rest);
	n = nl ? (gsize)(nl - s) : rest;
	f->pos += n + (nl ? 1 : 0);
	f->lineno++;
	if (n > NF_LINE_MAX)
		return PARSE_FAIL(f, "line longer than %d characters (ibsim would split it)",
				  NF_LINE_MAX);
	if (memchr(s, '\0', n))
		return PARSE_FAIL(f, "NUL byte in line");
	memcpy(out, s, n);
	out[n] = '\0';
	while (n && out[n - 1] == '\r')
		out[--n] = '\0';
	return 1;
}

/* ibsim's parse_node_desc(): the text after '#', quoted or cut before ibnetdiscover's
 * " enhanced port ", " base port ", " lid ", " lmc ". *rest: what follows it, or NULL. */
static const char *node_desc(char *s, char **rest)
{
	char *e = NULL;

	*rest = s;
	s = strchr(s, '#');
	if (!s)
		return NULL;
	while (isspace((unsigned char)*++s))
		;
	if (*s == '"') {
		s++;
		if ((e = strchr(s, '"')))
			*e++ = '\0';
	} else if ((e = strstr(s, " enhanced port ")) || (e = strstr(s, " base port ")) ||
		   (e = strstr(s, " lid ")) || (e = strstr(s, " lmc "))) {
		*e++ = '\0';
	}
	*rest = e;
	return s;
}

/* "lid N" / "lmc M" anywhere in s (ibsim's parse_port_lid_and_lmc). */
static void lid_and_lmc(const char *s, uint16_t *lid, uint8_t *lmc)
{
	const char *t;

	if ((t = strstr(s, "lid ")))
		*lid = (uint16_t)strtoul(t + 4, NULL, 0);
	if ((t = strstr(s, "lmc ")))
		*lmc = (uint8_t)(strtoul(t + 4, NULL, 0) & 7);
}

/* Matches s against sscanf's "lid %d %dx%9s" and returns the width and speed words. */
static int scan_connection(const char *s, long *width, char speed[10])
{
	char *end;
	size_t n = 0;

	if (strncmp(s, "lid", 3))
		return 0;
	s += 3;
	strtol(s, &end, 10);    /* the peer's LID: not used */
	if (end == s)
		return 0;
	s = end;
	*width = strtol(s, &end, 10);
	if (end == s || *end != 'x')
		return 0;
	s = end + 1;
	while (isspace((unsigned char)*s))
		s++;
	while (s[n] && !isspace((unsigned char)s[n]) && n < 9) {
		speed[n] = s[n];
		n++;
	}
	speed[n] = '\0';
	return n > 0;
}

/* ibnetdiscover's annotations after the peer: "# lid 2 lmc 0 "desc" lid 1 4xQDR" (CA) or
 * "# "desc" lid 1 4xQDR" (switch). As ibsim: the CA's own LID and LMC, then the enabled
 * width and speed from the last "lid" that no quote follows. */
static void connection_data(int type, struct nf_port *port, const char *s)
{
	static const struct { const char *word; uint8_t ena; } speeds[] = {
		{ "SDR", S_SDR }, { "DDR", S_SDR | S_DDR }, { "QDR", S_SDR | S_DDR | S_QDR },
		{ "FDR", S_SDR | S_DDR | S_QDR }, { "EDR", S_SDR | S_DDR | S_QDR },
		{ "HDR", S_SDR | S_DDR | S_QDR }, { "NDR", S_SDR | S_DDR | S_QDR },
		{ "FDR10", S_SDR | S_DDR | S_QDR },
	};
	const char *q = strrchr(s, '"'), *m;
	char speed[10];
	long width;
	size_t i;

	m = strstr(q ? q + 1 : s, "lid");
	if (!m)
		return;
	if (type == NF_CA)
		lid_and_lmc(s, &port->lid, &port->lmc);
	if (!scan_connection(m, &width, speed))
		return;
	switch (width) {
	case 12: port->width_ena = W_1X | W_4X | W_12X; break;
	case 8:  port->width_ena = W_8X; break;
	case 4:  port->width_ena = W_1X | W_4X; break;
	case 2:  port->width_ena = W_2X; break;
	case 1:  port->width_ena = W_1X; break;
	default: break;
	}
	for (i = 0; i < G_N_ELEMENTS(speeds); i++) {
		if (!strncmp(speed, speeds[i].word, strlen(speed))) {
			port->speed_ena = speeds[i].ena;
			break;
		}
	}
}

/* One port line "[p] "peer"[q] options # annotations" of node n (line is ours to cut). */
static int parse_port(struct nf_parser *p, struct nf_file *f, struct nf_node *n, char *line,
		      GError **err)
{
	char id[NF_ID_MAX + 1], *q, *e, *s, *eq;
	struct nf_port *port;
	long pn, rp = 1;

	pn = strtol(line + 1, NULL, 10);
	if (pn < 1 || pn > n->nports)
		return PARSE_FAIL(f, "bad port number in \"%.20s\": \"%s\" has ports 1..%d",
				  line, n->id, n->nports);
	port = &n->ports[pn];
	if (port->file)
		return PARSE_FAIL(f, "port %ld of \"%s\" is already declared at line %d",
				  pn, n->id, port->line);
	if (!(q = strchr(line, '"')))
		return PARSE_FAIL(f, "port %ld of \"%s\": no \"peer\" name", pn, n->id);
	if (!(e = strchr(q + 1, '"')))
		return PARSE_FAIL(f, "port %ld of \"%s\": unterminated peer name", pn, n->id);
	*e = '\0';
	if (strchr(q + 1, '@'))
		return PARSE_FAIL(f, "aliases ('@') are not supported");
	if (p->prefix[0] && !strchr(q + 1, '#'))
		snprintf(id, sizeof(id), "%s#%s", p->prefix, q + 1);
	else
		g_strlcpy(id, q + 1, sizeof(id));
	s = e + 1;
	if (*s == '[') {        /* without it, ibsim takes peer port 1 */
		rp = strtol(s + 1, NULL, 10);
		if (rp <= 0)
			return PARSE_FAIL(f, "port %ld of \"%s\": bad peer port number", pn, n->id);
		if (rp > INT_MAX)
			rp = INT_MAX;
	}
	/* ibsim's options: the letter before each '=' (w= width, s= speed, e= ext. speed) */
	for (eq = *s ? strchr(s + 1, '=') : NULL; eq; eq = strchr(eq + 1, '=')) {
		char *o = eq;
		unsigned long v;

		while (o > line && !isalpha((unsigned char)*o))
			o--;
		v = strtoul(eq + 1, NULL, 0);
		switch (*o) {
		case 'w':
			if (v < 1 || v > 31)
				return PARSE_FAIL(f, "bad link width w=%s (1..31)", eq + 1);
			port->width_ena = (uint8_t)v;
			break;
		case 's':
			if (v > 7)
				return PARSE_FAIL(f, "bad link speed s=%s (0..7)", eq + 1);
			port->speed_ena = v ? (uint8_t)v : S_QDR;
			break;
		case 'e':
			if (v > 15)
				return PARSE_FAIL(f, "bad extended speed e=%s (0..15)", eq + 1);
			break;  /* extended speeds are not modelled */
		default:
			break;
		}
	}
	if (n->type != NF_ROUTER)
		connection_data(n->type, port, s);
	port->peer = g_string_chunk_insert_const(p->strings, id);
	port->peer_port = (int)rp;
	port->file = f->name;
	port->line = f->lineno;
	return 0;
}

/* The header "Switch 8 "name" # "desc" ...": port count, node id (into id) and what follows
 * the name (*rest, for annotations; *desc the description or NULL). */
static int record_header(struct nf_parser *p, struct nf_file *f, char *line, int type,
			 unsigned long *nports, char id[NF_ID_MAX + 1], const char **desc, char **rest,
			 GError **err)
{
	/* the keyword ("Switch", "Hca", "Ca", "Rt"), blanks, then the port count: ibsim skips
	 * anything up to the first digit, so "Switch -5" would be 5 ports there: refused here */
	size_t kw = !strncmp(line, "Switch", 6) ? 6 : !strncmp(line, "Hca", 3) ? 3 : 2;
	char *d = line + kw, *q = strchr(line, '"'), *e;
	while (*d == ' ' || *d == '\t')
		d++;
	if (!*d || d == q)
		return PARSE_FAIL(f, "%s record without a port count", type_name(type));
	size_t wl = strcspn(d, " \t\"");
	if (!isdigit((unsigned char)*d))
		return PARSE_FAIL(f, "bad port count \"%.*s\" (1..%d)", (int)MIN(wl, (size_t)12), d,
				  NF_PORTS_MAX);
	*nports = strtoul(d, NULL, 0);
	if (*nports < 1 || *nports > NF_PORTS_MAX)
		return PARSE_FAIL(f, "bad port count \"%.*s\" (1..%d)", (int)MIN(wl, (size_t)12), d,
				  NF_PORTS_MAX);
	if (!q)
		return PARSE_FAIL(f, "%s record without a \"name\"", type_name(type));
	if (!(e = strchr(q + 1, '"')))
		return PARSE_FAIL(f, "unterminated node name");
	*e = '\0';
	if (strpbrk(q + 1, "#@"))
		return PARSE_FAIL(f, "'#' and '@' are reserved in node names");
	snprintf(id, NF_ID_MAX + 1, "%s%s%s", p->prefix, p->prefix[0] ? "#" : "", q + 1);
	*desc = node_desc(e + 1, rest);
	return 0;
}

/* The node's id and GUIDs are new: ibsim checks node GUIDs only, but two end ports with one
 * GUID would break LIDs. */
static int record_unique(struct nf_parser *p, struct nf_file *f, const char *id, int type,
			 unsigned long nports, uint64_t guid, GError **err)
{
	struct nf_node *old;
	if ((old = g_hash_table_lookup(p->by_id, id)))
		return PARSE_FAIL(f, "node \"%s\" is already defined at %s:%d", id, old->file,
				  old->line);
	if (!guid)
		return PARSE_FAIL(f, "%s \"%s\" would get GUID 0: set a base with %s= first",
				  type_name(type), id,
				  type == NF_SWITCH ? "switchguid" : type == NF_ROUTER ? "rtguid" : "caguid");
	if ((old = g_hash_table_lookup(p->by_guid, &guid)))
		return PARSE_FAIL(f, "GUID 0x%016" PRIx64 " of \"%s\" is already used by \"%s\" (%s:%d)",
				  guid, id, old->id, old->file, old->line);
	for (int i = type == NF_SWITCH ? 0 : 1; i <= (type == NF_SWITCH ? 0 : (int)nports); i++) {
		uint64_t pg = type == NF_SWITCH ? guid : guid + (uint64_t)i;

		if (!pg)
			return PARSE_FAIL(f, "port GUIDs of \"%s\" wrap around to 0", id);
		if ((old = g_hash_table_lookup(p->by_port, &pg)))
			return PARSE_FAIL(f, "port GUID 0x%016" PRIx64 " of \"%s\"[%d] is already used "
					  "by \"%s\"[%d] (%s:%d)", pg, id, i, old->id,
					  old->type == NF_SWITCH ? 0 : (int)(pg - old->guid),
					  old->file, old->line);
	}
	return 0;
}

/* The node, with the pending sysimgguid/vendid applied, indexed by id, GUID and port GUIDs. */
static struct nf_node *record_add(struct nf_parser *p, struct nf_file *f, const char *id, int type,
				  unsigned long nports, uint64_t guid, const char *desc,
				  const char *rest)
{
	struct nf_node *n = g_new0(struct nf_node, 1);
	n->id = g_string_chunk_insert_const(p->strings, id);
	n->file = f->name;
	n->line = f->lineno;
	n->seq = p->nodes->len;
	n->type = (uint8_t)type;
	n->nports = (uint8_t)nports;
	g_strlcpy(n->desc, desc && *desc ? desc : id, sizeof(n->desc));
	n->guid = guid;
	n->sysimg = p->sysimgguid ? p->sysimgguid : guid;
	n->vendor = p->vendid;
	n->device = p->devid;
	p->vendid = 0;
	p->sysimgguid = 0;
	p->guids[type] += type == NF_SWITCH ? 1 : nports + 1;
	n->ports = g_new0(struct nf_port, nports + 1);
	for (int i = 0; i <= (int)nports; i++) {
		n->ports[i].width_ena = p->width;
		n->ports[i].speed_ena = p->speed;
	}
	if (type == NF_SWITCH && rest) {
		if (strstr(rest, "enhanced port 0"))
			n->esp0 = 1;
		else if (strstr(rest, "base port 0"))
			n->esp0 = -1;
		lid_and_lmc(rest, &n->ports[0].lid, &n->ports[0].lmc);
	}
	g_ptr_array_add(p->nodes, n);
	g_hash_table_insert(p->by_id, (gpointer)n->id, n);
	g_hash_table_insert(p->by_guid, &n->guid, n);
	for (int i = type == NF_SWITCH ? 0 : 1; i <= (type == NF_SWITCH ? 0 : (int)nports); i++) {
		uint64_t *pg = g_new(uint64_t, 1);

		*pg = guid + (uint64_t)i;
		g_hash_table_insert(p->by_port, pg, n);
	}
	return n;
}

/* The port lines of node n: comments are skipped; any other line ends the record and, as in
 * ibsim, is consumed: refuse one that ibsim would silently drop. */
static int record_ports(struct nf_parser *p, struct nf_file *f, struct nf_node *n, GError **err)
{
	char buf[NF_LINE_MAX + 2];
	for (int remaining = n->nports; remaining > 0;) {
		int r = next_line(f, buf, err);
		if (r <= 0)
			return r;
		if (buf[0] == '#')
			continue;
		if (buf[0] == '@')
			return PARSE_FAIL(f, "aliases ('@') are not supported");
		if (buf[0] != '[') {
			if (!blank_or_comment(buf))
				return PARSE_FAIL(f, "\"%.30s\" follows the port lines of \"%s\" without "
						  "a blank line (ibsim would drop it)", buf, n->id);
			break;
		}
		if (parse_port(p, f, n, buf, err) < 0)
			return -1;
		remaining--;
	}
	return 0;
}

/* A node record: the header "Switch 8 "name" # "desc" ..." in line, then its port lines. */
static int parse_record(struct nf_parser *p, struct nf_file *f, char *line, int type,
			GError **err)
{
	char id[NF_ID_MAX + 1], *rest = NULL;
	const char *desc = NULL;
	unsigned long nports = 0;
	if (record_header(p, f, line, type, &nports, id, &desc, &rest, err) < 0)
		return -1;
	uint64_t guid = p->guids[type];
	if (record_unique(p, f, id, type, nports, guid, err) < 0)
		return -1;
	return record_ports(p, f, record_add(p, f, id, type, nports, guid, desc, rest), err);
}

static int parse_guid_base(struct nf_parser *p, struct nf_file *f, const char *line, int type,
			   GError **err)
{
	const char *s = strchr(line, '=');
	uint64_t v;

	if (!s && !(s = strchr(line, '+')))
		return PARSE_FAIL(f, "GUID base without '=' or '+'");
	v = strtoull(s + 1, NULL, 0);
	if (*s == '+') {        /* relative to the last absolute base */
		p->guids[type] = p->absguids[type] + v;
	} else {
		p->absguids[type] = v;
		p->guids[type] = v;
	}
	return 0;
}

/* "key=value" lines: the value as strtol() reads it, or -1 on a missing '='. */
static int parse_value(struct nf_file *f, const char *line, long *v, GError **err)
{
	const char *s = strchr(line, '=');

	if (!s)
		return PARSE_FAIL(f, "missing '=' in \"%.30s\"", line);
	*v = strtol(s + 1, NULL, 0);
	return 0;
}

static int load_file(struct nf_parser *p, const char *path, struct nf_file *from, GError **err);

static int parse_include(struct nf_parser *p, struct nf_file *f, char *line, GError **err)
{
	char *a = strchr(line, '"'), *b = a ? strchr(a + 1, '"') : NULL, *path;
	int r;

	if (!b)
		return PARSE_FAIL(f, "bad include file name (want include \"file\")");
	*b = '\0';
	if (p->depth >= NF_FILES_MAX)
		return PARSE_FAIL(f, "includes nested deeper than %d files", NF_FILES_MAX);
	path = g_path_is_absolute(a + 1) ? g_strdup(a + 1) : g_build_filename(f->dir, a + 1, NULL);
	r = load_file(p, path, f, err);
	g_free(path);
	return r;
}

static int parse_lines(struct nf_parser *p, struct nf_file *f, GError **err)
{
	char line[NF_LINE_MAX + 2];
	long v;
	int r;

	while ((r = next_line(f, line, err)) > 0) {
		if (!strncmp(line, "Switch", 6)) {
			r = parse_record(p, f, line, NF_SWITCH, err);
		} else if (!strncmp(line, "Hca", 3) || !strncmp(line, "Ca", 2)) {
			r = parse_record(p, f, line, NF_CA, err);
		} else if (!strncmp(line, "Rt", 2)) {
			r = parse_record(p, f, line, NF_ROUTER, err);
		} else if (!strncmp(line, "switchguid", 10)) {
			r = parse_guid_base(p, f, line, NF_SWITCH, err);
		} else if (!strncmp(line, "hcaguids", 8) || !strncmp(line, "caguid", 6)) {
			r = parse_guid_base(p, f, line, NF_CA, err);
		} else if (!strncmp(line, "rtguid", 6)) {
			r = parse_guid_base(p, f, line, NF_ROUTER, err);
		} else if (!strncmp(line, "vendid", 6)) {
			if ((r = parse_value(f, line, &v, err)) == 0)
				p->vendid = (uint32_t)v & 0xffffff;
		} else if (!strncmp(line, "devid", 5)) {
			if ((r = parse_value(f, line, &v, err)) == 0)
				p->devid = (uint16_t)v;
		} else if (!strncmp(line, "sysimgguid", 10)) {
			const char *s = strchr(line, '=');

			r = s ? 0 : PARSE_FAIL(f, "missing '=' in \"%.30s\"", line);
			if (s)
				p->sysimgguid = strtoull(s + 1, NULL, 0);
		} else if (!strncmp(line, "width", 5)) {
			if ((r = parse_value(f, line, &v, err)) == 0 && (v < 1 || v > 31))
				r = PARSE_FAIL(f, "bad link width %ld (1..31)", v);
			if (r == 0)
				p->width = (uint8_t)v;
		} else if (!strncmp(line, "speed", 5)) {
			if ((r = parse_value(f, line, &v, err)) == 0 && (v < 1 || v > 7))
				r = PARSE_FAIL(f, "bad link speed %ld (1..7)", v);
			if (r == 0)
				p->speed = (uint8_t)v;
		} else if (!strncmp(line, "extspeed", 8)) {
			if ((r = parse_value(f, line, &v, err)) == 0 && (v < 0 || v > 15))
				r = PARSE_FAIL(f, "bad extended link speed %ld (0..15)", v);
		} else if (!strncmp(line, "module", 6)) {
			char *a = strchr(line, '='), *q = a ? strchr(a + 1, '"') : NULL;
			char *e = q ? strchr(q + 1, '"') : NULL;

			if (!e)
				r = PARSE_FAIL(f, "want module=\"prefix\"");
			else if (e - q - 1 > NF_PREFIX_MAX)
				r = PARSE_FAIL(f, "module prefix longer than %d characters", NF_PREFIX_MAX);
			else
				g_strlcpy(p->prefix, q + 1, (gsize)(e - q));
		} else if (!strncmp(line, "include", 7)) {
			r = parse_include(p, f, line, err);
		} else if (!strncmp(line, "pdebug", 6)) {
			r = parse_value(f, line, &v, err);   /* ibsim's parser debugging: ignored */
		} else if (!strncmp(line, "do", 2)) {
			r = PARSE_FAIL(f, "ibsim console commands (do ...) are not supported");
		} else if (blank_or_comment(line)) {
			r = 0;
		} else if (line[0] == '[' || line[0] == '@') {
			r = PARSE_FAIL(f, "port line outside a node record (more lines than ports, or "
				       "a line that ended the record before it)");
		} else {
			r = PARSE_FAIL(f, "unknown record \"%.30s\"", line);
		}
		if (r < 0)
			return -1;
	}
	return r;
}

/* Reads path (the top file, or an include of from): a regular file, and with the files read
 * before it at most FILE_CAP_FABRIC bytes (an include cannot multiply a fabric file). */
static char *read_capped(struct nf_parser *p, const char *path, struct nf_file *from, gsize *len,
			 GError **err)
{
	GError *e = NULL;
	char *text = NULL;
	size_t n = 0;
	int rc = file_read_capped(path, FILE_CAP_FABRIC - p->bytes_read, "fabric file", &text, &n, &e);
	if (rc == 0) {
		p->bytes_read += n;
		*len = n;
		return text;
	}
	const char *why = e->message;
	char *msg = NULL;
	if (rc == -EFBIG && p->bytes_read)
		why = msg = g_strdup_printf("%s: together with the %zu bytes of fabric files read "
					    "before it, larger than %u MiB: refused", path,
					    p->bytes_read, FILE_CAP_FABRIC >> 20);
	if (from)
		fail(err, NETFILE_ERROR_OPEN, from->name, from->lineno, "cannot include %s", why);
	else
		g_set_error_literal(err, NETFILE_ERROR, NETFILE_ERROR_OPEN, why);
	g_free(msg);
	g_error_free(e);
	return NULL;
}

static int load_file(struct nf_parser *p, const char *path, struct nf_file *from, GError **err)
{
	struct nf_file f = { 0 };
	int r;
	char *buf;

	if (!(buf = read_capped(p, path, from, &f.len, err)))
		return -1;
	f.name = g_string_chunk_insert_const(p->strings, path);
	f.dir = g_path_get_dirname(path);
	f.buf = buf;
	p->depth++;
	r = parse_lines(p, &f, err);
	p->depth--;
	g_free(f.dir);
	g_free(buf);
	return r;
}

/* The highest width / speed both ends enable (ibsim's get_active_link*). */
static uint8_t common_width(uint8_t a, uint8_t b)
{
	static const uint8_t order[] = { W_12X, W_8X, W_4X, W_2X, W_1X };
	size_t i;

	for (i = 0; i < sizeof(order); i++)
		if (a & b & order[i])
			return order[i];
	return 0;
}

static uint8_t common_speed(uint8_t a, uint8_t b)
{
	return (a & b & S_QDR) ? S_QDR : (a & b & S_DDR) ? S_DDR : (a & b & S_SDR) ? S_SDR : 0;
}

/* Resolves every port line to its peer, in file order as ibsim's connect_ports(). */
static int link_all(struct nf_parser *p, GError **err)
{
	guint i;
	int pn;

	for (i = 0; i < p->nodes->len; i++) {
		struct nf_node *n = p->nodes->pdata[i], *r;

		for (pn = 1; pn <= n->nports; pn++) {
			struct nf_port *a = &n->ports[pn], *b;

			if (a->link || !a->peer)
				continue;
			if (!(r = g_hash_table_lookup(p->by_id, a->peer)))
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "\"%s\"[%d] is linked to undefined node \"%s\"",
					    n->id, pn, a->peer);
			if (a->peer_port > r->nports)
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "\"%s\"[%d] is linked to \"%s\"[%d], but \"%s\" has "
					    "ports 1..%d", n->id, pn, r->id, a->peer_port, r->id,
					    r->nports);
			if (r == n && a->peer_port == pn)
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "\"%s\"[%d] is linked to itself", n->id, pn);
			b = &r->ports[a->peer_port];
			if (b->peer && (strcmp(b->peer, n->id) || b->peer_port != pn))
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "conflicting links: \"%s\"[%d] -> \"%s\"[%d], but %s:%d "
					    "says \"%s\"[%d] -> \"%s\"[%d]", n->id, pn, r->id,
					    a->peer_port, b->file, b->line, r->id, a->peer_port,
					    b->peer, b->peer_port);
			if (b->link)
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "conflicting links: \"%s\"[%d] is already linked to "
					    "\"%s\"[%d]", r->id, a->peer_port, b->link->id,
					    b->link_port);
			a->width = b->width = common_width(a->width_ena, b->width_ena);
			a->speed = b->speed = common_speed(a->speed_ena, b->speed_ena);
			if (!a->width || !a->speed)
				return fail(err, NETFILE_ERROR_LINK, a->file, a->line,
					    "\"%s\"[%d] and \"%s\"[%d] have no common link %s",
					    n->id, pn, r->id, a->peer_port,
					    a->width ? "speed" : "width");
			a->link = r;
			a->link_port = (uint8_t)a->peer_port;
			b->link = n;
			b->link_port = (uint8_t)pn;
		}
	}
	return 0;
}

/* LinearFDBCap given to the switches: ibsim's default, or IBSM_FABRIC_LFT_CAP (the value of
 * ibsim's -L for the same file, 1..49152) so that a fabric with more than 30719 LIDs can be
 * routed offline exactly as ibsim -L would present it. */
static uint32_t netfile_lft_cap(void)
{
	const char *e = g_getenv("IBSM_FABRIC_LFT_CAP");
	char *end = NULL;
	unsigned long v;

	if (!e || !*e)
		return NETFILE_LFT_CAP;
	v = strtoul(e, &end, 0);
	if (*end || v == 0 || v > 49152)
		return NETFILE_LFT_CAP;
	return (uint32_t)v;
}

static void fill_node(const struct nf_node *n, struct model_node_in *m)
{
	int sw = n->type == NF_SWITCH, pn;

	m->sysimg_guid = n->sysimg;
	g_strlcpy(m->desc, n->desc, sizeof(m->desc));
	m->vendor_id = n->vendor;
	m->device_id = n->device;
	m->revision = NF_REVISION;
	m->partition_cap = sw ? NF_SW_PKEY_CAP : NF_CA_PKEY_CAP;
	if (sw) {
		m->lft_cap = netfile_lft_cap();
		m->mft_cap = NETFILE_MFT_CAP;
		m->pkey_enf_cap = NETFILE_PKEY_ENF_CAP;
		m->enhanced_sp0 = n->esp0 > 0;
	}
	for (pn = sw ? 0 : 1; pn <= n->nports; pn++) {
		const struct nf_port *fp = &n->ports[pn];
		struct model_port_in *mp = &m->ports[pn];

		mp->guid = sw ? n->guid : n->guid + (uint64_t)pn;
		mp->flags = IBSM_PORT_PRESENT;
		mp->lid = fp->lid;  /* CA ports and switch port 0: from the file, else 0 */
		mp->lmc = fp->lmc;
		mp->width = W_4X;
		mp->speed = S_SDR;
		mp->mtu_cap = NF_MTU_2048;
		mp->vl_cap = NF_VL0_7;
		mp->oper_vls = NF_VL0_7;
		if (sw && pn == 0) {
			mp->state = IBSM_STATE_ACTIVE;
			mp->phys_state = NF_PHYS_LINKUP;
			mp->flags |= IBSM_PORT_LINKUP | (n->esp0 > 0 ? IBSM_PORT_ESP0 : 0);
			mp->mtu_cap = NF_MTU_1024;
		} else if (fp->link) {
			mp->state = IBSM_STATE_INIT;
			mp->phys_state = NF_PHYS_LINKUP;
			mp->flags |= IBSM_PORT_LINKUP;
			mp->width = fp->width;
			mp->speed = fp->speed;
		} else {
			mp->state = IBSM_STATE_DOWN;
			mp->phys_state = NF_PHYS_POLLING;
		}
	}
}

static int fill_builder(struct nf_parser *p, struct model_builder *b, GError **err)
{
	guint n = p->nodes->len, i;
	int *idx = g_new(int, n ? n : 1), pn, r = 0;

	for (i = 0; i < n; i++) {
		struct nf_node *nd = p->nodes->pdata[i];

		idx[i] = model_add_node(b, nd->guid, nd->type, nd->nports);
		if (idx[i] < 0) {
			r = fail(err, NETFILE_ERROR_MODEL, nd->file, nd->line,
				 "GUID 0x%016" PRIx64 " of \"%s\" is already in the model",
				 nd->guid, nd->id);
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		fill_node(p->nodes->pdata[i], model_node(b, (uint32_t)idx[i]));
	for (i = 0; i < n; i++) {
		struct nf_node *nd = p->nodes->pdata[i];

		for (pn = 1; pn <= nd->nports; pn++) {
			const struct nf_port *fp = &nd->ports[pn];

			/* each link once: from the end that comes first */
			if (fp->link && (fp->link->seq > nd->seq ||
					 (fp->link == nd && fp->link_port > pn)))
				model_link(b, (uint32_t)idx[i], (uint8_t)pn,
					   (uint32_t)idx[fp->link->seq], fp->link_port);
		}
	}
out:
	g_free(idx);
	return r;
}

int netfile_load(const char *path, struct model_builder *b, GError **err)
{
	struct nf_parser p = {
		.guids = { 0, 0x100000, 0x200000, 0 },      /* ibsim's defaults: a router */
		.absguids = { 0, 0x100000, 0x200000, 0 },   /* has none (rtguid= needed) */
		.width = W_4X,
		.speed = S_SDR,
	};
	int r;

	g_return_val_if_fail(path && b, -1);
	p.nodes = g_ptr_array_new_with_free_func(node_free);
	p.by_id = g_hash_table_new(g_str_hash, g_str_equal);
	p.by_guid = g_hash_table_new(g_int64_hash, g_int64_equal);
	p.by_port = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	p.strings = g_string_chunk_new(4096);

	r = load_file(&p, path, NULL, err);
	if (r == 0 && p.nodes->len == 0) { /* a wrong file, or one cut short: never a fabric */
		g_set_error(err, NETFILE_ERROR, NETFILE_ERROR_PARSE, "%s: defines no node (an empty "
			    "fabric)", path);
		r = -1;
	}
	if (r == 0)
		r = link_all(&p, err);
	if (r == 0)
		r = fill_builder(&p, b, err);

	g_hash_table_destroy(p.by_port);
	g_hash_table_destroy(p.by_guid);
	g_hash_table_destroy(p.by_id);
	g_ptr_array_free(p.nodes, TRUE);
	g_string_chunk_free(p.strings);
	return r < 0 ? -1 : 0;
}
