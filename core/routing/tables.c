/* SPDX-License-Identifier: BSD-2-Clause */
/* tables.c - LFT tables with a reference count of their own (routing/tables.h). */
#include <glib.h>
#include "routing/tables.h"

/* the count's room before the tables: a multiple of 16 keeps them aligned as g_malloc's */
#define TABLES_HEADER 64

uint8_t *routing_tables_new(size_t bytes)
{
	uint8_t *block = g_malloc(TABLES_HEADER + (bytes ? bytes : 1));
	*(gint *)block = 1;
	return block + TABLES_HEADER;
}

uint8_t *routing_tables_ref(uint8_t *lft)
{
	g_atomic_int_inc((gint *)(lft - TABLES_HEADER));
	return lft;
}

void routing_tables_unref(void *lft)
{
	if (!lft)
		return;
	uint8_t *block = (uint8_t *)lft - TABLES_HEADER;
	if (g_atomic_int_dec_and_test((gint *)block))
		g_free(block);
}

int routing_tables_refs(const uint8_t *lft)
{
	return g_atomic_int_get((const gint *)(const void *)(lft - TABLES_HEADER));
}
