/* SPDX-License-Identifier: BSD-2-Clause */
/* console_server.c - where the console listens (OpenSM's `console` setting: a unix socket,
 * ibsm's default; loopback TCP on 127.0.0.1 only; or the terminal) and how clients are served.
 * Under umad2sim poll() sees only the umad fd, so nothing here waits: every socket is
 * non-blocking and serviced from the event loop's tick (sm/loop.h), with bounded work per
 * tick, bounded buffers, at most CON_MAX_CLIENTS clients, and a client that sends garbage,
 * an over-long line or a flood gets one error line and is closed. The SM never waits on it.
 *
 * Protocol (doc/console.md): a client sends one command per line ("json CMD ..." asks for the
 * reply as one JSON object); the reply is its text lines, a text line starting with '.' sent
 * with one more '.', then one line ".OK" or ".ERR N" (N: the command's negative status). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include "base/log.h"
#include "mad/phase.h"
#include "ops/console.h"
#include "ops/console_int.h"
#include "sm/loop.h"

#define CON_MAX_CLIENTS   8
#define CON_MAX_LINE      4096     /* a longer line is refused */
#define CON_LINES_PER_TICK 8       /* commands run per client per tick */
#define CON_FLOOD_PER_S   50       /* more commands than this in one second: a flood */
#define CON_WRITE_PER_TICK (256 * 1024)
#define CON_MAX_REPLY     (16u * 1024 * 1024) /* a reply is cut past this */
#define CON_IDLE_S        600.0    /* an idle client is closed */
#define CON_ACCEPT_PER_TICK 4

enum con_mode { CON_OFF, CON_LOCAL, CON_LOOPBACK, CON_UNIX };

struct client {
	int fd;
	int local;                 /* the terminal: no protocol, a prompt */
	GString *in, *out;
	gsize out_done;            /* bytes of out already written */
	int closing;               /* close once out is written */
	double last_active;
	double window_start;       /* the flood window */
	unsigned window_cmds;
};

static struct {
	int started;
	enum con_mode mode;
	int listen_fd;
	char *path;                /* the unix socket we bound */
	dev_t dev;
	ino_t ino;
	GPtrArray *clients;        /* struct client * */
	struct client *local;
	int local_flags;           /* stdin's fcntl flags before */
} S = { .listen_fd = -1 };

static enum con_mode mode_parse(const char *v)
{
	if (!v || !strcmp(v, "off"))
		return CON_OFF;
	if (!strcmp(v, "local"))
		return CON_LOCAL;
	if (!strcmp(v, "loopback"))
		return CON_LOOPBACK;
	return CON_UNIX; /* socket, unix (keys.c checks the value) */
}

static struct client *client_new(int fd, int local)
{
	struct client *c = g_new0(struct client, 1);
	c->fd = fd;
	c->local = local;
	c->in = g_string_new(NULL);
	c->out = g_string_new(NULL);
	c->last_active = c->window_start = phase_now();
	return c;
}

static void client_free(struct client *c)
{
	if (!c->local && c->fd >= 0)
		close(c->fd);
	g_string_free(c->in, TRUE);
	g_string_free(c->out, TRUE);
	g_free(c);
}

/* Appends a reply in the protocol's framing (dot-stuffed text, then the status line). */
void console_frame(GString *out, const char *reply, int rc)
{
	const char *s = reply;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		if (*s == '.')
			g_string_append_c(out, '.');
		g_string_append_len(out, s, (gssize)n);
		g_string_append_c(out, '\n');
		s += n + (nl ? 1 : 0);
	}
	if (rc < 0)
		g_string_append_printf(out, ".ERR %d\n", rc);
	else
		g_string_append(out, ".OK\n");
}

static void prompt(struct client *c)
{
	g_string_append(c->out, "ibsm> ");
}

/* An error that ends the connection: one line, the status, then closed. */
static void client_refuse(struct client *c, const char *why)
{
	char *line = g_strdup_printf("error: %s", why);
	if (c->local) {
		g_string_append_printf(c->out, "%s\n", line);
		prompt(c);
	} else {
		console_frame(c->out, line, -EPROTO);
		c->closing = 1;
	}
	g_free(line);
	g_string_truncate(c->in, 0);
}

/* Runs one line of c's: a line that is not text (control bytes, not UTF-8, an open quote)
 * ends the connection with an error line; a command's own error does not. */
static void client_run(struct sm *sm, struct client *c, char *line)
{
	size_t n = strlen(line);
	if (n && line[n - 1] == '\r') /* telnet, nc -C */
		line[--n] = 0;
	const char *cmd = line;
	int json = 0;
	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	if (!strncmp(cmd, "json", 4) && (cmd[4] == ' ' || cmd[4] == '\t' || !cmd[4])) {
		json = 1;
		cmd += 4;
	}
	const char *why = NULL;
	char **argv = console_split(cmd, &why);
	if (!argv) {
		char *text = g_strdup_printf("not a command line (%s)", why);
		client_refuse(c, text);
		g_free(text);
		return;
	}
	int quit = argv[0] && (!strcmp(argv[0], "quit") || !strcmp(argv[0], "exit"));
	g_strfreev(argv);
	GString *reply = g_string_new(NULL);
	int rc = console_execute(sm, cmd, json, reply);
	if (reply->len > CON_MAX_REPLY) {
		g_string_truncate(reply, CON_MAX_REPLY);
		g_string_append(reply, "\n(reply cut)\n");
	}
	if (c->local)
		g_string_append_len(c->out, reply->str, (gssize)reply->len);
	else
		console_frame(c->out, reply->str, rc);
	if (quit)
		c->closing = 1;
	else if (c->local)
		prompt(c);
	g_string_free(reply, TRUE);
}

/* Reads what c sent (bounded) and runs its complete lines; returns -1 when c is gone. */
static int client_read(struct sm *sm, struct client *c, double now)
{
	if (c->closing)
		return 0;
	if (c->out->len > c->out_done) /* the last reply first: a client that does not read waits */
		return 0;
	char buf[CON_MAX_LINE + 1];
	size_t room = CON_MAX_LINE + 1 - MIN(c->in->len, (gsize)CON_MAX_LINE + 1);
	if (room) {
		ssize_t n = read(c->fd, buf, room);
		if (n == 0)
			return -1; /* EOF */
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return -1;
		} else {
			g_string_append_len(c->in, buf, n);
			c->last_active = now;
			/* a flood: more lines arriving in a second than a person or a script
			 * waiting for its replies sends (counted as they come, not as run) */
			if (now - c->window_start >= 1.0) {
				c->window_start = now;
				c->window_cmds = 0;
			}
			for (ssize_t i = 0; i < n; i++)
				c->window_cmds += buf[i] == '\n';
			if (c->window_cmds > CON_FLOOD_PER_S && !c->local) {
				client_refuse(c, "flood: more than 50 commands a second");
				return 0;
			}
		}
	}
	for (int k = 0; k < CON_LINES_PER_TICK && !c->closing; k++) {
		if (memchr(c->in->str, 0, c->in->len)) {
			client_refuse(c, "not a command line (a NUL byte)");
			break;
		}
		char *nl = memchr(c->in->str, '\n', c->in->len);
		if (!nl) {
			if (c->in->len > CON_MAX_LINE)
				client_refuse(c, "line too long (over 4096 bytes)");
			break;
		}
		if ((gsize)(nl - c->in->str) > CON_MAX_LINE) {
			client_refuse(c, "line too long (over 4096 bytes)");
			break;
		}
		char *line = g_strndup(c->in->str, (gsize)(nl - c->in->str));
		g_string_erase(c->in, 0, nl - c->in->str + 1);
		client_run(sm, c, line);
		g_free(line);
		if (c->out->len > c->out_done)
			break; /* written before the next command runs */
	}
	return 0;
}

/* Writes what is pending (bounded); returns -1 when c is to be closed. */
static int client_write(struct client *c)
{
	int fd = c->local ? STDOUT_FILENO : c->fd;
	gsize budget = CON_WRITE_PER_TICK;
	while (c->out->len > c->out_done && budget) {
		gsize n = MIN(c->out->len - c->out_done, budget);
		ssize_t w = c->local ? write(fd, c->out->str + c->out_done, n)
				     : send(fd, c->out->str + c->out_done, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			return -1;
		}
		c->out_done += (gsize)w;
		budget -= (gsize)w;
	}
	if (c->out_done == c->out->len) {
		g_string_truncate(c->out, 0);
		c->out_done = 0;
		if (c->closing)
			return -1;
	}
	return 0;
}

static void accept_clients(double now)
{
	for (int k = 0; k < CON_ACCEPT_PER_TICK; k++) {
		int fd = accept4(S.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct client *c = client_new(fd, 0);
		c->last_active = now;
		if (S.mode == CON_UNIX) {
			/* the socket is 0600 already; a peer of another user is refused all the same */
			struct ucred cr;
			socklen_t len = sizeof(cr);
			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
			    cr.uid != 0 && cr.uid != geteuid()) {
				client_refuse(c, "permission denied");
				client_write(c);
				client_free(c);
				continue;
			}
		}
		if (S.clients->len >= CON_MAX_CLIENTS) {
			client_refuse(c, "too many console clients (8)");
			client_write(c);
			client_free(c);
			LOG_W("CON-0004", "console: a client was refused: %d are connected already", CON_MAX_CLIENTS);
			continue;
		}
		g_ptr_array_add(S.clients, c);
	}
}

static void tick(struct sm *sm, void *data)
{
	(void)data;
	double now = phase_now();
	if (S.listen_fd >= 0)
		accept_clients(now);
	for (guint i = 0; i < S.clients->len;) {
		struct client *c = g_ptr_array_index(S.clients, i);
		int gone = client_write(c) < 0;
		if (!gone && client_read(sm, c, now) < 0)
			gone = 1;
		if (!gone)
			gone = client_write(c) < 0;
		if (!gone && !c->local && now - c->last_active > CON_IDLE_S && c->out->len == c->out_done)
			gone = 1;
		if (gone) {
			if (c->local) {
				LOG_I("CON-0005", "console: the local console was closed");
				fcntl(STDIN_FILENO, F_SETFL, S.local_flags);
				S.local = NULL;
			}
			g_ptr_array_remove_index(S.clients, i);
			client_free(c);
			continue;
		}
		i++;
	}
}

/* The unix socket's directory: made 0700 when missing; else ours and writable by us alone. */
static int check_dir(const char *dir, GString *why)
{
	struct stat st;
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0700) < 0) {
			g_string_printf(why, "%s: %s", dir, g_strerror(errno));
			return -1;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		g_string_printf(why, "%s is not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		g_string_printf(why, "%s is not ours alone (owner %u, mode %03o)", dir, (unsigned)st.st_uid,
				(unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

static int open_unix(const char *path, GString *why)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path)) {
		g_string_printf(why, "console_socket '%s': empty or longer than %zu bytes", path ? path : "",
				sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(sa.sun_path, path);
	char *dir = g_path_get_dirname(path);
	int rc = check_dir(dir, why);
	g_free(dir);
	if (rc < 0)
		return -1;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			g_string_printf(why, "%s exists and is not our socket", path);
			return -1;
		}
		/* a live SM's, or one left by an SM that died */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		if (probe >= 0)
			close(probe);
		if (live) {
			g_string_printf(why, "%s is in use by another process (another SM?)", path);
			return -2;
		}
		unlink(path);
	} else if (errno != ENOENT) {
		g_string_printf(why, "%s: %s", path, g_strerror(errno));
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		g_string_printf(why, "socket: %s", g_strerror(errno));
		return -1;
	}
	mode_t old = umask(0177); /* 0600 from the start: no window where others may connect */
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0 || lstat(path, &st) < 0) {
		g_string_printf(why, "%s: %s", path, g_strerror(errno));
		close(fd);
		return -1;
	}
	S.path = g_strdup(path);
	S.dev = st.st_dev;
	S.ino = st.st_ino;
	return fd;
}

static int open_loopback(int port, GString *why)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		g_string_printf(why, "socket: %s", g_strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* never another address */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		g_string_printf(why, "127.0.0.1:%d: %s", port, g_strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int console_start(struct sm *sm, const char *version)
{
	console_set_version(version);
	console_register_all();
	if (S.started)
		return 0;
	S.mode = mode_parse(sm->opt->console);
	if (S.mode == CON_OFF)
		return 0;
	S.clients = g_ptr_array_new();
	GString *why = g_string_new(NULL);
	int rc = 0;
	if (S.mode == CON_UNIX) {
		S.listen_fd = open_unix(sm->opt->console_socket, why);
		if (S.listen_fd == -2) {
			LOG_W("CON-0002", "console: no console: %s", why->str);
			S.listen_fd = -1;
			rc = -EADDRINUSE;
		} else if (S.listen_fd < 0) {
			LOG_E("CON-0003", "console: not started: %s; the SM runs without it", why->str);
			rc = -EACCES;
		} else {
			LOG_I("CON-0001", "console listening on unix socket %s (ibsm-cli --socket %s)", S.path, S.path);
		}
	} else if (S.mode == CON_LOOPBACK) {
		S.listen_fd = open_loopback(sm->opt->console_port, why);
		if (S.listen_fd < 0) {
			LOG_E("CON-0003", "console: not started: %s; the SM runs without it", why->str);
			rc = -EADDRINUSE;
		} else {
			LOG_I("CON-0001", "console listening on 127.0.0.1:%d (loopback only)", sm->opt->console_port);
		}
	} else if (S.mode == CON_LOCAL) {
		if (sm->opt->daemon || !isatty(STDIN_FILENO)) {
			LOG_W("CON-0006", "console: local console asked, but standard input is not a terminal%s",
			      sm->opt->daemon ? " (-B)" : "");
			rc = -ENOTTY;
		} else {
			S.local_flags = fcntl(STDIN_FILENO, F_GETFL);
			fcntl(STDIN_FILENO, F_SETFL, S.local_flags | O_NONBLOCK);
			S.local = client_new(STDIN_FILENO, 1);
			g_ptr_array_add(S.clients, S.local);
			LOG_I("CON-0001", "console on the terminal (type help)");
			prompt(S.local);
		}
	}
	g_string_free(why, TRUE);
	if (S.listen_fd < 0 && !S.local) {
		g_ptr_array_free(S.clients, TRUE);
		S.clients = NULL;
		return rc;
	}
	S.started = 1;
	loop_tick_add(sm, tick, NULL);
	return 0;
}

void console_stop(void)
{
	if (S.started) {
		loop_tick_remove(tick, NULL);
		for (guint i = 0; i < S.clients->len; i++) {
			struct client *c = g_ptr_array_index(S.clients, i);
			if (c->local)
				fcntl(STDIN_FILENO, F_SETFL, S.local_flags);
			client_free(c);
		}
		g_ptr_array_free(S.clients, TRUE);
		S.clients = NULL;
		S.local = NULL;
		if (S.listen_fd >= 0)
			close(S.listen_fd);
		S.listen_fd = -1;
		struct stat st;
		/* only the socket we made: another SM may have bound the path since */
		if (S.path && lstat(S.path, &st) == 0 && st.st_dev == S.dev && st.st_ino == S.ino)
			unlink(S.path);
		S.started = 0;
	}
	g_free(S.path);
	S.path = NULL;
	console_set_version(NULL);
}
