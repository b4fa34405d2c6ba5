/* fake_sma.h - a fake fabric at the SMP level for unit tests: a struct transport_io that answers
 * directed-route SMPs the way ibsim's and real SMAs do, over an in-memory copy of a fabric built
 * with fabric_fixture, and records every request it receives. Tests judge the SM by what this
 * fabric received and holds afterwards, never by the SM's own view of itself or its log.
 * Also a small test bed: the fake, a transport over it and the SM's bring-up steps (discovery,
 * LIDs, shortest-path routes, programming). Linked into every unit test program. */
#ifndef FAKE_SMA_H
#define FAKE_SMA_H

#include <stdint.h>
#include "config/options.h"
#include "fabric/discovery.h"
#include "fabric/model.h"
#include "mad/phase.h"
#include "mad/transport.h"
#include "policy/partitions.h"
#include "program/program.h"
#include "routing/result.h"

#define FSMA_ANY UINT32_MAX /* wildcard (method, attribute, node) and "no such node/port" */

/* What the fake's nodes report; ids of nodes and ports are those of the fabric it was made from. */
#define FSMA_CA_PKEY_CAP 64  /* NodeInfo.PartitionCap of a CA: two P_KeyTable blocks */
#define FSMA_SW_PKEY_CAP 32  /* NodeInfo.PartitionCap of a switch: its port 0's table */
#define FSMA_SW_ENF_CAP  64  /* SwitchInfo.PartitionEnforcementCap: external ports' tables */
#define FSMA_LFT_BLOCK_MAX 767 /* highest LinearForwardingTable block (ibsim's limit) */

struct fsma;

/* ---- building ------------------------------------------------------------------------------
 * The fake copies f's nodes, ports and links (f is not referenced afterwards) as a fabric just
 * powered up: every linked port INIT with PortPhysicalState LinkUp, unlinked ports DOWN/Polling,
 * switch port 0 ACTIVE; no LIDs, GID prefix 0, NeighborMTU 256 and OperVLs 1 (VL0) everywhere;
 * empty LFTs, LinearFDBTop 0, PortStateChange 1; P_Key tables hold 0xFFFF at index 0 on end
 * ports (CA ports, switch port 0) and nothing on switch external ports. sm_port is the port id
 * of the CA port the SM sends from (its CapabilityMask has IsSM). CA ports also advertise
 * ClientReregister. */
struct fsma *fsma_new(const struct fabric *f, uint32_t sm_port);
void fsma_free(struct fsma *fk);
/* The I/O to hand to transport_new(). */
struct transport_io fsma_io(struct fsma *fk);

/* ---- what was received ----------------------------------------------------------------------
 * Every request the SM sent, in order, as its target saw it. */
enum fsma_outcome {
	FSMA_ANSWERED = 0,     /* a GetResp went back (status may be non-zero) */
	FSMA_DROPPED,          /* no answer at all (a fault) */
	FSMA_BOUNCED,          /* came back undelivered, umad status 110: unroutable path, no
	                        * SM on the port (SMInfo), LID-routed, or a fault */
};

struct fsma_rec {
	uint8_t mgmt_class, method;
	uint16_t attr;
	uint32_t mod;
	uint8_t hops;
	uint32_t node;         /* target node id, FSMA_ANY when the path led nowhere */
	uint8_t in_port;       /* port number the SMP entered the target by */
	uint32_t port;         /* port id the attribute applied to (PortInfo, P_KeyTable), else
	                        * the port it entered by; FSMA_ANY when none */
	uint8_t state, peer_state; /* PortInfo: the port's and its peer's PortState on arrival */
	uint8_t outcome;       /* enum fsma_outcome */
	uint16_t status;       /* MAD status answered */
	uint8_t data[64];      /* the request's SMP data */
};

uint32_t fsma_nrec(const struct fsma *fk);
const struct fsma_rec *fsma_rec(const struct fsma *fk, uint32_t i);
/* Requests from record `from` on matching method, attribute and node (FSMA_ANY: any). */
uint32_t fsma_count(const struct fsma *fk, uint32_t from, uint32_t method, uint32_t attr,
		    uint32_t node);
/* Index of the first such request at or after `from`, or FSMA_ANY. */
uint32_t fsma_first(const struct fsma *fk, uint32_t from, uint32_t method, uint32_t attr,
		    uint32_t node);

/* ---- what the fabric holds ------------------------------------------------------------------ */
void fsma_portinfo(const struct fsma *fk, uint32_t port, uint8_t out[64]);
uint8_t fsma_port_state(const struct fsma *fk, uint32_t port);
const uint8_t *fsma_switchinfo(const struct fsma *fk, uint32_t node);
/* Where switch `node` forwards lid: its LFT entry, IBSM_NO_PORT above LinearFDBTop. */
uint8_t fsma_lft_entry(const struct fsma *fk, uint32_t node, uint32_t lid);
/* The raw LFT entry, whatever LinearFDBTop says. */
uint8_t fsma_lft_raw(const struct fsma *fk, uint32_t node, uint32_t lid);
uint32_t fsma_pkey_cap(const struct fsma *fk, uint32_t port);
uint16_t fsma_pkey(const struct fsma *fk, uint32_t port, uint32_t index);
/* PortInfo.LID as the port holds it (0: none). */
uint16_t fsma_port_lid(const struct fsma *fk, uint32_t port);

/* ---- changing the fabric behind the SM's back ----------------------------------------------- */
/* A port's PortState as if it changed on its own (no PortStateChange is raised). */
void fsma_set_port_state(struct fsma *fk, uint32_t port, uint8_t state);
void fsma_set_state_change(struct fsma *fk, uint32_t node, int on);
/* The link of port goes down (a cable pulled): both ends DOWN, PortPhysicalState Polling, and
 * the switches among them raise PortStateChange. DR paths through it lead nowhere. */
void fsma_link_down(struct fsma *fk, uint32_t port);
/* A switch reboots: LFT emptied, LinearFDBTop 0, its ports' PortInfo and P_Key tables back to
 * power-up values (no LID), PortStateChange 1, and every link of it retrains: both ends INIT. */
void fsma_reset_switch(struct fsma *fk, uint32_t node);

/* ---- faults ------------------------------------------------------------------------------------
 * A rule applies to requests matching method, attribute and target node (FSMA_ANY: any), and
 * with by_mod the attribute modifier: it lets
 * the first `skip` of them pass, then acts on the next `count` (0: forever); rules are checked in
 * the order added. The request is recorded with its outcome. */
enum fsma_action {
	FSMA_DROP = 1,         /* lost on the way: never reaches its target, no answer */
	FSMA_BOUNCE,           /* undeliverable, answered at once (umad status 110), as ibsim */
	FSMA_STATUS,           /* not applied; answered with MAD status `status` and the data as
	                        * a Get would read it */
	FSMA_LOSE_ANSWER,      /* applied, but the answer is lost (outcome FSMA_DROPPED) */
	FSMA_STATUS_ECHO,      /* not applied; answered with MAD status `status` and the request's
	                        * own data, as ibsim answers a Set it refuses (e.g. 0x1C to a
	                        * retried state change whose first answer was lost) */
};

struct fsma_fault {
	uint32_t method, attr, node;
	int by_mod;            /* also match the attribute modifier `mod` */
	uint32_t mod;
	enum fsma_action action;
	uint16_t status;
	uint32_t skip, count;
};

void fsma_add_fault(struct fsma *fk, const struct fsma_fault *fault);
void fsma_clear_faults(struct fsma *fk);

/* ---- another SM ------------------------------------------------------------------------------
 * An SM on CA port `port` (IsSM in its CapabilityMask; port FSMA_ANY: none) answers SMInfo Get
 * and Set arriving at that port with its GUID (the port GUID), priority, state and ActCount, and
 * its SM_Key only to a requester presenting it. Not answering: SMInfo to it bounces, as ibsim
 * does when no process holds the port's issm device. */
struct fsma_sm {
	uint32_t port;
	uint8_t priority, state;
	uint64_t sm_key;
	uint32_t act_count;
	int answering;
	int reveals_key;   /* shows its SM_Key to anyone (else only to a requester presenting it) */
	int acknowledges;  /* in STANDBY, takes a HANDOVER: becomes MASTER and sends the SM an
	                    * SMInfo Set (ACKNOWLEDGE), as a compliant SM does */
};

void fsma_set_other_sm(struct fsma *fk, const struct fsma_sm *sm);

/* ---- M_Key ----------------------------------------------------------------------------------
 * Every SMP but SMInfo is checked against the M_Key of its management port (a CA port, a
 * switch's port 0) as IBA 14.2.4 has it: a port with M_Key 0 or a request presenting its key
 * passes (and stops a running lease); otherwise a Get passes at ProtectBits 0, passes with the
 * M_Key hidden at 1, and is dropped at 2-3, as is any Set; a drop counts a violation and
 * starts the lease (LeasePeriod seconds), whose end clears ProtectBits. */
/* PortPhysicalState Disabled, as an outsider's Set (or `ibportstate disable`) leaves a port:
 * both ends DOWN, this one Disabled, the peer Polling. A PortInfo Set of Polling enables it. */
void fsma_port_disable(struct fsma *fk, uint32_t port);
void fsma_port_set_mkey(struct fsma *fk, uint32_t port, uint64_t key, uint8_t protect, uint16_t lease);
void fsma_port_mkey(const struct fsma *fk, uint32_t port, uint64_t *key, uint8_t *protect,
		    uint16_t *lease, uint32_t *violations);

/* ---- Mellanox's vendor attribute MlnxExtPortInfo (0xFF90, OpenSM's ib_mlnx_ext_port_info_t) ------
 * Every node reports DeviceID 0xfa4e (VendorID 0x02c9) unless set here. A port answers the
 * attribute only once fsma_port_set_mlnx_epi() was called for it (else MAD status 0x0C, as an
 * unknown attribute): LinkSpeedSupported at byte 7, LinkSpeedEnabled 11, LinkSpeedActive 15; a
 * Set with StateChangeEnable (byte 3) bit 0 takes LinkSpeedEnabled, masked by what it supports. */
#define FSMA_ATTR_MLNX_EPI 0xFF90
#define FSMA_EPI_STATE_CHANGE_ENABLE 3
#define FSMA_EPI_SUPPORTED 7
#define FSMA_EPI_ENABLED 11
#define FSMA_EPI_ACTIVE 15
void fsma_set_device_id(struct fsma *fk, uint32_t node, uint16_t device_id);
void fsma_port_set_mlnx_epi(struct fsma *fk, uint32_t port, uint8_t supported, uint8_t enabled);
uint8_t fsma_port_mlnx_epi_enabled(const struct fsma *fk, uint32_t port);

/* ---- requests to the SM ------------------------------------------------------------------------
 * Queues a request from elsewhere for the SM's port (the transport sees an unsolicited MAD);
 * data may be NULL. Whatever the SM sends back is kept, in order, as 256-byte MADs. */
void fsma_inject(struct fsma *fk, uint8_t mgmt_class, uint8_t method, uint16_t attr, uint32_t mod,
		 const uint8_t *data, uint64_t tid);
uint32_t fsma_nresponses(const struct fsma *fk);
const uint8_t *fsma_response(const struct fsma *fk, uint32_t i);
/* Its length in bytes (more than one MAD for an RMPP transfer the kernel would segment). */
uint32_t fsma_response_len(const struct fsma *fk, uint32_t i);
/* Queues a whole MAD (MAD_SIZE bytes, headers as given) for the SM's port: SA requests. */
void fsma_inject_mad(struct fsma *fk, const uint8_t *mad256);
/* The same, from the port with LID slid and its QP qpn. */
void fsma_inject_mad_from(struct fsma *fk, const uint8_t *mad256, uint16_t slid, uint32_t qpn);
/* The LID the i-th SA MAD sent (response or Report) went to. */
uint16_t fsma_response_dlid(const struct fsma *fk, uint32_t i);

/* ---- a test bed ------------------------------------------------------------------------------ */
struct fsma_bed {
	struct fabric *shape;        /* what the fake was made from (a reference) */
	struct fsma *fk;
	struct transport *t;
	struct programmer *prog;
	struct sm_options o;         /* options_defaults() */
	struct phase_log pl;
	uint8_t lmc;
	uint32_t generation;
	struct fabric *f;            /* the last discovered generation, LIDs assigned */
	struct routing_result *r;    /* shortest-path routes for f */
	volatile int stop;
};

/* The fake made from shape (taken over) with the SM on CA port sm_port, a transport (window 64,
 * timeout_ms per attempt, one retry) and a programmer. */
void fsma_bed_init(struct fsma_bed *b, struct fabric *shape, uint32_t sm_port, int timeout_ms);
void fsma_bed_clear(struct fsma_bed *b);
/* A heavy sweep's first half: discovery (the previous generation as prev), lid_assign() with
 * b->lmc, and b->r = fsma_shortest_routes(). Asserts that discovery found shape whole. */
void fsma_bed_discover(struct fsma_bed *b);
/* The same where SMPs may fail (*st says how many): the fabric is still asserted whole
 * (what could not be reached carried over from the last generation). */
void fsma_bed_discover_lossy(struct fsma_bed *b, struct discovery_stats *st);
/* program_fabric() of b->f with b->r. */
int fsma_bed_program(struct fsma_bed *b, const struct part_policy *partitions, int first_master,
		     struct program_report *rep);

/* Routes for every LID of f along shortest switch paths (the lowest port number among equals),
 * computed here, independently of the engines; the test checks them with fx_walk_all(). */
struct routing_result *fsma_shortest_routes(struct fabric *f);

#endif
