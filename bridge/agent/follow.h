/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/follow.h: `--follow GLOB`: tails line-framed span logs
 * (Dapper logs and convert's line-framed inputs) across rotation and
 * restarts, with a checkpoint (docs/agent.md, "Following logs").
 *
 * Identity of a file: its device and inode, checked against a fingerprint
 * (its first bytes, up to 256). So a file renamed by rotation is the same
 * file (its new name may still match the glob: it is not read again); a file
 * whose inode holds other first bytes is a new file (inode reuse, or
 * copytruncate's truncation); a new inode whose first bytes are a tracked
 * file's fingerprint is that file's content (copytruncate's copy) and
 * continues from its offset. Files are read through a descriptor kept open,
 * so a rotated or deleted file is still read to its end.
 *
 * Every line is one chunk (agent.h): its spans hold it, and it is done when
 * each destination has acknowledged, spooled or dropped each of them. The
 * checkpoint keeps, per file, the offset before which every line is done and
 * the ranges of done lines after it; it is rewritten (temporary file, fsync,
 * rename, directory fsync) from the destinations' delivery callback after
 * each batch that held followed spans, before the next batch is sent. So
 * after a kill -9 a restart re-reads only lines not known to be done: at most
 * the batch that was in flight is sent twice, and nothing is skipped.
 *
 * Threads: one follower thread reads; destination threads call the delivery
 * callback. One mutex guards the files and their chunk lists.
 */
#ifndef TW_BRIDGE_AGENT_FOLLOW_H
#define TW_BRIDGE_AGENT_FOLLOW_H

#include "agent/agent.h"

typedef struct twa_follow twa_follow;

typedef struct twa_follow_options {
    const char *const *globs;
    size_t n_globs;
    const char *checkpoint; /* NULL: no checkpoint (a restart reads again) */
    bool from_end;          /* files without a checkpoint entry at the first scan: from their end */
    const twb_reader *reader; /* a line-framed reader (dapper by default) */
    const twb_options *reader_opts;
    twa_pipeline *pipeline; /* may be set later: twa_follow_set_pipeline */
    unsigned int poll_ms;   /* how often the globs are expanded and files checked (250) */
} twa_follow_options;

/* Loads the checkpoint; NULL with @why when it is unreadable or damaged. */
twa_follow *twa_follow_new(const twa_follow_options *o, char *why, size_t why_size);
/* The pipeline the spans go to (made after the destinations, which need the
 * follower's delivery callback first). Before twa_follow_start. */
void twa_follow_set_pipeline(twa_follow *f, twa_pipeline *p);
/* The delivery callback to give every destination (twa_dest_options). */
void twa_follow_on_delivery(void *follow, twa_outcome outcome, size_t n_spans);
bool twa_follow_start(twa_follow *f, char *why, size_t why_size);
/* Stops reading (the thread returns within poll_ms). */
void twa_follow_stop(twa_follow *f);
/* Writes the checkpoint a last time and frees (after the destinations
 * stopped). */
void twa_follow_free(twa_follow *f);

#endif /* TW_BRIDGE_AGENT_FOLLOW_H */
