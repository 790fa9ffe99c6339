/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_decode.c: `--from zipkin-v2-json`, Zipkin's v2 span
 * JSON (the /api/v2/spans body; zipkin2-api.yaml definition
 * Span). First stage of the convert flow (bridge/convert.h): records
 * come from the JSON splitter (json_stream.c: an array, an array of arrays,
 * one object, or NDJSON), each is decoded with Jansson and turned into one
 * span-model record plus its process (the localEndpoint), handed to in->emit.
 *
 * Mapping (docs/bridge.md repeats it):
 *   traceId/id/parentId  hex of any case, left-padded (twb_parse_*); parentId
 *                        zero or equal to id means root
 *   kind                 tag span.kind (lower case); an unknown kind is kept
 *                        as given, with a warning
 *   shared               .shared, cleared on a CLIENT span (as Zipkin does)
 *   timestamp/duration   µs (or --time-unit); a fractional number is rounded
 *                        with a warning; no timestamp: the earliest
 *                        annotation's; no duration: 0 and is_duration_unknown
 *   localEndpoint        the process: service, tags ip / ipv6 / port
 *   remoteEndpoint       tags peer.service, peer.ipv4, peer.ipv6, peer.port
 *   annotations          logs with one field `event`
 *   tags                 string tags; other JSON values are stringified (warned)
 *   debug                TW__FLAG_DEBUG; TW__FLAG_SAMPLED always
 * A record that is not a span (bad JSON, missing or bad ids) is rejected
 * with a reason naming the field; a bad optional field is dropped with a
 * warning, so one odd value never loses a span.
 *
 * Memory: one record at a time (MAX_RECORD_BYTES). Locking: none.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_common.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

/* Largest single span record: far above any real span (tags are capped by
 * tracers at a few KiB), small enough to bound memory. */
#define MAX_RECORD_BYTES ((size_t)16 * 1024 * 1024)

/* Per-record state: where messages point and what the input can do. */
typedef struct {
    tw__wire_input *in;
    size_t line_no;
    tw__time_unit unit; /* the unit of timestamps and durations */
    tw__id_base base;
    bool is_nomem;
} record_ctx;

/* A time or duration field in µs. False (with a warning naming @field) when
 * it is not a number, or out of range. */
static bool read_time(record_ctx *rc, const json_t *v, const char *field, int64_t *us)
{
    if (json_is_integer(v)) {
        if (tw__time_int_to_us(json_integer_value(v), rc->unit, us))
            return true;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (tw__time_to_us(d, rc->unit, us)) {
            if (rc->unit == TW__TIME_US && d != floor(d))
                tw__wire_warn(rc->in, rc->line_no, "%s: fractional value %.17g rounded to %lld",
                              field, d, (long long)*us);
            return true;
        }
    } else if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) <= 19 &&
               strspn(json_string_value(v), "0123456789") == json_string_length(v)) {
        /* Some emitters quote their numbers; the value is still clear. */
        long long n = strtoll(json_string_value(v), NULL, 10);
        if (tw__time_int_to_us(n, rc->unit, us)) {
            tw__wire_warn(rc->in, rc->line_no, "%s: a number given as a string", field);
            return true;
        }
    }
    tw__wire_warn(rc->in, rc->line_no, "%s: not a usable number, ignored", field);
    return false;
}

/* ---- endpoints ----------------------------------------------------------------------------- */

/* An address as Zipkin's Endpoint parses it: IPv4 text, or IPv6 text in
 * canonical form, with IPv4-mapped and IPv4-compatible IPv6 turned into
 * IPv4 (::ffff:1.2.3.4 and ::1.2.3.4 -> 1.2.3.4; ::1 stays IPv6). False
 * when the text is no address. */
static bool parse_ip(const char *text, char out[INET6_ADDRSTRLEN], bool *is_v4)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        *is_v4 = true;
        return inet_ntop(AF_INET, &v4, out, INET6_ADDRSTRLEN) != NULL;
    }
    if (inet_pton(AF_INET6, text, &v6) != 1)
        return false;
    if (IN6_IS_ADDR_V4MAPPED(&v6) || IN6_IS_ADDR_V4COMPAT(&v6)) {
        memcpy(&v4, &v6.s6_addr[12], 4);
        *is_v4 = true;
        return inet_ntop(AF_INET, &v4, out, INET6_ADDRSTRLEN) != NULL;
    }
    *is_v4 = false;
    return inet_ntop(AF_INET6, &v6, out, INET6_ADDRSTRLEN) != NULL;
}

typedef struct {
    const char *service; /* borrowed from the JSON; NULL when absent or empty */
    size_t service_len;
    char ipv4[INET6_ADDRSTRLEN], ipv6[INET6_ADDRSTRLEN]; /* "" when absent */
    int64_t port;                                        /* 0 when absent */
} endpoint;

/* Reads an Endpoint object; bad members are dropped with a warning. */
static void read_endpoint(record_ctx *rc, const json_t *obj, const char *name, endpoint *ep)
{
    memset(ep, 0, sizeof *ep);
    if (!obj || json_is_null(obj))
        return;
    if (!json_is_object(obj)) {
        tw__wire_warn(rc->in, rc->line_no, "%s: not an object, ignored", name);
        return;
    }
    const json_t *service = json_object_get(obj, "serviceName");
    if (json_is_string(service) && json_string_length(service) > 0) {
        ep->service = json_string_value(service);
        ep->service_len = json_string_length(service);
    } else if (service && !json_is_null(service) && !json_is_string(service)) {
        tw__wire_warn(rc->in, rc->line_no, "%s.serviceName: not a string, ignored", name);
    }
    static const char *const addr_keys[2] = {"ipv4", "ipv6"};
    for (int k = 0; k < 2; k++) {
        const json_t *a = json_object_get(obj, addr_keys[k]);
        if (!a || json_is_null(a))
            continue;
        char text[INET6_ADDRSTRLEN];
        bool is_v4;
        if (!json_is_string(a) || !parse_ip(json_string_value(a), text, &is_v4)) {
            tw__wire_warn(rc->in, rc->line_no, "%s.%s: not an IP address, ignored", name,
                          addr_keys[k]);
            continue;
        }
        memcpy(is_v4 ? ep->ipv4 : ep->ipv6, text, sizeof text);
    }
    const json_t *port = json_object_get(obj, "port");
    if (json_is_integer(port)) {
        json_int_t p = json_integer_value(port);
        if (p > 65535)
            tw__wire_warn(rc->in, rc->line_no, "%s.port: %lld is over 65535, ignored", name,
                          (long long)p);
        else if (p > 0)
            ep->port = p;
        /* 0 or negative: "absent" in Zipkin's model, silently */
    } else if (port && !json_is_null(port)) {
        tw__wire_warn(rc->in, rc->line_no, "%s.port: not an integer, ignored", name);
    }
}

static bool set_local(const endpoint *ep, tw__process *p)
{
    /* A service holding a NUL byte is cut there (service names are C strings). */
    if (ep->service && !tw__process_set_service(p, ep->service))
        return false;
    tw_value v = {.type = TW_VALUE_STRING};
    if (ep->ipv4[0] || ep->ipv6[0]) {
        v.as.str = ep->ipv4[0] ? ep->ipv4 : ep->ipv6;
        v.len = strlen(v.as.str);
        if (!tw__process_add_tag(p, "ip", &v))
            return false;
    }
    if (ep->ipv4[0] && ep->ipv6[0]) {
        v.as.str = ep->ipv6;
        v.len = strlen(ep->ipv6);
        if (!tw__process_add_tag(p, "ipv6", &v))
            return false;
    }
    if (ep->port) {
        tw_value port = {.type = TW_VALUE_INT64, .as.i64 = ep->port};
        if (!tw__process_add_tag(p, "port", &port))
            return false;
    }
    return true;
}

static bool set_remote(const endpoint *ep, tw__span_data *s)
{
    if (ep->service && !tw__span_data_add_str_tag(s, "peer.service", ep->service, ep->service_len))
        return false;
    if (ep->ipv4[0] && !tw__span_data_add_str_tag(s, "peer.ipv4", ep->ipv4, strlen(ep->ipv4)))
        return false;
    if (ep->ipv6[0] && !tw__span_data_add_str_tag(s, "peer.ipv6", ep->ipv6, strlen(ep->ipv6)))
        return false;
    tw_value port = {.type = TW_VALUE_INT64, .as.i64 = ep->port};
    return !ep->port || tw__span_data_add_tag(s, "peer.port", &port);
}

/* ---- one span ------------------------------------------------------------------------------ */

static const char *const kinds[] = {"CLIENT", "SERVER", "PRODUCER", "CONSUMER"};
static const char *const kinds_lower[] = {"client", "server", "producer", "consumer"};

/* The span's kind: 0..3 for the Zipkin kinds, -1 for none, -2 for another
 * value (kept as a tag as given). */
static int read_kind(record_ctx *rc, const json_t *kind, tw__span_data *s)
{
    if (!kind || json_is_null(kind))
        return -1;
    if (!json_is_string(kind)) {
        tw__wire_warn(rc->in, rc->line_no, "kind: not a string, ignored");
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        if (strcasecmp(json_string_value(kind), kinds[k]) == 0) {
            if (!tw__span_data_add_str_tag(s, "span.kind", kinds_lower[k], strlen(kinds_lower[k])))
                rc->is_nomem = true;
            return k;
        }
    }
    tw__wire_warn(rc->in, rc->line_no, "kind: unknown value \"%.40s\", kept as tag span.kind",
                  json_string_value(kind));
    if (!tw__span_data_add_str_tag(s, "span.kind", json_string_value(kind),
                                   json_string_length(kind)))
        rc->is_nomem = true;
    return -2;
}

static void read_annotations(record_ctx *rc, const json_t *list, tw__span_data *s)
{
    if (!list || json_is_null(list))
        return;
    if (!json_is_array(list)) {
        tw__wire_warn(rc->in, rc->line_no, "annotations: not an array, ignored");
        return;
    }
    size_t i;
    const json_t *a;
    json_array_foreach(list, i, a)
    {
        char field[48];
        snprintf(field, sizeof field, "annotations[%zu]", i);
        const json_t *ts = json_object_get(a, "timestamp");
        const json_t *value = json_object_get(a, "value");
        if (!json_is_object(a) || !ts || !value || json_is_null(value)) {
            tw__wire_warn(rc->in, rc->line_no, "%s: needs a timestamp and a value, dropped", field);
            continue;
        }
        int64_t us;
        snprintf(field, sizeof field, "annotations[%zu].timestamp", i);
        if (!read_time(rc, ts, field, &us))
            continue;
        size_t len;
        char *text = tw__json_value_text(value, &len);
        if (!text) {
            rc->is_nomem = true;
            return;
        }
        if (!json_is_string(value))
            tw__wire_warn(rc->in, rc->line_no, "annotations[%zu].value: not a string, stringified",
                          i);
        bool ok = tw__span_data_add_event(s, us, text, len);
        free(text);
        if (!ok) {
            rc->is_nomem = true;
            return;
        }
    }
}

static void read_tags(record_ctx *rc, const json_t *tags, tw__span_data *s)
{
    if (!tags || json_is_null(tags))
        return;
    if (!json_is_object(tags)) {
        tw__wire_warn(rc->in, rc->line_no, "tags: not an object, ignored");
        return;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)tags, key, value)
    {
        if (json_is_null(value)) {
            tw__wire_warn(rc->in, rc->line_no, "tags.%.60s: null value, dropped", key);
            continue;
        }
        size_t len;
        char *text = tw__json_value_text(value, &len);
        if (!text) {
            rc->is_nomem = true;
            return;
        }
        if (!json_is_string(value))
            tw__wire_warn(rc->in, rc->line_no, "tags.%.60s: not a string, stringified", key);
        bool ok = tw__span_data_add_str_tag(s, key, text, len);
        free(text);
        if (!ok) {
            rc->is_nomem = true;
            return;
        }
    }
}

/* An id member: text, or a reason. */
static bool id_text(const json_t *obj, const char *key, const char **text, size_t *len)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return false;
    *text = json_string_value(v);
    *len = json_string_length(v);
    return true;
}

/* Decodes one span object. Returns the record (with *process filled), or
 * NULL with @why set (rc->is_nomem on allocation failure). */
static tw__span_data *decode_span(record_ctx *rc, const json_t *obj, tw__process *process,
                                  char *why, size_t why_size)
{
    char reason[160];
    const char *text;
    size_t len;
    uint64_t hi, lo, id, parent = 0;
    if (!json_is_object(obj)) {
        snprintf(why, why_size, "not a JSON object");
        return NULL;
    }
    if (!id_text(obj, "traceId", &text, &len)) {
        snprintf(why, why_size, "traceId: missing or not a string");
        return NULL;
    }
    if (!tw__parse_trace_id(text, len, rc->base, &hi, &lo, reason, sizeof reason)) {
        snprintf(why, why_size, "traceId: %s", reason);
        return NULL;
    }
    if (!id_text(obj, "id", &text, &len)) {
        snprintf(why, why_size, "id: missing or not a string");
        return NULL;
    }
    if (!tw__parse_span_id(text, len, rc->base, false, &id, reason, sizeof reason)) {
        snprintf(why, why_size, "id: %s", reason);
        return NULL;
    }
    const json_t *pv = json_object_get(obj, "parentId");
    if (pv && !json_is_null(pv)) {
        if (!json_is_string(pv)) {
            snprintf(why, why_size, "parentId: not a string");
            return NULL;
        }
        if (!tw__parse_span_id(json_string_value(pv), json_string_length(pv), rc->base, true,
                               &parent, reason, sizeof reason)) {
            snprintf(why, why_size, "parentId: %s", reason);
            return NULL;
        }
        if (parent == id)
            parent = 0; /* Zipkin drops a "circular" parent */
    }
    const json_t *name = json_object_get(obj, "name");
    if (name && !json_is_null(name) && !json_is_string(name)) {
        snprintf(why, why_size, "name: not a string");
        return NULL;
    }

    tw__span_data *s = tw__span_data_new();
    if (!s) {
        rc->is_nomem = true;
        return NULL;
    }
    s->trace_id_high = hi;
    s->trace_id_low = lo;
    s->span_id = id;
    s->parent_id = parent;
    s->flags = TW__FLAG_SAMPLED;
    if (!tw__span_data_set_operation(s, json_is_string(name) ? json_string_value(name) : "",
                                     json_is_string(name) ? json_string_length(name) : 0))
        goto nomem;

    const json_t *debug = json_object_get(obj, "debug");
    if (json_is_true(debug))
        s->flags |= TW__FLAG_DEBUG;
    else if (debug && !json_is_boolean(debug) && !json_is_null(debug))
        tw__wire_warn(rc->in, rc->line_no, "debug: not a boolean, ignored");

    int kind = read_kind(rc, json_object_get(obj, "kind"), s);
    const json_t *shared = json_object_get(obj, "shared");
    if (json_is_true(shared))
        s->shared = kind != 0; /* Zipkin clears it on a CLIENT span */
    else if (shared && !json_is_boolean(shared) && !json_is_null(shared))
        tw__wire_warn(rc->in, rc->line_no, "shared: not a boolean, ignored");

    endpoint local, remote;
    read_endpoint(rc, json_object_get(obj, "localEndpoint"), "localEndpoint", &local);
    read_endpoint(rc, json_object_get(obj, "remoteEndpoint"), "remoteEndpoint", &remote);
    if (rc->is_nomem || !set_local(&local, process) || !set_remote(&remote, s))
        goto nomem;
    read_tags(rc, json_object_get(obj, "tags"), s);
    read_annotations(rc, json_object_get(obj, "annotations"), s);
    if (rc->is_nomem)
        goto nomem;

    const json_t *ts = json_object_get(obj, "timestamp");
    int64_t us = 0;
    if (ts && !json_is_null(ts) && read_time(rc, ts, "timestamp", &us) && us > 0)
        s->start_us = us;
    if (s->start_us <= 0) {
        /* Zipkin: 0 or negative is absent; the earliest annotation gives it. */
        s->start_us = 0;
        for (size_t i = 0; i < s->n_logs; i++) {
            int64_t t = s->logs[i].timestamp_us;
            if (t > 0 && (s->start_us == 0 || t < s->start_us))
                s->start_us = t;
        }
    }
    const json_t *dur = json_object_get(obj, "duration");
    s->is_duration_unknown = true;
    if (dur && !json_is_null(dur) && read_time(rc, dur, "duration", &us)) {
        if (us > 0) {
            s->duration_us = us;
            s->is_duration_unknown = false;
        } else if (us < 0) {
            tw__wire_warn(rc->in, rc->line_no, "duration: negative (%lld), taken as absent",
                          (long long)us);
        }
    }
    return s;

nomem:
    rc->is_nomem = true;
    tw__span_data_unref(s);
    return NULL;
}

bool tw__zipkin_v2_emit_object(tw__wire_input *in, size_t line_no, const json_t *obj,
                               const void *raw, size_t raw_len, bool *is_nomem)
{
    record_ctx rc = {.in = in, .line_no = line_no, .unit = TW__TIME_US, .base = TW__ID_HEX};
    char why[256];
    tw__process process;
    tw__process_init(&process);
    tw__span_data *span = decode_span(&rc, obj, &process, why, sizeof why);
    *is_nomem = rc.is_nomem;
    bool go_on = true;
    if (!rc.is_nomem)
        go_on = span ? tw__wire_emit(in, line_no, span, &process, raw, raw_len)
                     : in->reject(in, line_no, raw, raw_len, why);
    tw__process_clear(&process);
    return go_on;
}

/* One record (tw__json_record_fn): a span emitted, or the record rejected. */
static tw_status read_record(void *arg, json_t *obj, const char *rec, size_t len, size_t line_no,
                             const json_error_t *parse_error, tw_error **err)
{
    record_ctx *rc = arg;
    tw__wire_input *in = rc->in;
    rc->line_no = line_no;
    char why[256];
    tw__span_data *span = NULL;
    tw__process process;
    tw__process_init(&process);
    if (!obj)
        snprintf(why, sizeof why, "not valid JSON: %s", parse_error->text);
    else
        span = decode_span(rc, obj, &process, why, sizeof why);
    if (rc->is_nomem) {
        tw__process_clear(&process);
        tw__set_error(err, TW_E_NOMEM, "%s:%zu: out of memory", in->name, line_no);
        return TW_E_NOMEM;
    }
    bool go_on = span ? tw__wire_emit(in, line_no, span, &process, rec, len)
                      : in->reject(in, line_no, rec, len, why);
    tw__process_clear(&process);
    return go_on ? TW_OK : TW_E_STATE;
}

static tw_status read_zipkin_v2(FILE *stream, tw__wire_input *in, tw_error **err)
{
    record_ctx rc = {.in = in, .unit = TW__TIME_US, .base = TW__ID_HEX};
    if (in->opts && in->opts->time_unit != TW__TIME_AUTO)
        rc.unit = in->opts->time_unit;
    if (in->opts && in->opts->id_base != TW__ID_AUTO)
        rc.base = in->opts->id_base;
    return tw__json_read_records(stream, in, MAX_RECORD_BYTES, JSON_ALLOW_NUL, read_record, &rc,
                                 err);
}

/* ---- detection ----------------------------------------------------------------------------- */

/* Whether @head holds "@key" followed (after blanks) by ':' and then @next
 * (0: anything). */
static bool has_member(const uint8_t *head, size_t len, const char *key, char next)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i + klen <= len; i++) {
        if (memcmp(head + i, key, klen) != 0)
            continue;
        size_t j = i + klen;
        while (j < len && (head[j] == ' ' || head[j] == '\t' || head[j] == '\r' || head[j] == '\n'))
            j++;
        if (j >= len || head[j] != ':')
            continue;
        if (!next)
            return true;
        j++;
        while (j < len && (head[j] == ' ' || head[j] == '\t' || head[j] == '\r' || head[j] == '\n'))
            j++;
        if (j < len && head[j] == next)
            return true;
    }
    return false;
}

static int sniff_zipkin_v2(const uint8_t *head, size_t len)
{
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i >= len || (head[i] != '[' && head[i] != '{'))
        return 0;
    /* Zipkin v1, Jaeger JSON and the Dapper log share some member names
     * (kind, tags, annotations): their own members rule them out. */
    if (has_member(head, len, "\"binaryAnnotations\"", 0) ||
        has_member(head, len, "\"endpoint\"", 0) || has_member(head, len, "\"spanID\"", 0) ||
        has_member(head, len, "\"traceID\"", 0) || has_member(head, len, "\"start_us\"", 0) ||
        has_member(head, len, "\"trace_id\"", 0))
        return 0;
    if (has_member(head, len, "\"localEndpoint\"", 0) ||
        has_member(head, len, "\"remoteEndpoint\"", 0) || has_member(head, len, "\"kind\"", 0) ||
        has_member(head, len, "\"shared\"", 0))
        return 90;
    if (has_member(head, len, "\"tags\"", '{'))
        return 80;
    if (has_member(head, len, "\"traceId\"", 0) && has_member(head, len, "\"id\"", 0))
        return 30; /* v1 or v2: a bare span carries no mark of its version */
    return 0;
}

const tw__wire_decoder tw__zipkin_v2_json_decoder = {
    .name = "zipkin-v2-json",
    .summary = "Zipkin v2 JSON spans (/api/v2/spans body; array, array of arrays, object or "
               "NDJSON)",
    .read = read_zipkin_v2,
    .sniff = sniff_zipkin_v2,
};
