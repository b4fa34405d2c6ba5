/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics_http.c - the metrics endpoint's HTTP server (ops/metrics_http.h): 127.0.0.1 only, GET
 * only, Connection: close after each answer. Every socket is non-blocking and serviced from
 * the event loop's tick; a client is cut off with an error status when its request is too
 * long, malformed or too slow, and never holds the SM up. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "mad/phase.h"
#include "ops/metrics_http.h"

#define HTTP_ACCEPT_PER_TICK 4
#define HTTP_WRITE_PER_TICK (256 * 1024) /* bytes a client is sent per tick at most */

struct http_client {
	int fd;
	double deadline;
	GString *in;
	GString *out;      /* the whole answer once computed */
	gsize sent;
};

struct http_server {
	int fd, port;
	http_page_fn page;
	void *ctx;
	struct http_client clients[HTTP_MAX_CLIENTS];
	guint64 answered, refused;
};

struct http_server *http_server_new(int port, http_page_fn page, void *ctx, int *err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0) {
		*err = errno;
		close(fd);
		return NULL;
	}
	struct http_server *s = g_new0(struct http_server, 1);
	s->fd = fd;
	s->port = port;
	s->page = page;
	s->ctx = ctx;
	for (int i = 0; i < HTTP_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	return s;
}

static void client_close(struct http_client *c)
{
	if (c->fd >= 0) {
		/* what the client sent past its request is read first: closing with unread bytes
		 * would reset the connection and could cut the answer short at its end */
		char sink[512];
		shutdown(c->fd, SHUT_WR);
		for (int i = 0; i < 16 && recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
			;
		close(c->fd);
	}
	c->fd = -1;
	if (c->in)
		g_string_free(c->in, TRUE);
	if (c->out)
		g_string_free(c->out, TRUE);
	c->in = c->out = NULL;
	c->sent = 0;
}

void http_server_free(struct http_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < HTTP_MAX_CLIENTS; i++)
		client_close(&s->clients[i]);
	close(s->fd);
	g_free(s);
}

int http_server_port(const struct http_server *s)
{
	return s->port;
}

void http_server_counts(const struct http_server *s, guint64 *answered, guint64 *refused)
{
	*answered = s->answered;
	*refused = s->refused;
}

/* The answer to send: status line, headers, body; the connection closes after it. */
static void respond(struct http_client *c, int code, const char *reason, const char *type,
		    const char *body, gsize len, int head_only)
{
	c->out = g_string_sized_new(len + 160);
	g_string_append_printf(c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %"
			       G_GSIZE_FORMAT "\r\nConnection: close\r\n\r\n", code, reason, type, len);
	if (!head_only)
		g_string_append_len(c->out, body, (gssize)len);
	c->sent = 0;
}

static void respond_text(struct http_client *c, int code, const char *reason)
{
	char body[80];
	int n = g_snprintf(body, sizeof(body), "%d %s\n", code, reason);
	respond(c, code, reason, "text/plain; charset=utf-8", body, (gsize)n, 0);
}

/* The request in c->in is whole (ends with an empty line): its answer. */
static void handle_request(struct http_server *s, struct http_client *c)
{
	char *eol = strpbrk(c->in->str, "\r\n");
	gchar *line = g_strndup(c->in->str, eol ? (gsize)(eol - c->in->str) : c->in->len);
	gchar **w = g_strsplit(line, " ", 4);
	int nw = (int)g_strv_length(w);
	if (nw != 3 || !g_str_has_prefix(w[2], "HTTP/1.") || w[1][0] != '/') {
		s->refused++;
		respond_text(c, 400, "Bad Request");
	} else if (strcmp(w[0], "GET") && strcmp(w[0], "HEAD")) {
		s->refused++;
		respond_text(c, 405, "Method Not Allowed");
	} else {
		char *q = strchr(w[1], '?'); /* a query string (Prometheus adds none) is ignored */
		if (q)
			*q = '\0';
		GString *body = g_string_new(NULL);
		const char *type = "text/plain; charset=utf-8";
		if (s->page(w[1], body, &type, s->ctx) == 200) {
			s->answered++;
			respond(c, 200, "OK", type, body->str, body->len, !strcmp(w[0], "HEAD"));
		} else {
			s->answered++;
			respond_text(c, 404, "Not Found");
		}
		g_string_free(body, TRUE);
	}
	g_strfreev(w);
	g_free(line);
}

static void accept_clients(struct http_server *s, double now)
{
	for (int n = 0; n < HTTP_ACCEPT_PER_TICK; n++) {
		int slot = -1;
		for (int i = 0; i < HTTP_MAX_CLIENTS && slot < 0; i++)
			if (s->clients[i].fd < 0)
				slot = i;
		if (slot < 0)
			return; /* the rest wait in the backlog */
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN: nobody waiting (or a transient error: next tick) */
		struct http_client *c = &s->clients[slot];
		c->fd = fd;
		c->deadline = now + HTTP_CLIENT_TIMEOUT_S;
		c->in = g_string_new(NULL);
		c->out = NULL;
		c->sent = 0;
	}
}

/* Reads what the client sent; 0 while it goes on, -1 when it is to be closed now. */
static int read_request(struct http_server *s, struct http_client *c)
{
	char buf[2048];
	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		if (n == 0)
			return -1; /* closed before a whole request */
		if (memchr(buf, '\0', (size_t)n)) {
			s->refused++;
			respond_text(c, 400, "Bad Request");
			return 0;
		}
		g_string_append_len(c->in, buf, n);
		if (strstr(c->in->str, "\r\n\r\n") || strstr(c->in->str, "\n\n")) {
			handle_request(s, c);
			return 0;
		}
		if (c->in->len > HTTP_MAX_REQUEST) {
			s->refused++;
			respond_text(c, 431, "Request Header Fields Too Large");
			return 0;
		}
	}
}

/* Writes what the socket takes; -1 when done or failed (close), 0 while some remains. */
static int write_answer(struct http_client *c)
{
	gsize budget = HTTP_WRITE_PER_TICK;
	while (c->sent < c->out->len && budget) {
		gsize chunk = MIN(c->out->len - c->sent, budget);
		ssize_t n = send(c->fd, c->out->str + c->sent, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		c->sent += (gsize)n;
		budget -= (gsize)n;
	}
	return c->sent < c->out->len ? 0 : -1;
}

void http_server_service(struct http_server *s)
{
	double now = phase_now();
	accept_clients(s, now);
	for (int i = 0; i < HTTP_MAX_CLIENTS; i++) {
		struct http_client *c = &s->clients[i];
		if (c->fd < 0)
			continue;
		if (!c->out && read_request(s, c) < 0) {
			client_close(c);
			continue;
		}
		if (!c->out && now > c->deadline) {
			s->refused++;
			respond_text(c, 408, "Request Timeout");
		}
		if (c->out && (write_answer(c) < 0 || now > c->deadline + HTTP_CLIENT_TIMEOUT_S))
			client_close(c);
	}
}
