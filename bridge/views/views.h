/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/views.h: what the read-only views of span logs share
 * (internal): `tracewire show`, `deps`, `stats` and `diff` (docs/views.md).
 *
 * Where it sits: every view reads its inputs through the convert pipeline
 * (bridge/pipeline.h: readers, detection, checks, the assembler with Jaeger
 * ids), so it sees traces exactly as `tracewire convert --to jaeger-json`
 * writes them. Each assembled group (a trace, or the part of one that the
 * window let go) becomes a twv_trace: the spans indexed, their tree (parent
 * by id, else by a reference into the trace), children sorted by start,
 * roots and orphans, skew marks, self time and, on request, the critical
 * path. The algorithms here are pure (no I/O) and have unit suites
 * (tests/unit/bridge/test_views_*.c); the commands are in show.c, html.c,
 * deps.c, stats.c, diff.c and view_cmd.c.
 *
 * Ownership: a twv_trace borrows the span records and processes of the group
 * it was built from (valid for the assembler's callback, or longer when the
 * caller holds references); its arrays are its own and are reused from one
 * build to the next. Locking: none; one thread per object.
 */
#ifndef TW_BRIDGE_VIEWS_H
#define TW_BRIDGE_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"

#define TWV_NONE UINT32_MAX

typedef enum twv_kind {
    TWV_KIND_NONE = 0, /* internal / local / unknown */
    TWV_KIND_CLIENT,
    TWV_KIND_SERVER,
    TWV_KIND_PRODUCER,
    TWV_KIND_CONSUMER
} twv_kind;

/* "client", "server", ... or "" for TWV_KIND_NONE. */
const char *twv_kind_name(twv_kind k);

/* One span of a trace, with what the views derive from it. */
typedef struct twv_span {
    const tw__span_data *d;
    const tw__process *proc;
    const char *service; /* the process's service name; "" when none */
    /* Times in µs since the epoch. A span without a timestamp (0 or less)
     * takes its parent's start for display (has_start false, as Jaeger UI
     * repairs it); a span whose duration is unknown ends where it starts. */
    int64_t start_us, end_us;
    uint32_t parent;      /* index of the parent span, or TWV_NONE */
    uint32_t first_child; /* children: trace->children[first_child .. + n_children] */
    uint32_t n_children;
    uint32_t depth;          /* 0 for a root */
    uint64_t missing_parent; /* the parent id when the parent is not in the trace (orphan) */
    int64_t self_us;         /* duration minus the union of children inside it; -1 unknown */
    int64_t critical_us;     /* time on the critical path (twv_critical_path) */
    uint8_t kind;            /* twv_kind */
    bool has_start, has_duration;
    bool is_error;        /* an `error` tag that is not false (Zipkin's rule, docs/views.md) */
    bool is_skew;         /* starts before its parent (both with timestamps) */
    bool is_follows_from; /* its parent is a FOLLOWS_FROM reference, not CHILD_OF */
    bool is_cycle; /* a root only to break a cycle of parents (its parent id is in the trace) */
} twv_span;

/* A section of the critical path: span @span determined [start, end). */
typedef struct twv_cp_section {
    uint32_t span;
    int64_t start_us, end_us;
} twv_cp_section;

typedef struct twv_trace {
    uint64_t trace_id_high, trace_id_low;
    twv_span *spans;
    size_t n_spans;
    uint32_t *children; /* children lists, each sorted by start (then input order) */
    uint32_t *order;    /* display order: depth first from the roots; every span once */
    uint32_t *roots;    /* spans without a parent in the trace, by start */
    size_t n_roots;
    int64_t start_us, end_us; /* extent of the spans with timestamps (0, 0 when none) */
    size_t n_errors, n_orphans, n_skew, n_no_duration;
    twv_cp_section *cp; /* critical path sections, latest first, after twv_critical_path */
    size_t n_cp;
    /* The sections of span k: cp[cp_of[cp_first[k]]] .. cp[cp_of[cp_first[k + 1] - 1]],
     * latest first (after twv_critical_path). */
    uint32_t *cp_first; /* n_spans + 1 */
    uint32_t *cp_of;    /* n_cp */
    /* scratch, reused between builds */
    size_t cap_spans, cap_cp, cap_cp_first, cap_cp_of;
    uint32_t *table; /* span id -> index, open addressing */
    size_t table_mask;
    uint32_t *work; /* stacks, cursors */
    int64_t *times; /* clipped times of the critical path */
    uint8_t *flags; /* per span flags of the algorithms */
} twv_trace;

void twv_trace_init(twv_trace *t);
/* Frees the arrays; the trace may be built again after init. */
void twv_trace_free(twv_trace *t);
/* Builds @t from one assembled group (every span of one trace). Replaces
 * what @t held. False on allocation failure. */
bool twv_trace_build(twv_trace *t, const twb_span *spans, size_t n);
/* The index of the span with @span_id (the first one when ids repeat), or
 * TWV_NONE. */
uint32_t twv_trace_find(const twv_trace *t, uint64_t span_id);
/* The id of the parent the tree shows for @s: its parent id, or the
 * reference it hangs under when that id is not in the trace; an orphan's
 * own parent id; 0 for a root. @follows: that link is a FOLLOWS_FROM one. */
uint64_t twv_shown_parent(const twv_trace *t, const twv_span *s, bool *follows);

/* The critical path (Jaeger UI's algorithm; critical_path.c, docs/views.md):
 * fills t->cp, the index of the sections by span (cp_first, cp_of) and every
 * span's critical_us. False on allocation failure. */
bool twv_critical_path(twv_trace *t);

/* The trace id as shown: 32 lower-case hex digits when the high half is set,
 * else 16. @out holds 33 bytes. */
void twv_trace_id_text(uint64_t high, uint64_t low, char out[33]);

/* ---- filters shared by every view (select.c) ------------------------------------------- */

typedef struct twv_filter {
    char trace_prefix[33]; /* lower-case hex, "" for none */
    const char *service;   /* compared without regard to ASCII case; NULL for none */
    const char *operation; /* compared exactly; NULL for none */
    int64_t since_us, until_us, min_duration_us;
    bool has_since, has_until, has_min_duration, error_only;
} twv_filter;

/* True when @f selects nothing beyond the trace id (a span-level check is
 * needed only when this is false). */
bool twv_filter_is_trace_only(const twv_filter *f);
/* The id part of the filter, for a span before assembly: keeps the span
 * when its trace id, in any of its textual forms (32 digits, the low 16, or
 * without leading zeros), starts with the prefix. */
bool twv_filter_match_id(const twv_filter *f, uint64_t high, uint64_t low);
/* The whole filter on an assembled trace (Jaeger's search semantics): the
 * id prefix; the trace starts in [since, until); and one span matches every
 * span criterion given (service, operation, min duration, error). */
bool twv_filter_match(const twv_filter *f, const twv_trace *t);

/* Parsers of the filter options. Each returns false with a reason in @why.
 * A duration: a number with a unit, us|µs|ms|s|m|h, several may follow each
 * other ("1m30s"); fractions allowed ("1.5ms"). */
bool twv_parse_duration(const char *text, int64_t *us, char *why, size_t why_size);
/* A time: RFC 3339 ("2024-05-01T10:00:00Z", offsets, fractions), a date
 * ("2024-05-01", UTC midnight), "@SECONDS" since the epoch, "now", or a
 * duration ago ("15m", "2h" = now minus it). @now_us is "now". */
bool twv_parse_time(const char *text, int64_t now_us, int64_t *us, char *why, size_t why_size);
/* A trace id prefix: 1-32 hex digits of either case, written lower case to
 * @out (33 bytes). */
bool twv_parse_trace_prefix(const char *text, char out[33], char *why, size_t why_size);

/* One side of `tracewire diff` (diff.c): a trace id prefix (read from the
 * command's FILE arguments), a file (every trace in it), or PREFIX@FILE. */
typedef struct twv_side {
    char prefix[33];  /* "" when the side is a whole file */
    const char *path; /* points into the argument; NULL when the side is a bare prefix */
} twv_side;
/* Parses a side. @file_exists tells whether a path names an existing file
 * (injected for tests). False with a reason on a malformed argument or an
 * ambiguous one (a bare hex argument that is also an existing file). */
bool twv_parse_side(const char *arg, bool (*file_exists)(const char *path), twv_side *side,
                    char *why, size_t why_size);

/* ---- latency quantiles (quantiles.c) ---------------------------------------------------- */

/* Exact while at most TWV_EXACT_MAX values were added, then a log-bucket
 * sketch (DDSketch's mapping) with relative accuracy TWV_SKETCH_ALPHA: an
 * estimate q' of the exact value q at the same rank satisfies
 * |q' - q| <= TWV_SKETCH_ALPHA * q + 0.5 (the 0.5 is the rounding to whole
 * µs). The rank of quantile p over n values is ceil(p * n) (nearest rank).
 * Memory: TWV_EXACT_MAX values, then one counter per bucket between the
 * smallest and the largest value (at most ~2,200 for 1 µs .. 292,000 years). */
#define TWV_EXACT_MAX 1000
#define TWV_SKETCH_ALPHA 0.01

typedef struct twv_quantiles {
    int64_t *exact; /* the values while exact (NULL before the first) */
    size_t n_exact, cap_exact;
    uint32_t *buckets; /* the sketch: buckets[i] counts bucket (min_index + i) */
    int32_t min_index;
    size_t n_buckets;
    uint64_t n_zero; /* values <= 0 (the sketch's log mapping cannot hold them) */
    uint64_t count;
    int64_t max;
    bool is_sketch;
} twv_quantiles;

void twv_quantiles_init(twv_quantiles *q);
void twv_quantiles_free(twv_quantiles *q);
/* Adds one value (µs). False on allocation failure (the value is lost). */
bool twv_quantiles_add(twv_quantiles *q, int64_t value);
/* The quantile @p in (0, 1] (see above); 0 when empty. Sorts the exact
 * values in place. */
int64_t twv_quantiles_get(twv_quantiles *q, double p);
/* The sketch's bucket index of a value > 0, and a bucket's representative
 * value (exposed for the tests of the bound). */
int32_t twv_sketch_index(int64_t value);
double twv_sketch_value(int32_t index);

/* ---- per-operation aggregates (opstats.c) --------------------------------------------- */

typedef struct twv_opstat {
    char *service, *operation;
    uint64_t count, errors, no_duration;
    twv_quantiles latency;
    int64_t duration_us;          /* total of the known durations */
    int64_t self_us, critical_us; /* totals */
    uint64_t self_known;          /* spans whose self time is known */
    uint64_t children, max_children;
    uint64_t traces;     /* traces that hold at least one such span */
    uint64_t last_trace; /* internal: the trace counted last */
} twv_opstat;

typedef struct twv_opstats {
    twv_opstat *rows;
    size_t n_rows, cap_rows;
    uint32_t *table;
    size_t table_mask;
    size_t max_rows;       /* new (service, operation) pairs beyond this fold into "(other)" */
    uint64_t folded_spans; /* spans counted under an "(other)" row */
    uint64_t n_traces;
    bool is_nomem;
} twv_opstats;

void twv_opstats_init(twv_opstats *s, size_t max_rows);
void twv_opstats_free(twv_opstats *s);
/* Adds every span of @t (with its self time and, when @with_critical,
 * after twv_critical_path, its critical time). False on allocation failure. */
bool twv_opstats_add_trace(twv_opstats *s, const twv_trace *t, bool with_critical);
/* @a + @b, held at INT64_MAX / INT64_MIN instead of overflowing (totals of
 * µs). */
int64_t twv_add_us(int64_t a, int64_t b);
/* The row of (service, operation), or NULL. */
twv_opstat *twv_opstats_find(const twv_opstats *s, const char *service, const char *operation);

/* ---- service dependency links (links.c) ------------------------------------------------ */

typedef struct twv_link {
    char *parent, *child; /* lower case */
    uint64_t calls, errors;
} twv_link;

typedef struct twv_links {
    twv_link *rows;
    size_t n_rows, cap_rows;
    uint32_t *table;
    size_t table_mask;
    size_t max_rows;
    uint64_t dropped; /* calls not counted because max_rows links existed */
    /* scratch of the per-trace tree, reused (links.c) */
    uint32_t *zparent, *n_kids, *first_kid, *kids, *next_same, *stack;
    uint8_t *reached;
    const char **names, **remote; /* per span: lower-case local / remote service, or NULL */
    char *lower;                  /* copies of names that had upper case */
    size_t cap, lower_cap;
    bool is_nomem;
} twv_links;

void twv_links_init(twv_links *l, size_t max_rows);
void twv_links_free(twv_links *l);
/* Adds the links of one trace, by Zipkin's DependencyLinker rules
 * (docs/views.md). False on allocation failure. */
bool twv_links_add_trace(twv_links *l, const twv_trace *t);
/* Sorts the links by parent, then child. */
void twv_links_sort(twv_links *l);

/* ---- small shared helpers (trace.c) ----------------------------------------------------- */

/* The last tag of @s with @key, or NULL. */
const tw__tag *twv_find_tag(const tw__span_data *s, const char *key);
/* A tag's value as text for display, written to @buf (truncated to fit). */
const char *twv_tag_text(const tw__tag *t, char *buf, size_t size);

#endif /* TW_BRIDGE_VIEWS_H */
