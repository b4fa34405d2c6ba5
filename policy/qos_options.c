/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_options.c - the qos_* option values (policy/qos_options.h): strict checks with the entry
 * at fault named, and the per-port-type resolution with OpenSM's defaults. */
#include <string.h>
#include "policy/numbers.h"
#include "policy/qos_options.h"

#define QOS_OPT_ERROR g_quark_from_static_string("ibsm-qos-options")

static const char *const scope_prefix[QOS_N_SCOPES] = { "qos_", "qos_ca_", "qos_rtr_", "qos_sw0_",
							 "qos_swe_" };
static const char *const param_name[QOS_N_PARAMS] = { "max_vls", "high_limit", "vlarb_high",
						       "vlarb_low", "sl2vl" };
/* OpenSM's built-in values (opensm(8), QOS CONFIGURATION) */
static const char *const defaults[QOS_N_PARAMS] = {
	"15", "0",
	"0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0",
	"0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4",
	"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7",
};

const char *qos_option_key(enum qos_scope s, enum qos_param p)
{
	static char keys[QOS_N_SCOPES][QOS_N_PARAMS][24];
	if (!keys[s][p][0])
		g_snprintf(keys[s][p], sizeof(keys[s][p]), "%s%s", scope_prefix[s], param_name[p]);
	return keys[s][p];
}

/* A whole-string unsigned number (a C number, as OpenSM's strtoul reads it: decimal, 0x hex or
 * 0 octal; blanks around it, at most 31 bytes) in [0, max]; -1 otherwise. */
static int number(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	uint64_t v;
	while (len && g_ascii_isspace(*s))
		s++, len--;
	while (len && g_ascii_isspace(s[len - 1]))
		len--;
	if (!len || len >= 32 || !g_ascii_isdigit(*s) || policy_parse_c_u64(s, len, max, &v) < 0)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

/* Splits a comma list; a trailing comma (OpenSM's examples have them) ends the list. Calls
 * one(entry, len, index) for each entry; an empty entry elsewhere is an error. */
static int each_entry(const char *value, unsigned max_entries, const char *what,
		      int (*one)(const char *s, size_t len, unsigned i, void *ctx, GError **err),
		      void *ctx, unsigned *n, GError **err)
{
	const char *p = value;
	unsigned i = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int blank = 1;
		for (size_t k = 0; k < len; k++)
			blank &= g_ascii_isspace(p[k]) != 0;
		if (blank) {
			if (!comma && i > 0)
				break; /* "a,b," */
			g_set_error(err, QOS_OPT_ERROR, 0, "entry %u of the %s list is empty", i + 1, what);
			return -1;
		}
		if (i >= max_entries) {
			g_set_error(err, QOS_OPT_ERROR, 0, "more than %u entries in the %s list",
				    max_entries, what);
			return -1;
		}
		if (one(p, len, i, ctx, err) < 0)
			return -1;
		i++;
		if (!comma)
			break;
		p = comma + 1;
	}
	*n = i;
	return 0;
}

static int vlarb_one(const char *s, size_t len, unsigned i, void *ctx, GError **err)
{
	struct qos_vlarb_entry *t = ctx;
	const char *colon = memchr(s, ':', len);
	unsigned long vl, w;
	if (!colon) {
		g_set_error(err, QOS_OPT_ERROR, 0, "entry %u ('%.*s') is not VL:weight", i + 1, (int)len, s);
		return -1;
	}
	if (number(s, (size_t)(colon - s), 14, &vl) < 0) {
		g_set_error(err, QOS_OPT_ERROR, 0, "entry %u ('%.*s'): the VL must be a number 0-14",
			    i + 1, (int)len, s);
		return -1;
	}
	if (number(colon + 1, len - (size_t)(colon + 1 - s), 255, &w) < 0) {
		g_set_error(err, QOS_OPT_ERROR, 0, "entry %u ('%.*s'): the weight must be a number 0-255",
			    i + 1, (int)len, s);
		return -1;
	}
	if (t) {
		t[i].vl = (uint8_t)vl;
		t[i].weight = (uint8_t)w;
	}
	return 0;
}

static int sl2vl_one(const char *s, size_t len, unsigned i, void *ctx, GError **err)
{
	uint8_t *t = ctx;
	unsigned long vl;
	if (number(s, len, 15, &vl) < 0) {
		g_set_error(err, QOS_OPT_ERROR, 0, "entry %u ('%.*s') (SL %u) must be a VL 0-15 "
			    "(15 drops the SL)", i + 1, (int)len, s, i);
		return -1;
	}
	if (t)
		t[i] = (uint8_t)vl;
	return 0;
}

static int parse(enum qos_param p, const char *value, struct qos_port_config *c, GError **err)
{
	unsigned long v;
	unsigned n;
	switch (p) {
	case QOS_P_MAX_VLS:
		if (number(value, strlen(value), 15, &v) < 0 || v < 1) {
			g_set_error(err, QOS_OPT_ERROR, 0, "'%s' is not a number of VLs 1-15", value);
			return -1;
		}
		if (c)
			c->max_vls = (uint8_t)v;
		return 0;
	case QOS_P_HIGH_LIMIT:
		if (number(value, strlen(value), 255, &v) < 0) {
			g_set_error(err, QOS_OPT_ERROR, 0, "'%s' is not a high limit 0-255", value);
			return -1;
		}
		if (c)
			c->high_limit = (uint8_t)v;
		return 0;
	case QOS_P_VLARB_HIGH:
	case QOS_P_VLARB_LOW: {
		struct qos_vlarb_entry *t = !c ? NULL : p == QOS_P_VLARB_HIGH ? c->high : c->low;
		if (t)
			memset(t, 0, sizeof(c->high));
		return each_entry(value, QOS_VLARB_MAX, "VL:weight", vlarb_one, t, &n, err);
	}
	case QOS_P_SL2VL:
		if (c)
			memset(c->sl2vl, 0, sizeof(c->sl2vl));
		return each_entry(value, 16, "SL-to-VL", sl2vl_one, c ? c->sl2vl : NULL, &n, err);
	case QOS_N_PARAMS:
		break;
	}
	return -1;
}

int qos_option_unset(enum qos_param p, const char *value)
{
	const char *v = value;
	while (*v == ' ' || *v == '\t')
		v++;
	if (p == QOS_P_MAX_VLS)
		return !strcmp(v, "0");
	if (p == QOS_P_HIGH_LIMIT)
		return !strcmp(v, "-1");
	return 0;
}

int qos_option_check(enum qos_param p, const char *value, GError **err)
{
	return parse(p, value, NULL, err);
}

void qos_config_resolve(char *const vals[QOS_N_SCOPES][QOS_N_PARAMS], enum qos_scope type,
			struct qos_port_config *out)
{
	memset(out, 0, sizeof(*out));
	for (int p = 0; p < QOS_N_PARAMS; p++) {
		const char *v = vals ? vals[type][p] : NULL;
		if (!v && vals)
			v = vals[QOS_S_ALL][p];
		if (!v || parse((enum qos_param)p, v, out, NULL) < 0)
			parse((enum qos_param)p, defaults[p], out, NULL);
	}
}
