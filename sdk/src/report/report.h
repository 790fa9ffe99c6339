/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/report.h: reporters and senders (internal).
 *
 * Flow (DESIGN.md): tw_span_finish -> reporter->report() -> [async reporter:
 * bounded queue -> reporter thread -> sender (batcher + encoder + transport)].
 * A reporter implements tw__reporter_vtable; the asynchronous one (async.c)
 * is generic over a tw__sender, so each transport (UDP now, HTTP later) only
 * batches, encodes and sends. report() must never block on I/O: it runs on
 * the application thread.
 *
 * Accounting: every span given to report() ends in exactly one of the
 * counters sent / queue_full / too_large / failed (see reporter.h).
 */
#ifndef TW_REPORT_H
#define TW_REPORT_H

#include <stdatomic.h>
#include <stddef.h>

#include "internal.h"

typedef struct tw__reporter_vtable {
    size_t size;
    const char *name;
    /* Called once by tw_tracer_new with the tracer's process (valid until
     * destroy). May start threads. On failure sets @err. */
    tw_status (*start)(tw_reporter *r, const tw__process *process, tw_error **err);
    /* Takes a reference on @span if it keeps it. Never blocks on I/O. */
    void (*report)(tw_reporter *r, tw__span_data *span);
    /* Waits until spans reported before the call reached the transport. */
    tw_status (*flush)(tw_reporter *r, unsigned int timeout_ms);
    /* Drains, flushes and stops threads; idempotent. Counters stay readable. */
    void (*close)(tw_reporter *r);
    uint64_t (*counter)(const tw_reporter *r, tw_counter c);
    /* Frees everything (after close). */
    void (*destroy)(tw_reporter *r);
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
     * parent sends, and reset anything the child must not share. Without
     * it, the async reporter flushes the sender before the fork instead (in
     * the forking thread), so the partial batch is never sent twice. */
    void (*after_fork_child)(tw__sender *s);
} tw__sender_vtable;

/* True when @vt has the member @field (a vtable may be older and shorter). */
#define TW__VTABLE_HAS(vt, type, field)                                                            \
    ((vt)->size >= offsetof(type, field) + sizeof((vt)->field) && (vt)->field != NULL)

struct tw__sender {
    const tw__sender_vtable *vtable;
    tw__report_counters *counters; /* owned by the async reporter */
};

typedef struct tw__async_options {
    size_t max_queue_size;
    unsigned int flush_interval_ms;
} tw__async_options;

/* An asynchronous reporter that owns @sender (freed also on failure). */
tw_reporter *tw__async_reporter_new(const char *name, tw__sender *sender,
                                    const tw__async_options *opts, tw_error **err);

/* The options object behind tw_reporter_options. */
struct tw_reporter_options {
    char *agent_host;
    unsigned int agent_port;
    size_t max_queue_size;
    unsigned int flush_interval_ms;
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

/* Frees the HTTP options (http_reporter.c); NULL is a no-op. */
void tw__http_options_free(struct tw__http_options *h);

#define TW__DEFAULT_QUEUE_SIZE 8192u
#define TW__DEFAULT_FLUSH_INTERVAL_MS 1000u
#define TW__DEFAULT_MAX_PACKET 65000u
#define TW__DEFAULT_RESOLVE_INTERVAL_MS 30000u

tw__sender *tw__udp_sender_new(const tw_reporter_options *opts, tw_error **err);
/* The same sender speaking the Thrift binary protocol (agent port 6832). */
tw__sender *tw__udp_sender_new_binary(const tw_reporter_options *opts, tw_error **err);

#define TW__DEFAULT_MAX_FILE_BYTES ((size_t)64 << 20)
#define TW__DEFAULT_MAX_FILES 5u
/* The Dapper-style span log writer (file_sender.c, docs/dapper-log-format.md). */
tw__sender *tw__file_sender_new(const tw_reporter_options *opts, tw_error **err);

/* ---- fork safety (fork.c) -----------------------------------------------------------------
 * One pthread_atfork registration for the library's reporters: each live
 * entry's prepare runs before fork() (in registration order), its parent or
 * child hook after (in reverse order). An entry's hooks run with the
 * registry lock held, so they must not register or unregister entries. */
typedef struct tw__fork_entry {
    void (*prepare)(void *arg);
    void (*parent)(void *arg);
    void (*child)(void *arg);
    void *arg;
    struct tw__fork_entry *prev, *next; /* guarded by the registry lock */
} tw__fork_entry;

/* Adds @e (caller-owned, filled in) to the registry; installs the atfork
 * handlers on first use. Cannot fail after the first successful call;
 * returns false when pthread_atfork itself fails. */
bool tw__fork_register(tw__fork_entry *e);
/* Removes @e; a no-op when it is not registered. */
void tw__fork_unregister(tw__fork_entry *e);

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
void tw__reporter_close(tw_reporter *r);

/* Formats a finished span as one human-readable line into @buf (logging
 * reporter); returns the length written (always NUL-terminated, cut at size). */
size_t tw__format_span_line(const tw__span_data *s, char *buf, size_t size);

#endif /* TW_REPORT_H */
