/* SPDX-License-Identifier: BSD-2-Clause */
/* inputs.c - the snapshot the SA answers from: its defaults, its references (sa/inputs.h). */
#include <glib.h>
#include <string.h>
#include "routing/result.h"
#include "sa/inputs.h"
#include "sa/pkeys.h"

void sa_inputs_init(struct sa_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->subnet_prefix = 0xfe80000000000000ULL;
	in->packet_life = 18;
	in->mc_create_check = in->mc_join_check = 1;
	in->rtr_mtu = 4;
	in->rtr_rate = 16;
	in->sa_key = 1; /* OpenSM's */
}

void sa_inputs_set_routes(struct sa_inputs *in, struct routing_result *r, struct sa_pkeys *pk)
{
	struct routing_result *old = in->r;
	struct sa_pkeys *old_pk = in->pk;
	in->r = r ? routing_result_ref(r) : NULL;
	in->pk = pk;
	routing_result_unref(old);
	sa_pkeys_unref(old_pk);
}

void sa_inputs_set_prefix_routes(struct sa_inputs *in, GArray *routes)
{
	if (in->prefix_routes)
		g_array_unref(in->prefix_routes);
	in->prefix_routes = routes;
}

void sa_inputs_set_remote_sms(struct sa_inputs *in, const struct sa_remote_sm *sms, unsigned n)
{
	g_free(in->remote);
	in->remote = n ? g_memdup2(sms, sizeof(*sms) * n) : NULL;
	in->n_remote = in->remote ? n : 0;
}

void sa_inputs_copy(struct sa_inputs *to, const struct sa_inputs *from)
{
	*to = *from;
	to->r = from->r ? routing_result_ref(from->r) : NULL;
	to->pk = sa_pkeys_ref(from->pk);
	to->prefix_routes = from->prefix_routes ? g_array_ref(from->prefix_routes) : NULL;
	to->remote = from->n_remote ? g_memdup2(from->remote, sizeof(*from->remote) * from->n_remote) : NULL;
	to->n_remote = to->remote ? from->n_remote : 0;
}

void sa_inputs_clear(struct sa_inputs *in)
{
	routing_result_unref(in->r);
	sa_pkeys_unref(in->pk);
	if (in->prefix_routes)
		g_array_unref(in->prefix_routes);
	g_free(in->remote);
	sa_inputs_init(in);
}
