/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/report.h: reporters and senders (internal).
 *
 * Flow: tw_span_finish -> reporter->report() -> [async reporter:
 * bounded queue -> reporter thread -> sender (batcher + encoder + transport)].
 * A reporter implements tw__reporter_vtable; the asynchronous one (async.c)
 * is generic over a tw__sender, so each transport (UDP now, HTTP later) only
 * batches, encodes and sends. report() must never block on I/O: it runs on
 * the application thread.
 *
 * Accounting: every span given to report() ends in exactly one of the
 * counters sent / queue_full / too_large / failed (see reporter.h);
 * queue_bytes_dropped counts again those of queue_full dropped at the
 * queue's byte bound rather than its span bound.
 *
 * Deadlines are absolute times on the monotonic clock (tw__mono_ns), so a
 * composite hands the same deadline to each child and the caller's timeout
 * bounds the whole call, not each child's part of it.
 */
#ifndef TW_REPORT_H
#define TW_REPORT_H

#include <stdatomic.h>
#include <stddef.h>

#include "clock.h"
#include "fork.h"
#include "internal.h"

typedef struct tw__reporter_vtable {
    size_t size;
    const char *name;
    /* Called once by tw_tracer_new with the tracer's process (valid until
     * destroy). May start threads. On failure sets @err. */
    tw_status (*start)(tw_reporter *r, const tw__process *process, tw_error **err);
    /* Takes a reference on @span if it keeps it. Never blocks on I/O. */
    void (*report)(tw_reporter *r, tw__span_data *span);
    /* Asks for the spans reported before the call to be handed to the
     * transport, and returns at once with a ticket for flush_wait: TW_OK,
     * or TW_E_CLOSED. Optional (NULL: report() hands spans over itself). */
    tw_status (*flush_start)(tw_reporter *r, uint64_t *ticket);
    /* Waits for the flush @ticket (0 when there is no flush_start) until
     * @deadline_ns: TW_OK or TW_E_TIMEOUT. Optional (NULL: TW_OK). */
    tw_status (*flush_wait)(tw_reporter *r, uint64_t ticket, int64_t deadline_ns);
    /* Starts closing and returns at once: what is queued goes to the
     * transport until the reporter's close deadline (its close timeout from
     * now), and what cannot is counted as failed. Optional; idempotent. */
    void (*close_start)(tw_reporter *r);
    /* Closes (close_start if not done) and waits until the reporter is
     * closed: threads stopped, by the close deadline. Idempotent. Counters
     * stay readable. */
    void (*close)(tw_reporter *r);
    uint64_t (*counter)(const tw_reporter *r, tw_counter c);
    /* Frees everything (after close). */
    void (*destroy)(tw_reporter *r);
    /* Optional: report() taking over the caller's reference on @span
     * (kept, or dropped at once), which spares a reference count up and
     * down on the application thread. NULL: report(), then an unref. */
    void (*report_owned)(tw_reporter *r, tw__span_data *span);
} tw__reporter_vtable;

struct tw_reporter {
    const tw__reporter_vtable *vtable;
    const char *name; /* NULL: vtable->name */
    bool is_started;  /* start() succeeded: close() is needed */
};

/* Counters shared by an async reporter and its sender: relaxed atomics,
 * statistics only (never used to order memory). */
typedef struct tw__report_counters {
    atomic_uint_fast64_t reported;
    atomic_uint_fast64_t sent;
    atomic_uint_fast64_t queue_full;
    atomic_uint_fast64_t too_large;
    atomic_uint_fast64_t failed;
    atomic_uint_fast64_t batches;
    atomic_uint_fast64_t bytes;
    atomic_uint_fast64_t resolve_failures;
    atomic_uint_fast64_t queue_length;
    /* Of queue_full, the spans dropped at the queue's byte bound. */
    atomic_uint_fast64_t queue_bytes_dropped;
} tw__report_counters;

static inline void tw__count(atomic_uint_fast64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t tw__read(const atomic_uint_fast64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

uint64_t tw__report_counters_get(const tw__report_counters *c, tw_counter which);

/* ---- senders (run on the reporter thread only) ------------------------------------------- */

typedef struct tw__sender tw__sender;

typedef struct tw__sender_vtable {
    size_t size;
    const char *name;
    /* Encodes/keeps what it needs of the process. */
    tw_status (*open)(tw__sender *s, const tw__process *process, tw_error **err);
    /* Adds one span to the current batch, emitting full batches as needed;
     * consumes the caller's reference. Counts outcomes in s->counters. */
    void (*append)(tw__sender *s, tw__span_data *span);
    /* Emits the current partial batch. */
    void (*flush)(tw__sender *s);
    void (*free)(tw__sender *s);
    /* Optional (present when size covers it and non-NULL). Runs in a child
     * after fork(), single-threaded, with the sender quiescent (no append or
     * flush was running at the fork): forget the partial batch, which the
     * parent sends, and reset anything the child must not share. A sender
     * without it is treated in the child as one that was busy. */
    void (*after_fork_child)(tw__sender *s);
    /* Optional. Runs in a forked child's reporter thread when the sender
     * was busy at the fork (its state is then whatever the parent's thread
     * left): a new, unopened sender with the configuration of @s, read from
     * the fields that never change after creation. NULL on failure. The
     * child abandons @s (never touches or frees it again), so the parent's
     * request in flight cannot make the fork wait. */
    tw__sender *(*fork_clone)(const tw__sender *s);
    /* Optional. Called from another thread after give_up_at_ns was set:
     * makes a wait on the transport in progress look at it now. Safe at any
     * time between open and free, concurrently with append and flush. */
    void (*interrupt)(tw__sender *s);
    /* Optional. What bounds one span's encoding, for the reporter
     * thread's "too large" line: the container ("UDP packet"), the setting
     * that raises the bound, and the highest value that setting takes. */
    const char *bound_unit;
    const char *bound_setting;
    uint64_t bound_max;
} tw__sender_vtable;

/* True when @vt has the member @field (a vtable may be older and shorter). */
#define TW__VTABLE_HAS(vt, type, field)                                                            \
    ((vt)->size >= offsetof(type, field) + sizeof((vt)->field) && (vt)->field != NULL)

struct tw__sender {
    const tw__sender_vtable *vtable;
    tw__report_counters *counters; /* owned by the async reporter */
    /* When (tw__mono_ns) the sender gives up on its transport: a wait in
     * progress ends there, no new one starts after it, and what is not
     * sent by then is counted as failed. 0: never (the default, and always
     * outside a closing async reporter). Set by the async reporter's close
     * from another thread, which then calls interrupt. Sequentially
     * consistent, so that a sender publishing what interrupt wakes and then
     * reading this, against close writing this and then reading what to
     * wake, cannot both miss the other. */
    atomic_int_fast64_t give_up_at_ns;
    /* The largest span counted as too large since the reporter thread last
     * said so, encoded alone, and the bound it exceeded, in bytes (0:
     * none). Written by append, read and reset by the reporter thread,
     * which runs both. */
    uint64_t too_large_bytes, too_large_bound;
};

/* Counts a span too large for @s's bound and keeps the largest's size. */
static inline void tw__sender_too_large(tw__sender *s, uint64_t bytes, uint64_t bound)
{
    tw__count(&s->counters->too_large, 1);
    if (bytes > s->too_large_bytes)
        s->too_large_bytes = bytes;
    s->too_large_bound = bound;
}

/* Whether @s must not start or continue waiting on its transport now. */
static inline bool tw__sender_gave_up(tw__sender *s)
{
    int64_t at = atomic_load(&s->give_up_at_ns);
    return at != 0 && tw__mono_ns() >= at;
}

/* Milliseconds until @s gives up, capped at @cap_ms (which is returned
 * when it never does); 0 once it has. */
static inline unsigned int tw__sender_ms_left(tw__sender *s, unsigned int cap_ms)
{
    int64_t at = atomic_load(&s->give_up_at_ns);
    if (at == 0)
        return cap_ms;
    int64_t left_ms = (at - tw__mono_ns() + 999999) / 1000000;
    if (left_ms <= 0)
        return 0;
    return left_ms < (int64_t)cap_ms ? (unsigned int)left_ms : cap_ms;
}

typedef struct tw__async_options {
    size_t max_queue_size;
    unsigned int flush_interval_ms;
    unsigned int close_timeout_ms; /* 0: TW__DEFAULT_CLOSE_TIMEOUT_MS */
    size_t max_queue_bytes;        /* 0: TW__DEFAULT_QUEUE_BYTES */
} tw__async_options;

/* The async part of @opts (queue, flush interval, close timeout). */
tw__async_options tw__async_options_from(const tw_reporter_options *opts);

/* An asynchronous reporter that owns @sender (freed also on failure). */
tw_reporter *tw__async_reporter_new(const char *name, tw__sender *sender,
                                    const tw__async_options *opts, tw_error **err);
/* Tests only: whether @r's thread waits for work, its sender idle (a fork
 * now finds the sender quiescent). */
bool tw__async_reporter_is_idle(tw_reporter *r);

/* The options object behind tw_reporter_options. */
struct tw_reporter_options {
    char *agent_host;
    unsigned int agent_port;
    size_t max_queue_size;
    size_t max_queue_bytes;
    unsigned int flush_interval_ms;
    unsigned int close_timeout_ms;
    size_t max_packet_size;
    unsigned int resolve_interval_ms;
    bool is_agent_set; /* tw_reporter_options_set_agent was called (else each UDP
                        * reporter uses its own default port) */
    /* the file reporter (file_sender.c) */
    char *file_path; /* NULL: not set */
    size_t max_file_bytes;
    size_t max_files;
    /* the HTTP reporters (report/http.h): made by the first HTTP setter;
     * NULL means every HTTP default */
    struct tw__http_options *http;
};

/* An agent host as written: a DNS name (RFC 1123 labels of letters, digits,
 * '-', and '_' as container and /etc/hosts names have it; 253 bytes at most,
 * a trailing dot allowed), an IPv4 literal, or an IPv6 literal with or
 * without brackets and with an optional %zone. Anything else (a port, a
 * path, user info, a space) is refused. */
typedef enum tw__host_kind {
    TW__HOST_INVALID,
    TW__HOST_NAME,
    TW__HOST_IPV4,
    TW__HOST_IPV6
} tw__host_kind;
/* The kind of @host; when valid, its bare form (brackets taken off, for
 * getaddrinfo) in @bare (@size bytes; a host longer than fits is invalid). */
tw__host_kind tw__host_check(const char *host, char *bare, size_t size);
/* "http://" + @host + ":" + @port + @path, an IPv6 literal in brackets
 * (its %zone as %25), in @out (@size bytes). @host as tw__host_check
 * passed it. */
void tw__host_url(const char *host, unsigned int port, const char *path, char *out, size_t size);
/* "@host:@port" for a message, an IPv6 literal in brackets ("[::1]:6831"). */
void tw__host_port_text(const char *host, unsigned int port, char *out, size_t size);
/* A host tw__host_check refused, as a message may quote it, in @out (@size
 * bytes, NUL-terminated, cut when full): everything before its last '@' as
 * *** (a host is one token: what comes before an '@' can only be user info,
 * or a scheme with it), the rest under tw__redact_url (query values masked,
 * control bytes escaped). tw__redact_url alone is not enough: it takes a
 * later "scheme://" for the start of a URL and leaves what is before it in
 * clear ("u:pw@h:1/x://y"). */
void tw__host_shown(const char *host, char *out, size_t size);

/* Frees the HTTP options (http_reporter.c); NULL is a no-op. */
void tw__http_options_free(struct tw__http_options *h);

#define TW__DEFAULT_QUEUE_SIZE 8192u
/* The queue's byte bound (tw__span_data_footprint of the spans in it):
 * 8 MiB holds the default 8192 spans of a typical size (~650 bytes) with
 * room to spare, so it binds for large spans and long queues. */
#define TW__DEFAULT_QUEUE_BYTES ((size_t)8 << 20)
#define TW__MIN_QUEUE_BYTES ((size_t)64 << 10)
#define TW__MAX_QUEUE_BYTES ((size_t)1 << 40)
#define TW__DEFAULT_FLUSH_INTERVAL_MS 1000u
#define TW__DEFAULT_MAX_PACKET 65000u
#define TW__DEFAULT_RESOLVE_INTERVAL_MS 30000u
/* How long close waits for the queue to reach the transport (Jaeger's Go
 * client gives up after 5 s, Java's after at most 10 s). */
#define TW__DEFAULT_CLOSE_TIMEOUT_MS 5000u
#define TW__MAX_CLOSE_TIMEOUT_MS 3600000u

tw__sender *tw__udp_sender_new(const tw_reporter_options *opts, tw_error **err);
/* The same sender speaking the Thrift binary protocol (agent port 6832). */
tw__sender *tw__udp_sender_new_binary(const tw_reporter_options *opts, tw_error **err);
/* Makes a UDP sender log a send error only when it differs from the last
 * one logged through *@last_errno (shared by the many senders of one run,
 * transport/sender.c, so that a missing agent is one line per run, not one
 * per process; never reset by a success). NULL: its own memory, reset by a
 * success (the default). A no-op on other senders. */
void tw__udp_sender_share_errors(tw__sender *s, int *last_errno);

#define TW__DEFAULT_MAX_FILE_BYTES ((size_t)64 << 20)
#define TW__DEFAULT_MAX_FILES 5u
/* The Dapper-style span log writer (file_sender.c, docs/dapper-log-format.md). */
tw__sender *tw__file_sender_new(const tw_reporter_options *opts, tw_error **err);

/* Tests only: replaces getaddrinfo for every UDP sender (NULL restores it).
 * The result is released with freeaddrinfo, so a replacement must return
 * getaddrinfo's own lists. Not thread-safe: call while no reporter runs. */
struct addrinfo;
typedef int (*tw__resolve_fn)(const char *host, const char *service, const struct addrinfo *hints,
                              struct addrinfo **res);
void tw__udp_sender_set_resolver(tw__resolve_fn fn);

/* Reporter lifecycle helpers used by the tracer. */
tw_status tw__reporter_start(tw_reporter *r, const tw__process *process, tw_error **err);
void tw__reporter_report(tw_reporter *r, tw__span_data *span);
/* The same, consuming the caller's reference on @span (a finishing span's). */
static inline void tw__reporter_report_owned(tw_reporter *r, tw__span_data *span)
{
    const tw__reporter_vtable *vt = r->vtable;
    if (TW__VTABLE_HAS(vt, tw__reporter_vtable, report_owned)) {
        vt->report_owned(r, span);
        return;
    }
    vt->report(r, span);
    tw__span_data_unref(span);
}
/* flush_start then flush_wait: TW_OK, TW_E_TIMEOUT, TW_E_CLOSED. */
tw_status tw__reporter_flush(tw_reporter *r, int64_t deadline_ns);
/* The deadline @timeout_ms from now (0: 5000, the public default). */
int64_t tw__flush_deadline(unsigned int timeout_ms);
/* close_start of a started reporter (a no-op otherwise). */
void tw__reporter_close_start(tw_reporter *r);
/* close of a started reporter (a no-op otherwise). */
void tw__reporter_close(tw_reporter *r);

/* Formats a finished span as one human-readable line into @buf (logging
 * reporter); returns the length written (always NUL-terminated, cut at size). */
size_t tw__format_span_line(const tw__span_data *s, char *buf, size_t size);

#endif /* TW_REPORT_H */
