/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c: the process-wide diagnostics logger (tw_set_logger) and the
 * ready-made stderr/stdout sinks.
 *
 * Locking: `logger_lock` is a rwlock: tw_set_logger() swaps the pair (fn,
 * user_data) under the write lock, so once it returns the old logger is
 * never called again; messages are formatted outside the lock and delivered
 * under the read lock, so threads logging at once do not wait for each
 * other's (possibly slow) logger I/O; the logger must be thread-safe, as
 * common.h says. The level
 * check is a relaxed atomic load: a stale level only decides whether one
 * message is formatted.
 */
#include "internal.h"

#include "fork.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static pthread_rwlock_t logger_lock = PTHREAD_RWLOCK_INITIALIZER;
static tw_log_fn logger_fn;       /* guarded by logger_lock */
static void *logger_user_data;    /* guarded by logger_lock */
static atomic_int logger_min = 4; /* above TW_LOG_ERROR: nothing enabled */

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

void tw_set_logger(tw_log_fn fn, void *user_data, tw_log_level min_level)
{
    tw__fork_install();
    pthread_rwlock_wrlock(&logger_lock);
    logger_fn = fn;
    logger_user_data = user_data;
    atomic_store_explicit(&logger_min, fn ? (int)min_level : 4, memory_order_relaxed);
    pthread_rwlock_unlock(&logger_lock);
}

bool tw__log_enabled(tw_log_level level)
{
    return (int)level >= atomic_load_explicit(&logger_min, memory_order_relaxed);
}

void tw__log_raw(tw_log_level level, const char *message)
{
    if (!tw__log_enabled(level))
        return;
    pthread_rwlock_rdlock(&logger_lock);
    if (logger_fn)
        logger_fn(level, message, logger_user_data);
    pthread_rwlock_unlock(&logger_lock);
}

void tw__log_msg(tw_log_level level, const char *fmt, ...)
{
    if (!tw__log_enabled(level))
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tw__log_raw(level, buf);
}

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
    }
    return "log";
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
