/* SPDX-License-Identifier: BSD-2-Clause */
/* dump.c - writes OpenSM's dump files from one fabric generation and the final LFTs, in
 * OpenSM 3.3.23's exact line formats and order, so ibdmchk and site scripts read them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include "fabric/node_names.h"
#include "fabric/dump.h"
#include "fabric/hops.h"

#define NO_PATH 0xFF             /* hop count: no path (OpenSM's OSM_NO_PATH) */
#define DESC_MAX 63              /* OpenSM prints at most 63 characters of NodeDescription */
#define CAP_EXT_SPEEDS 0x00004000u /* PortInfo.CapabilityMask.IsExtendedSpeedsSupported */

/* ---- atomic output: temp file in the same directory, renamed over the final name ---- */

struct out {
	FILE *fp;
	char *path, *tmp;
};

static int io_error(GError **err, int e, const char *path, const char *what)
{
	g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s: %s", path, what,
		    g_strerror(e));
	return -e;
}

static void out_free(struct out *o)
{
	g_free(o->path);
	g_free(o->tmp);
	o->path = o->tmp = NULL;
}

/* OpenSM's per-engine file names: the tag goes before ".dump" or ".lst", else at the end
 * (opensm-lfts.2.minhop.dump, opensm-subnet.2.minhop.lst, opensm.fdbs.2.minhop). */
static char *part_file_name(const char *name, const struct dump_part *part)
{
	if (!part || !part->tag)
		return g_strdup(name);
	const char *ext = g_str_has_suffix(name, ".dump") ? ".dump" :
			  g_str_has_suffix(name, ".lst") ? ".lst" : "";
	size_t stem = strlen(name) - strlen(ext);
	return g_strdup_printf("%.*s.%s%s", (int)stem, name, part->tag, ext);
}

static int out_open(struct out *o, const char *dir, const char *file, const struct dump_part *part,
		    GError **err)
{
	char *name = part_file_name(file, part);
	o->fp = NULL;
	o->path = g_build_filename(dir, name, NULL);
	char *base = g_strdup_printf(".%s.XXXXXX", name);
	g_free(name);
	o->tmp = g_build_filename(dir, base, NULL);
	g_free(base);
	int fd = g_mkstemp_full(o->tmp, O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		int rc = io_error(err, e, o->path, "cannot create temporary file");
		out_free(o);
		return rc;
	}
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		int rc = io_error(err, e, o->path, "fdopen");
		out_free(o);
		return rc;
	}
	setvbuf(o->fp, NULL, _IOFBF, 1 << 16);
	return 0;
}

static int out_commit(struct out *o, GError **err)
{
	int e = ferror(o->fp) ? EIO : 0;
	if (fflush(o->fp) != 0 && !e)
		e = errno;
	if (!e && fsync(fileno(o->fp)) != 0)
		e = errno;
	if (fclose(o->fp) != 0 && !e)
		e = errno;
	o->fp = NULL;
	if (!e && rename(o->tmp, o->path) != 0)
		e = errno;
	int rc = 0;
	if (e) {
		unlink(o->tmp);
		rc = io_error(err, e, o->path, "write failed");
	}
	out_free(o);
	return rc;
}

/* ---- fixed-width number formatting without printf (the big files have ~10^7 lines) ---- */

static const char HEX_UPPER[] = "0123456789ABCDEF", HEX_LOWER[] = "0123456789abcdef";

/* As printf("%0<width>X") (or %x with digits = HEX_LOWER): at least width digits. */
static char *put_hex(char *p, uint64_t v, int width, const char *digits)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	while (n < width)
		tmp[n++] = '0';
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* As printf("%0<width>u"). */
static char *put_dec(char *p, unsigned v, int width)
{
	char tmp[10];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < width)
		tmp[n++] = '0';
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static void put_line(FILE *fp, const char *line, const char *end)
{
	fwrite_unlocked(line, 1, (size_t)(end - line), fp);
}

/* ---- shared views of the generation ---- */

/* OpenSM's maps are keyed by the network-order GUID, which x86 compares as its byte swap. */
static int cmp_guid_key(const void *a, const void *b, void *ctx)
{
	const uint64_t *keys = ctx;
	uint64_t x = keys[*(const uint32_t *)a], y = keys[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

/* Node ids (switches == 0) or switch ids (switches == 1) in OpenSM's listing order. */
static uint32_t *listing_order(const struct fabric *f, int switches, uint32_t *count)
{
	uint32_t n = switches ? f->pub.n_switches : f->pub.n_nodes;
	uint32_t *ids = g_new(uint32_t, n ? n : 1);
	uint64_t *keys = g_new(uint64_t, n ? n : 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t node = switches ? f->switches[i].node : i;
		ids[i] = i;
		keys[i] = GUINT64_SWAP_LE_BE(f->nodes[node].guid);
	}
	qsort_r(ids, n, sizeof(*ids), cmp_guid_key, keys);
	g_free(keys);
	*count = n;
	return ids;
}

/* NodeDescription as OpenSM prints it: at most 63 characters, non-printables as spaces; the
 * node_name_map_name's name of the node when it has one. */
static const char *print_desc(const struct ibsm_node *n, char buf[DESC_MAX + 1])
{
	if (node_names_copy(n->guid, buf, DESC_MAX + 1)) /* node_name_map_name's, as OpenSM */
		return buf;
	if (!n->desc || !n->desc[0])
		return "<unknown>";
	size_t i = 0;
	for (; i < DESC_MAX && n->desc[i]; i++) {
		unsigned char c = (unsigned char)n->desc[i];
		buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
	}
	buf[i] = '\0';
	return buf;
}

static const char *node_type_str(uint8_t type)
{
	switch (type) {
	case IBSM_CA: return "Channel Adapter";
	case IBSM_SWITCH: return "Switch";
	case IBSM_ROUTER: return "Router";
	default: return "UNKNOWN";
	}
}

/* Switch port 0 of a switch node; the port itself otherwise (OpenSM's "default port"). */
static uint32_t default_port(const struct fabric *f, uint32_t port)
{
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	return n->type == IBSM_SWITCH ? n->port0 : port;
}

/* OpenSM gives every port of a switch the GUID of port 0. */
static uint64_t port_guid(const struct fabric *f, uint32_t port)
{
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	if (n->type == IBSM_SWITCH && f->ports[n->port0].guid)
		return f->ports[n->port0].guid;
	return f->ports[port].guid ? f->ports[port].guid : n->guid;
}

static int check_lft(const struct fabric *f, const uint8_t *lft, uint32_t stride, GError **err)
{
	if ((!lft && f->pub.n_switches) || stride < f->pub.max_lid + 1) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "LFT dump: stride %u too small for max LID %u (or no table)", stride,
			    f->pub.max_lid);
		return -EINVAL;
	}
	return 0;
}

/* ---- the min-hop matrix OpenSM keeps per switch ---- */

/* dist[a * n + b] = switch hops from a to b over every switch link (hops.c, full scope);
 * 0xFF (NO_PATH) if unreachable. */
static uint8_t *switch_distances(const struct fabric *f)
{
	uint32_t n = f->pub.n_switches;
	size_t cells = (size_t)n * n;
	uint8_t *dist = g_malloc(cells ? cells : 1);
	struct ibsm_scope all;
	memset(&all, 0, sizeof(all));
	all.size = sizeof(all);
	if (switch_hops(&f->pub, &all, dist) < 0)
		memset(dist, NO_PATH, cells);
	return dist;
}

/* Hops from switch s through its port to switch t, as OpenSM's hops[lid(t)][port]: port 0
 * holds the least count; a port to another switch 1 + that switch's least count; any other
 * port NO_PATH. */
static uint8_t port_hops(const struct fabric *f, const uint8_t *dist, uint32_t s, uint32_t port,
			 uint32_t t)
{
	uint32_t n = f->pub.n_switches;
	if (port == 0)
		return dist[(size_t)s * n + t];
	const struct ibsm_node *node = &f->nodes[f->switches[s].node];
	if (port > node->nports)
		return NO_PATH;
	uint32_t q = f->ports[node->port0 + port].peer;
	if (q == IBSM_NONE)
		return NO_PATH;
	uint32_t nsw = f->nodes[f->ports[q].node].sw;
	if (nsw == IBSM_NONE)
		return NO_PATH;
	uint8_t h = dist[(size_t)nsw * n + t];
	return h == NO_PATH ? NO_PATH : (uint8_t)(h + 1);
}

/* ---- opensm-subnet.lst ---- */

static const char *type_tag(uint8_t type)
{
	switch (type) {
	case IBSM_SWITCH: return "SW";
	case IBSM_CA: return "CA";
	case IBSM_ROUTER: return "Rt";
	default: return "**";
	}
}

/* OpenSM marks the end whose LID equals its MasterSMLID; after a sweep that is the SM's LID. */
static const char *sm_tag(const struct fabric *f, uint32_t defport)
{
	uint16_t lid = f->ports[defport].lid;
	if (f->pub.sm_port == IBSM_NONE || !lid)
		return "";
	return lid == f->ports[f->pub.sm_port].lid ? "-SM" : "";
}

static uint32_t raw_field(const struct fabric *f, uint32_t port, enum MAD_FIELDS field)
{
	uint8_t buf[SMP_DATA_SIZE];
	if (!f->px[port].have_portinfo)
		return 0;
	memcpy(buf, f->px[port].portinfo, sizeof(buf));
	return mad_get_field(buf, 0, field);
}

static const char *width_str(uint8_t w)
{
	switch (w) {
	case 1: return "1x";
	case 2: return "4x";
	case 4: return "8x";
	case 8: return "12x";
	default: return "??";
	}
}

static const char *state_str(uint8_t s)
{
	switch (s) {
	case IBSM_STATE_ACTIVE: return "ACT";
	case IBSM_STATE_ARMED: return "ARM";
	case IBSM_STATE_INIT: return "INI";
	default: return "DWN";
	}
}

/* SPD= of a link: LinkSpeedActive, overridden by LinkSpeedExtActive when the far end's default
 * port advertises extended speeds (OpenSM tests the far end here, not the near one). */
static const char *speed_str(const struct fabric *f, uint32_t port, uint32_t far_default)
{
	const char *s;
	switch (f->ports[port].speed) {
	case 1: s = "2.5"; break;
	case 2: s = "5"; break;
	case 4: s = "10"; break;
	default: s = "??"; break;
	}
	if (raw_field(f, far_default, IB_PORT_CAPMASK_F) & CAP_EXT_SPEEDS) {
		switch (raw_field(f, port, IB_PORT_LINK_SPEED_EXT_ACTIVE_F)) {
		case 0: break;
		case 1: s = "14"; break;
		case 2: s = "25"; break;
		case 4: s = "50"; break;
		default: s = "??"; break;
		}
	}
	return s;
}

static void lst_end(FILE *fp, const struct fabric *f, uint32_t port, int far)
{
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	const struct node_extra *x = &f->nx[p->node];
	uint32_t def = default_port(f, port);
	char desc[DESC_MAX + 1];
	fprintf(fp, "{ %s%s Ports:%02X SystemGUID:%016" PRIx64 " NodeGUID:%016" PRIx64
		" PortGUID:%016" PRIx64, type_tag(n->type), sm_tag(f, def), n->nports,
		n->sysimg_guid, n->guid, port_guid(f, port));
	/* The far end is printed 8 digits wide, its DevID byte-swapped into the upper half (so
	 * 0x1234 reads "12340000"): OpenSM does this and ibdmchk expects it. */
	if (far)
		fprintf(fp, " VenID:%08X DevID:%04X", (unsigned)x->vendor_id,
			(unsigned)x->device_id << 16);
	else
		fprintf(fp, " VenID:%06X DevID:%04X", (unsigned)x->vendor_id, (unsigned)x->device_id);
	fprintf(fp, " Rev:%08X {%s} LID:%04X PN:%02X } ", (unsigned)x->revision,
		print_desc(n, desc), f->ports[def].lid, p->num);
}

/* Is port id p (and, for a switch port, its switch) in the part? */
static int part_port(const struct fabric *f, const struct dump_part *part, uint32_t p)
{
	if (!part || !part->scope)
		return 1;
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	return ibsm_bit(&part->scope->ports, p) &&
	       (n->type != IBSM_SWITCH || ibsm_bit(&part->scope->switches, n->sw));
}

static int part_switch(const struct dump_part *part, uint32_t sw)
{
	return !part || !part->scope || ibsm_bit(&part->scope->switches, sw);
}

static int part_lid(const struct fabric *f, const struct dump_part *part, uint32_t lid)
{
	return !part || !part->scope || ibsm_scope_routes_lid(&f->pub, part->scope, lid);
}

int dump_subnet_lst(const struct fabric *f, const struct dump_part *part, const char *dir,
		    GError **err)
{
	struct out o;
	int rc = out_open(&o, dir, DUMP_SUBNET_LST, part, err);
	if (rc < 0)
		return rc;
	uint32_t count;
	uint32_t *order = listing_order(f, 0, &count);
	for (uint32_t i = 0; i < count; i++) {
		const struct ibsm_node *n = &f->nodes[order[i]];
		for (uint32_t c = 1; c <= n->nports; c++) {
			uint32_t port = n->port0 + c, peer = f->ports[port].peer;
			if (peer == IBSM_NONE || !part_port(f, part, port) || !part_port(f, part, peer))
				continue;
			lst_end(o.fp, f, port, 0);
			lst_end(o.fp, f, peer, 1);
			fprintf(o.fp, "PHY=%s LOG=%s SPD=%s\n", width_str(f->ports[port].width),
				state_str(f->ports[port].state),
				speed_str(f, port, default_port(f, peer)));
		}
	}
	g_free(order);
	return out_commit(&o, err);
}

/* ---- opensm.fdbs ---- */

/* The lowest port of switch s with the least hop count to switch t. */
static uint32_t best_port(const struct fabric *f, const uint8_t *dist, uint32_t s, uint32_t t)
{
	if (s == t)
		return 0;
	uint8_t least = dist[(size_t)s * f->pub.n_switches + t];
	const struct ibsm_node *node = &f->nodes[f->switches[s].node];
	for (uint32_t p = 1; p <= node->nports; p++)
		if (port_hops(f, dist, s, p, t) == least)
			return p;
	return 0;
}

static void fdbs_line(FILE *fp, const struct fabric *f, const uint8_t *dist, uint32_t s,
		      uint32_t lid, uint8_t out_port)
{
	char line[128], *p = line;
	p = put_str(p, "0x");
	p = put_hex(p, lid, 4, HEX_UPPER);
	p = put_str(p, " : ");
	uint32_t dest = f->lid_port[lid];
	if (dest == IBSM_NONE || out_port == IBSM_NO_PORT) {
		p = put_str(p, "UNREACHABLE\n");
		put_line(fp, line, p);
		return;
	}
	const struct ibsm_node *dn = &f->nodes[f->ports[dest].node];
	uint32_t t = IBSM_NONE;
	uint8_t hops = NO_PATH;
	int end_node = dn->type != IBSM_SWITCH;
	if (!end_node) {
		t = dn->sw;
		hops = port_hops(f, dist, s, out_port, t);
	} else {
		/* A CA or router LID: OpenSM counts to the switch it hangs off, then one more. */
		uint32_t q = f->ports[dest].peer;
		if (q != IBSM_NONE && f->nodes[f->ports[q].node].type == IBSM_SWITCH) {
			t = f->nodes[f->ports[q].node].sw;
			hops = t == s ? 0 : port_hops(f, dist, s, out_port, t);
		}
	}
	p = put_dec(p, out_port, 3);
	if (hops == NO_PATH) {
		p = put_str(p, "  : HOPS UNKNOWN\n");
		put_line(fp, line, p);
		return;
	}
	uint8_t best = dist[(size_t)s * f->pub.n_switches + t];
	if (end_node) {
		best++;
		hops++;
	}
	p = put_str(p, "  : ");
	p = put_dec(p, hops, 2);
	p = put_str(p, "   : ");
	if (best == hops)
		p = put_str(p, "yes\n");
	else
		p += snprintf(p, sizeof(line) - (size_t)(p - line),
			      "No %u hop path possible via port %u!\n", best, best_port(f, dist, s, t));
	put_line(fp, line, p);
}

int dump_fdbs(const struct fabric *f, const uint8_t *lft, uint32_t stride,
	      const struct dump_part *part, const char *dir, GError **err)
{
	int rc = check_lft(f, lft, stride, err);
	if (rc < 0)
		return rc;
	struct out o;
	rc = out_open(&o, dir, DUMP_FDBS, part, err);
	if (rc < 0)
		return rc;
	uint8_t *dist = switch_distances(f);
	uint32_t count;
	uint32_t *order = listing_order(f, 1, &count);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t s = order[i];
		if (!part_switch(part, s))
			continue;
		const uint8_t *row = lft + (size_t)s * stride;
		fprintf(o.fp, "dump_ucast_routes: Switch 0x%016" PRIx64
			"\nLID    : Port : Hops : Optimal\n", f->nodes[f->switches[s].node].guid);
		for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++)
			if (part_lid(f, part, lid))
				fdbs_line(o.fp, f, dist, s, lid, row[lid]);
	}
	g_free(order);
	g_free(dist);
	return out_commit(&o, err);
}

/* ---- opensm.mcfdbs ---- */

struct mlid_index {
	uint16_t mlid;
	uint32_t group;
};

static int cmp_mlid(const void *a, const void *b)
{
	const struct mlid_index *x = a, *y = b;
	if (x->mlid != y->mlid)
		return x->mlid < y->mlid ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

int dump_mcfdbs_groups(const struct fabric *f, uint32_t n_groups, const uint16_t *mlids,
		       const uint64_t (*const *egress)[4], const char *dir, GError **err)
{
	if (n_groups && (!mlids || !egress)) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "MFT dump: groups without tables");
		return -EINVAL;
	}
	struct out o;
	int rc = out_open(&o, dir, DUMP_MCFDBS, NULL, err);
	if (rc < 0)
		return rc;
	struct mlid_index *by_mlid = g_new(struct mlid_index, n_groups ? n_groups : 1);
	for (uint32_t g = 0; g < n_groups; g++) {
		by_mlid[g].mlid = mlids[g];
		by_mlid[g].group = g;
	}
	qsort(by_mlid, n_groups, sizeof(*by_mlid), cmp_mlid);
	uint32_t count;
	uint32_t *order = listing_order(f, 1, &count);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t s = order[i];
		const struct ibsm_node *node = &f->nodes[f->switches[s].node];
		int header = 0;
		for (uint32_t k = 0; k < n_groups; k++) {
			const uint64_t *bits = egress[by_mlid[k].group][s];
			int first = 1;
			for (uint32_t p = 0; p <= node->nports; p++) {
				if (!((bits[p >> 6] >> (p & 63)) & 1))
					continue;
				if (!header) {
					fprintf(o.fp, "\nSwitch 0x%016" PRIx64 "\nLID    : Out Port(s)\n",
						node->guid);
					header = 1;
				}
				if (first) {
					fprintf(o.fp, "0x%04X :", by_mlid[k].mlid);
					first = 0;
				}
				fprintf(o.fp, " 0x%03X ", p);
			}
			if (!first)
				fputc('\n', o.fp);
		}
	}
	g_free(order);
	g_free(by_mlid);
	return out_commit(&o, err);
}

int dump_mcfdbs(const struct fabric *f, const char *dir, GError **err)
{
	return dump_mcfdbs_groups(f, 0, NULL, NULL, dir, err);
}

/* ---- opensm-lfts.dump ---- */

/* What follows "0x%04x %03u # " for each LID: the same on every switch, so built once. */
static char **lfts_targets(const struct fabric *f)
{
	char **text = g_new(char *, f->pub.max_lid + 2);
	char desc[DESC_MAX + 1];
	for (uint32_t lid = 0; lid <= f->pub.max_lid; lid++) {
		uint32_t dest = lid ? f->lid_port[lid] : IBSM_NONE;
		if (dest == IBSM_NONE) {
			text[lid] = g_strdup("unknown node and type\n");
			continue;
		}
		const struct ibsm_node *dn = &f->nodes[f->ports[dest].node];
		text[lid] = g_strdup_printf("%s portguid 0x%016" PRIx64 ": '%s'\n",
					    node_type_str(dn->type), port_guid(f, dest),
					    print_desc(dn, desc));
	}
	text[f->pub.max_lid + 1] = NULL;
	return text;
}

int dump_lfts(const struct fabric *f, const uint8_t *lft, uint32_t stride,
	      const struct dump_part *part, const char *dir, GError **err)
{
	int rc = check_lft(f, lft, stride, err);
	if (rc < 0)
		return rc;
	struct out o;
	rc = out_open(&o, dir, DUMP_LFTS, part, err);
	if (rc < 0)
		return rc;
	uint32_t count, max_lid = f->pub.max_lid;
	uint32_t *order = listing_order(f, 1, &count);
	char **targets = lfts_targets(f);
	char desc[DESC_MAX + 1];
	for (uint32_t i = 0; i < count; i++) {
		uint32_t s = order[i];
		if (!part_switch(part, s))
			continue;
		const struct ibsm_node *node = &f->nodes[f->switches[s].node];
		const uint8_t *row = lft + (size_t)s * stride;
		fprintf(o.fp, "Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64 " ('%s'):\n",
			max_lid, f->ports[node->port0].lid, node->guid, print_desc(node, desc));
		for (uint32_t lid = 0; lid <= max_lid; lid++) {
			uint8_t port = row[lid];
			if (port > node->nports || !part_lid(f, part, lid))
				continue;
			char line[16], *p = line;
			p = put_str(p, "0x");
			p = put_hex(p, lid, 4, HEX_LOWER);
			*p++ = ' ';
			p = put_dec(p, port, 3);
			p = put_str(p, " # ");
			put_line(o.fp, line, p);
			fputs_unlocked(targets[lid], o.fp);
		}
		fprintf(o.fp, "%u lids dumped\n", max_lid);
	}
	g_strfreev(targets);
	g_free(order);
	return out_commit(&o, err);
}

/* ---- opensm-lid-matrix.dump ---- */

int dump_lid_matrix(const struct fabric *f, const struct dump_part *part, const char *dir,
		    GError **err)
{
	struct out o;
	int rc = out_open(&o, dir, DUMP_LID_MATRIX, part, err);
	if (rc < 0)
		return rc;
	uint8_t *dist = switch_distances(f);
	uint32_t count;
	uint32_t *order = listing_order(f, 1, &count);
	char line[64 + 3 * 256], *p;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t s = order[i];
		if (!part_switch(part, s))
			continue;
		const struct ibsm_node *node = &f->nodes[f->switches[s].node];
		fprintf(o.fp, "Switch: guid 0x%016" PRIx64 "\n", node->guid);
		/* OpenSM keeps hop rows for switch LIDs only. */
		for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
			uint32_t dest = f->lid_port[lid];
			if (dest == IBSM_NONE || !part_lid(f, part, lid))
				continue;
			const struct ibsm_node *dn = &f->nodes[f->ports[dest].node];
			if (dn->type != IBSM_SWITCH ||
			    dist[(size_t)s * f->pub.n_switches + dn->sw] == NO_PATH)
				continue;
			p = put_str(line, "0x");
			p = put_hex(p, lid, 4, HEX_LOWER);
			*p++ = ':';
			for (uint32_t port = 0; port <= node->nports; port++) {
				*p++ = ' ';
				p = put_hex(p, port_hops(f, dist, s, port, dn->sw), 2, HEX_LOWER);
			}
			p = put_str(p, " # portguid 0x");
			p = put_hex(p, port_guid(f, dest), 16, HEX_LOWER);
			*p++ = '\n';
			put_line(o.fp, line, p);
		}
	}
	g_free(order);
	g_free(dist);
	return out_commit(&o, err);
}
