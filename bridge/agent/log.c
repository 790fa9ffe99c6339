/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/log.c: the agent's log: one line per message, to stderr (the
 * default, for systemd's journal), to a file (--log-file, reopened on SIGHUP
 * so that logrotate can move it) or to syslog (--syslog, facility daemon).
 * Lines are "tracewire agent: LEVEL: message" on stderr and in files (with an
 * ISO-8601 UTC time in files), the bare message with a priority in syslog.
 * Thread-safe: one mutex around the output. No secret is ever passed here
 * (URLs are logged without credentials).
 */
#include "agent/agent.h"
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "wire/core/redact.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file; /* NULL: stderr (unless syslog) */
static char *log_path; /* --log-file */
static bool log_to_syslog;
static twa_level log_level = TWA_INFO;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

bool twa_log_open(const char *file, bool use_syslog, twa_level level, char *why, size_t why_size)
{
    pthread_mutex_lock(&log_lock);
    log_level = level;
    log_to_syslog = use_syslog;
    bool ok = true;
    if (use_syslog)
        openlog("tracewire-agent", LOG_PID | LOG_NDELAY, LOG_DAEMON);
    if (file) {
        FILE *f = fopen(file, "a");
        if (!f) {
            snprintf(why, why_size, "--log-file %s: %s", file, strerror(errno));
            ok = false;
        } else {
            setvbuf(f, NULL, _IOLBF, 0);
            if (log_file)
                fclose(log_file);
            log_file = f;
            free(log_path);
            log_path = strdup(file);
        }
    }
    pthread_mutex_unlock(&log_lock);
    return ok;
}

void twa_log_reopen(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_path) {
        FILE *f = fopen(log_path, "a");
        if (f) {
            setvbuf(f, NULL, _IOLBF, 0);
            fclose(log_file);
            log_file = f;
        }
    }
    pthread_mutex_unlock(&log_lock);
}

void twa_log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_file)
        fclose(log_file);
    log_file = NULL;
    free(log_path);
    log_path = NULL;
    if (log_to_syslog)
        closelog();
    log_to_syslog = false;
    pthread_mutex_unlock(&log_lock);
}

void twa_log(twa_level level, const char *fmt, ...)
{
    if (level > log_level)
        return;
    char raw[2048], msg[4 * sizeof raw];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* Messages quote input (service names, request paths, file names,
     * decoders' reasons): one line each, credentials masked
     * (wire/core/redact.h). */
    tw__redact_text(raw, msg, sizeof msg);
    pthread_mutex_lock(&log_lock);
    if (log_to_syslog) {
        static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
        syslog(prio[level], "%s", msg);
    } else if (log_file) {
        char when[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(log_file, "%s tracewire agent: %s: %s\n", when, level_names[level], msg);
    } else {
        fprintf(stderr, "tracewire agent: %s: %s\n", level_names[level], msg);
    }
    pthread_mutex_unlock(&log_lock);
}
