/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/spool.h: a destination's on-disk spool (docs/agent.md,
 * "Durability"): the encoded bodies that could not be sent, one file per
 * batch, replayed oldest first.
 *
 * Layout: DIR/spool-key holds a random secret made at the first start (64 hex
 * digits, mode 0600); DIR/<name>/, the name an HMAC-SHA-256 keyed with it of
 * the destination's whole identity (dest.c), holds `destination` (the URL with its credentials
 * and query values masked, for people) and one file per batch,
 * %016x.twspool, numbered in order. A file is a 32-byte header then the
 * body exactly as it goes on the wire (gzipped when the destination gzips):
 *
 *   0  8  magic "TWSPOOL1"
 *   8  4  flags (bit 0: the body is gzip)       little-endian
 *   12 4  spans in the body
 *   16 4  CRC-32 (zlib) of the body
 *   20 4  reserved, 0
 *   24 8  body length
 *
 * Writing: DIR/<key>/.tmp-<n> is written, fsync'ed, renamed to its name, and
 * the directory fsync'ed, so after a crash a file is either whole or absent
 * (leftover .tmp files are deleted at start). Reading checks the magic, the
 * length and the CRC; a bad file is dropped and counted (spool_error, by
 * its header's span count; a file without a readable header found at start
 * in spool_unreadable_files). Anything but a regular file is left alone.
 * The size cap counts headers and bodies; appending past it drops the oldest
 * files first (counted spool_full, by their spans).
 *
 * Locking: none; the destination thread owns its spool.
 */
#ifndef TW_BRIDGE_AGENT_SPOOL_H
#define TW_BRIDGE_AGENT_SPOOL_H

#include "agent/agent.h"
#include "wire/core/buf.h"

#define TWA_SPOOL_GZIP 1u

typedef struct twa_spool twa_spool;

/* Opens (creating) DIR/<name of @identity>, loads the index of what a
 * previous run left. DIR is made with its missing parents (0700), and
 * DIR/spool-key when it is missing; destinations (and agents) opening at
 * once share one key: it is written whole, then linked to its name. A
 * spool an earlier version named by the plain SHA-256 of @identity is
 * renamed to the keyed name first. @identity holds the URL's secrets: it
 * is hashed, never shown.
 * @shown_url (redacted) goes to the file `destination`; @label names the
 * destination in the log. NULL with @why when the directory cannot be made
 * or read, or DIR/spool-key cannot be read, made or parsed. */
twa_spool *twa_spool_open(const char *dir, const char *identity, const char *shown_url,
                          const char *label, uint64_t max_bytes, twa_dest_stats *st, char *why,
                          size_t why_size);
void twa_spool_close(twa_spool *s);
bool twa_spool_is_empty(const twa_spool *s);
/* Writes one batch (durably, see above). False (logged, counted
 * spool_error) when it cannot be written; also false when the batch alone
 * is larger than the cap. */
bool twa_spool_append(twa_spool *s, const uint8_t *body, size_t len, uint32_t n_spans,
                      uint32_t flags);
/* The oldest batch into @body; false when the spool is empty. A file that
 * fails its checks is dropped (and the next one tried). */
bool twa_spool_peek(twa_spool *s, tw__buf *body, uint32_t *n_spans, uint32_t *flags);
/* Deletes the oldest batch (after it was delivered or dropped). */
void twa_spool_pop(twa_spool *s);

#endif /* TW_BRIDGE_AGENT_SPOOL_H */
