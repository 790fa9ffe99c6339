/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/log_correlation.c: trace and span ids in the application's own
 * log lines, so that a log line leads to its trace and back: with syslog,
 * and with GLib's structured logging through a GLogWriterFunc that adds
 * TRACE_ID and SPAN_ID fields (journald keeps them as fields:
 * `journalctl TRACE_ID=...`; on a terminal or a file they are appended).
 *
 * The ids come from the calling thread's active context
 * (tracewire/scope.h), in the 32-hex-digit form of W3C and OpenTelemetry
 * whatever the tracer's id width, so every service logs them alike.
 * docs/API.md ("Log correlation") shows the same snippets;
 * tests/examples/test_log_correlation.sh runs this program.
 *
 *   cc log_correlation.c $(pkg-config --cflags --libs tracewire glib-2.0)
 */
#define _DEFAULT_SOURCE /* LOG_PERROR */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <tracewire/tracewire.h>

/* A GLogWriterFunc: the record's fields plus TRACE_ID and SPAN_ID of the
 * active context of the tracer given as user data. */
static GLogWriterOutput traced_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                      gpointer user_data)
{
    const tw_span_context *ctx = tw_tracer_active_context(user_data);
    char trace_id[TW_TRACE_ID_HEX_SIZE], span_id[TW_SPAN_ID_HEX_SIZE];
    /* Nothing active is normal: checked first, since the id functions take
     * a NULL context as a caller's error (and log it). */
    if (!ctx || !tw_span_context_trace_id_hex32(ctx, trace_id, sizeof trace_id) ||
        !tw_span_context_span_id_hex(ctx, span_id, sizeof span_id))
        return g_log_writer_default(level, fields, n_fields, NULL);
    GLogField *more = g_newa(GLogField, n_fields + 2);
    memcpy(more, fields, n_fields * sizeof *fields);
    more[n_fields] = (GLogField){"TRACE_ID", trace_id, -1};
    more[n_fields + 1] = (GLogField){"SPAN_ID", span_id, -1};
    if (g_log_writer_is_journald(fileno(stderr)))
        return g_log_writer_journald(level, more, n_fields + 2, NULL);
    /* A terminal or a file: GLib's own line, the ids appended. */
    gchar *line = g_log_writer_format_fields(level, fields, n_fields, FALSE);
    fprintf(stderr, "%s trace_id=%s span_id=%s\n", line, trace_id, span_id);
    g_free(line);
    return G_LOG_WRITER_HANDLED;
}

/* syslog: the ids as key=value pairs in the message. */
static void syslog_traced(tw_tracer *tracer, int priority, const char *message)
{
    char trace_id[TW_TRACE_ID_HEX_SIZE] = "", span_id[TW_SPAN_ID_HEX_SIZE] = "";
    const tw_span_context *ctx = tw_tracer_active_context(tracer);
    if (ctx) { /* else the ids stay "": nothing active */
        tw_span_context_trace_id_hex32(ctx, trace_id, sizeof trace_id);
        tw_span_context_span_id_hex(ctx, span_id, sizeof span_id);
    }
    syslog(priority, "%s trace_id=%s span_id=%s", message, trace_id, span_id);
}

int main(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "log-correlation");
    tw_tracer_options_set_trace_id_128bit(opts, false); /* logged as 32 digits all the same */
    tw_tracer_options_set_reporter(opts, tw_reporter_null_new());
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    if (!tracer)
        return 1;
    g_log_set_writer_func(traced_writer, tracer, NULL);
    openlog("log-correlation", LOG_PID | LOG_PERROR, LOG_USER); /* LOG_PERROR: stderr too */
    g_message("service started"); /* no span active: lines without ids */
    syslog_traced(tracer, LOG_INFO, "service started");

    tw_span *request = tw_span_start(tracer, "GET /stock/{id}", NULL);
    tw_scope *scope = tw_scope_activate(request, true);
    g_message("stock looked up");
    syslog_traced(tracer, LOG_INFO, "stock looked up");
    char traceparent[TW_TRACEPARENT_SIZE];
    if (tw_span_context_traceparent(tw_tracer_active_context(tracer), traceparent,
                                    sizeof traceparent))
        printf("traceparent: %s\n", traceparent);
    tw_scope_close(scope); /* finishes the span */

    closelog();
    tw_tracer_free(tracer);
    return 0;
}
