/* SPDX-License-Identifier: BSD-2-Clause */
/* counters.c - the SA's request counters and latency histograms (sa/counters.h): kept by the
 * agent for each answer it sends, read by the metrics endpoint. */
#include <math.h>
#include <stddef.h>
#include "sa/counters.h"
#include "sa/wire.h"

const double sa_cnt_bucket_le[SA_CNT_BUCKETS] = {
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
	INFINITY,
};

static const uint8_t methods[SA_CNT_METHODS] = { SA_GET, SA_SET, SA_GETTABLE, SA_GETMULTI, SA_DELETE };
static const char *const method_names[SA_CNT_METHODS] = { "Get", "Set", "GetTable", "GetMulti",
							  "Delete" };

/* The statuses told apart; the last slot counts the rest. */
static const uint16_t statuses[SA_CNT_STATUSES - 1] = {
	SA_OK, SA_BUSY, SA_BAD_VERSION, SA_UNSUP_METHOD, SA_UNSUP_METHOD_ATTR, SA_INVALID_FIELD,
	SA_ERR_NO_RESOURCES, SA_ERR_REQ_INVALID, SA_ERR_NO_RECORDS, SA_ERR_TOO_MANY_RECORDS,
	SA_ERR_REQ_INVALID_GID, SA_ERR_REQ_INSUFFICIENT_COMPONENTS,
};
static const char *const status_names[SA_CNT_STATUSES] = {
	"ok", "busy", "bad_version", "unsupported_method", "unsupported_method_attribute",
	"invalid_field", "no_resources", "request_invalid", "no_records", "too_many_records",
	"invalid_gid", "insufficient_components", "other",
};

/* IBA 15.2.5 table 204 */
static const struct { uint16_t attr; const char *name; } attr_names[] = {
	{ 0x0001, "ClassPortInfo" }, { 0x0002, "Notice" }, { 0x0003, "InformInfo" },
	{ 0x0011, "NodeRecord" }, { 0x0012, "PortInfoRecord" }, { 0x0013, "SLtoVLMappingTableRecord" },
	{ 0x0014, "SwitchInfoRecord" }, { 0x0015, "LinearForwardingTableRecord" },
	{ 0x0016, "RandomForwardingTableRecord" }, { 0x0017, "MulticastForwardingTableRecord" },
	{ 0x0018, "SMInfoRecord" }, { 0x0020, "LinkRecord" }, { 0x0030, "GuidInfoRecord" },
	{ 0x0031, "ServiceRecord" }, { 0x0033, "P_KeyTableRecord" }, { 0x0035, "PathRecord" },
	{ 0x0036, "VLArbitrationTableRecord" }, { 0x0038, "MCMemberRecord" },
	{ 0x0039, "TraceRecord" }, { 0x003a, "MultiPathRecord" },
	{ 0x003b, "ServiceAssociationRecord" }, { 0x00f3, "InformInfoRecord" },
};

const char *sa_counters_attr_name(uint16_t attr)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++)
		if (attr_names[i].attr == attr)
			return attr_names[i].name;
	return NULL;
}

const char *sa_counters_method_name(int i)
{
	return i >= 0 && i < SA_CNT_METHODS ? method_names[i] : "?";
}

const char *sa_counters_status_name(int i)
{
	return i >= 0 && i < SA_CNT_STATUSES ? status_names[i] : "?";
}

static int method_index(uint8_t m)
{
	for (int i = 0; i < SA_CNT_METHODS; i++)
		if (methods[i] == m)
			return i;
	return -1;
}

static int status_index(uint16_t s)
{
	for (int i = 0; i < SA_CNT_STATUSES - 1; i++)
		if (statuses[i] == s)
			return i;
	return SA_CNT_STATUSES - 1;
}

/* The attribute's slot: the first free one the first time it is seen; "other" when full. */
static struct sa_cnt_attr *attr_slot(struct sa_counters *c, uint16_t attr)
{
	for (int i = 0; i < SA_CNT_ATTRS; i++) {
		struct sa_cnt_attr *a = &c->a[i];
		if (a->used && a->attr == attr)
			return a;
		if (!a->used) {
			a->used = 1;
			a->attr = attr;
			return a;
		}
	}
	c->a[SA_CNT_ATTRS].used = 1;
	c->a[SA_CNT_ATTRS].attr = 0xffff;
	return &c->a[SA_CNT_ATTRS];
}

void sa_counters_note(struct sa_counters *c, uint16_t attr, uint8_t method, uint16_t status,
		      double seconds)
{
	int mi = method_index(method);
	if (mi < 0)
		return; /* not a request method: the dispatch never hands one to the SA */
	struct sa_cnt_attr *a = attr_slot(c, attr);
	a->n[mi][status_index(status)]++;
	int b = 0;
	while (b < SA_CNT_BUCKETS - 1 && seconds > sa_cnt_bucket_le[b])
		b++;
	a->bucket[b]++;
	a->count++;
	a->sum_s += seconds < 0 ? 0 : seconds;
}
