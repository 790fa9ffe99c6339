/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/agent.h: what the parts of `tracewire agent` share (internal;
 * docs/agent.md is the user's side).
 *
 * Flow:
 *
 *   receivers (udp.c, http_mhd.c, follow.c)
 *      | decode.c: the project's one decoder per format, through the convert
 *      | readers' twb_input (emit / reject)
 *      v
 *   twa_spanbuf (per receiver call: spans + their interned processes)
 *      | pipeline.c: drop by name, redaction, process tags (procs.c)
 *      v
 *   one bounded queue per destination (dest.c) -> batcher (batch.c: per process,
 *   by size and time; body framing per format) -> transport (HTTP with libcurl,
 *   UDP, file) -> on failure the spool (spool.c) -> replay in order
 *      |
 *      +--> delivery callback per batch (acknowledged / spooled / dropped):
 *           follow mode advances its checkpoint from it
 *
 * Spans travel as twa_item: one reference on the record, one on its interned
 * process (twa_proc), and the follow-mode chunk it came from (NULL for the
 * network receivers).
 *
 * Threads: one per UDP receiver, libmicrohttpd's own threads for the HTTP
 * receivers and the metrics/sampling servers, one for follow mode, one per
 * destination, and the main thread (signals, process-table sweep). Every
 * structure says who locks it.
 */
#ifndef TW_BRIDGE_AGENT_H
#define TW_BRIDGE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"

/* ---- logging (log.c) ---------------------------------------------------------------------- */

typedef enum twa_level { TWA_ERROR = 0, TWA_WARN, TWA_INFO, TWA_DEBUG } twa_level;

/* Where messages go: stderr (default), a file (reopened by twa_log_reopen,
 * on SIGHUP) or syslog (facility daemon). Thread-safe. */
bool twa_log_open(const char *file, bool use_syslog, twa_level level, char *why, size_t why_size);
void twa_log_reopen(void);
void twa_log_close(void);
void twa_log(twa_level level, const char *fmt, ...) TW_PRINTF(2, 3);

/* ---- the interned processes (procs.c) ------------------------------------------------------- */

/*
 * One copy of each distinct process (after the --tag overrides), shared by
 * every span of it. The table holds one reference; each span in flight holds
 * one. Lookups and inserts take the table's mutex; releasing a reference is
 * an atomic decrement; twa_procs_sweep (main thread, periodically) frees the
 * entries only the table still holds, so memory follows the live processes.
 */
typedef struct twa_proc {
    tw__process process; /* first: a span's `const tw__process *` is this */
    atomic_uint refs;
    uint64_t hash;
    struct twa_proc *next; /* hash chain (table lock) */
} twa_proc;

typedef struct twa_procs twa_procs;

/* @tags: "key=value" overrides (copied), set on every process, replacing a
 * tag of the same key. NULL on allocation failure. */
twa_procs *twa_procs_new(const char *const *tags, size_t n_tags);
void twa_procs_free(twa_procs *t);
/* Replaces the overrides (SIGHUP): new processes get them, existing ones keep
 * theirs until they are swept. False on a bad entry or allocation failure. */
bool twa_procs_set_tags(twa_procs *t, const char *const *tags, size_t n_tags);
/* The interned copy of @p with one reference for the caller; NULL on
 * allocation failure. @p == NULL means a process without service or tags. */
twa_proc *twa_procs_intern(twa_procs *t, const tw__process *p);
static inline twa_proc *twa_proc_ref(twa_proc *p)
{
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}
static inline void twa_proc_unref(twa_proc *p)
{
    if (p)
        atomic_fetch_sub_explicit(&p->refs, 1, memory_order_release);
}
/* Frees the entries no span refers to; returns how many are left. */
size_t twa_procs_sweep(twa_procs *t);
size_t twa_procs_count(twa_procs *t);

/* ---- follow-mode chunks ---------------------------------------------------------------------- */

/*
 * A run of complete lines of a followed file. Every span read from it holds
 * the chunk; each destination, once a batch is acknowledged, spooled or
 * dropped for good, calls twa_chunk_done for its spans. When `pending`
 * reaches 0 the chunk is done and the checkpoint may move past it (follow.c
 * walks its chunks in order). Lock-free: pending is atomic.
 */
typedef struct twa_chunk {
    atomic_long pending;    /* span-deliveries not yet finished (+1 while being read) */
    uint64_t start_offset;  /* file offset of the chunk's first byte */
    uint64_t end_offset;    /* file offset just past the chunk's last line */
    struct twa_chunk *next; /* the file's chunks in order (follow thread) */
} twa_chunk;

static inline void twa_chunk_done(twa_chunk *c, long n)
{
    if (c)
        atomic_fetch_sub_explicit(&c->pending, n, memory_order_acq_rel);
}

/* ---- a span in flight ---------------------------------------------------------------------- */

typedef struct twa_item {
    tw__span_data *data; /* one reference */
    twa_proc *proc;      /* one reference */
    twa_chunk *chunk;    /* NULL unless from follow mode */
    /* In a destination's queue only: the span already encoded for that
     * destination by the thread that queued it (batch.h, twa_early), owned
     * by the queue slot, or NULL (the destination thread encodes it). An
     * encoded slot holds no record (data is NULL): only its ids, which the
     * batcher keeps, so a queue that is behind holds the smaller encoded
     * bytes instead of records. */
    void *encoded;
    size_t encoded_size;
    uint64_t trace_id_high, trace_id_low, span_id; /* when encoded */
} twa_item;

/* Drops the item's references (not the chunk's count, not `encoded`). */
void twa_item_release(twa_item *it);

/* ---- counters (metrics.c) ----------------------------------------------------------------- */

typedef enum twa_drop_reason {
    TWA_DROP_INVALID = 0,   /* a span the decoder rejected */
    TWA_DROP_FILTERED,      /* --drop-name */
    TWA_DROP_QUEUE_FULL,    /* the destination's queue was full */
    TWA_DROP_TOO_LARGE,     /* a span larger than a body */
    TWA_DROP_REFUSED,       /* the backend refused the span (400/413 after the split) */
    TWA_DROP_SEND_FAILED,   /* retries used up (no spool) or a final status */
    TWA_DROP_SPOOL_FULL,    /* dropped from the spool, oldest first, to stay under --spool-max */
    TWA_DROP_SPOOL_ERROR,   /* a spool file that could not be written or read back (header,
                               length, checksum) */
    TWA_DROP_SHUTDOWN,      /* still queued when the drain time ran out, and no spool */
    TWA_DROP_ENCODE,        /* the destination's encoder could not encode it */
    TWA_DROP_OVER_CAPACITY, /* in an HTTP request larger than the whole queue (413) */
    TWA_N_DROP
} twa_drop_reason;

const char *twa_drop_reason_name(twa_drop_reason r);

typedef struct twa_recv_stats {
    const char *name;                  /* the receiver label: jaeger-compact, otlp, follow, ... */
    atomic_uint_fast64_t received;     /* spans decoded or rejected */
    atomic_uint_fast64_t invalid;      /* of those, rejected */
    atomic_uint_fast64_t filtered;     /* of those, dropped by --drop-name */
    atomic_uint_fast64_t requests;     /* datagrams, HTTP requests, chunks */
    atomic_uint_fast64_t bad_requests; /* wholly malformed, too large, unsupported */
    atomic_uint_fast64_t bytes;
    /* UDP: datagrams the kernel dropped because the socket's receive buffer
     * was full (SO_RXQ_OVFL: known when the next datagram is read). */
    atomic_uint_fast64_t kernel_drops;
    atomic_bool is_udp; /* kernel_drops is meaningful (set by the UDP receiver) */
    /* HTTP: connections open now, and how often they reached the server's
     * limit (new ones then wait in the listen backlog). */
    atomic_int_fast64_t connections;
    atomic_uint_fast64_t connection_limit_hits;
    /* HTTP: connections closed because their request was not received whole
     * within --request-timeout-ms (a client sending it byte by byte). */
    atomic_uint_fast64_t request_timeouts;
    atomic_bool is_http; /* the three above are meaningful (set by the HTTP server) */
} twa_recv_stats;

typedef struct twa_dest_stats {
    atomic_uint_fast64_t enqueued;  /* spans accepted into the queue */
    atomic_uint_fast64_t forwarded; /* acknowledged by the destination */
    atomic_uint_fast64_t dropped[TWA_N_DROP];
    atomic_uint_fast64_t requests, retries, split_requests, bytes;
    atomic_uint_fast64_t encoded_early;  /* spans encoded by the queuing thread */
    atomic_uint_fast64_t spooled_spans;  /* spans written to the spool (total) */
    atomic_uint_fast64_t replayed_spans; /* spans sent from the spool (total) */
    atomic_int_fast64_t queue_spans;     /* gauge: in the queue */
    atomic_int_fast64_t queue_bytes;     /* gauge */
    atomic_int_fast64_t batching_spans;  /* gauge: taken from the queue, not yet finished */
    atomic_int_fast64_t spool_spans;     /* gauge: in the spool */
    atomic_int_fast64_t spool_bytes;     /* gauge */
    atomic_int_fast64_t spool_files;     /* gauge */
    /* Spool files found at start without a readable header (empty, cut in
     * the header): their span count is unknown, so they are counted here
     * rather than in dropped[TWA_DROP_SPOOL_ERROR]. */
    atomic_uint_fast64_t spool_unreadable_files;
    atomic_int up; /* 1: the last attempt succeeded, 0: it failed, -1: none ended yet */
} twa_dest_stats;

static inline void twa_add(atomic_uint_fast64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}
static inline uint64_t twa_get(const atomic_uint_fast64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}
static inline void twa_gauge_add(atomic_int_fast64_t *g, int64_t n)
{
    atomic_fetch_add_explicit(g, n, memory_order_relaxed);
}

/* ---- destinations (dest.c) ------------------------------------------------------------------ */

typedef struct twa_dest twa_dest;
/* A queuing thread's encoder state for one destination (batch.h). */
typedef struct twa_early twa_early;
#define TWA_MAX_DESTS 16

typedef enum twa_outcome {
    TWA_ACKED = 0, /* the destination accepted it (2xx, datagram sent, file written) */
    TWA_SPOOLED,   /* written to the spool (fsynced): it will be replayed */
    TWA_DROPPED    /* lost for good, counted under a reason */
} twa_outcome;

typedef struct twa_dest_options {
    const char *url;    /* http(s)://.../api/v2/spans|/api/traces|/v1/traces, udp://, file: */
    const char *format; /* --send-format; NULL: from the URL */
    /* For messages: the environment variable the URL, and the format, came
     * from (static strings), or NULL: --send, --send-format. */
    const char *url_from, *format_from;
    const char *file_format; /* file: destinations: a convert --to name (default dapper) */
    const twb_writer_vtable *file_writer; /* resolved by the caller for file: URLs */
    size_t max_body_bytes;                /* 0: 1 MiB */
    size_t max_packet_bytes;              /* UDP; 0: 65000 */
    unsigned int max_retries;             /* no spool: attempts after the first (default 3) */
    unsigned int timeout_ms;              /* one HTTP attempt (default 10000) */
    unsigned int initial_backoff_ms;      /* 100 */
    unsigned int max_backoff_ms;          /* 30000 */
    bool is_gzip;
    const char *const *headers; /* "Name: value" */
    size_t n_headers;
    const char *user; /* "name:password" */
    const char *ca_file, *cert_file, *key_file;
    unsigned int flush_ms;           /* a partial batch waits at most this long (default 1000) */
    size_t queue_max_spans;          /* default 65536 */
    size_t queue_max_bytes;          /* default 12 MiB */
    const char *spool_dir;           /* NULL: no spool */
    uint64_t spool_max_bytes;        /* this destination's share of --spool-max */
    unsigned int max_split_requests; /* 64 */
    /* The delivery callback: called on the destination's thread after the
     * outcome (acknowledged, spooled or dropped) of a batch that holds
     * follow-mode spans was reported to their chunks; follow mode writes its
     * checkpoint there, before the next batch is sent. NULL: none. */
    void (*on_delivery)(void *arg, twa_outcome outcome, size_t n_spans);
    void *delivery_arg;
    /* The destinations made before this one, in the order given: its label
     * and its spool directory are made unique among them (dest.c). */
    twa_dest *const *earlier;
    size_t n_earlier;
} twa_dest_options;

void twa_dest_options_init(twa_dest_options *o);

/* A destination and its thread (started by twa_dest_start). NULL with @why on
 * a configuration error (bad URL, unknown format, bad header): a usage error.
 * twa_dest_start opens what it writes (the file: destination, the spool, the
 * socket of a udp:// one, its host resolved then) and
 * starts the thread; false with @why when it cannot: a start failure. */
twa_dest *twa_dest_new(const twa_dest_options *o, unsigned int index, char *why, size_t why_size);
bool twa_dest_start(twa_dest *d, char *why, size_t why_size);
/* The label in metrics and logs: the URL with its user:password and query
 * values as *** (wire/core/redact.h), then " #2", " #3"... when a
 * destination made before shows the same; unique among them. */
const char *twa_dest_label(const twa_dest *d);
twa_dest_stats *twa_dest_get_stats(twa_dest *d);
/* Whether a Jaeger target (shared server spans get their own ids upstream). */
bool twa_dest_is_jaeger(const twa_dest *d);

/*
 * Enqueues @n items: each gets its own references (the caller keeps its
 * own). Returns how many were accepted; the rest are dropped and counted
 * (queue_full) unless @can_wait, in which case the call waits for room (follow
 * mode) while the agent runs. Thread-safe.
 */
size_t twa_dest_push(twa_dest *d, const twa_item *items, size_t n, bool can_wait);
/*
 * twa_dest_push, and the spans are encoded for the destination on the
 * calling thread first when the destination thread is behind (its queue
 * holds more than one take, 512 spans, but has room for all of these) and
 * its format allows it (OTLP JSON and protobuf, Zipkin v2 JSON): the
 * destination thread then only batches and sends these, so the encoding
 * moves to the receivers while the destination cannot keep up, and stays
 * on the destination thread while it can. @early is the caller's state for this destination
 * (created on first use; twa_dest_early_free frees it; NULL: no early
 * encoding). @is_move: the queue takes the references of the items it
 * accepts, items[0..returned), instead of adding its own (the caller's last
 * destination: two atomic operations and a release fewer per span); the
 * caller releases only the rest. Thread-safe; one @early per calling
 * thread.
 */
size_t twa_dest_push_early(twa_dest *d, const twa_item *items, size_t n, bool can_wait,
                           twa_early **early, bool is_move, size_t reserved);

/*
 * All-or-nothing admission (HTTP requests): twa_dest_reserve promises room
 * for @n spans of @bytes (twa_items_bytes) in the queue, or refuses: FULL
 * when there is not that much free room now, TOO_LARGE when the queue could
 * never hold them (more than --queue-spans, or more than --queue-bytes for
 * more than one span). A promise is either kept by twa_dest_push_early with
 * @reserved = @bytes (every item is then queued) or taken back by
 * twa_dest_unreserve. Thread-safe.
 */
typedef enum twa_admit { TWA_ADMIT_OK = 0, TWA_ADMIT_FULL, TWA_ADMIT_TOO_LARGE } twa_admit;
size_t twa_items_bytes(const twa_item *items, size_t n);
twa_admit twa_dest_reserve(twa_dest *d, size_t n, size_t bytes);
void twa_dest_unreserve(twa_dest *d, size_t n, size_t bytes);
/* The queue's whole capacity in spans (--queue-spans): a request of more
 * can never be queued (413). Bytes are no such bound: a request of more
 * than --queue-bytes goes into an empty queue (twa_dest_reserve). */
size_t twa_dest_capacity_spans(const twa_dest *d);
void twa_dest_early_free(twa_early *early);
/* Wakes pushers waiting for room (after twa_stopping is set): they return. */
void twa_dest_interrupt(twa_dest *d);
/* Fraction of the queue in use, 0..1+ (the fuller of spans and bytes). */
double twa_dest_fill(twa_dest *d);
/* Starts the drain: the thread sends what is queued and open, spools what
 * cannot be sent, and stops within @deadline_ms (what is left then is
 * spooled if there is a spool, else dropped as `shutdown`). */
void twa_dest_stop(twa_dest *d, unsigned int deadline_ms);
/* Waits for the thread to end (after twa_dest_stop): counters are final. */
void twa_dest_join(twa_dest *d);
/* Joins the thread (after twa_dest_stop) and frees everything. */
void twa_dest_free(twa_dest *d);

/* ---- the pipeline (pipeline.c) -------------------------------------------------------------- */

typedef struct twa_pipeline twa_pipeline;

typedef struct twa_pipeline_options {
    const char *const *tags; /* --tag KEY=VALUE */
    size_t n_tags;
    const char *const *drop_names; /* --drop-name NAME: spans with this operation are dropped */
    size_t n_drop_names;
    const char *redact_regex;   /* --redact REGEX: matches in string tag values are replaced */
    const char *redact_with;    /* replacement (default "***") */
    bool tail_sample;           /* --tail-sample: the trace-level tail sampler (tail.h) */
    double tail_keep_share;     /* --tail-keep-share */
    int64_t tail_slow_us;       /* --tail-slow-ms, in us */
    unsigned int tail_quiet_ms; /* --tail-quiet-ms */
    size_t tail_max_traces;     /* --tail-max-traces */
} twa_pipeline_options;

twa_pipeline *twa_pipeline_new(const twa_pipeline_options *o, twa_dest *const *dests,
                               size_t n_dests, char *why, size_t why_size);
void twa_pipeline_free(twa_pipeline *p);
twa_procs *twa_pipeline_procs(twa_pipeline *p);
/* SIGHUP: new tags, drop list and redaction. False (old ones kept) on error. */
bool twa_pipeline_reconfigure(twa_pipeline *p, const twa_pipeline_options *o, char *why,
                              size_t why_size);
/* The fullest destination queue, 0..1+: HTTP receivers answer 503 at 1
 * before they decode a request. */
double twa_pipeline_fill(twa_pipeline *p);
/* Starts the tail sampler's thread (when configured). */
bool twa_pipeline_start(twa_pipeline *p);
/* Stops the tail sampler, deciding what it holds (before the destinations
 * stop). */
void twa_pipeline_stop(twa_pipeline *p);

/*
 * What one receiver call collects: the spans of one datagram, request or
 * chunk, with their interned processes. twa_spanbuf_input() gives a
 * twb_input whose emit/reject fill it, so any convert reader can feed it.
 * Owned by one thread.
 */
typedef struct twa_spanbuf {
    twa_pipeline *pipeline;
    twa_recv_stats *stats;
    twa_item *items;
    size_t n, cap;
    size_t n_rejected;
    char first_reject[256]; /* the first reject's reason, for 400 / partialSuccess answers */
    twa_chunk *chunk;       /* set by follow mode for the spans it reads */
    bool can_wait;          /* follow mode: wait for queue room instead of dropping */
    bool is_nomem;
    bool is_backlogged; /* the receiver has more input waiting: no early encoding */
    /* HTTP receivers: the spans are queued all or nothing (twa_dest_reserve
     * on every destination); when not, `admit` says why and `refusal` says
     * it in words (the limit and what to do). */
    bool is_whole;
    twa_admit admit;
    char refusal[256];
    twa_early *early[TWA_MAX_DESTS]; /* this thread's encoders, per destination */
    twb_input in;
    twb_options opts;
} twa_spanbuf;

void twa_spanbuf_init(twa_spanbuf *b, twa_pipeline *p, twa_recv_stats *stats);
/* The input to hand a reader; @name is used in reject messages. */
twb_input *twa_spanbuf_input(twa_spanbuf *b, const char *name);
/* Adds one span (takes @span's reference; @process borrowed). */
bool twa_spanbuf_add(twa_spanbuf *b, tw__span_data *span, const tw__process *process);
/* Adds one span of an interned process (takes @span's reference, adds one
 * to @proc's): for a decoder that interned its record's process once. */
bool twa_spanbuf_add_interned(twa_spanbuf *b, tw__span_data *span, twa_proc *proc);
/* Counts a rejected record (@reason kept when it is the first). */
void twa_spanbuf_reject(twa_spanbuf *b, const char *reason);
/* Processes and dispatches the collected spans to every destination, then
 * empties the buffer. Returns the spans every destination accepted. With
 * `is_whole`, either all are queued on every destination or none (then
 * `admit` is not TWA_ADMIT_OK and the spans are counted as dropped,
 * queue_full or over_capacity, on every destination). */
size_t twa_spanbuf_flush(twa_spanbuf *b);
/* Drops the collected spans without sending them (a request answered 400). */
void twa_spanbuf_discard(twa_spanbuf *b);
void twa_spanbuf_clear(twa_spanbuf *b);

/* ---- the agent's running state ------------------------------------------------------------- */

/* Set by the signal thread: receivers and followers stop taking input. */
extern atomic_bool twa_stopping;

/* Registered receiver counters (for /metrics); at most TWA_MAX_RECEIVERS. */
#define TWA_MAX_RECEIVERS 16
twa_recv_stats *twa_stats_receiver(const char *name);

/* The tail sampler's counters, when there is one (set by agent_cmd.c). */
extern struct twa_tail_stats *twa_metrics_tail;

/* The Prometheus text of every counter (malloc'd, NUL-terminated). */
char *twa_metrics_text(twa_dest *const *dests, size_t n_dests, size_t *len);
/* The shutdown summary, one log line per receiver and destination. */
void twa_metrics_log_summary(twa_dest *const *dests, size_t n_dests);

#endif /* TW_BRIDGE_AGENT_H */
