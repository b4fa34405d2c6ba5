/* SPDX-License-Identifier: BSD-2-Clause */
/* parse.c - readers of OpenSM's opensm-lfts.dump and opensm-lid-matrix.dump (the files OpenSM
 * 3.3.23 and ibsm write, core/fabric/dump.c), the lines OpenSM's file engine reads and nothing
 * more; a line it cannot take stops the read with file:line and why, as OpenSM's does. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "file.h"

/* One line of text at a time: *line is NUL-terminated in buf (longer lines are cut). */
struct lines {
	const char *p, *end;
	unsigned no;
	char buf[1024];
};

static const char *next_line(struct lines *l)
{
	if (l->p >= l->end)
		return NULL;
	const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	size_t n = (size_t)((nl ? nl : l->end) - l->p);
	size_t k = n < sizeof(l->buf) - 1 ? n : sizeof(l->buf) - 1;
	memcpy(l->buf, l->p, k);
	l->buf[k] = 0;
	for (size_t i = 0; i < k; i++)
		if (l->buf[i] == '\0' || l->buf[i] == '\r')
			l->buf[i] = ' ';
	l->p += n + (nl != NULL);
	l->no++;
	const char *s = l->buf;
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static int fail(char *why, size_t len, const char *name, unsigned line, const char *what,
		const char *at)
{
	snprintf(why, len, "%s:%u: %s: '%.40s'", name, line, what, at);
	return -EINVAL;
}

/* Hex number at s (after "0x" if given): moves *end past it; -1 when no digit. */
static int hex(const char *s, uint64_t max, uint64_t *v, const char **end)
{
	char *e;
	if (!isxdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long n = strtoull(s, &e, 16);
	if (errno || n > max)
		return -1;
	*v = n;
	*end = e;
	return 0;
}

/* The switch GUID of a header line: the hex number after " guid 0x", then a blank or the end
 * of the line. */
static int header_guid(const char *s, uint64_t *guid)
{
	const char *q = strstr(s, " guid 0x"), *e;
	if (!q || hex(q + 8, UINT64_MAX, guid, &e) < 0)
		return -1;
	return *e == 0 || isspace((unsigned char)*e) ? 0 : -1;
}

/* The optional " portguid 0xGUID" after s; 0 when there is none. */
static uint64_t port_guid(const char *s)
{
	const char *q = strstr(s, " portguid 0x"), *e;
	uint64_t g;
	if (!q || hex(q + 12, UINT64_MAX, &g, &e) < 0)
		return 0;
	return *e == 0 || *e == ':' || isspace((unsigned char)*e) ? g : 0;
}

int file_parse_lfts(const char *text, size_t len, const char *name,
		    const struct lft_reader *rd, char *why, size_t why_len)
{
	struct lines l = { .p = text, .end = text + len };
	const char *s;
	int in_switch = 0, rc;
	while ((s = next_line(&l)) != NULL) {
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "Multicast mlids", 15))
			return fail(why, why_len, name, l.no, "a multicast dump (opensm.mcfdbs), "
				    "not the unicast LFTs", s);
		if (!strncmp(s, "Unicast lids", 12)) {
			uint64_t guid;
			if (header_guid(s, &guid) < 0)
				return fail(why, why_len, name, l.no, "no switch GUID (\" guid 0x...\")",
					    s);
			if ((rc = rd->sw(rd->ctx, guid, l.no)) < 0)
				return rc;
			in_switch = 1;
			continue;
		}
		if (!in_switch || strncmp(s, "0x", 2))
			continue; /* "N lids dumped", or entries before any switch (as OpenSM) */
		uint64_t lid;
		const char *e;
		if (hex(s + 2, 0xFFFF, &lid, &e) < 0 || !isspace((unsigned char)*e))
			return fail(why, why_len, name, l.no, "cannot read the LID", s);
		while (isspace((unsigned char)*e))
			e++;
		char *pe;
		if (!isdigit((unsigned char)*e))
			return fail(why, why_len, name, l.no, "cannot read the port", s);
		unsigned long port = strtoul(e, &pe, 10);
		if (port > 255 || (*pe && !isspace((unsigned char)*pe)))
			return fail(why, why_len, name, l.no, "cannot read the port", s);
		if ((rc = rd->entry(rd->ctx, (uint32_t)lid, (unsigned)port, port_guid(pe), l.no)) < 0)
			return rc;
	}
	return 0;
}

int file_parse_hops(const char *text, size_t len, const char *name,
		    const struct hops_reader *rd, char *why, size_t why_len)
{
	struct lines l = { .p = text, .end = text + len };
	const char *s;
	int in_switch = 0, rc;
	uint8_t hops[256];
	while ((s = next_line(&l)) != NULL) {
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "Switch", 6)) {
			uint64_t guid;
			if (header_guid(s, &guid) < 0)
				return fail(why, why_len, name, l.no, "no switch GUID (\" guid 0x...\")",
					    s);
			if ((rc = rd->sw(rd->ctx, guid, l.no)) < 0)
				return rc;
			in_switch = 1;
			continue;
		}
		if (!in_switch || strncmp(s, "0x", 2))
			continue;
		uint64_t lid, h;
		const char *e;
		if (hex(s + 2, 0xFFFF, &lid, &e) < 0 || (*e != ':' && !isspace((unsigned char)*e)))
			return fail(why, why_len, name, l.no, "cannot read the LID", s);
		unsigned n = 0;
		while (*e == ':' || isspace((unsigned char)*e))
			e++;
		while (*e && *e != '#' && n < 256) {
			if (hex(e, 0xFF, &h, &e) < 0)
				return fail(why, why_len, name, l.no, "cannot read a hop count", e);
			hops[n++] = (uint8_t)h;
			while (isspace((unsigned char)*e))
				e++;
		}
		if (!n)
			return fail(why, why_len, name, l.no, "no hop counts", s);
		if ((rc = rd->hops(rd->ctx, (uint32_t)lid, hops, n, port_guid(e), l.no)) < 0)
			return rc;
	}
	return 0;
}
