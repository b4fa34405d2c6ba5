/* test_sa_partitions.c - what the SA shows a requester follows its partitions, as OpenSM 3.3.23
 * does (doc/sa-partitions.md): on a fake fabric of two switches and six hosts with P_Key
 * tables, host 0 the SM's port (full member of the default partition), hosts 1 and 2 in
 * 0x8001 ("A"), hosts 3 and 4 in 0x8002 ("B"), host 5 in neither ("C"), every host and switch
 * port 0 a limited member of the default partition, the switches' external ports not known.
 * Judged through sa_compute() from each host's LID: which ports' NodeRecords, PortInfoRecords,
 * LinkRecords, GUIDInfoRecords, P_KeyTableRecords and PathRecords come back, and ServiceRecord
 * Set, Get and Delete (the owner's GID and P_Key, no wildcard delete, the per-port quota). */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "sa/agent.h"
#include "sa/multipath_record.h"
#include "sa/path_record.h"
#include "sa/pkeys.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/wire.h"

#define HOSTS 6
#define SM_KEY 0x5eed5eedULL

struct bed {
	struct fsma_bed b;
	struct sa *sa;
	struct sa_inputs in;       /* what the SA answers from */
	const struct fabric *f;
	uint32_t host[HOSTS];      /* port ids */
};

/* The tables: by host, switch port 0 limited default, switch external ports not known. */
static const uint16_t *table(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	(void)ctx;
	static const uint16_t sm[] = { 0xffff }, a[] = { 0x7fff, 0x8001 }, b[] = { 0x7fff, 0x8002 },
			      c[] = { 0x7fff, 0 }, sw0[] = { 0x7fff };
	static const uint16_t *const by_host[HOSTS] = { sm, a, a, b, b, c };
	for (uint32_t h = 0; h < HOSTS; h++)
		if (fx_ca_port(&f->pub, h, 1) == port) {
			*cap = by_host[h] == sm || by_host[h] == sw0 ? 1 : 2;
			return by_host[h];
		}
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	if (n->type == IBSM_SWITCH && port == n->port0) {
		*cap = 1;
		return sw0;
	}
	*cap = 0;
	return NULL;
}

static void bed_init(struct bed *t)
{
	struct fabric *shape = fx_line(2, 3, 0);
	fsma_bed_init(&t->b, shape, fx_ca_port(&shape->pub, 0, 1), 20);
	fsma_bed_discover(&t->b);
	t->f = t->b.f;
	for (uint32_t h = 0; h < HOSTS; h++)
		t->host[h] = fx_ca_port(&t->f->pub, h, 1);
	t->sa = sa_new(NULL);
	g_assert_nonnull(t->sa);
	sa_inputs_init(&t->in);
	t->in.sm_key = t->in.sa_key = SM_KEY;
	sa_inputs_set_routes(&t->in, t->b.r, sa_pkeys_new(t->f, table, NULL));
	sa_publish(t->sa, &t->in);
}

static void bed_clear(struct bed *t)
{
	sa_free(t->sa);
	sa_inputs_clear(&t->in);
	fsma_bed_clear(&t->b);
}

/* The answer to (method, attr, mask, rec) from LID lid (sm_key: what it presents). */
static uint16_t ask(struct bed *t, uint16_t lid, uint64_t sm_key, uint8_t method, uint16_t attr,
		    uint64_t mask, const uint8_t *rec, size_t rec_len, GByteArray *out, size_t *size)
{
	uint8_t data[SA_MAD_DATA] = { 0 };
	if (rec)
		memcpy(data, rec, rec_len);
	struct sa_request rq = { .method = method, .attr = attr, .sm_key = sm_key, .comp_mask = mask,
				 .record = data, .record_len = sizeof(data), .slid = lid, .qpn = 1 };
	struct sa_answer a = { .recs = out };
	sa_compute(t->sa, &rq, 1000.0, &a);
	if (size)
		*size = a.rec_size;
	return a.status;
}

static uint16_t lid_of(struct bed *t, uint32_t h)
{
	return t->f->ports[t->host[h]].lid;
}

/* The port a record's LID (bytes 0-1) names. */
static uint32_t port_at_lid(struct bed *t, const uint8_t *rec)
{
	uint16_t lid = (uint16_t)(rec[0] << 8 | rec[1]);
	return lid <= t->f->pub.max_lid ? t->f->pub.lid_port[lid] : IBSM_NONE;
}

/* Bit mask of the hosts (by index) whose port a GetTable of attr names by LID; *other gets
 * the number of records naming no host (a switch). */
static unsigned hosts_seen(struct bed *t, uint32_t from, uint16_t attr, uint64_t sm_key, unsigned *other)
{
	GByteArray *out = g_byte_array_new();
	size_t size;
	g_assert_cmphex(ask(t, lid_of(t, from), sm_key, SA_GETTABLE, attr, 0, NULL, 0, out, &size), ==, 0);
	unsigned seen = 0;
	*other = 0;
	for (size_t off = 0; off + size <= out->len; off += size) {
		uint32_t p = port_at_lid(t, out->data + off);
		uint32_t h;
		for (h = 0; h < HOSTS && t->host[h] != p; h++)
			;
		if (h < HOSTS)
			seen |= 1u << h;
		else
			(*other)++;
	}
	g_byte_array_free(out, TRUE);
	return seen;
}

#define H(i) (1u << (i))

/* The sharing rule itself, as OpenSM's osm_physp_share_pkey / osm_physp_has_pkey. */
static void test_share_rule(void)
{
	struct bed t;
	bed_init(&t);
	struct sa_pkeys *pk = sa_pkeys_new(t.f, table, NULL);
	const uint32_t *h = t.host;
	uint32_t sw_ext = fx_switch_port(&t.f->pub, 0, 1), sw0 = t.f->nodes[t.f->ports[sw_ext].node].port0;
	g_assert_true(sa_pkeys_share(pk, h[1], h[2]));    /* both full in 0x8001 */
	g_assert_false(sa_pkeys_share(pk, h[1], h[3]));   /* limited and limited in the default only */
	g_assert_true(sa_pkeys_share(pk, h[0], h[3]));    /* full and limited in the default */
	g_assert_false(sa_pkeys_share(pk, h[5], h[1]));
	g_assert_true(sa_pkeys_share(pk, h[5], h[5]));    /* a limited-only port shares with itself */
	g_assert_true(sa_pkeys_share(pk, h[5], sw_ext));  /* a table not known shares with all */
	g_assert_false(sa_pkeys_share(pk, h[1], sw0));    /* switch port 0: limited default */
	g_assert_true(sa_pkeys_share(pk, h[0], sw0));
	g_assert_false(sa_pkeys_share(pk, IBSM_NONE, h[0])); /* a requester not in the generation */
	g_assert_true(sa_pkeys_share(NULL, IBSM_NONE, h[0])); /* no table known at all */
	g_assert_true(sa_pkeys_has(pk, h[1], 0x0001));    /* either membership */
	g_assert_true(sa_pkeys_has(pk, h[1], 0xffff));
	g_assert_false(sa_pkeys_has(pk, h[1], 0x8002));
	g_assert_true(sa_pkeys_has(pk, h[1], 0x0000));    /* an invalid key: everybody's */
	g_assert_true(sa_pkeys_has(pk, sw_ext, 0x8002));  /* not known: not held against it */
	g_assert_false(sa_pkeys_has(pk, IBSM_NONE, 0x7fff));
	sa_pkeys_unref(pk);
	bed_clear(&t);
}

/* A table with both memberships of one key (allow_both_pkeys) is a full member of it. */
static const uint16_t *both_table(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	(void)ctx;
	static const uint16_t both[] = { 0x0005, 0x8005 }, lim[] = { 0x0005 };
	*cap = 2;
	if (port == fx_ca_port(&f->pub, 0, 1))
		return both;
	*cap = 1;
	return port == fx_ca_port(&f->pub, 1, 1) ? lim : NULL;
}

static void test_share_both(void)
{
	struct bed t;
	bed_init(&t);
	struct sa_pkeys *pk = sa_pkeys_new(t.f, both_table, NULL);
	g_assert_true(sa_pkeys_share(pk, t.host[1], t.host[0]));
	g_assert_cmphex(sa_pkeys_shared(pk, t.host[1], t.host[0], 0), ==, 0x0005);
	sa_pkeys_unref(pk);
	bed_clear(&t);
}

/* NodeRecords, GUIDInfoRecords, P_KeyTableRecords (trusted), PortInfoRecords by host: each
 * requester sees the SM's port and the hosts of its own partition, never a switch's port 0
 * (a limited member of the default partition); PortInfoRecords of switch external ports
 * (tables not known) are seen by all. A LID not in the generation sees nothing. */
static void test_port_records(void)
{
	struct bed t;
	bed_init(&t);
	static const unsigned want[HOSTS] = { H(0) | H(1) | H(2) | H(3) | H(4) | H(5), H(0) | H(1) | H(2),
					      H(0) | H(1) | H(2), H(0) | H(3) | H(4), H(0) | H(3) | H(4),
					      H(0) | H(5) };
	unsigned other;
	for (uint32_t from = 0; from < HOSTS; from++) {
		g_assert_cmphex(hosts_seen(&t, from, 0x11, 0, &other), ==, want[from]);
		g_assert_cmpuint(other, ==, from == 0 ? 2 : 0); /* the switches: the SM's port only */
		g_assert_cmphex(hosts_seen(&t, from, 0x30, 0, &other), ==, want[from]);
		g_assert_cmphex(hosts_seen(&t, from, 0x33, SM_KEY, &other), ==, want[from]);
		g_assert_cmphex(hosts_seen(&t, from, 0x12, 0, &other), ==, want[from]);
		g_assert_cmpuint(other, >=, 2 * 3); /* every switch's external ports, not port 0 ... */
	}
	unsigned ext_only;
	hosts_seen(&t, 1, 0x12, 0, &ext_only);
	hosts_seen(&t, 0, 0x12, 0, &other);
	g_assert_cmpuint(other, ==, ext_only + 2); /* ... which only the SM's port sees */
	/* a LID of no port of the generation */
	GByteArray *out = g_byte_array_new();
	g_assert_cmphex(ask(&t, 0xbff, 0, SA_GETTABLE, 0x11, 0, NULL, 0, out, NULL), ==, 0);
	g_assert_cmpuint(out->len, ==, 0);
	/* a Get of a hidden port's NodeRecord: NO_RECORDS, as for one that does not exist */
	uint8_t q[108] = { (uint8_t)(lid_of(&t, 3) >> 8), (uint8_t)lid_of(&t, 3) };
	g_assert_cmphex(ask(&t, lid_of(&t, 1), 0, SA_GET, 0x11, 1, q, sizeof(q), out, NULL), ==,
			SA_ERR_NO_RECORDS);
	g_assert_cmphex(ask(&t, lid_of(&t, 4), 0, SA_GET, 0x11, 1, q, sizeof(q), out, NULL), ==, 0);
	g_byte_array_free(out, TRUE);
	bed_clear(&t);
}

/* LinkRecords: the link of a host is seen by who shares a partition with the host; the
 * switch-to-switch links (tables not known) by all. */
static void test_link_records(void)
{
	struct bed t;
	bed_init(&t);
	unsigned other;
	g_assert_cmphex(hosts_seen(&t, 1, 0x20, 0, &other), ==, H(0) | H(1) | H(2));
	/* FromLID of a switch: the host links seen from the switch side and the inter-switch ones */
	unsigned other0;
	g_assert_cmphex(hosts_seen(&t, 0, 0x20, 0, &other0), ==, 0x3f);
	g_assert_cmpuint(other0, ==, HOSTS + 2);      /* each host's link from its switch, 2 between */
	g_assert_cmpuint(other, ==, 3 + 2);
	bed_clear(&t);
}

static void put_gid(uint8_t *at, uint64_t guid)
{
	sa_put_gid(at, 0xfe80000000000000ULL, guid);
}

static uint64_t guid_of(struct bed *t, uint32_t h)
{
	return t->f->ports[t->host[h]].guid;
}

/* PathRecords: a requester gets a path only between ports it shares a partition with, both;
 * a GetTable of every path from C names no host of A or B; a third party's Get between two
 * hosts of A: NO_RECORDS from C and from B, the path from the SM's port. */
static void test_path_records(void)
{
	struct bed t;
	bed_init(&t);
	GByteArray *out = g_byte_array_new();
	size_t size;
	for (uint32_t from = 0; from < HOSTS; from++) {
		g_byte_array_set_size(out, 0);
		g_assert_cmphex(ask(&t, lid_of(&t, from), 0, SA_GETTABLE, 0x35, 0, NULL, 0, out, &size), ==, 0);
		g_assert_cmpuint(size, ==, PR_SIZE);
		unsigned ends = 0;
		for (size_t off = 0; off < out->len; off += PR_SIZE)
			for (uint32_t h = 0; h < HOSTS; h++) {
				uint8_t gid[16];
				put_gid(gid, guid_of(&t, h));
				if (!memcmp(out->data + off + 8, gid, 16) || !memcmp(out->data + off + 24, gid, 16))
					ends |= H(h);
			}
		static const unsigned want[HOSTS] = { 0x3f, H(0) | H(1) | H(2), H(0) | H(1) | H(2),
						      H(0) | H(3) | H(4), H(0) | H(3) | H(4), H(0) | H(5) };
		g_assert_cmphex(ends, ==, want[from]);
		g_assert_cmpuint(out->len, >, 0);
	}
	uint8_t q[PR_SIZE] = { 0 };
	put_gid(q + 24, guid_of(&t, 1));
	put_gid(q + 8, guid_of(&t, 2));
	uint64_t mask = 1u << PR_SGID | 1u << PR_DGID;
	g_assert_cmphex(ask(&t, lid_of(&t, 5), 0, SA_GET, 0x35, mask, q, sizeof(q), out, NULL), ==,
			SA_ERR_NO_RECORDS);
	g_assert_cmphex(ask(&t, lid_of(&t, 3), 0, SA_GET, 0x35, mask, q, sizeof(q), out, NULL), ==,
			SA_ERR_NO_RECORDS);
	g_assert_cmphex(ask(&t, lid_of(&t, 0), 0, SA_GET, 0x35, mask, q, sizeof(q), out, NULL), ==, 0);
	g_assert_cmphex(ask(&t, lid_of(&t, 2), 0, SA_GET, 0x35, mask, q, sizeof(q), out, NULL), ==, 0);
	/* the SM_Key opens no partition (OpenSM's neither) */
	g_assert_cmphex(ask(&t, lid_of(&t, 5), SM_KEY, SA_GET, 0x35, mask, q, sizeof(q), out, NULL), ==,
			SA_ERR_NO_RECORDS);
	/* MultiPathRecords are PathRecords: A's two hosts for A, nothing for C */
	uint8_t m[MPR_FIXED + 32] = { 0 };
	m[15] = 1; /* SGIDCount */
	m[16] = 1; /* DGIDCount */
	put_gid(m + MPR_FIXED, guid_of(&t, 1));
	put_gid(m + MPR_FIXED + 16, guid_of(&t, 2));
	uint64_t mm = 1ull << MPR_SGID_COUNT | 1ull << MPR_DGID_COUNT;
	g_byte_array_set_size(out, 0);
	g_assert_cmphex(ask(&t, lid_of(&t, 2), 0, SA_GETMULTI, IB_SA_ATTR_MULTIPATH, mm, m, sizeof(m), out,
			    NULL), ==, 0);
	g_assert_cmpuint(out->len, ==, PR_SIZE);
	g_byte_array_set_size(out, 0);
	g_assert_cmphex(ask(&t, lid_of(&t, 5), 0, SA_GETMULTI, IB_SA_ATTR_MULTIPATH, mm, m, sizeof(m), out,
			    NULL), ==, 0);
	g_assert_cmpuint(out->len, ==, 0);
	g_byte_array_free(out, TRUE);
	bed_clear(&t);
}

static void sr_make(uint8_t *rec, uint64_t id, uint64_t guid, uint16_t pkey, const char *name)
{
	memset(rec, 0, SR_SIZE);
	for (int i = 0; i < 8; i++)
		rec[i] = (uint8_t)(id >> (56 - 8 * i));
	put_gid(rec + 8, guid);
	rec[24] = (uint8_t)(pkey >> 8);
	rec[25] = (uint8_t)pkey;
	strncpy((char *)rec + 48, name, 63);
}

#define SR_RID (1u << SR_ID | 1u << SR_GID | 1u << SR_PKEY)

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the services host `from` sees with a GetTable, sorted, comma-separated. */
static char *services_sorted(struct bed *t, uint32_t from)
{
	GByteArray *out = g_byte_array_new();
	g_assert_cmphex(ask(t, lid_of(t, from), 0, SA_GETTABLE, 0x31, 0, NULL, 0, out, NULL), ==, 0);
	guint n = out->len / SR_SIZE;
	char **names = g_new0(char *, n + 1);
	for (guint i = 0; i < n; i++)
		names[i] = (char *)out->data + i * SR_SIZE + 48;
	qsort(names, n, sizeof(char *), cmp_names);
	char *s = g_strjoinv(",", names);
	g_free(names);
	g_byte_array_free(out, TRUE);
	return s;
}

/* ServiceRecords: A registers with its own GID and P_Key; B's GID, B's P_Key (named by the
 * mask or only carried) are refused REQ_INVALID; B registers one in 0x8002 and one without a
 * P_Key; each host sees what its partitions let it; a Delete of mask 0 deletes nothing
 * (NO_RECORDS), A deleting B's services is refused, B deletes its own. */
static void test_service_partitions(void)
{
	struct bed t;
	bed_init(&t);
	uint8_t rec[SR_SIZE];
	GByteArray *out = g_byte_array_new();
	uint16_t a1 = lid_of(&t, 1), b1 = lid_of(&t, 3), sm = lid_of(&t, 0);
	sr_make(rec, 0x100, guid_of(&t, 1), 0x8001, "A-own");
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	sr_make(rec, 0x101, guid_of(&t, 2), 0x8001, "A-other-host"); /* another host of A */
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	sr_make(rec, 0x102, guid_of(&t, 3), 0x8001, "A-as-B"); /* B's GID */
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	sr_make(rec, 0x103, guid_of(&t, 1), 0x8002, "A-in-B"); /* B's P_Key */
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, 3, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	sr_make(rec, 0x104, 0x4242, 0x8001, "nobody"); /* a GID of no port */
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==,
			SA_ERR_REQ_INVALID_GID);
	sr_make(rec, 0x200, guid_of(&t, 3), 0x8002, "B-own");
	g_assert_cmphex(ask(&t, b1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	sr_make(rec, 0x201, guid_of(&t, 3), 0, "B-nokey");
	g_assert_cmphex(ask(&t, b1, 0, SA_SET, 0x31, 3, rec, SR_SIZE, out, NULL), ==, 0);
	/* with the SM_Key, the SM's port may name another port (its P_Key still checked) */
	sr_make(rec, 0x300, guid_of(&t, 5), 0xffff, "C-by-SM");
	g_assert_cmphex(ask(&t, sm, SM_KEY, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	static const char *const want[HOSTS] = {
		"B-nokey,C-by-SM", "A-own,C-by-SM", "A-own,C-by-SM", "B-nokey,B-own,C-by-SM",
		"B-nokey,B-own,C-by-SM", "C-by-SM" };
	for (uint32_t h = 0; h < HOSTS; h++) {
		char *got = services_sorted(&t, h);
		g_assert_cmpstr(got, ==, want[h]);
		g_free(got);
	}
	/* Delete: mask 0 and a record of zeros names no service; nothing goes */
	uint8_t zero[SR_SIZE] = { 0 };
	g_assert_cmphex(ask(&t, a1, 0, SA_DELETE, 0x31, 0, zero, SR_SIZE, out, NULL), ==, SA_ERR_NO_RECORDS);
	g_assert_cmphex(ask(&t, b1, 0, SA_DELETE, 0x31, 0, zero, SR_SIZE, out, NULL), ==, SA_ERR_NO_RECORDS);
	/* A names B's service by ID, GID and P_Key: refused for the P_Key (OpenSM's answer); without
	 * the P_Key in the mask it is no service A can see */
	sr_make(rec, 0x200, guid_of(&t, 3), 0x8002, "");
	g_assert_cmphex(ask(&t, a1, 0, SA_DELETE, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(&t, a1, 0, SA_DELETE, 0x31, 3, rec, SR_SIZE, out, NULL), ==, SA_ERR_NO_RECORDS);
	/* the SM's port sees B's service without a P_Key (the default partition), owns it not */
	sr_make(rec, 0x201, guid_of(&t, 3), 0, "");
	g_assert_cmphex(ask(&t, sm, 0, SA_DELETE, 0x31, 3, rec, SR_SIZE, out, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(&t, a1, 0, SA_DELETE, 0x31, 3, rec, SR_SIZE, out, NULL), ==, SA_ERR_NO_RECORDS);
	char *got = services_sorted(&t, 3);
	g_assert_cmpstr(got, ==, "B-nokey,B-own,C-by-SM");
	g_free(got);
	/* B deletes its own: the answer carries it; the SM_Key deletes what its port sees */
	g_byte_array_set_size(out, 0);
	g_assert_cmphex(ask(&t, b1, 0, SA_DELETE, 0x31, 3, rec, SR_SIZE, out, NULL), ==, 0);
	g_assert_cmpstr((const char *)out->data + 48, ==, "B-nokey");
	sr_make(rec, 0x300, guid_of(&t, 5), 0xffff, "");
	g_assert_cmphex(ask(&t, a1, SM_KEY, SA_DELETE, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	got = services_sorted(&t, 1);
	g_assert_cmpstr(got, ==, "A-own");
	g_free(got);
	g_byte_array_free(out, TRUE);
	bed_clear(&t);
}

/* The per-port quota: SR_MAX_PER_PORT services from one port, the next refused NO_RESOURCES;
 * a renewal of one it holds still goes; another port is not held by it; with the SM_Key only
 * SR_MAX counts. */
static void test_service_quota(void)
{
	struct bed t;
	bed_init(&t);
	uint8_t rec[SR_SIZE];
	GByteArray *out = g_byte_array_new();
	uint16_t a1 = lid_of(&t, 1), a2 = lid_of(&t, 2);
	for (uint64_t id = 1; id <= SR_MAX_PER_PORT; id++) {
		sr_make(rec, id, guid_of(&t, 1), 0x8001, "q");
		g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	}
	sr_make(rec, SR_MAX_PER_PORT + 1, guid_of(&t, 1), 0x8001, "q");
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_NO_RESOURCES);
	sr_make(rec, 7, guid_of(&t, 1), 0x8001, "renewed");
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	sr_make(rec, 1, guid_of(&t, 2), 0x8001, "other port");
	g_assert_cmphex(ask(&t, a2, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	/* a Delete gives the port room again, for one */
	sr_make(rec, 3, guid_of(&t, 1), 0x8001, "");
	g_assert_cmphex(ask(&t, a1, 0, SA_DELETE, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	sr_make(rec, SR_MAX_PER_PORT + 2, guid_of(&t, 1), 0x8001, "q");
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	sr_make(rec, SR_MAX_PER_PORT + 3, guid_of(&t, 1), 0x8001, "q");
	g_assert_cmphex(ask(&t, a1, 0, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, SA_ERR_NO_RESOURCES);
	sr_make(rec, SR_MAX_PER_PORT + 3, guid_of(&t, 1), 0x8001, "trusted");
	g_assert_cmphex(ask(&t, a1, SM_KEY, SA_SET, 0x31, SR_RID, rec, SR_SIZE, out, NULL), ==, 0);
	g_byte_array_free(out, TRUE);
	bed_clear(&t);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG"));
	g_test_add_func("/sa_partitions/share_rule", test_share_rule);
	g_test_add_func("/sa_partitions/share_both", test_share_both);
	g_test_add_func("/sa_partitions/port_records", test_port_records);
	g_test_add_func("/sa_partitions/link_records", test_link_records);
	g_test_add_func("/sa_partitions/path_records", test_path_records);
	g_test_add_func("/sa_partitions/services", test_service_partitions);
	g_test_add_func("/sa_partitions/service_quota", test_service_quota);
	return g_test_run();
}
