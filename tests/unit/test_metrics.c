/* SPDX-License-Identifier: BSD-2-Clause */
/* test_metrics.c - what operators read, without a fabric: the SA's request counters and latency
 * buckets (sa/counters.c), the activity report's subjects and lines (base/activity.c), the
 * metrics HTTP server's answers to good and bad clients (ops/metrics_http.c) and the metrics
 * page in the text format for an SM in a given state over a fixture fabric (ops/metrics.c). */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "base/activity.h"
#include "config/options.h"
#include "ops/metrics.h"
#include "ops/metrics_http.h"
#include "sa/counters.h"
#include "sa/wire.h"
#include "fabric_fixture.h"

static void test_sa_counters(void)
{
	struct sa_counters c;
	memset(&c, 0, sizeof(c));
	sa_counters_note(&c, 0x35, SA_GET, SA_OK, 0.00001);     /* first bucket (<= 50 us) */
	sa_counters_note(&c, 0x35, SA_GET, SA_OK, 0.0003);      /* <= 0.5 ms: bucket 3 */
	sa_counters_note(&c, 0x35, SA_GETTABLE, SA_ERR_NO_RECORDS, 2.0); /* +Inf */
	sa_counters_note(&c, 0x35, 0x81, SA_OK, 0.0);           /* a response method: not counted */
	sa_counters_note(&c, 0x11, SA_GET, 0x7f00, 0.001);      /* a status not told apart: other */
	g_assert_cmpuint(c.a[0].attr, ==, 0x35);
	g_assert_cmpuint(c.a[0].count, ==, 3);
	g_assert_cmpuint(c.a[0].bucket[0], ==, 1);
	g_assert_cmpuint(c.a[0].bucket[3], ==, 1);
	g_assert_cmpuint(c.a[0].bucket[SA_CNT_BUCKETS - 1], ==, 1);
	g_assert_cmpfloat(c.a[0].sum_s, >, 2.0);
	g_assert_cmpuint(c.a[0].n[0][0], ==, 2);                 /* Get, ok */
	g_assert_cmpstr(sa_counters_method_name(2), ==, "GetTable");
	g_assert_cmpuint(c.a[0].n[2][8], ==, 1);                 /* GetTable, no_records */
	g_assert_cmpstr(sa_counters_status_name(8), ==, "no_records");
	g_assert_cmpuint(c.a[1].n[0][SA_CNT_STATUSES - 1], ==, 1);
	g_assert_cmpstr(sa_counters_attr_name(0x35), ==, "PathRecord");
	g_assert_null(sa_counters_attr_name(0x1234));
	/* more attributes than slots: the rest count under "other" */
	for (uint16_t a = 0x100; a < 0x100 + 2 * SA_CNT_ATTRS; a++)
		sa_counters_note(&c, a, SA_GET, SA_OK, 0.001);
	g_assert_true(c.a[SA_CNT_ATTRS].used);
	g_assert_cmpuint(c.a[SA_CNT_ATTRS].attr, ==, 0xffff);
	g_assert_cmpuint(c.a[SA_CNT_ATTRS].count, ==, 2 * SA_CNT_ATTRS - (SA_CNT_ATTRS - 2));
}

static void test_activity(void)
{
	gchar *dir = g_dir_make_tmp("ibsm-act.XXXXXX", NULL);
	g_assert_nonnull(dir);
	gchar *path = g_build_filename(dir, ACTIVITY_FILE, NULL);
	activity_configure("mc, bogus", dir);
	g_assert_true(activity_on(ACT_MCM_MEMBER));
	g_assert_true(activity_on(ACT_MCG_TREE_CALC));   /* in mc and in routing */
	g_assert_false(activity_on(ACT_ROUTING_SUCCEED));
	g_assert_false(activity_on(ACT_PRTN_CREATE));
	activity_report(ACT_MCG_CHANGE, "mlid=0x%04x change=%d", 0xc001, 0);
	activity_report(ACT_ROUTING_SUCCEED, "routing_engine=%s", "minhop"); /* not asked for */
	activity_configure("routing", dir);
	activity_report(ACT_ROUTING_FAILED, "routing_engine=%s", "updn");
	activity_report(ACT_UCAST_CACHE_INVALIDATED, "%s", "");
	activity_configure("none", dir);
	g_assert_false(activity_on(ACT_MCG_TREE_CALC));
	activity_report(ACT_ROUTING_FAILED, "routing_engine=%s", "never");
	gchar *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	gchar **lines = g_strsplit(text, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 4); /* three lines and the empty tail */
	g_assert_true(g_regex_match_simple("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{6} 2 mcg_change "
					   "mlid=0xc001 change=0$", lines[0], 0, 0));
	g_assert_true(g_str_has_suffix(lines[1], " 10 routing_failed routing_engine=updn"));
	g_assert_true(g_str_has_suffix(lines[2], " 11 ucast_cache_invalidated"));
	g_strfreev(lines);
	g_free(text);
	activity_configure("all", NULL); /* no directory: nothing, and nothing on */
	g_assert_false(activity_on(ACT_MCM_MEMBER));
	activity_close();
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

/* ---- the HTTP server --------------------------------------------------------------------------- */

static int page(const char *path, GString *body, const char **type, void *ctx)
{
	(*(int *)ctx)++;
	if (strcmp(path, "/metrics"))
		return 404;
	g_string_append(body, "x_total 1\n");
	*type = "text/plain; version=0.0.4";
	return 200;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &len), ==, 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Sends req to the server and services it until the answer is whole (the connection closes). */
static gchar *ask(struct http_server *s, int port, const char *req, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	GString *out = g_string_new(NULL);
	size_t sent = 0;
	for (int i = 0; i < 2000; i++) {
		if (sent < len) {
			ssize_t n = send(fd, req + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
		}
		http_server_service(s);
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n > 0)
			g_string_append_len(out, buf, n);
		else
			g_usleep(1000);
	}
	close(fd);
	return g_string_free(out, FALSE);
}

static void test_http(void)
{
	int calls = 0, err = 0, port = free_port();
	struct http_server *s = http_server_new(port, page, &calls, &err);
	g_assert_nonnull(s);
	g_assert_cmpint(http_server_port(s), ==, port);
	const char *get = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	gchar *r = ask(s, port, get, strlen(get));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 200 OK\r\n"));
	g_assert_nonnull(strstr(r, "Content-Type: text/plain; version=0.0.4\r\n"));
	g_assert_nonnull(strstr(r, "Content-Length: 10\r\n"));
	g_assert_true(g_str_has_suffix(r, "\r\n\r\nx_total 1\n"));
	g_free(r);
	const char *q = "GET /metrics?a=b HTTP/1.0\n\n"; /* bare newlines, a query string */
	r = ask(s, port, q, strlen(q));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 200 OK"));
	g_free(r);
	const char *head = "HEAD /metrics HTTP/1.1\r\n\r\n";
	r = ask(s, port, head, strlen(head));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 200 OK") && g_str_has_suffix(r, "\r\n\r\n"));
	g_free(r);
	const char *nope = "GET /other HTTP/1.1\r\n\r\n";
	r = ask(s, port, nope, strlen(nope));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 404 "));
	g_free(r);
	const char *post = "POST /metrics HTTP/1.1\r\n\r\n";
	r = ask(s, port, post, strlen(post));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 405 "));
	g_free(r);
	const char bin[] = "\x01\x00\xff\r\n\r\n";
	r = ask(s, port, bin, sizeof(bin) - 1);
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 400 "));
	g_free(r);
	const char *two = "GET / HTTP/1.1 extra\r\n\r\n";
	r = ask(s, port, two, strlen(two));
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 400 "));
	g_free(r);
	GString *big = g_string_new("GET /metrics HTTP/1.1\r\nX: ");
	for (int i = 0; i < HTTP_MAX_REQUEST; i++)
		g_string_append_c(big, 'a');
	r = ask(s, port, big->str, big->len);
	g_assert_true(g_str_has_prefix(r, "HTTP/1.1 431 "));
	g_free(r);
	g_string_free(big, TRUE);
	guint64 answered, refused;
	http_server_counts(s, &answered, &refused);
	g_assert_cmpuint(answered, ==, 4);
	g_assert_cmpuint(refused, ==, 4);
	g_assert_cmpint(calls, ==, 4);
	/* the port is taken: a second server cannot bind it */
	g_assert_null(http_server_new(port, page, &calls, &err));
	g_assert_cmpint(err, ==, EADDRINUSE);
	http_server_free(s);
}

/* ---- the page ---------------------------------------------------------------------------------- */

/* Every sample's family has # HELP and # TYPE before it. */
static void check_format(const char *text)
{
	GHashTable *typed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	gchar **lines = g_strsplit(text, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		if (!*lines[i])
			continue;
		if (g_str_has_prefix(lines[i], "# TYPE ")) {
			gchar **w = g_strsplit(lines[i], " ", 4);
			g_hash_table_add(typed, g_strdup(w[2]));
			g_strfreev(w);
			continue;
		}
		if (lines[i][0] == '#')
			continue;
		gchar *name = g_strndup(lines[i], strcspn(lines[i], "{ "));
		gchar *fam = g_strdup(name);
		if (!g_hash_table_contains(typed, fam) &&
		    (g_str_has_suffix(fam, "_bucket") || g_str_has_suffix(fam, "_sum") || g_str_has_suffix(fam, "_count")))
			*strrchr(fam, '_') = '\0';
		if (!g_hash_table_contains(typed, fam))
			g_error("%s: no # TYPE before it", lines[i]);
		g_assert_true(g_regex_match_simple("^[a-z_]+(\\{[a-z_]+=\"[^\"]*\"(,[a-z_]+=\"[^\"]*\")*\\})? "
						   "-?[0-9.e+-]+$", lines[i], 0, 0));
		g_free(name);
		g_free(fam);
	}
	g_strfreev(lines);
	g_hash_table_destroy(typed);
}

static void test_page(void)
{
	struct sm_options o;
	options_defaults(&o);
	o.sm_priority = 7;
	struct sm sm;
	memset(&sm, 0, sizeof(sm));
	sm.opt = &o;
	sm.state = IB_SM_STANDBY;
	sm.fabric = fx_line(3, 2, 0);
	GString *out = g_string_new(NULL);
	metrics_render(&sm, out);
	check_format(out->str);
	g_assert_nonnull(strstr(out->str, "\nibsm_sm_state{state=\"standby\"} 1\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_sm_state{state=\"master\"} 0\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_subnet_up 0\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_sm_priority 7\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_fabric_nodes{type=\"switch\"} 3\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_fabric_nodes{type=\"ca\"} 6\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_fabric_links 8\n")); /* 2 between switches, 6 hosts */
	g_assert_nonnull(strstr(out->str, "\nibsm_sweeps_total{kind=\"heavy\",result=\"up\"} 0\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_metrics_scrapes_total 1\n"));
	sm.state = IB_SM_MASTER;
	sm.subnet_up = 1;
	g_string_truncate(out, 0);
	metrics_render(&sm, out);
	g_assert_nonnull(strstr(out->str, "\nibsm_sm_state{state=\"master\"} 1\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_subnet_up 1\n"));
	g_assert_nonnull(strstr(out->str, "\nibsm_metrics_scrapes_total 2\n"));
	g_string_free(out, TRUE);
	fabric_unref(sm.fabric);
	options_free(&o);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/metrics/sa_counters", test_sa_counters);
	g_test_add_func("/metrics/activity", test_activity);
	g_test_add_func("/metrics/http", test_http);
	g_test_add_func("/metrics/page", test_page);
	return g_test_run();
}
