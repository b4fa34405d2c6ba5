/* SPDX-License-Identifier: BSD-2-Clause */
/* torus2qos.c - the torus-2QoS routing engine (torus-2QoS(8)): deadlock-free dimension-order
 * routes on 2D/3D tori and meshes with two QoS levels, that survive failed links and one failed
 * switch without changing any path SL. This file is the engine's table and its route(): read
 * torus-2QoS.conf (torus_config, through the core's reader), find the torus (topo.c), check its
 * rings and fill the rows (route.c), keep what path_sl and sl2vl answer later (sl.c). A torus it
 * cannot route is refused with the reason, so the chain's next engine (or no_fallback's previous
 * routes) takes over. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "master_tree.h"
#include "route.h"
#include "sl.h"
#include "topo.h"

static void result_free(void *r)
{
	torus2qos_result_free(r);
}

static const struct engine_run_spec torus2qos_run = {
	.name = "torus-2QoS", .result_size = sizeof(struct torus2qos_result), .result_free = result_free,
};

/* The configuration file, parsed and checked; NULL with out->why set. */
static struct torus_conf *read_conf(const struct ibsm_core *core, struct ibsm_routes *out)
{
	const char *path = engine_config_path(core, "torus_config");
	if (!path) {
		engine_fail(out, -ENOENT, "no torus_config: torus-2QoS needs torus-2QoS.conf");
		return NULL;
	}
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	/* the core's reader: a FIFO or /dev/zero is refused at once, never blocks this thread */
	int rc = ibsm_read_file(core, "torus_config", path, &text, &len, out->why, sizeof(out->why));
	if (rc < 0)
		return NULL;
	struct torus_conf *c = torus_conf_parse_text(text, len, path, &err);
	free(text);
	if (!c || torus_conf_check_seeds(c, &err) < 0) {
		engine_fail(out, -EINVAL, "%s", err->message);
		g_error_free(err);
		torus_conf_free(c);
		return NULL;
	}
	for (guint i = 0; i < c->notes->len; i++)
		core->log(core, IBSM_LOG_VERBOSE, "%s",
			  (const char *)g_ptr_array_index(c->notes, i));
	return c;
}

static int torus2qos_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &torus2qos_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct torus2qos_result *res = run.res;
	struct torus_conf *conf = read_conf(core, out);
	if (!conf)
		return engine_run_end(&run, -EINVAL);
	if (!ibsm_config_bool(core, "qos", 0))
		core->log(core, IBSM_LOG_INFO, "warning: QoS is off (-Q): the switches "
			  "keep their SL2VL tables and torus-2QoS routes are not free of credit "
			  "loops");
	else
		torus2qos_qos_warnings(core);
	struct torus2qos_topo t;
	rc = torus2qos_topo_build(core, f, sc, conf, &t, out);
	if (rc == 0)
		rc = torus2qos_lines(core, &t, out);
	if (rc == 0)
		rc = torus2qos_fill(core, f, sc, conf, &t, out);
	if (rc == 0 && (torus2qos_result_fill(res, f, &t) < 0 || torus2qos_mcast_build(core, f, &t, res) < 0))
		rc = engine_fail(out, -ENOMEM, "out of memory");
	if (rc == 0) {
		res->seconds = engine_run_seconds(&run);
		core->log(core, IBSM_LOG_INFO, "routed %u switches in %.3f s",
			  t.placed, res->seconds);
	} else {
		core->log(core, IBSM_LOG_ERROR, "%s", out->why);
	}
	torus2qos_topo_free(&t);
	torus_conf_free(conf);
	return engine_run_end(&run, rc);
}

/* torus_config and the QoS keys are the core's; torus-2QoS reads them (the qos_* ones for the
 * seed's warnings, never to program anything). */
#define QOS_KEYS(scope, what)                                                                \
	{ scope "max_vls", NULL, what " data VLs (torus-2QoS warns below what it needs)" },  \
	{ scope "vlarb_high", NULL, what " high VL arbitration (torus-2QoS warns if unfair)" }, \
	{ scope "vlarb_low", NULL, what " low VL arbitration (torus-2QoS warns if unfair)" },  \
	{ scope "sl2vl", NULL, what " SL2VL: ignored under torus-2QoS, with a warning" }

static const struct ibsm_config_key torus2qos_keys[] = {
	{ "torus_config", NULL, "torus-2QoS.conf: the torus or mesh, its seeds and datelines" },
	{ "qos", "FALSE", "Program SL2VL and VL arbitration (-Q): torus-2QoS needs it" },
	{ "log_flags", NULL, "Log flags: with 0x8 (debug) torus-2QoS logs its torus map" },
	{ "torus2qos_threads", "0", "Threads filling the switch rows (0: automatic, 1 or 2)" },
	QOS_KEYS("qos_", "Every port's"),
	QOS_KEYS("qos_ca_", "CA ports'"),
	QOS_KEYS("qos_rtr_", "Router ports'"),
	QOS_KEYS("qos_sw0_", "Switch port 0's"),
	QOS_KEYS("qos_swe_", "Switch external ports'"),
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("torus-2QoS"),
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = torus2qos_route,
	.result_free = result_free,
	.path_sl = torus2qos_path_sl,
	.sl2vl = torus2qos_sl2vl,
	.mcast = torus2qos_mcast,
	.dump = engine_dump_nothing,
	.config_keys = torus2qos_keys,
	.summary = "Torus-2QoS: dimension-order routes on 2D/3D tori and meshes, free of credit "
		   "loops with path SLs and SL2VL, around failed links and a failed switch",
};
