/* SPDX-License-Identifier: BSD-2-Clause */
/* console_modules.c - the one place that names every module adding console commands, so the
 * static core library links them (an unreferenced archive member would be left out): a new
 * module adds its register call here. */
#include "ops/console.h"

void console_register_all(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	console_builtin_register();
	console_perfmgr_register();
	console_report_register();
}
