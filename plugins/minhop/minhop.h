/* minhop.h - what the files of the minhop engine share: the equalize-ignore list (-i) and
 * its parser, kept apart from the routing so each file has one job. */
#ifndef MINHOP_H
#define MINHOP_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

/* One "-i" file, parsed. A line is either an end-port GUID (routes to that port do not count
 * in the balance) or a switch node GUID and a port number, OpenSM 3.3's form (routes leaving
 * by that switch port do not count). '#' starts a comment; blank lines are skipped. */
struct minhop_ignore_entry {
	uint64_t guid;
	uint8_t port;     /* 0: an end-port GUID; else the switch port number */
};

struct minhop_ignore {
	struct minhop_ignore_entry *v;
	uint32_t n;
	uint32_t bad_lines;
};

/* Reads path into ig (emptied first). Bad lines are logged as "path:line: why" at level
 * bad_level and skipped. Returns 0, or a negative errno if the file cannot be read (logged
 * at IBSM_LOG_ERROR; ig is then empty). */
int minhop_ignore_load(const struct ibsm_core *core, const char *path, int bad_level,
		       struct minhop_ignore *ig);
void minhop_ignore_clear(struct minhop_ignore *ig);

/* Marks what ig names in fabric f: dest_ignored[port id] for end ports, and
 * exit_ignored[port id] for switch external ports (both arrays [f->n_ports], zeroed by the
 * caller). Returns how many entries matched something in f. */
uint32_t minhop_ignore_mark(const struct minhop_ignore *ig, const struct ibsm_fabric *f,
			    uint8_t *dest_ignored, uint8_t *exit_ignored);

#endif
