/* SPDX-License-Identifier: BSD-2-Clause */
/* ftree.c - the fat-tree routing engine (-R ftree): reads its options (-a roots, -u compute
 * nodes, -G I/O nodes, -H max reverse hops), declines what it cannot route (a topology that
 * breaks the fat-tree rules, more than one path bit) with the rule and the switch in `why`,
 * and writes opensm-ftree-ca-order.dump, OpenSM's compute-node order, through dump(). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_glue.h"
#include "ftree.h"

#define DUMP_NAME "opensm-ftree-ca-order.dump"

/* What dump() needs, copied out of the fabric generation. */
struct ftree_result {
	uint32_t n;
	uint16_t *lid;       /* 0xFFFF: dummy */
	char **desc;         /* NULL: dummy */
	struct ftree_stats st;
	uint32_t levels;
};

static void result_free(void *r)
{
	struct ftree_result *res = r;
	if (!res)
		return;
	for (uint32_t i = 0; i < res->n && res->desc; i++)
		free(res->desc[i]);
	free(res->desc);
	free(res->lid);
	free(res);
}

/* The GUID lists the options point to. */
struct lists {
	struct guid_list roots, cns, ios;
};

static int load_list(const struct ibsm_core *core, const char *key, struct guid_list *g,
		     const struct guid_list **out, struct ibsm_routes *r)
{
	const char *path = engine_config_path(core, key);
	*out = NULL;
	if (!path)
		return 0;
	char why[sizeof(r->why)];
	int rc = ftree_guids_load(core, key, path, g, why, sizeof(why));
	if (rc < 0) /* logged, naming key and file */
		return engine_fail(r, rc, "%s", why);
	core->log(core, IBSM_LOG_VERBOSE, "%s %s: %u GUIDs, %u bad lines", key, path, g->n,
		  g->bad_lines);
	*out = g;
	return 0;
}

/* The options from the configuration: the GUID files (-a, -u, -G) into l, and -H. Returns 0,
 * or < 0 with r->why naming a file that cannot be read. */
static int load_opts(const struct ibsm_core *core, struct lists *l, struct ftree_opts *o,
		     struct ibsm_routes *r)
{
	int rc;
	if ((rc = load_list(core, "root_guid_file", &l->roots, &o->roots, r)) < 0 ||
	    (rc = load_list(core, "cn_guid_file", &l->cns, &o->cns, r)) < 0 ||
	    (rc = load_list(core, "io_guid_file", &l->ios, &o->ios, r)) < 0)
		return rc;
	unsigned long mrh = ibsm_config_ulong(core, "max_reverse_hops", 0);
	o->max_reverse_hops = mrh > 64 ? 64 : (unsigned)mrh;
	return 0;
}

/* Copies the CA order out of the fabric into the result, for dump(). 0 or -ENOMEM. */
static int result_copy_order(struct ftree_result *res, const struct ibsm_fabric *f,
			     const struct ftree_order *order)
{
	res->n = order->n;
	res->lid = malloc((order->n + 1) * sizeof(*res->lid));
	res->desc = calloc(order->n + 1, sizeof(*res->desc));
	if (!res->lid || !res->desc)
		return -ENOMEM;
	for (uint32_t i = 0; i < order->n; i++) {
		uint32_t p = order->port[i];
		if (p == IBSM_NONE) {
			res->lid[i] = 0xFFFF;
			continue;
		}
		res->lid[i] = ibsm_port_at(f, p)->lid;
		res->desc[i] = strdup(ibsm_node_at(f, ibsm_port_at(f, p)->node)->desc);
		if (!res->desc[i])
			return -ENOMEM;
	}
	return 0;
}

static void log_tree(const struct ibsm_core *core, const struct ftree_topo *t)
{
	core->log(core, IBSM_LOG_INFO,
		  "fat tree: %u levels, %u switches (%u roots%s, %u leaves), %u CA ports "
		  "(%u compute nodes, up to %u per leaf)", t->leaf_rank + 1, t->nscope, t->nroots,
		  t->roots_given ? " from root_guid_file" : "", t->nleaves, t->ncas, t->ncn,
		  t->max_cn_per_leaf);
}

static void log_stats(const struct ibsm_core *core, const struct ftree_stats *st,
		      const struct ftree_opts *o, double seconds)
{
	if (st->non_updown)
		core->log(core, IBSM_LOG_INFO,
			  "%u routes toward switch LIDs are not up/down (non-up/down turns, "
			  "switch LIDs only)", st->non_updown);
	if (st->reverse)
		core->log(core, IBSM_LOG_INFO,
			  "%u routes toward I/O nodes use reverse hops (max_reverse_hops %u)",
			  st->reverse, o->max_reverse_hops);
	if (st->mgmt_only)
		core->log(core, IBSM_LOG_INFO,
			  "%u routes toward CA LIDs from switches without CAs are not up/down (their "
			  "own management traffic only: no up/down path there)", st->mgmt_only);
	if (st->unrouted_leaf)
		core->log(core, IBSM_LOG_INFO,
			  "%u (leaf switch, CA LID) pairs have no up/down path", st->unrouted_leaf);
	core->log(core, IBSM_LOG_INFO,
		  "ftree routed %u CA LIDs and %u switch LIDs: %llu LFT entries in %.3f s "
		  "(%u threads)", st->ca_dests, st->sw_dests, (unsigned long long)st->entries,
		  seconds, st->threads);
}

static const struct engine_run_spec ftree_run = {
	.name = "ftree", .result_size = sizeof(struct ftree_result), .result_free = result_free,
	.flags = ENGINE_RUN_ONE_PATH_BIT,
};

static int ftree_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		       struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &ftree_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct lists l = { 0 };
	struct ftree_opts o = { 0 };
	struct ftree_topo t;
	struct ftree_order order = { 0 };
	struct ftree_result *res = run.res;
	memset(&t, 0, sizeof(t));
	rc = load_opts(core, &l, &o, out);
	if (rc == 0)
		rc = ftree_topo_build(f, sc, &o, &t, out->why, sizeof(out->why));
	if (rc == 0) {
		log_tree(core, &t);
		res->levels = t.leaf_rank + 1;
		rc = ftree_route_all(core, f, sc, &t, &o, out, &order, &res->st);
	}
	if (rc == 0 && result_copy_order(res, f, &order) < 0)
		rc = engine_fail(out, -ENOMEM, "out of memory");
	if (rc == 0)
		log_stats(core, &res->st, &o, engine_run_seconds(&run));
	free(order.port);
	ftree_topo_free(&t);
	guid_list_clear(&l.roots);
	guid_list_clear(&l.cns);
	guid_list_clear(&l.ios);
	return engine_run_end(&run, rc);
}

/* OpenSM's compute-node order: per leaf in index order, "0x%04x\t<description>" for each
 * compute node, then "0xFFFF\tDUMMY" up to the fullest leaf. Written atomically, through a
 * new temporary file (mkstemp: never a FIFO, a symlink or another file planted at a guessable
 * name, which fopen would block on or truncate). */
static int ftree_dump(const void *result, const char *dir, const char *suffix)
{
	const struct ftree_result *res = result;
	if (!res || !dir)
		return 0;
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%s%s", dir, DUMP_NAME, suffix ? suffix : "");
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	FILE *fp = fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
	if (!fp) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return -e;
	}
	for (uint32_t i = 0; i < res->n; i++) {
		if (!res->desc[i]) {
			fputs("0xFFFF\tDUMMY\n", fp);
			continue;
		}
		fprintf(fp, "0x%04x\t", res->lid[i]);
		for (const char *c = res->desc[i]; *c; c++)
			fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, fp);
		fputc('\n', fp);
	}
	int bad = ferror(fp);
	if (fclose(fp) != 0 || bad) {
		int e = errno ? errno : EIO;
		unlink(tmp);
		return -e;
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return -e;
	}
	return 0;
}

static const struct ibsm_config_key ftree_keys[] = {
	{ "root_guid_file", NULL, "Root switch GUIDs, one a line (unset: the switches farthest "
	  "from the compute nodes)" },
	{ "cn_guid_file", NULL, "Compute node port or node GUIDs, one a line (unset: every CA "
	  "port not in io_guid_file)" },
	{ "io_guid_file", NULL, "I/O node port or node GUIDs, one a line; routes to them may "
	  "take reverse hops" },
	{ "max_reverse_hops", "0", "Down-then-up turns allowed on routes to I/O nodes (0-64)" },
	{ "ftree_threads", "0", "Threads filling the LFT columns (0: automatic, 1 or 2)" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("ftree"),
	.caps = 0,
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = ftree_route,
	.result_free = result_free,
	.path_sl = engine_path_sl_hint,
	.dump = ftree_dump,
	.config_keys = ftree_keys,
	.summary = "Fat-tree routing: up/down paths spread so that shifts between compute nodes "
		   "are congestion-free",
};
