/* SPDX-License-Identifier: BSD-2-Clause */
/* notengine.c - a shared object without the "ibsm_engine" symbol (e.g. a stray library in the
 * plugin directory): the loader must refuse it. */
__attribute__((visibility("default"))) int notengine_answer(void)
{
	return 42;
}
