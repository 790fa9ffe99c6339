/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/assemble/assemble.h: the trace assembler of `tracewire convert`
 * (internal), between the readers and the writers (convert.h flow:
 * reader -> pipeline -> assembler -> writer): trace assembly, clock skew,
 * collection-time sampling and Jaeger's client/server halves (docs/bridge.md;
 * the facts: docs/wire/assembly.md, docs/wire/jaeger-json.md).
 *
 * Ownership: twb_assembler_add takes the caller's reference on the span
 * record (also on failure); processes are borrowed (interned, they outlive
 * the assembler). Groups handed to @out are borrowed for the call only.
 * Locking: none; one thread at a time per assembler.
 *
 * The rules, in the order a group goes through them:
 *
 * GROUPING. window_spans > 0: up to window_spans spans are held, grouped by
 *   trace; when one more would exceed the window, the OLDEST trace (by first
 *   arrival) goes out whole; at flush every trace goes out in order of first
 *   arrival. window_spans == 0 (pass-through): consecutive spans of the same
 *   trace form a group (so the client and server halves one record produced
 *   are assembled together); a group goes out when a span of another trace
 *   arrives, when it reaches 1024 spans, or at flush. A group of one span
 *   costs no hashing or copying. Memory: the window (or 1024 spans).
 * SPLIT TRACES. A trace whose spans arrive further apart than the window
 *   (or, with window 0, not one after another) goes out in more than one
 *   group, and the rules below see each group alone. split_traces counts
 *   such traces, once each: a trace that starts a new group (window slot or
 *   pass-through group) while one of its kept groups already went out. The
 *   ids of the last 16384 traces with a kept group are remembered (first in
 *   first out), so a trace whose next part comes later than that is not
 *   counted: the count is a lower bound. Memory: about 400 KiB, allocated
 *   when the first group goes out.
 * TRACE IDENTITY. Traces are keyed by the low 64 bits of the trace id: a
 *   64-bit id joins the 128-bit trace with the same low half, and the longest
 *   id is applied to every span of the group (and to references into the
 *   trace), as Zipkin's Trace.merge does. Two 128-bit ids whose low halves
 *   are equal but whose non-zero high halves differ are different traces.
 * SAMPLING (sample < 1): a group is kept iff one of its spans has
 *   TW__FLAG_DEBUG, or its trace id is in the debug set, or
 *   twb_trace_hash(id) / 2^64, computed as (hash >> 11) * 2^-53, is < sample.
 *   The trace ids of kept debug groups enter the debug set (the last 4096
 *   ids, first in first out), so later parts of a debug trace are kept too.
 *   sampled_out counts the spans dropped.
 * DEDUPLICATION. Within a group, a record equal to an earlier one with the
 *   same span id in every field (ids, parent, flags, shared, name, times,
 *   references, tags and logs in order, process) is dropped (duplicates).
 *   A cheap hash of scalar fields is compared first.
 * MERGE. Parts of one span are ordered: non-shared before shared, CLIENT
 *   first among non-shared, then arrival. A part merges into the first earlier
 *   part (at most 64 back) with the same span id when: same shared-ness; the
 *   kinds (tag span.kind) are equal or one is absent; no conflicting non-zero
 *   parents; and the local endpoints are compatible (Zipkin's rule: service,
 *   ip, ipv6 and port each absent on one side or equal, checked against all
 *   parts merged so far); and the result stays under 4096 tags + logs. The
 *   merged record keeps the first part's values and fills what it lacks
 *   (name, timestamp, duration, parent), ORs the flags, unions the references,
 *   unions the tags (a later part's key replaces the earlier value: Zipkin's
 *   map semantics; this also fills kind and remote endpoint tags), and unions
 *   the logs, sorted by timestamp with equal logs removed. Its process is the
 *   part's with the most endpoint fields (the first on a tie). `merged`
 *   counts parts merged away. Deviation from Zipkin: kinds and parents must
 *   agree (Zipkin merges any two parts with the same endpoint). Extension: a
 *   late fragment (no kind, no timestamp, not shared: what the v1 -> v2
 *   conversion makes of a server's stray annotation) that merged into no
 *   non-shared part merges into the first shared part it is compatible with
 *   (the real SmartThings trace has 84 such ids); it would otherwise leave a
 *   duplicate span id in a Jaeger target.
 * BACKFILL. When the first non-shared part of a span id is a CLIENT, every
 *   later SERVER part with that id becomes shared=true; a shared part with no
 *   parent takes the parent of the first non-shared part.
 * JAEGER IDS (jaeger_ids). A shared part whose span id is also used by a
 *   non-shared part of the group gets a new span id: the first output of
 *   splitmix64 seeded with the old id (state += 0x9e3779b97f4a7c15, then the
 *   splitmix64 finalizer, repeated) that is neither 0 nor used by another
 *   span of the group; its parent becomes the old id (the client); shared is
 *   cleared (shared_ids counts these). Spans whose parent is the old id and
 *   whose local endpoint equals a re-ided part's move under that part's new
 *   id, CHILD_OF references included (Zipkin SpanNode's attachment rule;
 *   `reparented`); the others stay under the client. Jaeger's own
 *   DeduplicateClientServerSpanIDs uses max(id)+1 and re-parents every child:
 *   that id depends on which other spans happened to be loaded, so the same
 *   span would get different ids in different windows, files or runs; a
 *   derivation from the client id alone is the same everywhere. A shared part
 *   whose client is not in the group keeps its id (no parent is invented).
 * CLOCK SKEW (skew_adjust). The group's tree: a shared part's parent is the
 *   first non-shared part with its id; another span's parent is, among the
 *   parts with its parent id, the shared one whose local endpoint equals its
 *   own, else the first non-shared one, else the first. From each root, depth
 *   first: on a CLIENT -> SERVER edge whose hosts differ (host = process tag
 *   `ip`, else `ipv6`, else none; none equals none), with both timestamps
 *   set, delta = 0 if the server fits in the client; if the server is longer,
 *   client.start - server.start when the server starts earlier, else 0;
 *   otherwise client.start + (client.dur - server.dur) / 2 - server.start
 *   (Jaeger's adjuster). The delta moves the server, its logs, and every
 *   descendant on the server's host (descendants on another host start from
 *   0 unless they are again a CLIENT -> SERVER edge). skew_adjusted counts the
 *   spans moved.
 * ORPHANS. No rule invents or drops a parent except those named above:
 *   spans whose parent is not in the group pass as they are.
 * OUTPUT ORDER. A group's surviving spans go out in arrival order (a merged
 *   span at its first part's place).
 */
#ifndef TW_BRIDGE_ASSEMBLE_H
#define TW_BRIDGE_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"

typedef struct twb_assembler twb_assembler;

typedef struct twb_assemble_options {
    size_t window_spans; /* spans held for assembly; 0: consecutive spans of one trace */
    bool jaeger_ids;     /* target wants TWB_TARGET_JAEGER_IDS */
    bool skew_adjust;    /* --skew adjust */
    double sample;       /* --sample in [0, 1]; 1.0 keeps all (the caller validates) */
} twb_assemble_options;

typedef struct twb_assemble_stats {
    uint64_t merged;        /* parts merged into another part of the same span */
    uint64_t duplicates;    /* exact duplicates dropped */
    uint64_t skew_adjusted; /* spans whose timestamps moved */
    uint64_t sampled_out;   /* spans dropped by sampling */
    uint64_t reparented;    /* children moved under a re-ided shared span */
    uint64_t shared_ids;    /* shared spans given their own id (jaeger_ids) */
    uint64_t split_traces;  /* traces sent in more than one group (see SPLIT TRACES) */
} twb_assemble_stats;

/* Receives groups of spans (whole traces, or the parts of a trace the window
 * had to let go). The spans stay the assembler's (it unrefs them after @out
 * returns). Returns TW_OK, or an error (with @err) that stops the run. */
typedef tw_status (*twb_assemble_out)(void *arg, const twb_span *spans, size_t n, tw_error **err);

/* A new assembler (options copied); NULL on allocation failure or NULL
 * arguments. Thread safety: any thread. */
twb_assembler *twb_assembler_new(const twb_assemble_options *o, twb_assemble_out out, void *arg);

/* Adds one span. Takes @span's reference, also on failure. May call @out
 * (window full, or the pass-through group ended). Returns TW_OK, the status
 * @out failed with, TW_E_NOMEM or TW_E_INVALID_ARG (NULL assembler or
 * record), with @err set. Thread safety: one thread at a time per assembler. */
tw_status twb_assembler_add(twb_assembler *a, twb_span span, tw_error **err);

/* Sends everything held to @out, oldest trace first (end of input). On an
 * error from @out the rest is still released (not sent). */
tw_status twb_assembler_flush(twb_assembler *a, tw_error **err);

void twb_assembler_stats(const twb_assembler *a, twb_assemble_stats *st);

/* Frees @a and unrefs what it still holds (not sent). NULL is a no-op. */
void twb_assembler_free(twb_assembler *a);

/* The sampling hash: the first output of splitmix64 seeded with the low
 * half, i.e. z = low + 0x9e3779b97f4a7c15; z = (z ^ z >> 30) *
 * 0xbf58476d1ce4e5b9; z = (z ^ z >> 27) * 0x94d049bb133111eb; z ^ z >> 31.
 * The high half is deliberately not mixed in: a 64-bit id and its 128-bit
 * form are the same trace (Zipkin keys traces and its CollectorSampler on the
 * low 64 bits), so every part of a trace gets the same decision. Test
 * vector: twb_trace_hash(0, 1) == 0x910a2dec89025cc1. Never depends on the
 * machine. */
uint64_t twb_trace_hash(uint64_t trace_id_high, uint64_t trace_id_low);

/* The sampling decision for a (non-debug) trace id: hash mapped to [0, 1)
 * by its top 53 bits, compared with @sample. */
bool twb_trace_sampled(uint64_t trace_id_high, uint64_t trace_id_low, double sample);

/* The span id a shared span with @client_id gets under jaeger_ids when no
 * other span of its trace uses the first candidate (the common case). */
uint64_t twb_shared_span_id(uint64_t client_id);

#endif /* TW_BRIDGE_ASSEMBLE_H */
