/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/agent_cmd.c: `tracewire agent`: the command line, the config
 * file, the environment, signals and the life of the daemon (docs/agent.md).
 *
 * One option table serves the command line and the config file: the file
 * (GKeyFile INI, group [agent], keys named as the long options) is turned
 * into "--key=value" arguments parsed by the same GOption context, then the
 * command line is parsed on top (repeatable options add up, others win). So
 * both accept exactly the same settings.
 *
 * Life: parse, start the destinations, the pipeline, the receivers; the main
 * thread then waits for signals (all blocked in every thread):
 *   SIGTERM, SIGINT  drain: receivers stop, each destination sends or spools
 *                    what it holds within --drain-ms, the summary is logged,
 *                    exit 0
 *   SIGHUP           reopen --log-file, re-read the config file: tags, drop
 *                    list, redaction and the sampling strategies change live;
 *                    receivers and destinations need a restart (logged)
 * Every second it also sweeps the process table.
 */
#include "cli.h"

#include <curl/curl.h>
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/follow.h"
#include "agent/http_mhd.h"
#include "agent/net.h"
#include "offline/kv_list.h"
#include "offline/tag_list.h"
#include "sinks/send.h"

#define DEFAULT_MAX_REQUEST_BYTES ((size_t)5 << 20)
/* HTTP connections open at once per server; at the limit new ones wait in
 * the listen backlog until one closes. */
#define DEFAULT_MAX_CONNECTIONS 512u
/* A request (headers and body) not received whole within this long closes
 * its connection: a client sending it byte by byte holds a slot no longer. */
#define DEFAULT_REQUEST_TIMEOUT_MS 30000u
#define DEFAULT_SPOOL_MAX ((uint64_t)1 << 30)
#define DEFAULT_METRICS "127.0.0.1:14271"
#define DEFAULT_DRAIN_MS 10000u
#define DEFAULT_RCVBUF ((size_t)8 << 20)

/* ---- options ------------------------------------------------------------------------------------
 */

typedef struct receiver_opt {
    const char *flag;  /* option name */
    unsigned int port; /* default port */
    char *addr;        /* NULL: off; "" : the default */
} receiver_opt;

enum {
    R_COMPACT,
    R_BINARY,
    R_ZIPKIN_UDP,
    R_JAEGER_HTTP,
    R_ZIPKIN,
    R_OTLP,
    R_SAMPLING,
    R_METRICS,
    N_R
};

typedef struct opts {
    receiver_opt r[N_R];
    gboolean no_metrics;
    char *strategies, *proxy;
    char **follow, *checkpoint, *follow_from, *follow_format;
    char **send, *send_format, *file_format;
    gint64 max_body, retries, timeout_ms, flush_ms, queue_spans, drain_ms, max_connections;
    gint64 request_timeout_ms;
    uint64_t queue_bytes, spool_max, max_request, udp_rcvbuf; /* SIZE_UNSET: not given */
    gboolean no_gzip;
    char **headers, *user, *ca_file, *cert_file, *key_file;
    char *spool;
    char **tags, **drop_names, *redact, *redact_with;
    gboolean tail_sample;
    gdouble tail_keep_share;
    gint64 tail_slow_ms, tail_quiet_ms, tail_max_traces;
    char *config, *log_file, *log_level;
    gboolean syslog, verbose;
    /* Not options: the environment variable a setting came from (a static
     * name), for messages; NULL when it came from the command line or the
     * config file. format_from is also set when the format is the OTLP
     * default (no protocol variable). */
    const char *send_from, *format_from, *headers_from, *user_from;
} opts;

static opts *current; /* the struct GOption's callbacks fill */

/* A numeric option not given. Every value typed is checked against its range
 * as it is parsed (on_number, on_size, on_share), and no range holds these,
 * so an out-of-range value is refused rather than taken for the default. */
#define OPTION_UNSET INT64_MIN
#define SIZE_UNSET UINT64_MAX

/* The accepted range of each numeric option (docs/agent.md). A value
 * outside, or one that is not a decimal number (nan, inf, 0x10, 1e3), is a
 * usage error naming the option and its range; it is never wrapped (to an
 * unsigned int), clamped or ignored. */
typedef struct numeric_option {
    const char *name; /* as typed: "--retries" */
    size_t offset;    /* of its gint64 in opts */
    int64_t min, max;
} numeric_option;

#define HOUR_MS ((int64_t)3600 * 1000)
static const numeric_option numeric_options[] = {
    {"--max-body-bytes", offsetof(opts, max_body), 1024, (int64_t)256 << 20},
    {"--retries", offsetof(opts, retries), 0, 100},
    {"--timeout-ms", offsetof(opts, timeout_ms), 1, HOUR_MS},
    {"--flush-ms", offsetof(opts, flush_ms), 1, HOUR_MS},
    {"--queue-spans", offsetof(opts, queue_spans), 1, (int64_t)1 << 24},
    {"--drain-ms", offsetof(opts, drain_ms), 0, HOUR_MS},
    {"--tail-slow-ms", offsetof(opts, tail_slow_ms), 0, 24 * HOUR_MS},
    {"--tail-quiet-ms", offsetof(opts, tail_quiet_ms), 1, 24 * HOUR_MS},
    {"--tail-max-traces", offsetof(opts, tail_max_traces), 1, 10000000},
    {"--max-connections", offsetof(opts, max_connections), 1, 65536},
    {"--request-timeout-ms", offsetof(opts, request_timeout_ms), 0, HOUR_MS},
};

/* The sizes (a number with K, M or G) and their ranges. Zero is no size for
 * a queue, a spool or a request (the queue would hold one span, every
 * request would get 413); for --udp-rcvbuf it keeps the kernel's default. */
typedef struct size_option {
    const char *name;
    size_t offset; /* of its uint64_t in opts */
    uint64_t min, max;
    const char *range; /* min and max as a user types them */
} size_option;

static const size_option size_options[] = {
    {"--queue-bytes", offsetof(opts, queue_bytes), 64 << 10, (uint64_t)64 << 30, "64K to 64G"},
    {"--spool-max", offsetof(opts, spool_max), 1 << 20, (uint64_t)64 << 40, "1M to 64T"},
    {"--max-request-bytes", offsetof(opts, max_request), 1024, 1 << 30, "1K to 1G"},
    {"--udp-rcvbuf", offsetof(opts, udp_rcvbuf), 0, 512 << 20, "0 to 512M"},
};

static gboolean on_number(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)data;
    for (size_t i = 0; i < G_N_ELEMENTS(numeric_options); i++) {
        const numeric_option *n = &numeric_options[i];
        if (strcmp(name, n->name) != 0)
            continue;
        gint64 v;
        /* Base 10 only: strtoll's base 0 read "010" as 8. */
        if (!g_ascii_string_to_signed(value, 10, n->min, n->max, &v, NULL)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s takes %" PRId64 " to %" PRId64 ", not \"%s\"", n->name, n->min, n->max,
                        value);
            return FALSE;
        }
        *(gint64 *)(void *)((char *)current + n->offset) = v;
        return TRUE;
    }
    return FALSE;
}

/* A size: digits (and a point), then K, M or G (powers of 1024), an optional
 * i and B. False for anything else: a sign, nan, inf, hex, an exponent. */
static bool parse_size(const char *text, uint64_t *out)
{
    size_t digits = strspn(text, "0123456789.");
    if (!digits)
        return false;
    char *end;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    if (end != text + digits || errno)
        return false;
    uint64_t mult = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1024, end++;
        break;
    case 'm':
    case 'M':
        mult = 1024 * 1024, end++;
        break;
    case 'g':
    case 'G':
        mult = 1024ull * 1024 * 1024, end++;
        break;
    case 't':
    case 'T':
        mult = 1024ull * 1024 * 1024 * 1024, end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end || v * (double)mult > 1e18)
        return false;
    *out = (uint64_t)(v * (double)mult);
    return true;
}

static gboolean on_size(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)data;
    for (size_t i = 0; i < G_N_ELEMENTS(size_options); i++) {
        const size_option *z = &size_options[i];
        if (strcmp(name, z->name) != 0)
            continue;
        uint64_t v;
        if (!parse_size(value, &v) || v < z->min || v > z->max) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s takes a size from %s (1048576, 512K, 16M, 1G), not \"%s\"", z->name,
                        z->range, value);
            return FALSE;
        }
        *(uint64_t *)(void *)((char *)current + z->offset) = v;
        return TRUE;
    }
    return FALSE;
}

/* NaN is the unset share: a typed nan (which GOption's double would take,
 * then read as unset: 0.1) is refused here, as is inf. */
static gboolean on_share(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    (void)data;
    char *end;
    errno = 0;
    double v = g_ascii_strtod(value, &end);
    if (!*value || *end || errno || !(v >= 0 && v <= 1)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--tail-keep-share takes 0 to 1, not \"%s\"", value);
        return FALSE;
    }
    current->tail_keep_share = v;
    return TRUE;
}

static const receiver_opt receiver_defaults[N_R] = {
    {"jaeger-compact", 6831, NULL}, {"jaeger-binary", 6832, NULL}, {"zipkin-udp", 5775, NULL},
    {"jaeger-http", 14268, NULL},   {"zipkin", 9411, NULL},        {"otlp", 4318, NULL},
    {"sampling", 5778, NULL},       {"metrics", 14271, NULL},
};

static gboolean on_receiver(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)data;
    (void)error;
    for (int i = 0; i < N_R; i++) {
        if (strcmp(name + 2, current->r[i].flag) == 0) {
            g_free(current->r[i].addr);
            current->r[i].addr = g_strdup(value ? value : "");
            return TRUE;
        }
    }
    return FALSE;
}

#define RECV(name, help)                                                                           \
    {                                                                                              \
        name, 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_receiver, help,   \
            "ADDR"                                                                                 \
    }

static GOptionEntry *entries_for(opts *o)
{
    GOptionEntry e[] = {
        RECV("jaeger-compact", "Jaeger agent UDP, compact emitBatch (default :6831)"),
        RECV("jaeger-binary", "Jaeger agent UDP, binary emitBatch (default :6832)"),
        RECV("zipkin-udp", "Jaeger agent UDP, compact emitZipkinBatch (default :5775)"),
        RECV("jaeger-http", "Jaeger collector HTTP, POST /api/traces (default :14268)"),
        RECV("zipkin", "Zipkin HTTP, POST /api/v2/spans and /api/v1/spans (default :9411)"),
        RECV("otlp", "OTLP/HTTP, POST /v1/traces (default :4318)"),
        RECV("sampling", "Jaeger sampling endpoint, GET /sampling?service= (default :5778)"),
        RECV("metrics", "/metrics and /healthz (default 127.0.0.1:14271; on unless --no-metrics)"),
        {"no-metrics", 0, 0, G_OPTION_ARG_NONE, &o->no_metrics, "no metrics or health endpoint",
         NULL},
        {"sampling-strategies", 0, 0, G_OPTION_ARG_FILENAME, &o->strategies,
         "serve sampling strategies from this Jaeger strategies file", "FILE"},
        {"sampling-proxy", 0, 0, G_OPTION_ARG_STRING, &o->proxy,
         "proxy sampling requests to this collector sampling URL", "URL"},
        {"follow", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->follow,
         "tail span logs matching GLOB (repeatable)", "GLOB"},
        {"checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &o->checkpoint, "follow mode's checkpoint file",
         "FILE"},
        {"follow-from", 0, 0, G_OPTION_ARG_STRING, &o->follow_from,
         "files without a checkpoint: read from the start (default) or the end", "start|end"},
        {"follow-format", 0, 0, G_OPTION_ARG_STRING, &o->follow_format,
         "the followed logs' format (default dapper)", "FORMAT"},
        {"send", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->send,
         "forward to this URL (repeatable; see docs/agent.md)", "URL"},
        {"send-format", 0, 0, G_OPTION_ARG_STRING, &o->send_format,
         "the sending format, when the URL does not tell", "F"},
        {"file-format", 0, 0, G_OPTION_ARG_STRING, &o->file_format,
         "the format of file: destinations (a convert --to name; default dapper)", "F"},
        {"max-body-bytes", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "largest uncompressed body sent (default 1 MiB; UDP 65000)", "N"},
        {"retries", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "retries of a failed batch without a spool (default 3)", "N"},
        {"timeout-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "one HTTP attempt (default 10000)", "MS"},
        {"no-gzip", 0, 0, G_OPTION_ARG_NONE, &o->no_gzip, "send bodies uncompressed", NULL},
        {"header", 'H', 0, G_OPTION_ARG_STRING_ARRAY, &o->headers,
         "add a header to every request (repeatable)", "'Name: value'"},
        {"user", 'u', 0, G_OPTION_ARG_STRING, &o->user, "basic authentication", "NAME:PASSWORD"},
        {"cacert", 0, 0, G_OPTION_ARG_FILENAME, &o->ca_file, "CA certificates (PEM)", "FILE"},
        {"cert", 0, 0, G_OPTION_ARG_FILENAME, &o->cert_file, "client certificate (PEM)", "FILE"},
        {"key", 0, 0, G_OPTION_ARG_FILENAME, &o->key_file, "client key (PEM)", "FILE"},
        {"flush-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "a partial batch waits at most this long (default 1000)", "MS"},
        {"queue-spans", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "spans each destination's queue holds (default 65536)", "N"},
        {"queue-bytes", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_size,
         "bytes each destination's queue holds (default 12M)", "BYTES"},
        {"spool", 0, 0, G_OPTION_ARG_FILENAME, &o->spool,
         "spill batches that cannot be sent to this directory", "DIR"},
        {"spool-max", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_size,
         "the spool's size cap, shared by the destinations (default 1G)", "BYTES"},
        {"tag", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->tags,
         "set a process tag on every span (repeatable)", "KEY=VALUE"},
        {"drop-name", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->drop_names,
         "drop spans with this operation name (repeatable)", "NAME"},
        {"redact", 0, 0, G_OPTION_ARG_STRING, &o->redact,
         "replace matches of this regex (PCRE) in string tag and log values", "REGEX"},
        {"redact-with", 0, 0, G_OPTION_ARG_STRING, &o->redact_with, "the replacement (default ***)",
         "TEXT"},
        {"tail-sample", 0, 0, G_OPTION_ARG_NONE, &o->tail_sample,
         "keep whole traces with an error or a slow span, and a share of the rest", NULL},
        {"tail-keep-share", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_share,
         "share of the other traces kept, 0..1 (default 0.1)", "P"},
        {"tail-slow-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "a span this long keeps its trace (default 1000)", "MS"},
        {"tail-quiet-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "a trace is decided after this long without a new span (default 5000)", "MS"},
        {"tail-max-traces", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "traces held at most (default 10000)", "N"},
        {"max-connections", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "HTTP connections open at once, per server (default 512; more wait)", "N"},
        {"request-timeout-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "an HTTP request not received whole in this long closes its connection (default "
         "30000; 0: no limit)",
         "MS"},
        {"max-request-bytes", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_size,
         "largest HTTP request body, also once inflated (default 5M)", "N"},
        {"udp-rcvbuf", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_size,
         "UDP receive buffer asked for (default 8M)", "BYTES"},
        {"drain-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_number,
         "on SIGTERM, time allowed to send or spool what is held (default 10000)", "MS"},
        {"config", 0, 0, G_OPTION_ARG_FILENAME, &o->config, "read settings from this INI file",
         "FILE"},
        {"log-file", 0, 0, G_OPTION_ARG_FILENAME, &o->log_file,
         "log to this file (reopened on SIGHUP) instead of stderr", "FILE"},
        {"syslog", 0, 0, G_OPTION_ARG_NONE, &o->syslog, "log to syslog (facility daemon)", NULL},
        {"log-level", 0, 0, G_OPTION_ARG_STRING, &o->log_level,
         "error, warning, info (default) or debug", "LEVEL"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "the same as --log-level debug", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionEntry *copy = g_new(GOptionEntry, G_N_ELEMENTS(e));
    memcpy(copy, e, sizeof e);
    return copy;
}

static void opts_init(opts *o)
{
    memset(o, 0, sizeof *o);
    memcpy(o->r, receiver_defaults, sizeof o->r);
    o->max_body = OPTION_UNSET;
    o->retries = OPTION_UNSET;
    o->timeout_ms = OPTION_UNSET;
    o->flush_ms = OPTION_UNSET;
    o->queue_spans = OPTION_UNSET;
    o->drain_ms = OPTION_UNSET;
    o->tail_keep_share = NAN;
    o->tail_slow_ms = OPTION_UNSET;
    o->tail_quiet_ms = OPTION_UNSET;
    o->tail_max_traces = OPTION_UNSET;
    o->max_connections = OPTION_UNSET;
    o->request_timeout_ms = OPTION_UNSET;
    o->queue_bytes = o->spool_max = o->max_request = o->udp_rcvbuf = SIZE_UNSET;
}

static void opts_clear(opts *o)
{
    for (int i = 0; i < N_R; i++)
        g_free(o->r[i].addr);
    char **strs[] = {&o->strategies,    &o->proxy,       &o->checkpoint,  &o->follow_from,
                     &o->follow_format, &o->send_format, &o->file_format, &o->user,
                     &o->ca_file,       &o->cert_file,   &o->key_file,    &o->spool,
                     &o->redact,        &o->redact_with, &o->config,      &o->log_file,
                     &o->log_level};
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
        g_free(*strs[i]);
    g_strfreev(o->follow);
    g_strfreev(o->send);
    g_strfreev(o->headers);
    g_strfreev(o->tags);
    g_strfreev(o->drop_names);
    memset(o, 0, sizeof *o);
}

/* ---- SIGHUP: what happens to each option ------------------------------------------------------
 *
 * Every option of entries_for() has a rule here (checked at each start by
 * reload_rules_complete(), so an option added without one stops the agent
 * in every test). LIVE options are applied by reload() and become the
 * running values; RESTART options are compared with the running values and a
 * change is logged by name (never by value: --header and --user hold
 * secrets), the running value being kept, so that a.o always says what
 * runs and a second SIGHUP warns again. */
typedef enum reload_class {
    RELOAD_LIVE,    /* applied by reload() (twa_pipeline_reconfigure) */
    RELOAD_RESTART, /* takes effect on restart only */
    RELOAD_SOURCE,  /* --config: where the settings are read, not one of them */
} reload_class;

typedef enum field_kind { F_STR, F_STRV, F_BOOL, F_INT, F_SIZE, F_SHARE, F_RECEIVER } field_kind;

typedef struct reload_rule {
    const char *name; /* the long option */
    reload_class cls;
    field_kind kind;
    size_t at; /* offset of the field in opts; for F_RECEIVER the receiver's index */
} reload_rule;

#define RULE(name, cls, kind, field)                                                               \
    {                                                                                              \
        name, cls, kind, offsetof(opts, field)                                                     \
    }
#define RULE_R(name, index)                                                                        \
    {                                                                                              \
        name, RELOAD_RESTART, F_RECEIVER, index                                                    \
    }
static const reload_rule reload_rules[] = {
    RULE_R("jaeger-compact", R_COMPACT),
    RULE_R("jaeger-binary", R_BINARY),
    RULE_R("zipkin-udp", R_ZIPKIN_UDP),
    RULE_R("jaeger-http", R_JAEGER_HTTP),
    RULE_R("zipkin", R_ZIPKIN),
    RULE_R("otlp", R_OTLP),
    RULE_R("sampling", R_SAMPLING),
    RULE_R("metrics", R_METRICS),
    RULE("no-metrics", RELOAD_RESTART, F_BOOL, no_metrics),
    /* The file named at start is re-read (twa_http_reload); another name is a restart. */
    RULE("sampling-strategies", RELOAD_RESTART, F_STR, strategies),
    RULE("sampling-proxy", RELOAD_RESTART, F_STR, proxy),
    RULE("follow", RELOAD_RESTART, F_STRV, follow),
    RULE("checkpoint", RELOAD_RESTART, F_STR, checkpoint),
    RULE("follow-from", RELOAD_RESTART, F_STR, follow_from),
    RULE("follow-format", RELOAD_RESTART, F_STR, follow_format),
    RULE("send", RELOAD_RESTART, F_STRV, send),
    RULE("send-format", RELOAD_RESTART, F_STR, send_format),
    RULE("file-format", RELOAD_RESTART, F_STR, file_format),
    RULE("max-body-bytes", RELOAD_RESTART, F_INT, max_body),
    RULE("retries", RELOAD_RESTART, F_INT, retries),
    RULE("timeout-ms", RELOAD_RESTART, F_INT, timeout_ms),
    RULE("no-gzip", RELOAD_RESTART, F_BOOL, no_gzip),
    RULE("header", RELOAD_RESTART, F_STRV, headers),
    RULE("user", RELOAD_RESTART, F_STR, user),
    RULE("cacert", RELOAD_RESTART, F_STR, ca_file),
    RULE("cert", RELOAD_RESTART, F_STR, cert_file),
    RULE("key", RELOAD_RESTART, F_STR, key_file),
    RULE("flush-ms", RELOAD_RESTART, F_INT, flush_ms),
    RULE("queue-spans", RELOAD_RESTART, F_INT, queue_spans),
    RULE("queue-bytes", RELOAD_RESTART, F_SIZE, queue_bytes),
    RULE("spool", RELOAD_RESTART, F_STR, spool),
    RULE("spool-max", RELOAD_RESTART, F_SIZE, spool_max),
    RULE("tag", RELOAD_LIVE, F_STRV, tags),
    RULE("drop-name", RELOAD_LIVE, F_STRV, drop_names),
    RULE("redact", RELOAD_LIVE, F_STR, redact),
    RULE("redact-with", RELOAD_LIVE, F_STR, redact_with),
    RULE("tail-sample", RELOAD_RESTART, F_BOOL, tail_sample),
    RULE("tail-keep-share", RELOAD_RESTART, F_SHARE, tail_keep_share),
    RULE("tail-slow-ms", RELOAD_RESTART, F_INT, tail_slow_ms),
    RULE("tail-quiet-ms", RELOAD_RESTART, F_INT, tail_quiet_ms),
    RULE("tail-max-traces", RELOAD_RESTART, F_INT, tail_max_traces),
    RULE("max-connections", RELOAD_RESTART, F_INT, max_connections),
    RULE("max-request-bytes", RELOAD_RESTART, F_SIZE, max_request),
    RULE("request-timeout-ms", RELOAD_RESTART, F_INT, request_timeout_ms),
    RULE("udp-rcvbuf", RELOAD_RESTART, F_SIZE, udp_rcvbuf),
    RULE("drain-ms", RELOAD_RESTART, F_INT, drain_ms),
    RULE("config", RELOAD_SOURCE, F_STR, config),
    /* The file named at start is reopened on SIGHUP; another name is a restart. */
    RULE("log-file", RELOAD_RESTART, F_STR, log_file),
    RULE("syslog", RELOAD_RESTART, F_BOOL, syslog),
    RULE("log-level", RELOAD_RESTART, F_STR, log_level),
    RULE("verbose", RELOAD_RESTART, F_BOOL, verbose),
};
#undef RULE
#undef RULE_R

static const reload_rule *reload_rule_of(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(reload_rules); i++) {
        if (strcmp(reload_rules[i].name, name) == 0)
            return &reload_rules[i];
    }
    return NULL;
}

/* False, with @why naming it, when an option has no rule or a rule no option. */
static bool reload_rules_complete(char *why, size_t why_size)
{
    opts o;
    opts_init(&o);
    GOptionEntry *e = entries_for(&o);
    size_t n = 0;
    bool ok = true;
    for (; e[n].long_name && ok; n++) {
        if (!reload_rule_of(e[n].long_name)) {
            snprintf(why, why_size, "internal error: --%s has no SIGHUP rule (reload_rules)",
                     e[n].long_name);
            ok = false;
        }
    }
    if (ok && n != G_N_ELEMENTS(reload_rules)) {
        snprintf(why, why_size, "internal error: reload_rules names an option that is not one");
        ok = false;
    }
    g_free(e);
    opts_clear(&o);
    return ok;
}

static void *field_of(const opts *o, const reload_rule *r)
{
    return (char *)(uintptr_t)o + r->at;
}

static bool strv_equal(char *const *a, char *const *b)
{
    size_t i = 0;
    for (; a && b && a[i] && b[i]; i++) {
        if (strcmp(a[i], b[i]) != 0)
            return false;
    }
    return !(a && a[i]) && !(b && b[i]);
}

static bool rule_equal(const reload_rule *r, const opts *x, const opts *y)
{
    if (r->kind == F_RECEIVER)
        return g_strcmp0(x->r[r->at].addr, y->r[r->at].addr) == 0;
    const void *p = field_of(x, r), *q = field_of(y, r);
    switch (r->kind) {
    case F_STR:
        return g_strcmp0(*(char *const *)p, *(char *const *)q) == 0;
    case F_STRV:
        return strv_equal(*(char **const *)p, *(char **const *)q);
    case F_BOOL:
        return !*(const gboolean *)p == !*(const gboolean *)q;
    case F_INT:
        return *(const gint64 *)p == *(const gint64 *)q;
    case F_SIZE:
        return *(const uint64_t *)p == *(const uint64_t *)q;
    case F_SHARE: {
        double u = *(const gdouble *)p, v = *(const gdouble *)q;
        return u == v || (isnan(u) && isnan(v));
    }
    default:
        return false;
    }
}

/* Swaps a LIVE field of @x and @y (strings and lists change owner). */
static void rule_swap(const reload_rule *r, opts *x, opts *y)
{
    size_t size = r->kind == F_STR || r->kind == F_STRV ? sizeof(char *)
                  : r->kind == F_BOOL                   ? sizeof(gboolean)
                  : r->kind == F_SHARE                  ? sizeof(gdouble)
                                                        : sizeof(uint64_t);
    unsigned char tmp[sizeof(uint64_t)];
    g_assert(r->kind != F_RECEIVER && size <= sizeof tmp);
    memcpy(tmp, field_of(x, r), size);
    memcpy(field_of(x, r), field_of(y, r), size);
    memcpy(field_of(y, r), tmp, size);
}

/* Appends @add to the NULL-terminated list *@list (GOption replaces string
 * arrays on each parse: the config file's and the command line's add up). */
static void join_lists(char ***list, char **add)
{
    if (!add)
        return;
    GPtrArray *a = g_ptr_array_new();
    for (size_t i = 0; *list && (*list)[i]; i++)
        g_ptr_array_add(a, (*list)[i]);
    for (size_t i = 0; add[i]; i++)
        g_ptr_array_add(a, add[i]);
    g_ptr_array_add(a, NULL);
    g_free(*list);
    g_free(add);
    *list = (char **)g_ptr_array_free(a, FALSE);
}

/* Parses @argv into @o (on top of what it holds). */
static bool parse_args(opts *o, int *argc, char ***argv, const char *what, char *why,
                       size_t why_size, bool *is_help)
{
    char **lists_before[5] = {o->follow, o->send, o->headers, o->tags, o->drop_names};
    o->follow = o->send = o->headers = o->tags = o->drop_names = NULL;
    GOptionContext *ctx = g_option_context_new("");
    g_option_context_set_summary(
        ctx, "Receives spans from Jaeger, Zipkin and OpenTelemetry clients and span logs, and "
             "forwards them to backends, losing nothing.\n\nManual page: tracewire-agent(1).");
    GOptionEntry *e = entries_for(o);
    g_option_context_add_main_entries(ctx, e, NULL);
    current = o;
    GError *ge = NULL;
    bool ok = g_option_context_parse(ctx, argc, argv, &ge);
    if (!ok) {
        char msg[256];
        snprintf(why, why_size, "%s%s", what, tw__cli_option_message(ge, msg, sizeof msg));
    }
    g_clear_error(&ge);
    g_option_context_free(ctx);
    g_free(e);
    if (ok && *argc > 1) {
        snprintf(why, why_size, "%sunexpected argument '%s'", what, (*argv)[1]);
        ok = false;
    }
    char **added[5] = {o->follow, o->send, o->headers, o->tags, o->drop_names};
    char ***slots[5] = {&o->follow, &o->send, &o->headers, &o->tags, &o->drop_names};
    for (int i = 0; i < 5; i++) {
        *slots[i] = lists_before[i];
        join_lists(slots[i], added[i]);
    }
    (void)is_help;
    return ok;
}

/* The number (from 1) of the line of @text (@len bytes, which GKeyFile
 * refused) where its parse fails: the first line N such that lines 1..N
 * do not load. GKeyFile reads line by line and stops at the first bad one,
 * so a longer text than one that fails fails too: a binary search on the
 * number of lines finds it. Never the line's text: it may hold a secret. */
static size_t first_bad_line(const char *text, size_t len)
{
    size_t n_lines = 0;
    for (size_t i = 0; i < len; i++)
        n_lines += text[i] == '\n';
    if (len && text[len - 1] != '\n')
        n_lines++;
    size_t lo = 1, hi = n_lines ? n_lines : 1; /* the answer is in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, n = 0, end = 0;
        while (end < len && n < mid)
            n += text[end++] == '\n';
        GKeyFile *kf = g_key_file_new();
        bool ok = g_key_file_load_from_data(kf, text, end, G_KEY_FILE_NONE, NULL);
        g_key_file_free(kf);
        if (ok)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The config file as arguments, parsed into @o. */
static bool parse_config(opts *o, const char *path, char *why, size_t why_size)
{
    char *text = NULL;
    size_t len = 0;
    int err_no;
    char ferr[160];
    if (!tw__cli_read_file(path, TW_CLI_MAX_CONFIG_BYTES, &text, &len, &err_no, ferr,
                           sizeof ferr)) {
        snprintf(why, why_size, "--config %s: %s", path, ferr);
        return false;
    }
    GKeyFile *kf = g_key_file_new();
    GError *ge = NULL;
    bool loaded = g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &ge);
    if (loaded)
        free(text);
    if (!loaded) {
        /* GLib's text quotes the line, which may hold a secret (a header,
         * a URL): only its number is said. */
        size_t line = first_bad_line(text, len);
        if (ge->domain == G_KEY_FILE_ERROR && ge->code == G_KEY_FILE_ERROR_UNKNOWN_ENCODING)
            snprintf(why, why_size, "--config %s: line %zu is not UTF-8", path, line);
        else
            snprintf(why, why_size,
                     "--config %s: line %zu is not KEY = VALUE, a [group] or a # comment (the "
                     "line is not shown: it may hold a secret)",
                     path, line);
        free(text);
        g_error_free(ge);
        g_key_file_free(kf);
        return false;
    }
    gsize n_groups = 0;
    gchar **groups = g_key_file_get_groups(kf, &n_groups);
    bool ok = true;
    for (gsize g = 0; g < n_groups && ok; g++) {
        if (strcmp(groups[g], "agent") != 0) {
            snprintf(why, why_size, "--config %s: unknown group [%s] (settings go in [agent])",
                     path, groups[g]);
            ok = false;
        }
    }
    g_strfreev(groups);
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(args, g_strdup("tracewire agent"));
    gsize n_keys = 0;
    gchar **keys = ok ? g_key_file_get_keys(kf, "agent", &n_keys, NULL) : NULL;
    for (gsize k = 0; k < n_keys && ok; k++) {
        if (strcmp(keys[k], "config") == 0) {
            snprintf(why, why_size, "--config %s: a config file cannot name another", path);
            ok = false;
            break;
        }
        gchar *raw = g_key_file_get_value(kf, "agent", keys[k], NULL);
        g_strstrip(raw);
        if (strcmp(raw, "false") == 0 || strcmp(raw, "no") == 0) {
            g_free(raw);
            continue;
        }
        if (!raw[0] || strcmp(raw, "true") == 0 || strcmp(raw, "yes") == 0) {
            g_ptr_array_add(args, g_strdup_printf("--%s", keys[k]));
            g_free(raw);
            continue;
        }
        g_free(raw);
        gsize n = 0;
        gchar **values = g_key_file_get_string_list(kf, "agent", keys[k], &n, NULL);
        for (gsize i = 0; values && i < n; i++) {
            g_strstrip(values[i]);
            if (values[i][0])
                g_ptr_array_add(args, g_strdup_printf("--%s=%s", keys[k], values[i]));
        }
        g_strfreev(values);
    }
    g_strfreev(keys);
    g_key_file_free(kf);
    if (ok) {
        int argc = (int)args->len;
        g_ptr_array_add(args, NULL);
        char **argv = g_new(char *, args->len);
        memcpy(argv, args->pdata, args->len * sizeof(char *));
        char **keep = argv;
        char prefix[600];
        snprintf(prefix, sizeof prefix, "--config %s: ", path);
        ok = parse_args(o, &argc, &argv, prefix, why, why_size, NULL);
        g_free(keep);
    }
    g_ptr_array_free(args, TRUE);
    return ok;
}

static bool keep_tag(void *arg, const char *key, const char *value)
{
    g_ptr_array_add(arg, g_strdup_printf("%s=%s", key, value));
    return true;
}

/* @lists (each --tag, or JAEGER_TAGS) read by the SDK's JAEGER_TAGS parser
 * (offline/tag_list.h: items split at ',', trimmed, ${VAR:default}), so that
 * the agent and the library accept and refuse the same values with the same
 * message, which names @name. The tags, normalized to KEY=VALUE (the key
 * holds no '=': twa_procs_set_tags splits at the first), replace *@tags. */
static bool parse_tags(char ***tags, char *const *lists, const char *name, char *why,
                       size_t why_size)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    bool ok = true;
    for (size_t i = 0; lists && lists[i] && ok; i++) {
        tw_error *err = NULL;
        ok = tw__tag_list_parse(name, lists[i], keep_tag, out, &err);
        if (!ok)
            snprintf(why, why_size, "%s", tw_error_message(err));
        tw_error_free(err);
    }
    if (!ok) {
        g_ptr_array_free(out, TRUE);
        return false;
    }
    g_ptr_array_add(out, NULL);
    g_strfreev(*tags);
    *tags = (char **)g_ptr_array_free(out, FALSE);
    return true;
}

/* Reads the config file (when named) and then the command line. */
static int parse_all(opts *o, int argc, char **argv, char *why, size_t why_size)
{
    /* A first pass finds --config. */
    const char *config = NULL;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--config=", 9) == 0)
            config = argv[i] + 9;
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[i + 1];
    }
    if (config && !parse_config(o, config, why, why_size))
        return TW_CLI_EXIT_USAGE;
    char **copy = g_new0(char *, (size_t)argc + 1);
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    char **keep = copy;
    int n = argc;
    bool ok = parse_args(o, &n, &copy, "", why, why_size, NULL);
    g_free(keep);
    if (ok && o->tags)
        ok = parse_tags(&o->tags, o->tags, "--tag", why, why_size);
    return ok ? TW_CLI_EXIT_OK : TW_CLI_EXIT_USAGE;
}

/* OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, as a
 * --send-format name; http/protobuf (the OpenTelemetry specification's default,
 * as in the library) when neither is set. NULL, with @why set, for a value the
 * agent cannot send (grpc) or does not know. */
static const char *env_otlp_format(const char **from, char *why, size_t why_size)
{
    const char *var = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
    const char *v = g_getenv(var);
    if (!v || !*v) {
        var = "OTEL_EXPORTER_OTLP_PROTOCOL";
        v = g_getenv(var);
    }
    *from = v && *v ? var : "the default, OTEL_EXPORTER_OTLP_PROTOCOL being unset";
    if (!v || !*v || strcmp(v, "http/protobuf") == 0)
        return "otlp-http-proto";
    if (strcmp(v, "http/json") == 0)
        return "otlp-http";
    snprintf(why, why_size,
             "%s=%.64s: the agent sends http/protobuf or http/json (grpc is not "
             "supported)",
             var, v);
    return NULL;
}

/* One header of OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, as a "Name: value"
 * line: refused when the agent could not send it (convert's -H rules). */
typedef struct env_headers_ctx {
    GPtrArray *out;
    size_t index;
    char *why;
    size_t why_size;
} env_headers_ctx;

static bool on_env_header(void *arg, const char *name, const char *key, const char *value,
                          tw_error **err)
{
    (void)err;
    env_headers_ctx *c = arg;
    char *line = g_strdup_printf("%s: %s", key, value);
    size_t name_len;
    char sub[256];
    c->index++;
    if (!twb_header_line_check(line, c->index, &name_len, sub, sizeof sub)) {
        snprintf(c->why, c->why_size,
                 "%s: item %zu (key \"%.64s\"): not a valid header (a name must be an HTTP "
                 "token other than Content-Type, Content-Length, Host, Transfer-Encoding, "
                 "Expect or Connection; a value one line)",
                 name, c->index, key);
        g_free(line);
        return false;
    }
    g_ptr_array_add(c->out, line);
    return true;
}

/* OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, @var, as "Name: value" lines, read
 * by the library's own parser (offline/kv_list.h): the agent and a tracer
 * accept and refuse the same values with the same messages, which name the
 * variable and the item's position, never a value. NULL, with @why set, on
 * a refusal. */
static char **env_headers(const char *var, const char *value, char *why, size_t why_size)
{
    env_headers_ctx c = {g_ptr_array_new_with_free_func(g_free), 0, why, why_size};
    tw_error *e = NULL;
    if (!tw__parse_kv_list(var, value, true, on_env_header, &c, &e)) {
        if (e)
            snprintf(why, why_size, "%s", tw_error_message(e));
        tw_error_free(e);
        g_ptr_array_free(c.out, TRUE);
        return NULL;
    }
    g_ptr_array_set_free_func(c.out, NULL);
    g_ptr_array_add(c.out, NULL);
    return (char **)g_ptr_array_free(c.out, FALSE);
}

/* The environment, where the flags are silent. False, with @why set, when a
 * variable it reads has a value it cannot use. */
static bool apply_env(opts *o, char *why, size_t why_size)
{
    if (!o->send) {
        const char *otlp = g_getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        const char *base = g_getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
        const char *jaeger = g_getenv("JAEGER_ENDPOINT");
        char *url = NULL;
        if (otlp && *otlp) {
            url = g_strdup(otlp);
            o->send_from = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
        } else if (base && *base) {
            url = g_strdup_printf("%s%sv1/traces", base, g_str_has_suffix(base, "/") ? "" : "/");
            o->send_from = "OTEL_EXPORTER_OTLP_ENDPOINT";
        }
        if (url && !o->send_format) {
            const char *format = env_otlp_format(&o->format_from, why, why_size);
            if (!format) {
                g_free(url);
                return false;
            }
            o->send_format = g_strdup(format);
        }
        if (url) {
            const char *var = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
            const char *hdrs = g_getenv(var);
            if (!hdrs)
                hdrs = g_getenv(var = "OTEL_EXPORTER_OTLP_HEADERS");
            if (hdrs && *hdrs && !o->headers) {
                o->headers = env_headers(var, hdrs, why, why_size);
                if (!o->headers) {
                    g_free(url);
                    return false;
                }
                o->headers_from = var;
            }
        } else if (jaeger && *jaeger) {
            url = g_strdup(jaeger);
            o->send_from = "JAEGER_ENDPOINT";
            const char *u = g_getenv("JAEGER_USER"), *p = g_getenv("JAEGER_PASSWORD");
            bool has_u = u && *u, has_p = p && *p;
            /* The library's rule (sdk/src/config_env.c): both or neither, and
             * no ':' in the user; neither value is quoted. */
            if (!o->user && has_u != has_p) {
                snprintf(why, why_size,
                         "JAEGER_USER and JAEGER_PASSWORD must be set together (%s is not set)",
                         has_u ? "JAEGER_PASSWORD" : "JAEGER_USER");
                g_free(url);
                return false;
            }
            if (!o->user && has_u && strchr(u, ':')) {
                snprintf(why, why_size,
                         "JAEGER_USER: contains ':', which basic authentication cannot carry");
                g_free(url);
                return false;
            }
            if (has_u && !o->user) {
                o->user = g_strdup_printf("%s:%s", u, p);
                o->user_from = "JAEGER_USER";
            }
        }
        if (url) {
            o->send = g_new0(char *, 2);
            o->send[0] = url;
        }
    }
    const char *tags = g_getenv("JAEGER_TAGS");
    if (!o->tags && tags && *tags) {
        /* The user set the variable, not --tag: the error names it. */
        char *const lists[] = {(char *)tags, NULL};
        if (!parse_tags(&o->tags, lists, "JAEGER_TAGS", why, why_size))
            return false;
    }
    return true;
}

/* ---- the daemon
 * ---------------------------------------------------------------------------------- */

typedef struct agent {
    opts o;
    twa_dest **dests;
    size_t n_dests;
    twa_pipeline *pipeline;
    twa_udp *udp[3];
    twa_http *http[3];
    twa_http *sampling, *metrics;
    twa_follow *follow;
    const twb_reader *follow_reader;
    twb_options follow_opts;
} agent;

static const char *const otlp_routes[] = {"/v1/traces", NULL};
static const char *const zipkin_routes[] = {"/api/v2/spans", "/api/v1/spans", NULL};
static const char *const jaeger_routes[] = {"/api/traces", NULL};

static twa_pipeline_options pipeline_options(const opts *o)
{
    twa_pipeline_options po = {0};
    po.tags = (const char *const *)o->tags;
    po.n_tags = o->tags ? g_strv_length(o->tags) : 0;
    po.drop_names = (const char *const *)o->drop_names;
    po.n_drop_names = o->drop_names ? g_strv_length(o->drop_names) : 0;
    po.redact_regex = o->redact;
    po.redact_with = o->redact_with;
    po.tail_sample = o->tail_sample;
    po.tail_keep_share = !isnan(o->tail_keep_share) ? o->tail_keep_share : 0.1;
    po.tail_slow_us = (o->tail_slow_ms >= 0 ? o->tail_slow_ms : 1000) * 1000;
    po.tail_quiet_ms = o->tail_quiet_ms >= 0 ? (unsigned int)o->tail_quiet_ms : 5000u;
    po.tail_max_traces = o->tail_max_traces > 0 ? (size_t)o->tail_max_traces : 10000u;
    return po;
}

static bool is_line_framed(const char *name)
{
    static const char *const ok[] = {"dapper",      "zipkin-v2-json", "zipkin-v1-json",
                                     "jaeger-json", "otlp-json",      NULL};
    for (size_t i = 0; ok[i]; i++) {
        if (strcmp(ok[i], name) == 0)
            return true;
    }
    return false;
}

/* Each HTTP server may hold @per_server connections, each a file
 * descriptor: the soft limit on open files (1024 by default on Debian, less
 * than two servers at the default 512) is raised toward the hard one when it
 * is short, as servers commonly do; what cannot be raised is a warning, since
 * connections past it would fail to be accepted (EMFILE). */
static void fit_open_files(unsigned int n_servers, unsigned int per_server)
{
    struct rlimit rl;
    if (!n_servers || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t need = (rlim_t)n_servers * per_server + 256; /* + sockets, files, the spool */
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
    if (want > rl.rlim_cur) {
        struct rlimit raised = {want, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = want;
    }
    if (rl.rlim_cur < need)
        twa_log(TWA_WARN,
                "open files are limited to %llu (ulimit -n), fewer than %u HTTP servers of %u "
                "connections need: connections past it will not be accepted",
                (unsigned long long)rl.rlim_cur, n_servers, per_server);
}

/* --sampling-proxy: an http(s) URL libcurl takes, as each request will
 * (http_mhd.c appends ?service=); checked at start like --send. The URL is not
 * shown: one libcurl refuses may be one the redaction cannot take apart
 * either (a space in the password), so its secret would be printed. */
static bool proxy_url_ok(const char *url, char *why, size_t why_size)
{
    CURLU *u = curl_url();
    char *scheme = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
    curl_free(scheme);
    curl_url_cleanup(u);
    if (!ok)
        snprintf(why, why_size,
                 "--sampling-proxy: not a valid http:// or https:// URL (the value is not shown: "
                 "it may hold a password)");
    return ok;
}

static int start(agent *a, char *why, size_t why_size)
{
    opts *o = &a->o;
    /* The sizes were checked as they were parsed. */
    uint64_t queue_bytes = o->queue_bytes != SIZE_UNSET ? o->queue_bytes : (uint64_t)12 << 20;
    uint64_t spool_max = o->spool_max != SIZE_UNSET ? o->spool_max : DEFAULT_SPOOL_MAX;
    uint64_t max_request =
        o->max_request != SIZE_UNSET ? o->max_request : DEFAULT_MAX_REQUEST_BYTES;
    uint64_t rcvbuf = o->udp_rcvbuf != SIZE_UNSET ? o->udp_rcvbuf : DEFAULT_RCVBUF;
    unsigned int max_connections = o->max_connections != OPTION_UNSET
                                       ? (unsigned int)o->max_connections
                                       : DEFAULT_MAX_CONNECTIONS;
    if (tw__cli_user_problem(o->user)) {
        snprintf(why, why_size, "%s", tw__cli_user_problem(o->user));
        return TW_CLI_EXIT_USAGE;
    }
    if (o->user && tw__cli_has_authorization(o->headers)) {
        snprintf(why, why_size,
                 "%s and an Authorization header%s%s%s both set the Authorization header: give "
                 "one",
                 o->user_from ? o->user_from : "-u", o->headers_from ? " (" : "",
                 o->headers_from ? o->headers_from : "", o->headers_from ? ")" : "");
        return TW_CLI_EXIT_USAGE;
    }
    if (o->strategies && o->proxy) {
        snprintf(why, why_size, "--sampling-strategies and --sampling-proxy exclude each other");
        return TW_CLI_EXIT_USAGE;
    }
    if (o->proxy && !proxy_url_ok(o->proxy, why, why_size))
        return TW_CLI_EXIT_USAGE;
    if (o->r[R_SAMPLING].addr && !o->strategies && !o->proxy) {
        snprintf(why, why_size,
                 "--sampling needs --sampling-strategies=FILE or --sampling-proxy=URL");
        return TW_CLI_EXIT_USAGE;
    }
    if (o->follow_from && strcmp(o->follow_from, "start") != 0 &&
        strcmp(o->follow_from, "end") != 0) {
        snprintf(why, why_size, "--follow-from must be start or end");
        return TW_CLI_EXIT_USAGE;
    }
    bool any_receiver = o->follow != NULL;
    for (int i = 0; i < R_SAMPLING; i++)
        any_receiver = any_receiver || o->r[i].addr;
    if (!o->send && any_receiver) {
        snprintf(why, why_size,
                 "no destination: add --send URL (or set OTEL_EXPORTER_OTLP_ENDPOINT or "
                 "JAEGER_ENDPOINT)");
        return TW_CLI_EXIT_USAGE;
    }
    if (!any_receiver && !o->r[R_SAMPLING].addr) {
        snprintf(why, why_size,
                 "no receiver: name at least one of --jaeger-compact, --jaeger-binary, "
                 "--zipkin-udp, --jaeger-http, --zipkin, --otlp, --sampling, --follow");
        return TW_CLI_EXIT_USAGE;
    }
    a->follow_reader = twb_reader_find(o->follow_format ? o->follow_format : "dapper");
    if (o->follow && (!a->follow_reader || !is_line_framed(a->follow_reader->name))) {
        snprintf(why, why_size,
                 "--follow-format %s: expected a line-framed format: dapper, zipkin-v2-json, "
                 "zipkin-v1-json, jaeger-json or otlp-json (one JSON document per line)",
                 o->follow_format);
        return TW_CLI_EXIT_USAGE;
    }
    const twb_writer_vtable *file_writer =
        twb_writer_find(o->file_format ? o->file_format : "dapper");
    if (!file_writer) {
        snprintf(why, why_size, "--file-format %s: not a convert --to format", o->file_format);
        return TW_CLI_EXIT_USAGE;
    }
    a->n_dests = o->send ? g_strv_length(o->send) : 0;
    a->dests = calloc(a->n_dests + 1, sizeof *a->dests);
    if (!a->dests) {
        snprintf(why, why_size, "out of memory");
        return TW_CLI_EXIT_FAILURE;
    }
    twa_follow_options fo = {0};
    if (o->follow) {
        a->follow_opts.max_value_bytes = 65536;
        a->follow_opts.max_annotations = 1000;
        fo.globs = (const char *const *)o->follow;
        fo.n_globs = g_strv_length(o->follow);
        fo.checkpoint = o->checkpoint;
        fo.from_end = o->follow_from && strcmp(o->follow_from, "end") == 0;
        fo.reader = a->follow_reader;
        fo.reader_opts = &a->follow_opts;
        a->follow = twa_follow_new(&fo, why, why_size);
        if (!a->follow)
            return TW_CLI_EXIT_FAILURE;
        if (!o->checkpoint)
            twa_log(TWA_WARN, "--follow without --checkpoint: a restart reads the files again");
    }
    for (size_t i = 0; i < a->n_dests; i++) {
        twa_dest_options d;
        twa_dest_options_init(&d);
        d.url = o->send[i];
        d.url_from = o->send_from;
        d.format = o->send_format;
        d.format_from = o->format_from;
        d.file_writer = file_writer;
        if (o->max_body > 0)
            d.max_body_bytes = (size_t)o->max_body;
        if (o->retries >= 0)
            d.max_retries = (unsigned int)o->retries;
        if (o->timeout_ms > 0)
            d.timeout_ms = (unsigned int)o->timeout_ms;
        if (o->flush_ms > 0)
            d.flush_ms = (unsigned int)o->flush_ms;
        if (o->queue_spans > 0)
            d.queue_max_spans = (size_t)o->queue_spans;
        d.queue_max_bytes = (size_t)queue_bytes;
        d.is_gzip = !o->no_gzip;
        d.headers = (const char *const *)o->headers;
        d.n_headers = o->headers ? g_strv_length(o->headers) : 0;
        d.user = o->user;
        d.ca_file = o->ca_file;
        d.cert_file = o->cert_file;
        d.key_file = o->key_file;
        d.spool_dir = o->spool;
        d.spool_max_bytes = spool_max / (a->n_dests ? a->n_dests : 1);
        if (a->follow) {
            d.on_delivery = twa_follow_on_delivery;
            d.delivery_arg = a->follow;
        }
        d.earlier = a->dests;
        d.n_earlier = i;
        a->dests[i] = twa_dest_new(&d, (unsigned int)i, why, why_size);
        if (!a->dests[i])
            return TW_CLI_EXIT_USAGE;
    }
    twa_pipeline_options po = pipeline_options(o);
    a->pipeline = twa_pipeline_new(&po, a->dests, a->n_dests, why, why_size);
    if (!a->pipeline)
        return TW_CLI_EXIT_USAGE;
    if (a->follow)
        twa_follow_set_pipeline(a->follow, a->pipeline);
    if (o->tail_sample && (po.tail_keep_share > 1 || o->tail_quiet_ms == 0)) {
        snprintf(why, why_size, "--tail-keep-share must be 0..1 and --tail-quiet-ms above 0");
        return TW_CLI_EXIT_USAGE;
    }
    if (!twa_pipeline_start(a->pipeline)) {
        snprintf(why, why_size, "cannot start the tail sampler's thread");
        return TW_CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < a->n_dests; i++) {
        if (!twa_dest_start(a->dests[i], why, why_size))
            return TW_CLI_EXIT_FAILURE;
        twa_log(TWA_INFO, "destination: %s", twa_dest_label(a->dests[i]));
    }

    /* receivers */
    static const twa_decode_fn udp_decoders[3] = {
        twa_decode_jaeger_compact, twa_decode_jaeger_binary, twa_decode_zipkin_compact};
    for (int i = R_COMPACT; i <= R_ZIPKIN_UDP; i++) {
        if (!o->r[i].addr)
            continue;
        struct sockaddr_storage ss;
        socklen_t len;
        char sub[256];
        if (!twa_parse_addr(o->r[i].addr, NULL, o->r[i].port, &ss, &len, sub, sizeof sub)) {
            snprintf(why, why_size, "--%s: %s", o->r[i].flag, sub);
            return TW_CLI_EXIT_USAGE;
        }
        a->udp[i] = twa_udp_start(o->r[i].flag, &ss, len, udp_decoders[i], a->pipeline,
                                  (size_t)rcvbuf, sub, sizeof sub);
        if (!a->udp[i]) {
            snprintf(why, why_size, "--%s: %s", o->r[i].flag, sub);
            return TW_CLI_EXIT_FAILURE;
        }
    }
    static const char *const names[3] = {"jaeger-http", "zipkin", "otlp"};
    static const char *const *const routes[3] = {jaeger_routes, zipkin_routes, otlp_routes};
    unsigned int n_servers = 0;
    for (int i = R_JAEGER_HTTP; i <= R_METRICS; i++)
        n_servers += o->r[i].addr || (i == R_METRICS && !o->no_metrics);
    fit_open_files(n_servers, max_connections);
    for (int i = R_JAEGER_HTTP; i <= R_METRICS; i++) {
        if (!o->r[i].addr && !(i == R_METRICS && !o->no_metrics))
            continue;
        const char *text = o->r[i].addr;
        if (i == R_METRICS && (!text || !*text))
            text = DEFAULT_METRICS;
        struct sockaddr_storage ss;
        socklen_t len;
        char sub[256];
        if (!twa_parse_addr(text, NULL, o->r[i].port, &ss, &len, sub, sizeof sub)) {
            snprintf(why, why_size, "--%s: %s", o->r[i].flag, sub);
            return TW_CLI_EXIT_USAGE;
        }
        twa_http_options ho = {0};
        ho.max_request_bytes = (size_t)max_request;
        ho.max_connections = max_connections;
        ho.request_timeout_ms = o->request_timeout_ms != OPTION_UNSET
                                    ? (unsigned int)o->request_timeout_ms
                                    : DEFAULT_REQUEST_TIMEOUT_MS;
        ho.pipeline = a->pipeline;
        ho.dests = a->dests;
        ho.n_dests = a->n_dests;
        twa_http **slot;
        if (i == R_SAMPLING) {
            ho.kind = TWA_HTTP_SAMPLING;
            ho.name = "sampling";
            ho.strategies_file = o->strategies;
            ho.proxy_url = o->proxy;
            slot = &a->sampling;
        } else if (i == R_METRICS) {
            ho.kind = TWA_HTTP_METRICS;
            ho.name = "metrics";
            slot = &a->metrics;
        } else {
            ho.kind = TWA_HTTP_RECEIVER;
            ho.name = names[i - R_JAEGER_HTTP];
            ho.routes = routes[i - R_JAEGER_HTTP];
            slot = &a->http[i - R_JAEGER_HTTP];
        }
        *slot = twa_http_start(&ho, &ss, len, sub, sizeof sub);
        if (!*slot) {
            snprintf(why, why_size, "--%s: %s", o->r[i].flag, sub);
            return TW_CLI_EXIT_FAILURE;
        }
    }
    if (a->follow && !twa_follow_start(a->follow, why, why_size))
        return TW_CLI_EXIT_FAILURE;
    return TW_CLI_EXIT_OK;
}

static void stop_all(agent *a, unsigned int drain_ms)
{
    atomic_store(&twa_draining, true);
    atomic_store(&twa_stopping, true);
    for (int i = 0; i < 3; i++) {
        twa_http_stop(a->http[i]);
        a->http[i] = NULL;
        twa_udp_stop(a->udp[i]);
        a->udp[i] = NULL;
    }
    /* The follower may wait for room in a queue: wake it, then join it. */
    for (size_t i = 0; i < a->n_dests; i++) {
        if (a->dests[i])
            twa_dest_interrupt(a->dests[i]);
    }
    twa_follow_stop(a->follow);
    if (a->pipeline)
        twa_pipeline_stop(a->pipeline); /* the tail sampler decides what it holds */
    for (size_t i = 0; i < a->n_dests; i++) {
        if (a->dests[i])
            twa_dest_stop(a->dests[i], drain_ms);
    }
}

static void free_all(agent *a)
{
    twa_http_stop(a->sampling);
    a->sampling = NULL;
    /* The destinations end their drain; their last deliveries reach the
     * follower, which is freed after them. /metrics answers meanwhile. */
    for (size_t i = 0; i < a->n_dests; i++)
        twa_dest_join(a->dests[i]);
    size_t n = 0;
    while (n < a->n_dests && a->dests[n])
        n++;
    if (n)
        twa_metrics_log_summary(a->dests, n);
    twa_http_stop(a->metrics);
    a->metrics = NULL;
    for (size_t i = 0; i < a->n_dests; i++)
        twa_dest_free(a->dests[i]);
    twa_follow_free(a->follow);
    a->follow = NULL;
    twa_pipeline_free(a->pipeline);
    free(a->dests);
    a->dests = NULL;
}

/* SIGHUP: re-read what can change live. */
static void reload(agent *a, int argc, char **argv)
{
    twa_log_reopen();
    opts fresh;
    opts_init(&fresh);
    char why[1024];
    if (parse_all(&fresh, argc, argv, why, sizeof why) != TW_CLI_EXIT_OK) {
        twa_log(TWA_ERROR, "SIGHUP: %s; the running settings are kept", why);
        opts_clear(&fresh);
        return;
    }
    if (!apply_env(&fresh, why, sizeof why)) {
        twa_log(TWA_ERROR, "SIGHUP: %s; the running settings are kept", why);
        opts_clear(&fresh);
        return;
    }
    /* All or nothing: a configuration that does not apply changes none of
     * the running settings, and is not reported as re-read. */
    twa_pipeline_options po = pipeline_options(&fresh);
    if (!twa_pipeline_reconfigure(a->pipeline, &po, why, sizeof why)) {
        twa_log(TWA_ERROR, "SIGHUP: %s; the running settings are kept", why);
        opts_clear(&fresh);
        return;
    }
    if (a->sampling && !twa_http_reload(a->sampling, why, sizeof why))
        twa_log(TWA_ERROR, "SIGHUP: %s; the running strategies are kept", why);
    /* Each option either runs with its new value (LIVE: the running options
     * take it) or keeps the running one (RESTART: named in one warning). */
    GString *restart = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(reload_rules); i++) {
        const reload_rule *r = &reload_rules[i];
        if (r->cls == RELOAD_LIVE)
            rule_swap(r, &a->o, &fresh);
        else if (r->cls == RELOAD_RESTART && !rule_equal(r, &a->o, &fresh))
            g_string_append_printf(restart, "%s--%s", restart->len ? ", " : "", r->name);
    }
    if (restart->len)
        twa_log(TWA_WARN,
                "SIGHUP: %s: changed, but takes effect on restart only; the running "
                "value is kept",
                restart->str);
    g_string_free(restart, TRUE);
    twa_log(TWA_INFO, "SIGHUP: configuration re-read");
    opts_clear(&fresh); /* the LIVE options' former values */
}

static twa_level level_of(const opts *o, bool *ok)
{
    *ok = true;
    if (o->verbose)
        return TWA_DEBUG;
    if (!o->log_level || strcmp(o->log_level, "info") == 0)
        return TWA_INFO;
    if (strcmp(o->log_level, "error") == 0)
        return TWA_ERROR;
    if (strcmp(o->log_level, "warning") == 0)
        return TWA_WARN;
    if (strcmp(o->log_level, "debug") == 0)
        return TWA_DEBUG;
    *ok = false;
    return TWA_INFO;
}

int tw__agent_cmd_main(int argc, char **argv)
{
    agent a;
    memset(&a, 0, sizeof a);
    opts_init(&a.o);
    char why[1024] = "";
    if (!reload_rules_complete(why, sizeof why)) {
        tw__cli_error("agent: %s", why);
        opts_clear(&a.o);
        return TW_CLI_EXIT_FAILURE;
    }
    int rc = parse_all(&a.o, argc, argv, why, sizeof why);
    if (rc != TW_CLI_EXIT_OK) {
        tw__cli_error("agent: %s", why);
        opts_clear(&a.o);
        return rc;
    }
    if (!apply_env(&a.o, why, sizeof why)) {
        tw__cli_error("agent: %s", why);
        opts_clear(&a.o);
        return TW_CLI_EXIT_USAGE;
    }
    /* The files the agent writes: an option taken as the value would be
     * created under that name. */
    const struct {
        const char *option, *value;
    } written[] = {
        {"--log-file", a.o.log_file}, {"--checkpoint", a.o.checkpoint}, {"--spool", a.o.spool}};
    for (size_t i = 0; i < sizeof written / sizeof written[0]; i++) {
        if (!tw__cli_output_path_ok(written[i].option, written[i].value, why, sizeof why)) {
            tw__cli_error("agent: %s", why);
            opts_clear(&a.o);
            return TW_CLI_EXIT_USAGE;
        }
    }
    bool level_ok;
    twa_level level = level_of(&a.o, &level_ok);
    if (!level_ok) {
        tw__cli_error("agent: --log-level must be error, warning, info or debug");
        opts_clear(&a.o);
        return TW_CLI_EXIT_USAGE;
    }
    if (!twa_log_open(a.o.log_file, a.o.syslog, level, why, sizeof why)) {
        tw__cli_error("agent: %s", why);
        opts_clear(&a.o);
        return TW_CLI_EXIT_FAILURE;
    }
    /* Every thread inherits this mask: signals reach only sigtimedwait. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (geteuid() == 0)
        twa_log(TWA_WARN, "running as root: the agent needs no privilege (ports above 1024, "
                          "files it can read)");
    atomic_store(&twa_stopping, false);
    atomic_store(&twa_draining, false);
    rc = start(&a, why, sizeof why);
    if (rc != TW_CLI_EXIT_OK) {
        twa_log(TWA_ERROR, "%s", why);
        stop_all(&a, 0);
        free_all(&a);
        twa_log_close();
        opts_clear(&a.o);
        return rc;
    }
    twa_log(TWA_INFO, "running (pid %ld)", (long)getpid());
    unsigned int drain_ms = a.o.drain_ms >= 0 ? (unsigned int)a.o.drain_ms : DEFAULT_DRAIN_MS;
    for (;;) {
        struct timespec one = {1, 0};
        int sig = sigtimedwait(&set, NULL, &one);
        if (sig == SIGTERM || sig == SIGINT) {
            twa_log(TWA_INFO, "%s: draining (at most %u ms)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    drain_ms);
            break;
        }
        if (sig == SIGHUP)
            reload(&a, argc, argv);
        twa_procs_sweep(twa_pipeline_procs(a.pipeline));
    }
    stop_all(&a, drain_ms);
    free_all(&a);
    twa_log(TWA_INFO, "stopped");
    twa_log_close();
    opts_clear(&a.o);
    curl_global_cleanup();
    return TW_CLI_EXIT_OK;
}
