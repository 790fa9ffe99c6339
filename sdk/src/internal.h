/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h: the core's private types (tracer, span, context, baggage) and
 * the tw__ functions shared between core files.
 *
 * Where it sits: application threads call span.c/tracer.c; a sampled span
 * owns a model record (model/span_data.h) that is handed to the reporter
 * (report/report.h) at finish. Dependencies flow core -> sampling/report ->
 * wire -> model.
 *
 * Locking: a tracer's mutable state is atomics only (closed flag, counters,
 * refcount); its sampler and reporter are immutable pointers between new and
 * close. Spans are single-writer. Contexts and baggage are immutable and
 * reference-counted.
 */
#ifndef TW_INTERNAL_H
#define TW_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"
#include "wire/core/error.h"  /* tw__set_error */
#include "wire/core/redact.h" /* tw__redact_text, tw__redact_url */
#include "wire/core/tls.h"
#include "context_parts.h"
#include "tracewire/tracewire.h"

/* Programmer-error check at the API boundary: never compiled out; reports
 * through the installed logger only. */
#define TW_CHECK_ARG(cond, ret)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            tw__log_for(TW_LOG_ERROR, __func__, "%s: invalid argument: %s", __func__, #cond);      \
            return ret;                                                                            \
        }                                                                                          \
    } while (0)
#define TW_CHECK_ARG_VOID(cond)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            tw__log_for(TW_LOG_ERROR, __func__, "%s: invalid argument: %s", __func__, #cond);      \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* ---- errors and logging (error.c, log.c) --------------------------------------------------- */

void tw__log_msg(tw_log_level level, const char *fmt, ...) TW_PRINTF(2, 3);
/* tw__log_msg on behalf of @who (a reporter's or transport's name): the
 * default logger limits each call site per name, so that two transports
 * of a composite failing at once are both heard. */
void tw__log_for(tw_log_level level, const char *who, const char *fmt, ...) TW_PRINTF(3, 4);
bool tw__log_enabled(tw_log_level level);
/* Delivers a formatted message (sanitized here) with no rate limit. */
void tw__log_raw(tw_log_level level, const char *message);
/* Delivers a message of one cause (a call site's format string, or any
 * stable address): the default logger lets one line per cause through
 * per minute and says how many it held back. */
void tw__log_cause(tw_log_level level, const void *cause, const char *message);
/* Every log line and error message passes through tw__redact_text
 * (wire/core/redact.h: control bytes escaped, URL credentials and query
 * values masked), the bridge's messages too; URLs shown in messages through
 * tw__redact_url, or tw__show_url for a URL a user gave. */
/* TRACEWIRE_LOG_LEVEL / OTEL_LOG_LEVEL values: debug, info, warn(ing),
 * error, off (none); verbose, all, trace mean debug. Case-insensitive. */
bool tw__parse_log_level(const char *v, tw_log_level *out);
/* Lines the default logger dropped because stderr was not writable. */
uint64_t tw__log_default_dropped(void);
/* Forgets the default logger's rate-limit history (tests). */
void tw__log_rate_reset(void);

/* ---- baggage (context.c) ------------------------------------------------------------------- */

/* Immutable, reference-counted list of key/value pairs; one allocation
 * (context_parts.h declares its functions). */
struct tw__baggage {
    atomic_uint refcount;
    size_t n;
    size_t n_bytes; /* keys and values, without NULs: what the limits measure */
    struct {
        const char *key;
        const char *value;
    } items[];
};

const char *tw__baggage_get(const tw__baggage *b, const char *key);

/* ---- contexts ------------------------------------------------------------------------------ */

/* What a context carries besides ids, flags and baggage: immutable,
 * reference-counted, one allocation, shared by a context and its children
 * (a child keeps its parent's tracestate, as W3C asks). */
typedef struct tw__ctx_extra {
    atomic_uint refcount;
    const char *tracestate; /* W3C tracestate as received, NULL if none */
    const char *debug_id;   /* jaeger-debug-id, NULL if none (used by contexts without ids) */
    char data[];            /* the strings */
} tw__ctx_extra;

tw__ctx_extra *tw__ctx_extra_new(const char *tracestate, const char *debug_id);
tw__ctx_extra *tw__ctx_extra_ref(tw__ctx_extra *x);
void tw__ctx_extra_unref(tw__ctx_extra *x);

/* Internal flag: the context is embedded in a tw_span (set at start, never
 * copied: scope snapshots and owned copies clear it). It tells a span's
 * context from the other embedded ones (scopes, captures). */
#define TW__FLAG_IN_SPAN 0x400u

/*
 * A context either has ids (trace id not zero, span id not zero), or is a
 * "hint" extracted without a usable trace context: a jaeger-debug-id, a
 * sampling decision alone (B3 "b3: 1"), and/or baggage. Starting a span
 * from a hint begins a new trace that honours it.
 */
struct tw_span_context {
    atomic_uint refcount; /* 0 marks a context embedded in a span (not refcounted) */
    uint32_t flags;       /* Jaeger flags | TW__FLAG_DEFERRED | TW__FLAG_RANDOM */
    uint64_t trace_id_high;
    uint64_t trace_id_low;
    uint64_t span_id;
    uint64_t parent_id;
    tw__baggage *baggage; /* owned reference, NULL when empty */
    tw__ctx_extra *extra; /* owned reference, NULL when none */
};

static inline bool tw__context_has_ids(const tw_span_context *c)
{
    return (c->trace_id_high || c->trace_id_low) && c->span_id;
}

/* ---- tracer ------------------------------------------------------------------------------- */

/* The finished-span handler chain (handlers/handlers.h). */
typedef struct tw__handler_chain tw__handler_chain;

/* The longest operation name and tag or log field key a span keeps, in
 * bytes; longer ones are cut on a UTF-8 character boundary and counted in
 * tracewire.truncated_values (docs/CONFIGURATION.md). Fixed: values have
 * TRACEWIRE_MAX_VALUE_BYTES; a name or key is an identifier, and no
 * sensible one comes near this. Without a bound, one name could make every
 * span too large for a packet whatever the limits said. */
#define TW__MAX_NAME_BYTES 1024

typedef struct tw__limits {
    size_t max_tags;
    size_t max_logs;
    size_t max_log_fields;
    size_t max_value_bytes;
} tw__limits;

struct tw_tracer_options {
    char *service;
    tw__process tags; /* user process tags (service_name unused) */
    bool is_128bit;
    tw_sampler *sampler;
    tw_reporter *reporter;
    tw_propagator *propagator; /* NULL: the default (Jaeger only) */
    tw__limits limits;
    bool use_active_span;        /* implicit parent from the active scope (default true) */
    tw__handler_chain *handlers; /* NULL: none; moves to the tracer like the sampler */
    bool is_parent_based;        /* the sampler decides for new traces only (default true) */
    bool no_propagation;         /* inject writes nothing, extract finds nothing (internal:
                                    OTEL_PROPAGATORS=none, the no-op tracer) */
};

struct tw_tracer {
    atomic_uint refcount; /* the user's handle + one per open sampled span and per tw_captured */
    atomic_bool is_closed;
    bool is_128bit;
    bool use_active_span; /* tw_span_start without a parent uses the active scope */
    uint64_t scope_key;   /* names this tracer's scope stacks (scope/scope.h); never 0 */
    tw__limits limits;
    tw__process process;
    tw_sampler *sampler;         /* immutable until free; NULL after */
    tw_reporter *reporter;       /* closed at close, freed at free */
    tw_propagator *propagator;   /* immutable until free; NULL after */
    tw__handler_chain *handlers; /* immutable until free (destroyed there); NULL if none */
    /* A handler wants unsampled spans: they record locally ("sample local"); span.c tests
     * it once on the unsampled fast path. Immutable after tw_tracer_new. */
    bool records_unsampled;
    /* The sampler decides for every span, not only for new traces
     * (tw_tracer_options_set_parent_based(false)). Immutable. */
    bool samples_every_span;
    bool no_propagation; /* see tw_tracer_options; immutable */
    /* The sampler says no to every trace (const false, probability 0): a root
     * span skips the call. Immutable (those samplers never change). */
    bool never_samples;
    bool is_noop; /* the global no-op tracer: never closed or freed */

    /* Counters: relaxed atomics; they are statistics, never used to order
     * memory, so relaxed increments are enough. */
    atomic_uint_fast64_t spans_started_sampled;
    atomic_uint_fast64_t spans_finished_sampled;
    atomic_uint_fast64_t spans_after_close;
    atomic_uint_fast64_t traces_started_sampled;
    atomic_uint_fast64_t extract_warnings;         /* baggage/tracestate problems seen by extract */
    atomic_uint_fast64_t spans_dropped_by_handler; /* sampled, dropped by the chain */
    atomic_uint_fast64_t spans_recorded_locally;   /* unsampled, recorded for the chain only */
    atomic_uint_fast64_t baggage_dropped;          /* tw_span_set_baggage refusals (limits) */
};

/* Frees the tracer's memory once its last reference is gone (tracer.c). */
void tw__tracer_destroy(tw_tracer *t);
/* Drops a reference on the tracer's memory: the user's handle (at
 * tw_tracer_free), a recording span's, a capture's. Inline: every sampled
 * span's finish drops one. */
static inline void tw__tracer_release(tw_tracer *t)
{
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) == 1)
        tw__tracer_destroy(t);
}

/* ---- spans --------------------------------------------------------------------------------- */

enum tw__span_state { TW__SPAN_FREE = 0x5f5f, TW__SPAN_OPEN = 0x0be1 };

/*
 * Lazy ids: a span that does not record draws its ids only when something
 * reads its context (tw_span_get_context, a scope activating it, a forced
 * sampling decision), so a never-sampled span that nobody reads costs no
 * draw. tw_span.ids_pending says what is still to draw; until then the
 * context's missing ids are 0. Drawn once (readers on several threads agree
 * through a compare-and-swap), then fixed for the span's life.
 */
enum tw__ids_pending {
    TW__IDS_READY = 0,    /* every id is in the context */
    TW__IDS_SPAN = 1,     /* the span id (the trace id came from the parent) */
    TW__IDS_TRACE64 = 2,  /* a root: a 64-bit trace id, whose low half is the span id */
    TW__IDS_TRACE128 = 3, /* a root: a 128-bit trace id, whose low half is the span id */
    TW__IDS_DRAWING = 4   /* another thread is drawing them */
};

struct tw_span {
    uint32_t state;       /* tw__span_state: catches use after finish while pooled */
    bool has_mono_start;  /* duration from the monotonic clock */
    bool is_local_record; /* data is for the handlers only (sample local): not counted
                             as started sampled, never reported unless sampling is forced */
    /* Finish has more to do than return the handle to the pool: drop baggage
     * or extras, free a long name or retired baggage, tell scopes (set when
     * any of these appears; a recording span is told by `data`). */
    bool needs_finish_work;
    atomic_uint ids_pending; /* tw__ids_pending */
    tw_span_context context; /* embedded, refcount 0 */
    tw_tracer *tracer;       /* referenced only while data != NULL */
    tw__span_data *data;     /* NULL for spans that do not record */
    int64_t start_mono_ns;
    struct tw_span *next_free; /* per-thread pool link */
    /* Operation name of a span that does not record, kept so that a later
     * sampling.priority can still name the span: inline when it fits, else
     * op_name_long (owned, freed at finish). */
    char op_name[48];
    char *op_name_long;
    /* Baggage values handed out (tw_span_get_baggage, or the context's
     * baggage accessors) stay valid until finish: a baggage the span
     * replaces after lending from it is kept here, not freed. */
    atomic_bool is_baggage_lent;
    struct tw__retired_baggage *retired;
    uint32_t n_retired;
};

/* Draws what tw_span.ids_pending says is missing (span.c). */
void tw__span_draw_ids(tw_span *s);
/* Makes the span's context hold all its ids: call before reading them
 * through anything but tw_span_get_context (which does it). */
static inline void tw__span_ensure_ids(const tw_span *s)
{
    if (__builtin_expect(
            atomic_load_explicit(&s->ids_pending, memory_order_acquire) != TW__IDS_READY, 0))
        tw__span_draw_ids((tw_span *)s);
}

/* At most this many lent baggages are kept per span; a further change of a
 * lent baggage is refused (TW_E_LIMIT, counted), so memory stays bounded. */
#define TW__SPAN_RETIRED_MAX 32

/* The span a context is embedded in, or NULL for any other context. */
static inline struct tw_span *tw__context_span(const tw_span_context *c)
{
    if (!(c->flags & TW__FLAG_IN_SPAN) ||
        atomic_load_explicit(&c->refcount, memory_order_relaxed) != 0)
        return NULL;
    return (struct tw_span *)((char *)c - offsetof(struct tw_span, context));
}

/* A context a caller may use: a heap context, or one embedded in a span
 * that is still open. A finished span's context (kept past tw_span_finish)
 * is refused with a logged error while the handle is pooled. */
bool tw__context_is_usable(const tw_span_context *c, const char *caller);
/* Marks the baggage of a span's embedded context as lent (see tw_span). */
void tw__context_lend_baggage(const tw_span_context *c);

/* Caps of a span's or context's baggage (the public TW_BAGGAGE_MAX_*), the
 * same as inject and extract apply: NULL when @key = @value may be added to
 * @b, else why not. */
const char *tw__baggage_refusal(const tw__baggage *b, const char *key, const char *value);

#endif /* TW_INTERNAL_H */
