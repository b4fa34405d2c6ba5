/* SPDX-License-Identifier: BSD-2-Clause */
/* guid2mkey.h - OpenSM's guid2mkey file (in the cache dir, beside guid2lid): the M_Key each
 * management port (a CA port, a switch's port 0) was last given or seen holding, by port GUID.
 * With OpenSM's m_key_lookup (default TRUE) the SM presents that key to a port it has no newer
 * word of (mad/mkey_derive.h: mkey_held_guess), so ports keyed by an earlier run, or by OpenSM,
 * stay reachable after a restart or a change of m_key; keys written and read are recorded and
 * the file written again, as OpenSM does at the end of a sweep. Lines "0xGUID 0xMKEY". */
#ifndef IBSM_MAD_GUID2MKEY_H
#define IBSM_MAD_GUID2MKEY_H

#include <glib.h>
#include <stdint.h>

#define GUID2MKEY_FILE "guid2mkey"
#define GUID2MKEY_NEIGHBORS_FILE "neighbors" /* OpenSM's: which port each port's link leads to */

struct guid2mkey;

/* Reads path, and the neighbors file beside it (a missing file is empty; malformed lines are
 * logged with FILE:LINE and skipped). */
struct guid2mkey *guid2mkey_load(const char *path);
void guid2mkey_free(struct guid2mkey *m);
/* 1 and *key when guid has an entry. */
int guid2mkey_get(const struct guid2mkey *m, uint64_t guid, uint64_t *key);
/* Records guid's key (the file is written again at the next save when it changed). */
void guid2mkey_set(struct guid2mkey *m, uint64_t guid, uint64_t key);
/* OpenSM's neighbors file, for the key of a port not reached yet: the port at the other end of
 * port `num` of the port with GUID `guid` (a switch's ports go by its port 0's GUID). */
int guid2mkey_neighbor(const struct guid2mkey *m, uint64_t guid, uint8_t num, uint64_t *peer_guid);
void guid2mkey_set_neighbor(struct guid2mkey *m, uint64_t guid, uint8_t num, uint64_t peer_guid,
			    uint8_t peer_num);
/* Some entry holds a key other than 0. */
int guid2mkey_any(const struct guid2mkey *m);
uint32_t guid2mkey_size(const struct guid2mkey *m);
/* Writes the files (guid2mkey mode 0600: the keys are secrets; through a temporary file, fsync
 * and a rename) if an entry changed since they were read or last written; 0, or -errno (logged). */
int guid2mkey_save(struct guid2mkey *m);
/* The neighbors file alone (what discovery records; guid2mkey_save then writes it only if it
 * changed again): another thread may meanwhile read the keys and set them, not neighbors. */
int guid2mkey_save_neighbors(struct guid2mkey *m);

#endif
