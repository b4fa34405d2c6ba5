/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics_http.h - a small HTTP/1.x server on 127.0.0.1 for the metrics endpoint: GET only,
 * one request per connection, non-blocking sockets serviced from the event loop's tick (under
 * umad2sim poll() sees only the umad fd), bounded clients, request size and time. */
#ifndef IBSM_OPS_METRICS_HTTP_H
#define IBSM_OPS_METRICS_HTTP_H

#include <glib.h>

#define HTTP_MAX_CLIENTS 8        /* connections served at once; more wait in the backlog */
#define HTTP_MAX_REQUEST 8192     /* bytes of request line and headers */
#define HTTP_CLIENT_TIMEOUT_S 5.0 /* a client that has not sent its request by then is closed */

/* The body for GET path: 200 and *body filled (content type *type), or 404. */
typedef int (*http_page_fn)(const char *path, GString *body, const char **type, void *ctx);

struct http_server;

/* Listens on 127.0.0.1:port (never another address). NULL with *err (errno) when the port
 * cannot be bound. */
struct http_server *http_server_new(int port, http_page_fn page, void *ctx, int *err);
void http_server_free(struct http_server *s);
int http_server_port(const struct http_server *s);
/* Accepts, reads, answers and writes what is ready without waiting; bounded work. */
void http_server_service(struct http_server *s);
/* Requests answered (any status) and refused (over-long, a method other than GET, too many
 * clients, a timeout). */
void http_server_counts(const struct http_server *s, guint64 *answered, guint64 *refused);

#endif
