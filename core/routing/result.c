/* SPDX-License-Identifier: BSD-2-Clause */
/* result.c - routes and engine results kept with their generation, and the queries on them. */
#include <string.h>
#include "base/log.h"
#include "routing/result.h"

static struct routing_part *part_ref(struct routing_part *p)
{
	g_atomic_int_inc(&p->refs);
	return p;
}

static void part_unref(gpointer data)
{
	struct routing_part *p = data;
	if (!g_atomic_int_dec_and_test(&p->refs))
		return;
	const struct ibsm_engine *ops = p->step->engine->ops;
	if (p->result && ops->result_free)
		ops->result_free(p->result);
	routing_step_unref(p->step);
	g_free(p);
}

struct routing_result *routing_result_new(struct fabric *f)
{
	struct routing_result *r = g_new0(struct routing_result, 1);
	r->refs = 1;
	r->f = fabric_ref(f);
	r->n_switches = f->pub.n_switches;
	r->stride = f->pub.max_lid + 1;
	size_t bytes = (size_t)r->n_switches * r->stride;
	r->lft = g_malloc(bytes ? bytes : 1);
	memset(r->lft, IBSM_NO_PORT, bytes);
	r->lid_part = g_malloc(r->stride);
	memset(r->lid_part, ROUTING_NO_PART, r->stride);
	r->parts = g_ptr_array_new_with_free_func(part_unref);
	return r;
}

struct routing_result *routing_result_ref(struct routing_result *r)
{
	if (r)
		g_atomic_int_inc(&r->refs);
	return r;
}

void routing_result_unref(struct routing_result *r)
{
	if (!r || !g_atomic_int_dec_and_test(&r->refs))
		return;
	g_ptr_array_free(r->parts, TRUE);
	g_free(r->lid_part);
	g_free(r->lft);
	fabric_unref(r->f);
	g_free(r);
}

uint8_t routing_result_add(struct routing_result *r, struct routing_step *step, void *result)
{
	struct routing_part *p = g_new0(struct routing_part, 1);
	p->refs = 1;
	p->step = routing_step_ref(step);
	p->result = result;
	g_ptr_array_add(r->parts, p);
	return (uint8_t)(r->parts->len - 1);
}

void routing_result_inherit(struct routing_result *r, const struct routing_result *from)
{
	g_ptr_array_set_size(r->parts, 0);
	for (guint i = 0; i < from->parts->len; i++)
		g_ptr_array_add(r->parts, part_ref(g_ptr_array_index(from->parts, i)));
	uint32_t n = MIN(r->stride, from->stride);
	memcpy(r->lid_part, from->lid_part, n);
}

static const struct routing_part *part_at(const struct routing_result *r, guint i)
{
	return i < r->parts->len ? g_ptr_array_index(r->parts, i) : NULL;
}

uint8_t routing_path_sl(const struct routing_result *r, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	const struct routing_part *p = dlid < r->stride ? part_at(r, r->lid_part[dlid]) : NULL;
	if (!p || !p->step->engine->ops->path_sl)
		return sl_hint;
	return p->step->engine->ops->path_sl(p->result, sl_hint, slid, dlid);
}

int routing_sl2vl(const struct routing_result *r, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	for (guint i = 0; i < r->parts->len; i++) {
		const struct routing_part *p = part_at(r, i);
		if (p->step->engine->ops->sl2vl && p->step->engine->ops->sl2vl(p->result, in_port, out_port, vl) >= 0)
			return 0;
	}
	return -1;
}

int routing_vlarb(const struct routing_result *r, uint32_t port, uint8_t high[64][2], uint8_t low[64][2])
{
	for (guint i = 0; i < r->parts->len; i++) {
		const struct routing_part *p = part_at(r, i);
		if (p->step->engine->ops->vlarb && p->step->engine->ops->vlarb(p->result, port, high, low) >= 0)
			return 0;
	}
	return -1;
}

int routing_mcast(const struct routing_result *r, uint16_t mlid, uint32_t n_members,
		  const uint32_t *members, uint64_t (*egress)[4])
{
	for (guint i = 0; i < r->parts->len; i++) {
		const struct routing_part *p = part_at(r, i);
		const struct ibsm_engine *ops = p->step->engine->ops;
		if (ops->mcast && ops->mcast(p->result, &r->f->pub, mlid, n_members, members, egress) >= 0)
			return 0;
	}
	return -1;
}

int routing_dump(const struct routing_result *r, const char *dir)
{
	int failed = 0;
	for (guint i = 0; i < r->parts->len; i++) {
		const struct routing_part *p = part_at(r, i);
		const struct ibsm_engine *ops = p->step->engine->ops;
		if (!ops->dump || !p->result)
			continue;
		if (ops->dump(p->result, dir, "") < 0) {
			LOG_E("RES-0001", "engine %s could not write its dump files to %s",
			      p->step->engine->name, dir);
			failed++;
		}
	}
	return failed;
}
