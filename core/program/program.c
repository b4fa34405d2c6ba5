/* SPDX-License-Identifier: BSD-2-Clause */
/* program.c - the order of a programming pass: SM port, end ports, switch links and SwitchInfo,
 * P_Keys (what needs no routes: it may run while the routing thread computes), then QoS, LFT
 * blocks with ARMED beside them, ACTIVE; then the verdict on every linked port. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/guid_hash.h"
#include "base/log.h"
#include "fabric/slice.h"
#include "program/fdr10.h"
#include "program/lft.h"
#include "program/mft.h"
#include "program/pkey.h"
#include "program/portinfo.h"
#include "program/qos.h"
#include "program/program.h"

#define NOT_ACTIVE_LOG_MAX 10

struct programmer {
	struct transport *t;
	volatile int *stop;
	struct lft_memory *lft;
	struct pkey_memory *pkey;
	struct mft_memory *mft;
	struct qos_memory *qos;
	struct fdr10_memory *fdr10; /* ports that refused MlnxExtPortInfo (program/fdr10.h) */
	GHashTable *mkey_written; /* port GUID -> M_Key fields last written (portinfo.h) */
	GHashTable *enf_written;  /* struct port_written -> 1 + what was written (portinfo.c) */
};

guint port_written_hash(gconstpointer k)
{
	const struct port_written *w = k;
	return guid_port_hash(w->guid, w->num, w->kind);
}

gboolean port_written_equal(gconstpointer a, gconstpointer b)
{
	const struct port_written *x = a, *y = b;
	return x->guid == y->guid && x->num == y->num && x->kind == y->kind;
}

struct programmer *programmer_new(struct transport *t, volatile int *stop)
{
	struct programmer *p = g_new0(struct programmer, 1);
	p->t = t;
	p->stop = stop;
	p->lft = lft_memory_new();
	p->pkey = pkey_memory_new();
	p->mft = mft_memory_new(t);
	p->qos = qos_memory_new();
	p->fdr10 = fdr10_memory_new();
	p->mkey_written = g_hash_table_new_full(model_guid_hash, model_guid_equal, g_free, g_free);
	p->enf_written = g_hash_table_new_full(port_written_hash, port_written_equal, g_free, NULL);
	return p;
}

void programmer_free(struct programmer *p)
{
	if (!p)
		return;
	lft_memory_free(p->lft);
	pkey_memory_free(p->pkey);
	mft_memory_free(p->mft);
	qos_memory_free(p->qos);
	fdr10_memory_free(p->fdr10);
	g_hash_table_destroy(p->mkey_written);
	g_hash_table_destroy(p->enf_written);
	g_free(p);
}

void programmer_forget(struct programmer *p)
{
	lft_memory_free(p->lft);
	p->lft = lft_memory_new();
	pkey_memory_forget(p->pkey);
	mft_memory_forget(p->mft);
	qos_memory_forget(p->qos);
	fdr10_memory_forget(p->fdr10);
	g_hash_table_remove_all(p->mkey_written);
	g_hash_table_remove_all(p->enf_written);
}

struct mft_memory *programmer_mft(struct programmer *p)
{
	return p->mft;
}

const struct vlt_memory *programmer_vl_tables(const struct programmer *p)
{
	return qos_memory_tables(p->qos);
}

const uint16_t *programmer_pkey_table(const struct programmer *p, const struct fabric *f,
				      uint32_t port, uint32_t *cap)
{
	return pkey_memory_table(p->pkey, f, port, cap);
}

uint64_t programmer_pkey_version(const struct programmer *p, const struct fabric *f)
{
	return pkey_memory_version(p->pkey, f);
}

static void drain(struct pass *g)
{
	transport_drain(g->t, g->stop);
}

/* 1-2. Our own port first, so the fabric learns the master's LID; then every other end port. */
static void end_ports(struct pass *g, struct phase_log *pl)
{
	struct fabric *f = g->f;
	uint16_t sm_lid = f->pub.sm_port != IBSM_NONE ? f->ports[f->pub.sm_port].lid : 0;
	g->sm_lid = sm_lid;
	uint32_t n = 0;
	struct slicer sl;
	phase_begin(pl, "lids");
	if (f->pub.sm_port != IBSM_NONE) {
		n += (uint32_t)portinfo_end_port(g, f->pub.sm_port, sm_lid);
		drain(g);
	}
	slicer_init(&sl, g->t, g->stop);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != f->pub.sm_port && fabric_is_end_port(f, p) && f->px[p].have_portinfo) {
			n += (uint32_t)portinfo_end_port(g, p, sm_lid);
			slicer_check(&sl); /* the SA is served between every few ms of this */
		}
	drain(g);
	phase_end(pl, "%u end ports set", n);
}

/* 3. Switch links (MTU / OperVLs on INIT ports, partition enforcement), SwitchInfo (LinearFDBTop first), and what
 * each switch holds. */
static uint32_t switch_ports(struct pass *g, struct phase_log *pl, uint32_t nblocks)
{
	struct fabric *f = g->f;
	uint32_t n_sp = 0, n_read = 0, no_si = 0;
	struct slicer sl;
	slicer_init(&sl, g->t, g->stop);
	phase_begin(pl, "ports");
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		for (uint32_t pn = 1; pn <= n->nports; pn++)
			if (f->px[n->port0 + pn].have_portinfo)
				n_sp += (uint32_t)portinfo_switch_port(g, n->port0 + pn);
		lft_switchinfo(g, s);
		slicer_check(&sl); /* tens of ms over 50 000 ports: the SA is served between */
	}
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		slicer_check(&sl);
		uint32_t node = f->switches[s].node;
		if (f->nx[node].have_switchinfo) {
			n_read += lft_prepare(g, s, nblocks); /* paced by the slicer: a share at a time */
		} else if (no_si++ < NOT_ACTIVE_LOG_MAX)
			LOG_E("PRG-0003", "switch 0x%016" PRIx64 " (%s): no SwitchInfo, its tables are not "
			      "programmed", f->nodes[node].guid, f->nodes[node].desc);
	}
	if (no_si)
		g->failures++;
	drain(g);
	phase_end(pl, "%u switch ports set, %u LFT blocks read", n_sp, n_read);
	return n_read;
}

/* The verdict: every linked port ACTIVE; f's states become what was read back. */
static uint32_t not_active_ports(struct pass *g)
{
	struct fabric *f = g->f;
	uint32_t not_active = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (!portinfo_linked(f, p))
			continue;
		f->ports[p].state = g->state[p];
		if (g->state[p] == IBSM_STATE_ACTIVE)
			continue;
		if (not_active++ < NOT_ACTIVE_LOG_MAX)
			LOG_E("PRG-0001", "port %u of node 0x%016" PRIx64 " (%s) is in state %u, not ACTIVE",
			      f->ports[p].num, f->nodes[f->ports[p].node].guid,
			      f->nodes[f->ports[p].node].desc, g->state[p]);
	}
	if (not_active)
		LOG_E("PRG-0002", "%u linked ports are not ACTIVE", not_active);
	return not_active;
}

/* A programming pass in two halves (program.h): what needs no routes, then the rest. */
struct program_pass {
	struct programmer *p;
	struct pass g;                     /* the callbacks' context: stays where it is */
	const struct part_policy *partitions;
	struct phase_log *pl;
	struct program_report rep;
	uint32_t nblocks;                  /* LFT blocks of a row: max_lid + 1 entries */
	uint32_t enabled;                  /* ports enabled again (portinfo_enable_disabled) */
	int before_done;                   /* the first half ran */
};

struct program_pass *program_pass_new(struct programmer *p, struct fabric *f, const struct sm_options *o,
				      const struct part_policy *partitions, struct phase_log *pl,
				      int first_master)
{
	struct program_pass *pp = g_new0(struct program_pass, 1);
	pp->p = p;
	pp->partitions = partitions;
	pp->pl = pl;
	/* the stride every routing result of f has (routing/result.c): rows of max_lid + 1 */
	uint32_t stride = f->pub.max_lid + 1;
	pp->g = (struct pass){ .t = p->t, .lft_mem = p->lft, .pkey_mem = p->pkey, .mkey_written = p->mkey_written,
			       .enf_written = p->enf_written, .end_port = portinfo_end_port, .stop = p->stop,
			       .f = f, .o = o, .stride = stride, .first_master = first_master,
			       .enforce_pkeys = partitions ? options_part_enforce(o) : 0 };
	pp->nblocks = lft_nblocks(stride);
	mft_memory_use_top(p->mft, o->use_mfttop); /* the multicast pass after this one writes it */
	pp->g.state = g_new0(uint8_t, f->pub.n_ports ? f->pub.n_ports : 1);
	for (uint32_t i = 0; i < f->pub.n_ports; i++)
		pp->g.state[i] = f->ports[i].state;
	return pp;
}

/* End ports (the SM's first), FDR10, ports enabled again, switch ports and SwitchInfo with the
 * LFT blocks to read, P_Keys: nothing here needs the routes (g->r NULL beside the routing:
 * each end port's MasterSMSL is the one last written, else sm_sl, kept in smsl_guess and
 * mended by program_with_routes() where the routes' engine says otherwise). */
void program_before_routes(struct program_pass *pp)
{
	struct pass *g = &pp->g;
	const struct sm_options *o = g->o;
	struct program_report *rep = &pp->rep;
	if (pp->before_done)
		return;
	pp->before_done = 1;
	if (!g->r) { /* the MasterSMSL each end port is given now, mended once the routes are known */
		g->smsl_guess = g_malloc(g->f->pub.n_ports ? g->f->pub.n_ports : 1);
		memset(g->smsl_guess, IBSM_NO_PORT, g->f->pub.n_ports ? g->f->pub.n_ports : 1);
	}
	pkey_prepare_start(g, pp->partitions); /* beside the SMPs until the P_Key phase */
	end_ports(g, pp->pl);
	{
		struct fdr10_stats fs; /* FDR10 before the links go ARMED, as OpenSM's link manager */
		fdr10_program(g, pp->p->fdr10, &fs);
		if (fs.asked)
			LOG_I("PRG-0004", "MlnxExtPortInfo (fdr10 %u): %u ports asked, %u answered, %u support "
			      "FDR10, %u written, %u refused, %u left alone (refused before)", o->fdr10, fs.asked,
			      fs.answered, fs.capable, fs.written, fs.refused, fs.left_alone);
	}
	pp->enabled = mkey_enabled(transport_mkey(g->t)) ? portinfo_enable_disabled(g) : 0;
	rep->lft_blocks_read = switch_ports(g, pp->pl, pp->nblocks);

	phase_begin(pp->pl, "pkeys");
	struct pkey_stats pks;
	rep->pkey_blocks_written = pkey_program(g, pp->partitions, &pks);
	rep->pkey_blocks_read = pks.blocks_read;
	phase_end(pp->pl, "%u P_Key blocks written, %u read, %u tables known", pks.blocks_written,
		  pks.blocks_read, pks.trusted);
}

void program_pass_free(struct program_pass *pp)
{
	if (!pp)
		return;
	pkey_prepare_drop(&pp->g);
	g_free(pp->g.state);
	g_free(pp->g.smsl_guess);
	g_free(pp->g.lft_held);
	g_free(pp);
}

int program_with_routes(struct program_pass *pp, const struct routing_result *r, struct program_report *rep)
{
	struct pass *g = &pp->g;
	struct programmer *p = pp->p;
	struct phase_log *pl = pp->pl;
	const struct sm_options *o = g->o;
	g->r = r;
	g->lft = r->lft;
	if (r->stride != g->stride) { /* not from this generation's routing (never, by result.c) */
		g->stride = r->stride;
		pp->nblocks = r->stride ? lft_nblocks(r->stride) : 0;
	}
	program_before_routes(pp); /* no-op when it ran beside the routing */
	uint32_t nblocks = pp->nblocks;
	if (g->smsl_guess) { /* it did: an engine's path_sl may give the SM another SL */
		uint32_t n = portinfo_end_ports_smsl(g, g->sm_lid);
		drain(g);
		if (n)
			LOG_I("PRG-0005", "MasterSMSL of %u end ports written again: the routes give another "
			      "SL towards the SM than the one written beside the routing", n);
	}

	/* SL2VL and VL arbitration after OperVLs (doc/design.md): under -Q every port's; without
	 * -Q those the routing engine gives (its VLs), and what nobody wants is forgotten (a later
	 * -Q reads them again) */
	{
		phase_begin(pl, "qos");
		struct vlt_stats qs;
		pp->rep.qos_writes = qos_program(g, p->qos, r, &qs);
		phase_end(pl, "%u SL2VL/VLArb tables%s, %u read, %u written, %u known", qs.tables,
			  o->qos ? "" : " (the routing engine's, no -Q)", qs.read, qs.written, qs.trusted);
	}

	/* 4. LFT blocks that differ, with ARMED on INIT ports streaming beside them */
	phase_begin(pl, "lft");
	pp->rep.lft_blocks_written = lft_write_changed(g, nblocks);
	uint32_t n_arm = portinfo_step_state(g, IBSM_STATE_INIT, IBSM_STATE_ARMED, 0);
	drain(g);
	phase_end(pl, "%u LFT blocks written, %u ports ARMED", pp->rep.lft_blocks_written, n_arm);

	/* 5. ACTIVE from ARMED, only where the peer is ARMED (or already ACTIVE) too */
	phase_begin(pl, "active");
	uint32_t n_act = portinfo_step_state(g, IBSM_STATE_ARMED, IBSM_STATE_ACTIVE, 1);
	drain(g);
	phase_end(pl, "%u ports ACTIVE", n_act);

	*rep = pp->rep;
	rep->not_active = not_active_ports(g) + pp->enabled; /* their links come up by the next sweep */
	rep->failed = g->failed;
	rep->failures = g->failures;
	rep->writes = g->sets + rep->lft_blocks_written; /* g->sets: PortInfo, SwitchInfo, P_Key, QoS */
	int rc = rep->not_active || rep->failures || (p->stop && *p->stop) ? -EIO : 0;
	program_pass_free(pp);
	return rc;
}

int program_fabric(struct programmer *p, struct fabric *f, const struct routing_result *r,
		   const struct sm_options *o, const struct part_policy *partitions,
		   struct phase_log *pl, int first_master, struct program_report *rep)
{
	struct program_pass *pp = program_pass_new(p, f, o, partitions, pl, first_master);
	memset(rep, 0, sizeof(*rep));
	/* one after the other: the end ports' MasterSMSL asks r's engines */
	return program_with_routes(pp, r, rep);
}
