/* SPDX-License-Identifier: BSD-2-Clause */
/* tail_stash.h - the last 32 bytes of each MAD, kept aside for tests/tools/rmpp.c: umad2sim
 * (ibsim 0.10) copies only the first 224 bytes of a received MAD into the buffer it queues
 * (its struct sim_request-sized buffer also holds the 64-byte umad header) and hands the
 * program 32 bytes of whatever follows on its heap instead of the rest. rmpp.c sees each MAD
 * whole while umad2sim still has it (tail_stash_put) and puts its end back when the program
 * reads it (tail_stash_restore), matching on the first 224 bytes. */
#ifndef IBSM_TESTS_TAIL_STASH_H
#define IBSM_TESTS_TAIL_STASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TAIL_STASH_KEPT 224    /* bytes of a MAD umad2sim delivers intact */
#define TAIL_STASH_MAD 256
#define TAIL_STASH_SLOTS 1024  /* MADs kept aside at once; the oldest is forgotten first */

/* Keeps MAD's (TAIL_STASH_MAD bytes) end aside. Thread-safe. */
void tail_stash_put(const uint8_t *mad);
/* If MAD (LEN bytes, LEN > TAIL_STASH_KEPT) is one put aside, writes its end back (up to
 * LEN) and forgets it; returns whether it did. Thread-safe. */
bool tail_stash_restore(uint8_t *mad, size_t len);
/* Forgets everything (for the tests). */
void tail_stash_clear(void);

#endif
