/* test_console.c - the console (ops/console.h) without a fabric: the command-line splitter, the
 * registry and a reply's text and JSON, the socket protocol's framing, the event loop's tick
 * hooks, and the server over a real unix socket driven tick by tick (a reply, garbage, an
 * over-long line, a flood, a ninth client, quit, the socket's mode and its removal). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "base/log.h"
#include "ops/console.h"
#include "ops/console_int.h"
#include "sm/loop.h"

/* ---- the splitter ---- */

static void test_split(void)
{
	const char *why = NULL;
	char **v = console_split("  resweep\theavy  ", &why);
	g_assert_nonnull(v);
	g_assert_cmpuint(g_strv_length(v), ==, 2);
	g_assert_cmpstr(v[0], ==, "resweep");
	g_assert_cmpstr(v[1], ==, "heavy");
	g_strfreev(v);

	v = console_split("perfmgr print_counters \"leaf 1\" x\"a b\"y \"q\\\"uote\\\\\"", &why);
	g_assert_nonnull(v);
	g_assert_cmpuint(g_strv_length(v), ==, 5);
	g_assert_cmpstr(v[2], ==, "leaf 1");
	g_assert_cmpstr(v[3], ==, "xa by");
	g_assert_cmpstr(v[4], ==, "q\"uote\\");
	g_strfreev(v);

	v = console_split("", &why);
	g_assert_nonnull(v);
	g_assert_null(v[0]);
	g_strfreev(v);

	v = console_split("\"\"", &why); /* an empty quoted word is a word */
	g_assert_cmpuint(g_strv_length(v), ==, 1);
	g_assert_cmpstr(v[0], ==, "");
	g_strfreev(v);

	g_assert_null(console_split("status \"open", &why));
	g_assert_cmpstr(why, ==, "an unclosed quote");
	g_assert_null(console_split("sta\x01tus", &why));
	g_assert_cmpstr(why, ==, "a control character");
	g_assert_null(console_split("status \xff\xfe", &why));
	g_assert_cmpstr(why, ==, "not UTF-8 text");
	g_assert_null(console_split("status\x1b[A", NULL)); /* why may be NULL */
}

/* ---- the registry and the reply ---- */

static int cmd_echo(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm;
	for (int i = 1; i < argc; i++)
		console_printf(r, "%d:%s", i, argv[i]);
	console_json_int(r, "n", argc - 1);
	console_json_str(r, "first", argc > 1 ? argv[1] : NULL);
	console_json_bool(r, "many", argc > 2);
	console_json_raw(r, "list", "[1,2]");
	return 0;
}

static int cmd_fail(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm; (void)argc; (void)argv;
	console_printf(r, "error: it failed");
	return -EIO;
}

static void test_execute(void)
{
	console_command_add("echo", "[words]", "says them back", cmd_echo);
	console_command_add("fail", "", "always fails", cmd_fail);
	GString *out = g_string_new(NULL);
	g_assert_cmpint(console_execute(NULL, "echo a \"b c\"", 0, out), ==, 0);
	g_assert_cmpstr(out->str, ==, "1:a\n2:b c\n");

	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "echo \"x\\\"y\"", 1, out), ==, 0);
	g_assert_cmpstr(out->str, ==, "{\"ok\":true,\"status\":0,\"command\":\"echo\",\"n\":1,\"first\":\"x\\\"y\","
			"\"many\":false,\"list\":[1,2],\"text\":[\"1:x\\\"y\"]}\n");

	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "fail", 1, out), ==, -EIO);
	g_assert_cmpstr(out->str, ==, "{\"ok\":false,\"status\":-5,\"command\":\"fail\",\"text\":[\"error: it failed\"]}\n");

	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "nosuch x", 0, out), ==, -ENOENT);
	g_assert_nonnull(strstr(out->str, "no command 'nosuch'"));

	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "echo \"open", 0, out), ==, -EINVAL);
	g_assert_nonnull(strstr(out->str, "unclosed quote"));

	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "   ", 0, out), ==, 0);
	g_assert_cmpstr(out->str, ==, "");

	/* a command added again replaces the first */
	console_command_add("fail", "", "now fine", cmd_echo);
	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(NULL, "fail z", 0, out), ==, 0);
	g_assert_cmpstr(out->str, ==, "1:z\n");
	const char *name, *usage, *help;
	int seen = 0;
	for (guint i = 0; console_command_at(i, &name, &usage, &help) == 0; i++)
		seen += !strcmp(name, "fail");
	g_assert_cmpint(seen, ==, 1);
	g_string_free(out, TRUE);
}

static void test_json_escape(void)
{
	GString *g = g_string_new(NULL);
	console_json_escape(g, "a\"b\\c\nd\te\x01\x7f" "\xc3\xa9");
	g_assert_cmpstr(g->str, ==, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\xc3\xa9\"");
	g_string_free(g, TRUE);
}

static void test_frame(void)
{
	GString *g = g_string_new(NULL);
	console_frame(g, ".dot first\nplain\n..two\n", 0);
	g_assert_cmpstr(g->str, ==, "..dot first\nplain\n...two\n.OK\n");
	g_string_truncate(g, 0);
	console_frame(g, "no newline at the end", -22);
	g_assert_cmpstr(g->str, ==, "no newline at the end\n.ERR -22\n");
	g_string_truncate(g, 0);
	console_frame(g, "", 0);
	g_assert_cmpstr(g->str, ==, ".OK\n");
	g_string_free(g, TRUE);
}

/* ---- the tick hooks ---- */

static int hits_a, hits_b;

static void hook_b(struct sm *sm, void *data)
{
	(void)sm; (void)data;
	hits_b++;
}

static void hook_a(struct sm *sm, void *data)
{
	(void)data;
	hits_a++;
	loop_tick_run(sm); /* never re-entered */
	if (hits_a == 2)
		loop_tick_remove(hook_a, NULL); /* removes itself mid-run: b still runs */
}

static void test_tick_hooks(void)
{
	hits_a = hits_b = 0;
	loop_tick_add(NULL, hook_a, NULL);
	loop_tick_add(NULL, hook_b, NULL);
	loop_tick_run(NULL);
	g_assert_cmpint(hits_a, ==, 1);
	g_assert_cmpint(hits_b, ==, 1);
	loop_tick_run(NULL);
	g_assert_cmpint(hits_a, ==, 2);
	g_assert_cmpint(hits_b, ==, 2);
	loop_tick_run(NULL);
	g_assert_cmpint(hits_a, ==, 2);
	g_assert_cmpint(hits_b, ==, 3);
	loop_tick_remove(hook_b, NULL);
	loop_tick_run(NULL);
	g_assert_cmpint(hits_b, ==, 3);
	/* requests and sweeping */
	g_assert_true(loop_sweeping(NULL));
	g_assert_cmpint(loop_set_sweeping(NULL, 0), ==, 1);
	g_assert_false(loop_sweeping(NULL));
	g_assert_cmpint(loop_set_sweeping(NULL, 1), ==, 0);
	g_assert_cmpint(loop_counts()->heavy, ==, 0);
	g_assert_cmpint(loop_counts()->last_result, ==, -2);
}

/* ---- the server over a unix socket ---- */

struct bed {
	char *dir, *sock;
	struct sm_options o;
	struct sm sm;
};

static void bed_init(struct bed *b)
{
	memset(b, 0, sizeof(*b));
	b->dir = g_dir_make_tmp("ibsm-console-XXXXXX", NULL);
	g_assert_nonnull(b->dir);
	b->sock = g_build_filename(b->dir, "run", "c.sock", NULL);
	options_defaults(&b->o);
	g_free(b->o.console_socket);
	b->o.console_socket = g_strdup(b->sock);
	b->sm.opt = &b->o;
	b->sm.state = IB_SM_MASTER;
	log_set_flags(0); /* quiet */
}

static void bed_free(struct bed *b)
{
	console_stop();
	char *run = g_path_get_dirname(b->sock);
	unlink(b->sock);
	rmdir(run);
	rmdir(b->dir);
	g_free(run);
	g_free(b->sock);
	g_free(b->dir);
	options_free(&b->o);
}

static int client(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
	return fd;
}

/* Ticks the server until fd has sent a reply ending in a status line, or EOF; returns what
 * arrived (g_free); *eof set when the server closed the connection. */
static char *reply(struct bed *b, int fd, int *eof)
{
	GString *g = g_string_new(NULL);
	*eof = 0;
	for (int i = 0; i < 400; i++) {
		loop_tick_run(&b->sm);
		char buf[8192];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0) {
			*eof = 1;
			break;
		}
		if (n > 0)
			g_string_append_len(g, buf, n);
		if (g->len && (g_str_has_suffix(g->str, ".OK\n") || strstr(g->str, "\n.ERR ") || g_str_has_prefix(g->str, ".ERR ")))
			break;
		g_usleep(1000);
	}
	return g_string_free(g, FALSE);
}

static int closed_soon(struct bed *b, int fd)
{
	for (int i = 0; i < 400; i++) {
		loop_tick_run(&b->sm);
		char buf[8192];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			return 1;
		g_usleep(1000);
	}
	return 0;
}

static void test_server(void)
{
	struct bed b;
	bed_init(&b);
	g_assert_cmpint(console_start(&b.sm, "9.9.9"), ==, 0);
	struct stat st;
	g_assert_cmpint(stat(b.sock, &st), ==, 0);
	g_assert_true(S_ISSOCK(st.st_mode));
	g_assert_cmpint(st.st_mode & 0777, ==, 0600);
	char *run = g_path_get_dirname(b.sock);
	g_assert_cmpint(stat(run, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0700);
	g_free(run);

	/* a command and its reply; a second on the same connection; json */
	int fd = client(b.sock), eof;
	g_assert_cmpint(send(fd, "version\n", 8, 0), ==, 8);
	char *r = reply(&b, fd, &eof);
	g_assert_cmpstr(r, ==, "ibsm 9.9.9\n.OK\n");
	g_free(r);
	g_assert_cmpint(send(fd, "json version\r\n", 14, 0), ==, 14);
	r = reply(&b, fd, &eof);
	g_assert_cmpstr(r, ==, "{\"ok\":true,\"status\":0,\"command\":\"version\",\"version\":\"9.9.9\",\"text\":[\"ibsm 9.9.9\"]}\n.OK\n");
	g_free(r);
	g_assert_cmpint(send(fd, "priority 99\n", 12, 0), ==, 12); /* a command's error keeps the connection */
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "between 0 and 15"));
	g_assert_true(g_str_has_suffix(r, ".ERR -22\n"));
	g_assert_false(eof);
	g_free(r);
	g_assert_cmpint(send(fd, "priority 7\n", 11, 0), ==, 11);
	r = reply(&b, fd, &eof);
	g_assert_cmpuint(b.o.sm_priority, ==, 7);
	g_free(r);
	g_assert_cmpint(send(fd, "quit\n", 5, 0), ==, 5);
	g_assert_true(closed_soon(&b, fd));
	close(fd);

	/* garbage: an error line, closed */
	fd = client(b.sock);
	g_assert_cmpint(send(fd, "\x01\x02\xff\n", 4, 0), ==, 4);
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "error: not a command line"));
	g_assert_true(eof || closed_soon(&b, fd));
	g_free(r);
	close(fd);

	/* a NUL byte */
	fd = client(b.sock);
	g_assert_cmpint(send(fd, "stat\0us\n", 8, 0), ==, 8);
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "NUL"));
	g_assert_true(eof || closed_soon(&b, fd));
	g_free(r);
	close(fd);

	/* an over-long line, without a newline */
	fd = client(b.sock);
	char *longl = g_strnfill(5000, 'x');
	g_assert_cmpint(send(fd, longl, 5000, 0), ==, 5000);
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "line too long"));
	g_assert_true(eof || closed_soon(&b, fd));
	g_free(r);
	g_free(longl);
	close(fd);

	/* a flood: 100 lines at once */
	fd = client(b.sock);
	GString *fl = g_string_new(NULL);
	for (int i = 0; i < 100; i++)
		g_string_append(fl, "version\n");
	g_assert_cmpint(send(fd, fl->str, fl->len, 0), ==, (ssize_t)fl->len);
	g_string_free(fl, TRUE);
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "flood"));
	g_assert_null(strstr(r, "ibsm 9.9.9")); /* refused before any ran */
	g_assert_true(eof || closed_soon(&b, fd));
	g_free(r);
	close(fd);

	/* eight clients, a ninth refused; then room again */
	int fds[8];
	for (int i = 0; i < 8; i++)
		fds[i] = client(b.sock);
	for (int i = 0; i < 3; i++)
		loop_tick_run(&b.sm);
	fd = client(b.sock);
	r = reply(&b, fd, &eof);
	g_assert_nonnull(strstr(r, "too many console clients"));
	g_assert_true(eof || closed_soon(&b, fd));
	g_free(r);
	close(fd);
	close(fds[0]);
	for (int i = 0; i < 3; i++)
		loop_tick_run(&b.sm);
	fd = client(b.sock);
	g_assert_cmpint(send(fd, "version\n", 8, 0), ==, 8);
	r = reply(&b, fd, &eof);
	g_assert_cmpstr(r, ==, "ibsm 9.9.9\n.OK\n");
	g_free(r);
	close(fd);
	for (int i = 1; i < 8; i++)
		close(fds[i]);

	console_stop();
	g_assert_cmpint(access(b.sock, F_OK), ==, -1); /* removed at stop */
	bed_free(&b);
}

static void test_not_ours(void)
{
	struct bed b;
	bed_init(&b);
	char *run = g_path_get_dirname(b.sock);
	g_assert_cmpint(mkdir(run, 0777), ==, 0);
	g_assert_cmpint(chmod(run, 0777), ==, 0);
	g_assert_cmpint(console_start(&b.sm, "1"), <, 0);
	g_assert_cmpint(access(b.sock, F_OK), ==, -1);
	/* a file where the socket goes: not ours to remove */
	g_assert_cmpint(chmod(run, 0700), ==, 0);
	g_assert_true(g_file_set_contents(b.sock, "data", -1, NULL));
	g_assert_cmpint(console_start(&b.sm, "1"), <, 0);
	char *text = NULL;
	g_assert_true(g_file_get_contents(b.sock, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "data");
	g_free(text);
	unlink(b.sock);
	g_free(run);
	bed_free(&b);
}

static void test_stale_socket(void)
{
	struct bed b;
	bed_init(&b);
	/* a socket left by an SM that died: taken over */
	char *run = g_path_get_dirname(b.sock);
	g_assert_cmpint(mkdir(run, 0700), ==, 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	g_strlcpy(sa.sun_path, b.sock, sizeof(sa.sun_path));
	g_assert_cmpint(bind(s, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
	close(s); /* bound, never listening: connect is refused */
	g_assert_cmpint(console_start(&b.sm, "2"), ==, 0);
	int fd = client(b.sock), eof;
	g_assert_cmpint(send(fd, "version\n", 8, 0), ==, 8);
	char *r = reply(&b, fd, &eof);
	g_assert_cmpstr(r, ==, "ibsm 2\n.OK\n");
	g_free(r);
	close(fd);
	g_free(run);
	bed_free(&b);
}

static void test_live_other(void)
{
	struct bed b;
	bed_init(&b);
	/* another process listens at the path (another SM): this one goes without, and leaves it */
	char *run = g_path_get_dirname(b.sock);
	g_assert_cmpint(mkdir(run, 0700), ==, 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	g_strlcpy(sa.sun_path, b.sock, sizeof(sa.sun_path));
	g_assert_cmpint(bind(s, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
	g_assert_cmpint(listen(s, 4), ==, 0);
	g_assert_cmpint(console_start(&b.sm, "4"), ==, -EADDRINUSE);
	console_stop();
	g_assert_cmpint(access(b.sock, F_OK), ==, 0); /* still the other's */
	close(s);
	g_free(run);
	bed_free(&b);
}

static void test_off(void)
{
	struct bed b;
	bed_init(&b);
	g_free(b.o.console);
	b.o.console = g_strdup("off");
	g_assert_cmpint(console_start(&b.sm, "3"), ==, 0);
	g_assert_cmpint(access(b.sock, F_OK), ==, -1);
	bed_free(&b);
}

/* ---- built-in commands that need no fabric ---- */

static void test_commands(void)
{
	struct bed b;
	bed_init(&b);
	console_register_all();
	b.sm.summary_nodes = 24;
	b.sm.summary_switches = 8;
	b.sm.subnet_up = 1;
	b.sm.port_guid = 0x10001;
	GString *out = g_string_new(NULL);
	g_assert_cmpint(console_execute(&b.sm, "status", 1, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "\"state\":\"MASTER\""));
	g_assert_nonnull(strstr(out->str, "\"nodes\":24,\"switches\":8"));
	g_assert_nonnull(strstr(out->str, "\"subnet_up\":true"));
	g_assert_nonnull(strstr(out->str, "\"port_guid\":\"0x0000000000010001\""));

	/* loglevel: OpenSM's number forms, names; out of range refused */
	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(&b.sm, "loglevel x7", 0, out), ==, 0);
	g_assert_cmpuint(b.o.debug_flags, ==, 0x7);
	g_assert_cmpint(console_execute(&b.sm, "loglevel 3", 0, out), ==, 0);
	g_assert_cmpuint(b.o.debug_flags, ==, 0x3);
	g_assert_cmpint(console_execute(&b.sm, "loglevel info,DEBUG,routing", 0, out), ==, 0);
	g_assert_cmpuint(b.o.debug_flags, ==, 0x4a);
	g_assert_cmpint(console_execute(&b.sm, "loglevel 0x100", 0, out), ==, -EINVAL);
	g_assert_cmpint(console_execute(&b.sm, "loglevel info,loud", 0, out), ==, -EINVAL);
	g_assert_cmpuint(b.o.debug_flags, ==, 0x4a); /* unchanged by the refused ones */
	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(&b.sm, "loglevel", 1, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "\"log_flags\":74,\"levels\":[\"info\",\"debug\",\"routing\"]"));
	log_set_flags(0);

	/* priority */
	g_assert_cmpint(console_execute(&b.sm, "priority 0x0f", 0, out), ==, 0);
	g_assert_cmpuint(b.o.sm_priority, ==, 15);
	g_assert_cmpint(console_execute(&b.sm, "priority -1", 0, out), ==, -EINVAL);
	g_assert_cmpint(console_execute(&b.sm, "priority 1 2", 0, out), ==, -EINVAL);
	g_assert_cmpuint(b.o.sm_priority, ==, 15);

	/* sweep on|off; resweep's kinds; nothing to balance without routes */
	g_assert_cmpint(console_execute(&b.sm, "sweep off", 0, out), ==, 0);
	g_assert_false(loop_sweeping(&b.sm));
	g_assert_cmpint(console_execute(&b.sm, "sweep sideways", 0, out), ==, -EINVAL);
	g_assert_cmpint(console_execute(&b.sm, "sweep on", 0, out), ==, 0);
	g_assert_true(loop_sweeping(&b.sm));
	g_assert_cmpint(console_execute(&b.sm, "resweep medium", 0, out), ==, -EINVAL);
	b.sm.state = IB_SM_STANDBY;
	g_assert_cmpint(console_execute(&b.sm, "resweep light", 0, out), ==, -EAGAIN);
	g_assert_cmpint(console_execute(&b.sm, "resweep heavy", 0, out), ==, 0);
	g_assert_cmpint(console_execute(&b.sm, "switchbalance", 0, out), ==, -EAGAIN);
	g_assert_cmpint(console_execute(&b.sm, "portstatus", 0, out), ==, -EAGAIN);
	g_assert_cmpint(console_execute(&b.sm, "portstatus hosts", 0, out), ==, -EINVAL);

	/* dump_conf: every key, as the file spells it */
	g_string_truncate(out, 0);
	g_assert_cmpint(console_execute(&b.sm, "dump_conf", 0, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "\nsm_priority 15\n"));
	g_assert_nonnull(strstr(out->str, "\nconsole socket\n"));
	g_string_free(out, TRUE);
	bed_free(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/console/split", test_split);
	g_test_add_func("/console/execute", test_execute);
	g_test_add_func("/console/json_escape", test_json_escape);
	g_test_add_func("/console/frame", test_frame);
	g_test_add_func("/console/tick_hooks", test_tick_hooks);
	g_test_add_func("/console/server", test_server);
	g_test_add_func("/console/not_ours", test_not_ours);
	g_test_add_func("/console/stale_socket", test_stale_socket);
	g_test_add_func("/console/live_other", test_live_other);
	g_test_add_func("/console/off", test_off);
	g_test_add_func("/console/commands", test_commands);
	return g_test_run();
}
