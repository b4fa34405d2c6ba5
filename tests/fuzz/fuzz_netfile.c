/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_netfile.c - fuzz target for the fabric-file loader: any input must load or be refused
 * with an error, never crash, and whatever loads must freeze into a consistent model.
 * Built for libFuzzer by `make fuzz`; its corpus is replayed under ASan by `make check`. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "fabric/model.h"
#include "fabric/netfile.h"

int fuzz_netfile(const uint8_t *data, size_t size);

int fuzz_netfile(const uint8_t *data, size_t size)
{
	static char *dir;
	if (!dir)
		dir = g_dir_make_tmp("ibsm-fuzz-XXXXXX", NULL);
	if (!dir)
		return 0;
	char *path = g_build_filename(dir, "input.net", NULL);
	if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL)) {
		g_free(path);
		return 0;
	}
	struct model_builder *b = model_builder_new();
	GError *err = NULL;
	if (netfile_load(path, b, &err) == 0) {
		struct fabric *f = model_freeze(b, 1, &err);
		if (f) {
			/* invariants every consumer relies on */
			for (uint32_t p = 0; p < f->pub.n_ports; p++) {
				uint32_t q = f->ports[p].peer;
				if (q != IBSM_NONE && (q >= f->pub.n_ports || f->ports[q].peer != p))
					abort();
			}
			for (uint32_t s = 0; s < f->pub.n_switches; s++)
				if (f->switches[s].adj0 + f->switches[s].nadj > f->pub.n_adj)
					abort();
			fabric_unref(f);
		}
	}
	g_clear_error(&err);
	model_builder_free(b);
	g_unlink(path);
	g_free(path);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_netfile(data, size);
}
#endif
