/* SPDX-License-Identifier: BSD-2-Clause */
/* pass.h - one programming pass over a generation, shared by the writers of this folder
 * (PortInfo, SwitchInfo and LFT, P_Key): where SMPs go, what the ports' states are as the
 * replies come back, and what failed. */
#ifndef IBSM_PROGRAM_PASS_H
#define IBSM_PROGRAM_PASS_H

#include <stdint.h>
#include "config/options.h"
#include "fabric/model.h"
#include "mad/transport.h"

struct lft_memory;
struct pkey_memory;
struct routing_result;
struct held_lft;

/* A key of enf_written: a port by node GUID and number (so that it means the same in another
 * generation), and what of it is remembered. */
enum port_written_kind { WRITTEN_ENFORCEMENT, WRITTEN_SMSL };
struct port_written {
	uint64_t guid;
	uint8_t num, kind;
};
guint port_written_hash(gconstpointer k);
gboolean port_written_equal(gconstpointer a, gconstpointer b);

struct pass {
	struct transport *t;
	struct lft_memory *lft_mem;   /* what switches hold, kept across sweeps (program/lft.h) */
	struct held_lft **lft_held;   /* [n_switches] lft_mem's entries once the LFT Sets go out
				       * (lft_write_changed), so an answer needs no look-up; NULL before */
	struct pkey_memory *pkey_mem; /* what P_Key tables hold, likewise (program/pkey.h) */
	struct pkey_prep *pkey_prep;  /* the P_Key pass's decisions, made beside the first phases */
	GHashTable *mkey_written;     /* port GUID -> M_Key fields last written, likewise */
	GHashTable *enf_written;      /* struct port_written -> 1 + what was last written there:
				       * partition enforcement bits, MasterSMSL (portinfo.c) */
	volatile int *stop;
	struct fabric *f;
	const struct sm_options *o;
	uint8_t *state;       /* [n_ports] port state as of the last reply */
	const uint8_t *lft;   /* the final tables [n_switches * stride] */
	uint32_t stride;
	int first_master;     /* first sweep as master: ClientReregister */
	int enforce_pkeys;    /* a partition policy is in force: PART_ENFORCE_IN|OUT of part_enforce */
	uint32_t sets;        /* Sets sent */
	uint32_t failed;      /* SMPs that failed (incl. refused state changes) */
	uint32_t failures;    /* SMPs that failed for good, leaving the fabric not as wanted */
	uint16_t sm_lid;      /* the master's LID, as end ports are given it */
	const struct routing_result *r; /* the routes programmed (MasterSMSL asks their engine), or NULL */
	uint32_t bounced;     /* CA links set down for OperVLs/NeighborMTU to take effect (portinfo.c) */
	uint32_t reasserted;  /* switch ports past INIT written again (portinfo.c) */
	uint8_t *smsl_guess;  /* [n_ports] or NULL: the MasterSMSL an end port was given while the
			       * routes were not known (r NULL), IBSM_NO_PORT where none was
			       * (portinfo_end_ports_smsl() mends them once they are) */
	uint8_t *pi_answered; /* [n_ports] or NULL: set to 1 when a PortInfo Set of that port is
			       * answered (program/qos.c tells a lost Set from a refused value) */
	/* portinfo_end_port(), for program/mkey_write.c to write a port again (no include cycle) */
	int (*end_port)(struct pass *g, uint32_t port, uint16_t sm_lid);
};

#endif
