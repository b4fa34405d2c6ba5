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

struct routing_result *routing_result_new_untabled(struct fabric *f)
{
	struct routing_result *r = g_new0(struct routing_result, 1);
	r->refs = 1;
	r->f = fabric_ref(f);
	r->n_switches = f->pub.n_switches;
	r->stride = f->pub.max_lid + 1;
	r->lid_part = g_malloc(r->stride);
	memset(r->lid_part, ROUTING_NO_PART, r->stride);
	r->parts = g_ptr_array_new_with_free_func(part_unref);
	return r;
}

struct routing_result *routing_result_new(struct fabric *f)
{
	struct routing_result *r = routing_result_new_untabled(f);
	size_t bytes = (size_t)r->n_switches * r->stride;
	r->lft = routing_tables_new(bytes);
	memset(r->lft, IBSM_NO_PORT, bytes);
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
	if (r->step_dumps)
		g_ptr_array_free(r->step_dumps, TRUE);
	g_free(r->lid_part);
	routing_tables_unref(r->lft);
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

static void step_dump_free(gpointer p)
{
	struct routing_step_dump *d = p;
	g_free(d->bits);
	g_free(d->lft);
	g_free(d);
}

/* Copies bit set b (NULL words: all) to words at *w, advancing it. */
static struct ibsm_bits bits_copy(const struct ibsm_bits *b, uint64_t **w)
{
	struct ibsm_bits out = { NULL, b->nbits };
	if (!b->w)
		return out;
	size_t n = ((size_t)b->nbits + 63) / 64;
	memcpy(*w, b->w, n * sizeof(uint64_t));
	out.w = *w;
	*w += n;
	return out;
}

void routing_result_add_step_dump(struct routing_result *r, const struct routing_step *s,
				  const struct ibsm_scope *scope, const uint8_t *lft, int failed)
{
	if (!r->step_dumps)
		r->step_dumps = g_ptr_array_new_with_free_func(step_dump_free);
	struct routing_step_dump *d = g_new0(struct routing_step_dump, 1);
	g_snprintf(d->tag, sizeof(d->tag), "%u.%s", s->id, s->engine->name);
	d->failed = failed;
	d->scope = *scope;
	size_t words = 0;
	const struct ibsm_bits *sets[] = { &scope->switches, &scope->ports, &scope->dests };
	for (unsigned i = 0; i < 3; i++)
		words += sets[i]->w ? ((size_t)sets[i]->nbits + 63) / 64 : 0;
	d->bits = g_new0(uint64_t, words ? words : 1);
	uint64_t *w = d->bits;
	d->scope.switches = bits_copy(&scope->switches, &w);
	d->scope.ports = bits_copy(&scope->ports, &w);
	d->scope.dests = bits_copy(&scope->dests, &w);
	size_t bytes = (size_t)r->n_switches * r->stride;
	d->lft = g_memdup2(lft, bytes ? bytes : 1);
	g_ptr_array_add(r->step_dumps, d);
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

unsigned routing_vl_hooks(const struct routing_result *r)
{
	unsigned hooks = 0;
	for (guint i = 0; r && i < r->parts->len; i++) {
		const struct ibsm_engine *ops = part_at(r, i)->step->engine->ops;
		hooks |= (ops->sl2vl ? 1u : 0) | (ops->vlarb ? 2u : 0);
	}
	return hooks;
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
		char suffix[ENGINE_NAME_MAX + 16] = "";
		if (p->step->id) /* a routing chain step: ".ID.ENGINE", as its other dumps */
			g_snprintf(suffix, sizeof(suffix), ".%u.%s", p->step->id, p->step->engine->name);
		if (ops->dump(p->result, dir, suffix) < 0) {
			LOG_E("RES-0001", "engine %s could not write its dump files to %s",
			      p->step->engine->name, dir);
			failed++;
		}
	}
	return failed;
}
