/* SPDX-License-Identifier: BSD-2-Clause */
/* test_sa_db.c - the SA database (sa/sa_db.h): what one SA writes another restores (groups with
 * their MLIDs and members, services with the lease they have left, subscriptions); a file with
 * bad lines is loaded but for them, each counted; a group without a full member is closed; a
 * group whose MLID is taken is refused; OpenSM 3.3.23's own lines are read. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include "base/log.h"
#include "mad/phase.h"
#include "sa/agent.h"
#include "sa/inform.h"
#include "sa/mcast_groups.h"
#include "sa/mcast_requests.h"
#include "sa/sa_db.h"
#include "sa/service.h"
#include "sa/state.h"

static char *write_tmp(const char *text)
{
	char *path = NULL;
	int fd = g_file_open_tmp("sadb-XXXXXX", &path, NULL);
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static void service(struct sa *sa, uint64_t id, const char *name, uint32_t lease)
{
	uint8_t rec[SR_SIZE] = { 0 }, out[SR_SIZE];
	for (int i = 0; i < 8; i++)
		rec[i] = (uint8_t)(id >> (56 - 8 * i));
	rec[8] = 0xfe;
	rec[9] = 0x80;
	rec[23] = 5;
	rec[24] = rec[25] = 0xff;
	for (int i = 0; i < 4; i++)
		rec[28 + i] = (uint8_t)(lease >> (24 - 8 * i));
	memcpy(rec + 48, name, strlen(name));
	rec[170] = 0x42;
	struct sr_owner o = { .port = 5 };
	uint64_t mask = 1u << SR_ID | 1u << SR_GID | 1u << SR_PKEY | 1u << SR_LEASE | 1u << SR_NAME;
	g_assert_cmphex(sa_service_set(sa->svc, rec, mask, &o, 0, phase_now(), out), ==, 0);
}

static void remaining(void *ctx, const uint8_t *rec, double expires, const struct sr_owner *owner)
{
	(void)owner;
	if (rec[7] == 2) /* the 600 s one */
		*(double *)ctx = expires - phase_now();
}

static void test_roundtrip(void)
{
	struct sa *a = sa_new(NULL), *b = sa_new(NULL);
	struct mc_groups *g = sa_mcast_groups(a);
	uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 }, gid[16] = { 0xfe, 0x80 };
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3, .packet_life = 18,
			       .sl = 1, .flow_label = 7, .scope = 2 };
	struct mc_group *grp = mc_create(g, mgid, &p, 0);
	g_assert_nonnull(grp);
	mc_create(g, (uint8_t[16]){ 0xff, 0x12, [15] = 9 }, &p, 0); /* 0xC001, no member: not kept */
	mc_delete(g, mc_find_mlid(g, 0xC001));
	uint8_t mgid2[16] = { 0xff, 0x12, [15] = 2 };
	struct mc_group *grp2 = mc_create(g, mgid2, &p, 0); /* 0xC001 again */
	gid[15] = 5;
	mc_join(g, grp, 5, gid, MC_FULL, 0);
	gid[15] = 7;
	mc_join(g, grp, 7, gid, MC_NON_MEMBER, 1);
	mc_join(g, grp2, 7, gid, MC_FULL | MC_SEND_ONLY_FULL, 0);
	service(a, 1, "svc-a", SR_LEASE_INFINITE);
	service(a, 2, "svc-b", 600);
	uint8_t ii[II_SIZE] = { 0 }, ans[II_SIZE];
	ii[16] = ii[17] = 0xff;
	ii[22] = ii[23] = 1;
	ii[24] = ii[25] = 0xff;
	ii[27] = 64;
	ii[33] = ii[34] = ii[35] = 0xff;
	struct sa_requester rq = { .guid = 5, .prefix = 0xfe80000000000000ULL, .lid = 8, .qpn = 1 };
	g_assert_cmphex(sa_inform_set(a->inform, ii, &rq, ans), ==, 0);

	char *text = sa_db_text(a);
	char *path = write_tmp(text);
	struct sa_db_stats st;
	g_assert_cmpint(sa_db_load(b, path, NULL, &st), ==, 0);
	g_assert_cmpuint(st.groups, ==, 2);
	g_assert_cmpuint(st.members, ==, 3);
	g_assert_cmpuint(st.services, ==, 2);
	g_assert_cmpuint(st.subscriptions, ==, 1);
	g_assert_cmpuint(st.bad_lines + st.refused + st.kept + st.dropped_groups, ==, 0);
	struct mc_group *r = mc_find(sa_mcast_groups(b), mgid);
	g_assert_nonnull(r);
	g_assert_cmphex(r->mlid, ==, 0xC000);
	g_assert_cmphex(mc_find(sa_mcast_groups(b), mgid2)->mlid, ==, 0xC001);
	g_assert_cmphex(r->p.qkey, ==, 0x0b1b);
	g_assert_cmpuint(r->p.sl, ==, 1);
	g_assert_cmpuint(r->p.flow_label, ==, 7);
	g_assert_cmpuint(r->p.packet_life, ==, 18);
	g_assert_cmphex(mc_member(r, 7)->join_state, ==, MC_NON_MEMBER);
	g_assert_cmpuint(mc_member(r, 7)->proxy, ==, 1);
	g_assert_cmphex(mc_member(mc_find(sa_mcast_groups(b), mgid2), 7)->join_state, ==,
			MC_FULL | MC_SEND_ONLY_FULL);
	double left = -1;
	sa_services_foreach(b->svc, phase_now(), remaining, &left);
	g_assert_cmpfloat(left, >, 598.0);
	g_assert_cmpfloat(left, <=, 600.5);
	g_assert_cmpuint(sa_inform_count(b->inform), ==, 1);
	/* what the second SA would write is what the first wrote (the 600 s service's registration
	 * time, the wall clock's second, may be a second off after a reload) */
	char *again = sa_db_text(b);
	GRegex *rx = g_regex_new("modified_time=0x[0-9a-f]+ lease_period=0x258", 0, 0, NULL);
	char *x = g_regex_replace_literal(rx, again, -1, 0, "T", 0, NULL);
	char *y = g_regex_replace_literal(rx, text, -1, 0, "T", 0, NULL);
	g_assert_cmpstr(x, ==, y);
	g_assert_nonnull(strstr(x, "name='svc-b'"));
	g_free(x);
	g_free(y);
	g_regex_unref(rx);
	/* loading again: everything is there already */
	g_assert_cmpint(sa_db_load(b, path, NULL, &st), ==, 0);
	g_assert_cmpuint(st.kept, ==, 2 + 3 + 2 + 1);
	g_assert_cmpuint(st.groups + st.members + st.services + st.subscriptions, ==, 0);
	g_unlink(path);
	g_free(path);
	g_free(again);
	g_free(text);
	sa_free(a);
	sa_free(b);
}

/* OpenSM 3.3.23's own lines (written by it on ibsim), with bad lines among them */
static const char *osm =
	"MC Group 0xc000  (well known): mgid=0xff12401bffff0000:0x00000000ffffffff "
	"port_gid=0x0000000000000000:0x0000000000000000 qkey=0x00000b1b mlid=0xc000 mtu=0x84 "
	"tclass=0x00 pkey=0xffff rate=0x83 pkt_life=0x92 sl_flow_hop=0x00000000 scope_state=0x21 "
	"proxy_join=0x0\n\n"
	"mcm_port: port_gid=0xfe80000000000000:0x0000000000010009 scope_state=0x22 proxy_join=0x0\n\n"
	"MC Group 0xc001 : mgid=0xff12601bffff0000:0x0000000000010001 "
	"port_gid=0xfe80000000000000:0x0000000000010005 qkey=0x00000b1b mlid=0xc001 mtu=0x84 "
	"tclass=0x00 pkey=0xffff rate=0x83 pkt_life=0x80 sl_flow_hop=0x00000000 scope_state=0x21 "
	"proxy_join=0x0\n\n"
	"mcm_port: port_gid=0xfe80000000000000:0x0000000000010005 scope_state=0x21 proxy_join=0x0\n\n"
	"mcm_port: port_gid=0xfe80000000000000:0x0000000000010007 scope_state=0x2z proxy_join=0x0\n\n"
	"InformInfo Record: subscriber_gid=0xfe80000000000000:0x0000000000010005 subscriber_enum=0x0 "
	"InformInfo: gid=0x0000000000000000:0x0000000000000000 lid_range_begin=0xffff lid_range_end=0x0 "
	"is_generic=0x1 subscribe=0x1 trap_type=0xffff trap_num=0x40 qpn_resp_time_val=0x110 "
	"node_type=0xffffff rep_addr: lid=0x0008 path_bits=0x00 static_rate=0x00 remote_qp=0x00000001 "
	"remote_qkey=0x00000000 pkey_ix=0x0000 sl=0x00\n\n"
	"Service Record: id=0x1000000000000abc gid=0xfe80000000000000:0x0000000000010005 pkey=0xffff "
	"lease=0xffffffff key=0x0000000000000000:0x0000000000000000 name='svc-a' "
	"data8=0xab00000000000000:0x0000000000000000 data16=0x0000000000000000:0x0000000000000000 "
	"data32=0x0000000000000000:0x0000000000000000 data64=0x1122334455667788:0x0000000000000000 "
	"modified_time=0x6b0a0026 lease_period=0xffffffff\n\n"
	"Service Record: id=0x22 gid=0xfe80000000000000 pkey=0xffff\n\n"
	"# a comment\n"
	"GUIDInfo Record: base_guid=0x0000000000010005 lid=0x0008 block_num=0x0\n\n";

static void test_opensm_and_bad_lines(void)
{
	struct sa *sa = sa_new(NULL);
	char *path = write_tmp(osm);
	struct sa_db_stats st;
	g_assert_cmpint(sa_db_load(sa, path, NULL, &st), ==, 1);
	g_assert_cmpuint(st.bad_lines, ==, 2);     /* the member with 0x2z, the service cut short */
	g_assert_cmpuint(st.services, ==, 1);
	g_assert_cmpuint(st.subscriptions, ==, 1);
	/* 0xC000 (not made by partitions.conf here) has a non-member only: closed, as OpenSM does */
	g_assert_cmpuint(st.dropped_groups, ==, 1);
	struct mc_groups *g = sa_mcast_groups(sa);
	g_assert_null(mc_find_mlid(g, 0xC000));
	struct mc_group *grp = mc_find_mlid(g, 0xC001);
	g_assert_nonnull(grp);
	g_assert_cmpuint(grp->members->len, ==, 1);
	g_assert_cmphex(grp->p.mtu, ==, 4);
	g_assert_cmphex(grp->p.rate, ==, 3);
	/* a group whose MLID another group holds is refused */
	char *clash = write_tmp("MC Group 0xc001 : mgid=0xff12601bffff0000:0x00000000000000ee "
				"port_gid=0x0:0x0 qkey=0x1 mlid=0xc001 mtu=0x84 tclass=0x00 pkey=0xffff rate=0x83 "
				"pkt_life=0x80 sl_flow_hop=0x0 scope_state=0x21 proxy_join=0x0\n");
	g_assert_cmpint(sa_db_load(sa, clash, NULL, &st), ==, 1);
	g_assert_cmpuint(st.refused, ==, 1);
	g_assert_cmpuint(st.groups, ==, 0);
	/* a file that is not there: -1, nothing changes */
	g_assert_cmpint(sa_db_load(sa, "/nonexistent/opensm-sa.dump", NULL, &st), ==, -1);
	g_unlink(clash);
	g_unlink(path);
	g_free(clash);
	g_free(path);
	sa_free(sa);
}

/* the dump is written through a temporary file, mode 0600, and only when the SA changed */
static void test_dump(void)
{
	struct sa *sa = sa_new(NULL);
	char *dir = g_dir_make_tmp("sadb-XXXXXX", NULL);
	g_assert_nonnull(dir);
	service(sa, 1, "svc-a", SR_LEASE_INFINITE);
	g_assert_cmpint(sa_db_dump(sa, dir, 0), ==, 0);
	g_assert_cmpint(sa_db_dump(sa, dir, 0), ==, 1);
	char *path = g_build_filename(dir, SA_DB_FILE, NULL), *tmp = g_strconcat(path, ".tmp", NULL);
	GStatBuf sb;
	g_assert_cmpint(g_stat(path, &sb), ==, 0);
	g_assert_cmpint(sb.st_mode & 0777, ==, 0600);
	g_assert_false(g_file_test(tmp, G_FILE_TEST_EXISTS));
	service(sa, 3, "svc-c", SR_LEASE_INFINITE);
	g_assert_cmpint(sa_db_dump(sa, dir, 0), ==, 0);
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_nonnull(strstr(text, "name='svc-c'"));
	g_unlink(path);
	g_assert_cmpint(sa_db_dump(sa, dir, 0), ==, 0); /* gone: written again */
	g_unlink(path);
	g_rmdir(dir);
	g_free(text);
	g_free(tmp);
	g_free(path);
	g_free(dir);
	sa_free(sa);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG"));
	g_test_add_func("/sa_db/roundtrip", test_roundtrip);
	g_test_add_func("/sa_db/opensm_and_bad_lines", test_opensm_and_bad_lines);
	g_test_add_func("/sa_db/dump", test_dump);
	return g_test_run();
}
