/* SPDX-License-Identifier: BSD-2-Clause */
/* ibsm-cli - one console command to a running ibsm, for scripts and operators: connects to
 * the console's unix socket (or its loopback TCP port), sends the command, prints the reply
 * and exits 0 (done), 1 (the command failed) or 2 (could not ask: usage, connection, protocol,
 * timeout). `--json` prints the reply as one JSON object; `report --html FILE` writes the
 * `report html` reply to FILE. The protocol is in doc/console.md. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/ibsm/console.sock"
#define MAX_REPLY (256u * 1024 * 1024)

static int timeout_ms = 60000;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ibsm-cli [--socket PATH | --tcp [HOST:]PORT] [--json] [--timeout SEC] COMMAND [ARGS...]\n"
		"       ibsm-cli [...] report --html FILE\n"
		"Sends one command to ibsm's console and prints the reply (ibsm-cli help lists the commands).\n"
		"  --socket PATH  the console's unix socket (default $IBSM_CONSOLE_SOCKET, else %s)\n"
		"  --tcp PORT     the loopback console (console loopback) on 127.0.0.1:PORT\n"
		"  --json         the reply as one JSON object\n"
		"  --timeout SEC  give up after SEC seconds (default 60)\n"
		"Exit status: 0 done, 1 the command failed, 2 could not ask (usage, connection, timeout).\n",
		DEFAULT_SOCKET);
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ibsm-cli: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ibsm-cli: cannot connect to %s: %s (is ibsm running with its console on?)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(const char *spec)
{
	char host[256] = "127.0.0.1";
	const char *port = spec, *colon = strrchr(spec, ':');
	if (colon) {
		size_t n = (size_t)(colon - spec);
		if (n >= sizeof(host))
			n = sizeof(host) - 1;
		memcpy(host, spec, n);
		host[n] = 0;
		port = colon + 1;
	}
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "ibsm-cli: %s: %s\n", spec, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	if (fd < 0)
		fprintf(stderr, "ibsm-cli: cannot connect to %s:%s: %s\n", host, port, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

/* Appends word to line, quoted when it holds blanks, quotes or backslashes. */
static int append_word(char **line, size_t *len, const char *w)
{
	if (strpbrk(w, "\n\r")) {
		fprintf(stderr, "ibsm-cli: an argument holds a line break\n");
		return -1;
	}
	int quote = !*w || strpbrk(w, " \t\"\\") != NULL;
	size_t need = *len + 2 * strlen(w) + 4;
	char *l = realloc(*line, need);
	if (!l)
		return -1;
	*line = l;
	if (*len)
		l[(*len)++] = ' ';
	if (quote)
		l[(*len)++] = '"';
	for (const char *p = w; *p; p++) {
		if (quote && (*p == '"' || *p == '\\'))
			l[(*len)++] = '\\';
		l[(*len)++] = *p;
	}
	if (quote)
		l[(*len)++] = '"';
	l[*len] = 0;
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads the reply up to its status line. *text gets the un-stuffed text; returns the status
 * (0 ok, 1 failed) or 2 on a connection or protocol problem. */
static int read_reply(int fd, char **text, size_t *text_len)
{
	size_t cap = 65536, len = 0, out_len = 0;
	char *buf = malloc(cap), *out = malloc(cap);
	size_t out_cap = cap;
	long long deadline = now_ms() + timeout_ms;
	size_t start = 0; /* the start of the line being read in buf */
	int status = -1;
	if (!buf || !out)
		return 2;
	while (status < 0) {
		/* complete lines first */
		char *nl;
		while (status < 0 && (nl = memchr(buf + start, '\n', len - start))) {
			char *line = buf + start;
			size_t n = (size_t)(nl - line);
			start += n + 1;
			if (n && line[0] == '.') {
				if (n >= 2 && line[1] == '.') {
					line++;
					n--;
				} else if (n == 3 && !memcmp(line, ".OK", 3)) {
					status = 0;
					break;
				} else if (n > 5 && !memcmp(line, ".ERR ", 5)) {
					status = 1;
					break;
				} else {
					fprintf(stderr, "ibsm-cli: protocol error: unexpected line '%.*s'\n", (int)n, line);
					status = 2;
					break;
				}
			}
			if (out_len + n + 2 > out_cap) {
				while (out_len + n + 2 > out_cap)
					out_cap *= 2;
				char *o = realloc(out, out_cap);
				if (!o) {
					status = 2;
					break;
				}
				out = o;
			}
			memcpy(out + out_len, line, n);
			out_len += n;
			out[out_len++] = '\n';
		}
		if (status >= 0)
			break;
		if (start) {
			memmove(buf, buf + start, len - start);
			len -= start;
			start = 0;
		}
		if (len == cap) {
			if (cap >= MAX_REPLY) {
				fprintf(stderr, "ibsm-cli: reply line too long\n");
				status = 2;
				break;
			}
			cap *= 2;
			char *b = realloc(buf, cap);
			if (!b) {
				status = 2;
				break;
			}
			buf = b;
		}
		long long left = deadline - now_ms();
		if (left <= 0) {
			fprintf(stderr, "ibsm-cli: no reply within %d s\n", timeout_ms / 1000);
			status = 2;
			break;
		}
		struct pollfd p = { fd, POLLIN, 0 };
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno != EINTR) {
			status = 2;
			break;
		}
		if (pr <= 0)
			continue;
		ssize_t r = recv(fd, buf + len, cap - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "ibsm-cli: the console closed the connection before the reply ended\n");
			status = 2;
			break;
		}
		len += (size_t)r;
	}
	free(buf);
	out[out_len] = 0;
	*text = out;
	*text_len = out_len;
	return status;
}

static int write_file_atomic(const char *path, const char *data, size_t n)
{
	size_t pl = strlen(path);
	char *tmp = malloc(pl + 16);
	if (!tmp)
		return -1;
	snprintf(tmp, pl + 16, "%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	int ok = f && fwrite(data, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp, path) < 0)
		ok = 0;
	if (!ok) {
		fprintf(stderr, "ibsm-cli: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *sock = getenv("IBSM_CONSOLE_SOCKET"), *tcp = NULL;
	int json = 0;
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "tcp", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	/* '+': stop at the command, so its own options (report --html) stay its own */
	while ((c = getopt_long(argc, argv, "+s:t:jT:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock = optarg; break;
		case 't': tcp = optarg; break;
		case 'j': json = 1; break;
		case 'T': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 86400) {
				fprintf(stderr, "ibsm-cli: --timeout wants seconds (1-86400)\n");
				return 2;
			}
			timeout_ms = (int)v * 1000;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *html_file = NULL;
	char *line = NULL;
	size_t len = 0;
	int bad = json && append_word(&line, &len, "json") < 0;
	if (!strcmp(argv[optind], "report") && optind + 1 < argc && !strcmp(argv[optind + 1], "--html")) {
		if (optind + 3 != argc) {
			fprintf(stderr, "ibsm-cli: usage: ibsm-cli report --html FILE\n");
			bad = 1;
		} else if (json) {
			fprintf(stderr, "ibsm-cli: report --html writes HTML, not JSON\n");
			bad = 1;
		}
		html_file = argv[optind + 2];
		bad = bad || append_word(&line, &len, "report") < 0 || append_word(&line, &len, "html") < 0;
	} else {
		for (int i = optind; i < argc && !bad; i++)
			bad = append_word(&line, &len, argv[i]) < 0;
	}
	if (!bad && len > 4000) {
		fprintf(stderr, "ibsm-cli: the command is longer than the console takes (4 KiB)\n");
		bad = 1;
	}
	char *l2 = bad ? NULL : realloc(line, len + 2);
	int fd = l2 ? (tcp ? connect_tcp(tcp) : connect_unix(sock && *sock ? sock : DEFAULT_SOCKET)) : -1;
	if (fd < 0) {
		free(l2 ? l2 : line);
		return 2;
	}
	line = l2;
	line[len++] = '\n';
	line[len] = 0;
	char *text = NULL;
	size_t text_len = 0;
	int status = 2;
	if (send_all(fd, line, len) < 0)
		fprintf(stderr, "ibsm-cli: send: %s\n", strerror(errno));
	else
		status = read_reply(fd, &text, &text_len);
	close(fd);
	free(line);
	if (status == 2) {
		if (text && text_len)
			fwrite(text, 1, text_len, stderr);
		free(text);
		return 2;
	}
	if (html_file && status == 0) {
		if (write_file_atomic(html_file, text, text_len) < 0)
			status = 2;
	} else {
		fwrite(text, 1, text_len, status ? (json ? stdout : stderr) : stdout);
	}
	free(text);
	return status;
}
