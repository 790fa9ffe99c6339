/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c: the process-wide diagnostics logger (tw_set_logger,
 * tw_set_log_level), the default logger (tw_log_default: warnings and
 * errors on stderr, one line per cause per minute, never blocking), the
 * ready-made stderr/stdout sinks, and what every message goes through
 * before any logger sees it: control bytes escaped (a quoted header or
 * baggage key cannot forge a line) and URL credentials masked.
 *
 * Locking: `logger_lock` is a rwlock: tw_set_logger() swaps the pair (fn,
 * user_data) under the write lock, so once it returns the old logger is
 * never called again; messages are formatted outside the lock and delivered
 * under the read lock, so threads logging at once do not wait for each
 * other's (possibly slow) logger I/O; the logger must be thread-safe, as
 * common.h says. The level check is a relaxed atomic load: a stale level
 * only decides whether one message is formatted. The rate limiter of the
 * default logger is a fixed table of atomics (no lock, no allocation).
 *
 * Where it sits: every tw__log_msg / tw__set_error of the library ends in
 * tw__log_raw() here. The level comes from TRACEWIRE_LOG_LEVEL or
 * OTEL_LOG_LEVEL, read once at the first log call or logger change.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"
#include "fork.h"

#define LOG_OFF 4 /* TW_LOG_OFF: above TW_LOG_ERROR, nothing enabled */

static pthread_rwlock_t logger_lock = PTHREAD_RWLOCK_INITIALIZER;
static tw_log_fn logger_fn = tw_log_default; /* guarded by logger_lock */
static void *logger_user_data;               /* guarded by logger_lock */
static atomic_int logger_min = TW_LOG_WARN;

/* fork(): logger_lock is the innermost of fork.h's locks (a logger may be
 * called with any other lock of the library held), taken by fork.c around
 * fork() so the child never inherits it held (a rwlock: see
 * tw__rwlock_reset_in_child). */
void tw__log_fork_prepare(void)
{
    pthread_rwlock_wrlock(&logger_lock);
}

void tw__log_fork_parent(void)
{
    pthread_rwlock_unlock(&logger_lock);
}

void tw__log_fork_child(void)
{
    tw__rwlock_reset_in_child(&logger_lock, NULL);
}

/* ---- the level from the environment -------------------------------------------------------- */

bool tw__parse_log_level(const char *v, tw_log_level *out)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {
        {"debug", TW_LOG_DEBUG},  {"verbose", TW_LOG_DEBUG}, {"all", TW_LOG_DEBUG},
        {"trace", TW_LOG_DEBUG},  {"info", TW_LOG_INFO},     {"warn", TW_LOG_WARN},
        {"warning", TW_LOG_WARN}, {"error", TW_LOG_ERROR},   {"off", LOG_OFF},
        {"none", LOG_OFF},        {"silent", LOG_OFF},
    };
    for (size_t i = 0; v && i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(v, names[i].name) == 0) {
            *out = (tw_log_level)names[i].level;
            return true;
        }
    }
    return false;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Once per process: the level the environment asks for. A value that is
 * not a level is ignored here (there is no logger yet to say so);
 * tw_tracer_new_from_env() and `tracewire config` report it. */
static void init_logging(void)
{
    const char *names[] = {"TRACEWIRE_LOG_LEVEL", "OTEL_LOG_LEVEL"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        tw_log_level level;
        if (v && *v && tw__parse_log_level(v, &level)) {
            atomic_store_explicit(&logger_min, (int)level, memory_order_relaxed);
            break;
        }
    }
}

void tw_set_logger(tw_log_fn fn, void *user_data, tw_log_level min_level)
{
    tw__fork_install();
    pthread_once(&init_once, init_logging);
    pthread_rwlock_wrlock(&logger_lock);
    logger_fn = fn;
    logger_user_data = user_data;
    atomic_store_explicit(&logger_min, fn ? (int)min_level : LOG_OFF, memory_order_relaxed);
    pthread_rwlock_unlock(&logger_lock);
}

void tw_set_log_level(tw_log_level min_level)
{
    pthread_once(&init_once, init_logging);
    int level = (int)min_level;
    if (level < TW_LOG_DEBUG || level > LOG_OFF)
        level = LOG_OFF;
    pthread_rwlock_wrlock(&logger_lock);
    if (logger_fn)
        atomic_store_explicit(&logger_min, level, memory_order_relaxed);
    pthread_rwlock_unlock(&logger_lock);
}

bool tw__log_enabled(tw_log_level level)
{
    pthread_once(&init_once, init_logging);
    return (int)level >= atomic_load_explicit(&logger_min, memory_order_relaxed);
}

/* ---- what every message goes through -------------------------------------------------------- */

/* Whether @s needs sanitizing at all (the common case does not). */
static bool needs_sanitizing(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || (*p == ':' && p[1] == '/' && p[2] == '/'))
            return true;
    }
    return false;
}

/* ---- the default logger's rate limit -------------------------------------------------------- */

/* One line per cause per minute. A cause is a call site's format string (its
 * address: the same site is one cause whatever the values), or that site
 * for one instance (tw__log_for: each reporter of a composite has its own
 * say). The table is fixed; a slot whose cause has been quiet for a minute
 * and held nothing back is taken over by a new cause (its state is then
 * that of a fresh slot), so reporters made and freed over a long run do not
 * fill it; a full table shares one overflow slot. */
#define RATE_SLOTS 256
#define RATE_PERIOD_NS 60000000000LL

typedef struct rate_slot {
    _Atomic(const void *) cause;
    atomic_llong last_ns; /* when a line was last let through; 0: never */
    atomic_uint suppressed;
} rate_slot;

static rate_slot rate_slots[RATE_SLOTS + 1]; /* the last one: overflow */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* A slot that a new cause may take: empty, or quiet for a period with
 * nothing held back (the cause would be let through anyway). */
static bool is_free(rate_slot *s, const void *seen, int64_t now)
{
    if (seen == NULL)
        return true;
    long long last = atomic_load_explicit(&s->last_ns, memory_order_relaxed);
    return last != 0 && now - last >= RATE_PERIOD_NS &&
           atomic_load_explicit(&s->suppressed, memory_order_relaxed) == 0;
}

static rate_slot *slot_for(const void *cause, int64_t now)
{
    size_t start = (size_t)(mix((uintptr_t)cause) >> 40) % RATE_SLOTS;
    for (size_t i = 0; i < 8; i++) {
        rate_slot *s = &rate_slots[(start + i) % RATE_SLOTS];
        const void *seen = atomic_load_explicit(&s->cause, memory_order_acquire);
        if (seen == cause)
            return s;
    }
    for (size_t i = 0; i < 8; i++) {
        rate_slot *s = &rate_slots[(start + i) % RATE_SLOTS];
        const void *seen = atomic_load_explicit(&s->cause, memory_order_acquire);
        if (is_free(s, seen, now)) {
            /* A race with the old cause costs at most one line held back
             * or let through: the limit is a courtesy, not a count. */
            if (atomic_compare_exchange_strong(&s->cause, &seen, cause) || seen == cause)
                return s;
        }
    }
    return &rate_slots[RATE_SLOTS];
}

/* Whether a line of @cause may be written now; *suppressed receives the
 * number of lines of the same cause held back since the last one. */
static bool rate_allows(const void *cause, unsigned int *suppressed)
{
    int64_t now = tw__mono_ns();
    rate_slot *s = slot_for(cause, now);
    long long last = atomic_load_explicit(&s->last_ns, memory_order_relaxed);
    if (last != 0 && now - last < RATE_PERIOD_NS) {
        atomic_fetch_add_explicit(&s->suppressed, 1, memory_order_relaxed);
        return false;
    }
    if (!atomic_compare_exchange_strong(&s->last_ns, &last, now ? now : 1)) {
        atomic_fetch_add_explicit(&s->suppressed, 1, memory_order_relaxed);
        return false; /* another thread let this cause through just now */
    }
    *suppressed = atomic_exchange_explicit(&s->suppressed, 0, memory_order_relaxed);
    return true;
}

void tw__log_rate_reset(void)
{
    for (size_t i = 0; i <= RATE_SLOTS; i++) {
        atomic_store(&rate_slots[i].cause, NULL);
        atomic_store(&rate_slots[i].last_ns, 0);
        atomic_store(&rate_slots[i].suppressed, 0);
    }
}

/* ---- delivery ----------------------------------------------------------------------------- */

static void deliver(tw_log_level level, const void *cause, const char *message)
{
    if (!tw__log_enabled(level))
        return;
    char clean[2048];
    if (needs_sanitizing(message)) {
        tw__redact_text(message, clean, sizeof clean);
        message = clean;
    }
    char with_count[2200];
    pthread_rwlock_rdlock(&logger_lock);
    tw_log_fn fn = logger_fn;
    if (fn == tw_log_default && cause) {
        unsigned int suppressed = 0;
        if (!rate_allows(cause, &suppressed)) {
            pthread_rwlock_unlock(&logger_lock);
            return;
        }
        if (suppressed) {
            snprintf(with_count, sizeof with_count,
                     "%s (%u more like this in the last minute were not shown)", message,
                     suppressed);
            message = with_count;
        }
    }
    if (fn)
        fn(level, message, logger_user_data);
    pthread_rwlock_unlock(&logger_lock);
}

void tw__log_raw(tw_log_level level, const char *message)
{
    deliver(level, NULL, message); /* no cause: never held back */
}

void tw__log_cause(tw_log_level level, const void *cause, const char *message)
{
    deliver(level, cause, message);
}

/* Formats @fmt with @ap (cut at 1,023 bytes) and delivers it, limited as
 * @cause: the one formatter of tw__log_msg and tw__log_for. */
static void deliver_v(tw_log_level level, const void *cause, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    deliver(level, cause, buf);
}

void tw__log_msg(tw_log_level level, const char *fmt, ...)
{
    if (!tw__log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    deliver_v(level, fmt, fmt, ap);
    va_end(ap);
}

void tw__log_for(tw_log_level level, const char *who, const char *fmt, ...)
{
    if (!tw__log_enabled(level))
        return;
    /* The site and the name as one key (FNV-1a of the name, mixed): two
     * names at one site are two causes; a collision would only make two
     * share a limit. By name, not by instance: a program that makes a
     * reporter per task still gets one line a minute per site. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)(who ? who : ""); *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    uintptr_t key = (uintptr_t)fmt ^ (uintptr_t)mix(h);
    va_list ap;
    va_start(ap, fmt);
    deliver_v(level, (const void *)(key ? key : 1), fmt, ap);
    va_end(ap);
}

/* ---- sinks ---------------------------------------------------------------------------------- */

static const char *level_name(tw_log_level level)
{
    switch (level) {
    case TW_LOG_DEBUG:
        return "debug";
    case TW_LOG_INFO:
        return "info";
    case TW_LOG_WARN:
        return "warning";
    case TW_LOG_ERROR:
        return "error";
    default:
        break;
    }
    return "log";
}

static atomic_ullong default_lines_dropped; /* stderr was not writable */

uint64_t tw__log_default_dropped(void)
{
    return atomic_load_explicit(&default_lines_dropped, memory_order_relaxed);
}

void tw_log_default(tw_log_level level, const char *message, void *user_data)
{
    (void)user_data;
    char line[2400];
    int n = snprintf(line, sizeof line, "tracewire: %s: %s\n", level_name(level), message);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (len >= sizeof line - 1)
        line[len - 1] = '\n';
    /* Never wait for stderr: a pipe nobody drains, a stopped terminal. A
     * write of at most PIPE_BUF bytes to a pipe that poll() calls writable
     * does not block; anything else is dropped and counted. */
    struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
    int ready;
    do
        ready = poll(&pfd, 1, 0);
    while (ready < 0 && errno == EINTR);
    if (ready != 1 || !(pfd.revents & POLLOUT)) {
        atomic_fetch_add_explicit(&default_lines_dropped, 1, memory_order_relaxed);
        return;
    }
    ssize_t rc;
    do
        rc = write(STDERR_FILENO, line, len);
    while (rc < 0 && errno == EINTR);
    if (rc != (ssize_t)len)
        atomic_fetch_add_explicit(&default_lines_dropped, 1, memory_order_relaxed);
}

void tw_log_to_stderr(tw_log_level level, const char *message, void *user_data)
{
    (void)user_data;
    fprintf(stderr, "tracewire: %s: %s\n", level_name(level), message);
}

void tw_log_to_stdout(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    fprintf(stdout, "%s\n", message);
    fflush(stdout);
}
