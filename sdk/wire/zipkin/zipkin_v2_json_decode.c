/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_decode.c: `--from zipkin-v2-json`, Zipkin's v2 span
 * JSON (the /api/v2/spans body; zipkin2-api.yaml definition
 * Span). First stage of the convert flow (bridge/convert.h): records
 * come from the JSON splitter (json_stream.c: an array, an array of arrays,
 * one object, or NDJSON). A span object of the common shape is read
 * straight from the read buffer by the direct reader (zipkin_v2_json_direct.c)
 * and built by build_direct with decode_span's model calls; any other record
 * (or one the direct reader declines) is scanned into tokens
 * (wire/core/json_scan.h; Jansson only explains, repairs or normalizes a
 * record the scanner refuses) and read by decode_span. Either way it becomes
 * one span-model record plus its process (the localEndpoint), handed to
 * in->emit.
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
#include "wire/core/hex.h"
#include "wire/core/input.h"
#include "wire/core/json_common.h"
#include "wire/core/json_scan.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"
#include "wire/zipkin/zipkin_v2_json_int.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

/* Largest single span record: far above any real span (tags are capped by
 * tracers at a few KiB), small enough to bound memory. */
#define MAX_RECORD_BYTES ((size_t)16 * 1024 * 1024)

/* What the decoder made of the text a memo slot holds (its endpoint, as
 * direct_endpoint takes it, and the process it gives as a localEndpoint):
 * valid while the slot's gen is @gen. */
typedef struct {
    uint64_t gen; /* 0: nothing made */
    bool is_ok;   /* direct_endpoint took it: else the span goes the token way */
    char ipv4[INET6_ADDRSTRLEN], ipv6[INET6_ADDRSTRLEN];
    int64_t port;
    uint64_t process_gen;   /* process is this text's when it equals gen */
    uint64_t process_stamp; /* its tw__wire_input process_stamp (tw__wire_new_stamp) */
    tw__process process;
} slot_made;

/* The direct reader's endpoint memo and what was made of each slot: a span
 * whose endpoint text is a slot's then costs a comparison, not a read, an
 * address parse and a process; and the bridge, handed the same process
 * address and stamp (tw__wire_input's process_stamp) for the same endpoint,
 * takes its copy without comparing (bridge/procs.c). Memory: fixed (one
 * process per slot, its arena reused). */
typedef struct {
    tw__z2d_memo memo;
    slot_made made[TW__Z2D_MEMO_SLOTS];
} endpoint_memo;

/* Per-record state: where messages point and what the input can do. */
typedef struct {
    tw__wire_input *in;
    tw__process process; /* reset per record: its arena block is reused */
    size_t line_no;
    tw__time_unit unit; /* the unit of timestamps and durations */
    tw__id_base base;
    bool is_nomem;
    tw__span_data *direct_span;        /* the span read_direct took, for read_record */
    const tw__process *direct_process; /* and its process (`process` or a memo slot's) */
    uint64_t direct_stamp;             /* a memo slot's process: its stamp; else 0 */
    endpoint_memo *em;                 /* NULL: none (allocation failed) */
    tw__z2d_span direct;               /* what read_direct read (large: kept off its stack) */
    /* The localEndpoint text that `process` holds, when a direct span set
     * it and nothing has changed it since: a batch of spans usually comes
     * from one service, and the same text gives the same process. */
    bool is_local_kept;
    size_t local_len;
    char local_text[256];
} record_ctx;

/* ---- tokens -------------------------------------------------------------------------------- */

/* The token at @i of @s, NULL for 0 (absent: token 0 is never a member). */
static inline const tw__jtok *tok(const tw__json_scan *s, size_t i)
{
    return i ? &s->tok[i] : NULL;
}

static inline bool is_type(const tw__jtok *t, tw__jtype type)
{
    return t && t->type == type;
}

#define IS_NULL(t) is_type((t), TW__J_NULL)
#define IS_STRING(t) is_type((t), TW__J_STRING)
#define IS_OBJECT(t) is_type((t), TW__J_OBJECT)
#define IS_ARRAY(t) is_type((t), TW__J_ARRAY)
#define IS_INTEGER(t) is_type((t), TW__J_INTEGER)
#define IS_REAL(t) is_type((t), TW__J_REAL)
#define IS_TRUE(t) is_type((t), TW__J_TRUE)
#define IS_BOOLEAN(t) (is_type((t), TW__J_TRUE) || is_type((t), TW__J_FALSE))

/* The value at token @i as a Jansson value (for the rare value that is
 * stringified as compact JSON, with Jansson's number and escape rules).
 * New reference; NULL on allocation failure. */
static json_t *tok_json(const tw__json_scan *s, size_t i)
{
    const tw__jtok *t = &s->tok[i];
    switch ((tw__jtype)t->type) {
    case TW__J_STRING:
        return json_stringn_nocheck(t->v.str, t->len);
    case TW__J_INTEGER:
        return json_integer(t->v.i);
    case TW__J_REAL:
        return json_real(t->v.d);
    case TW__J_TRUE:
        return json_true();
    case TW__J_FALSE:
        return json_false();
    case TW__J_NULL:
        return json_null();
    case TW__J_ARRAY: {
        json_t *a = json_array();
        for (size_t j = i + 1; a && j < t->end; j = s->tok[j].end) {
            if (!tw__json_push(a, tok_json(s, j))) {
                json_decref(a);
                a = NULL;
            }
        }
        return a;
    }
    case TW__J_OBJECT: {
        json_t *o = json_object();
        for (size_t j = i + 1; o && j < t->end; j = s->tok[j + 1].end) {
            if (!tw__json_put(o, s->tok[j].v.str, tok_json(s, j + 1))) {
                json_decref(o);
                o = NULL;
            }
        }
        return o;
    }
    }
    return NULL;
}

/* The text of the value at token @i: a string as it is (borrowed, *to_free
 * NULL), anything else as compact JSON (malloc'd into *to_free). NULL on
 * allocation failure. */
static const char *value_text(const tw__json_scan *s, size_t i, size_t *len, char **to_free)
{
    const tw__jtok *t = &s->tok[i];
    *to_free = NULL;
    if (t->type == TW__J_STRING) {
        *len = t->len;
        return t->v.str;
    }
    json_t *v = tok_json(s, i);
    if (!v)
        return NULL;
    *to_free = tw__json_value_text(v, len);
    json_decref(v);
    return *to_free;
}

/* The name of a field for a message: the span's member @name, or when
 * @index >= 0 the member @name of annotations[@index]. */
static const char *field_name(char *buf, size_t size, const char *name, long index)
{
    if (index < 0)
        return name;
    snprintf(buf, size, "annotations[%ld].%s", index, name);
    return buf;
}

/* A time or duration field in µs. False (with a warning naming the field:
 * field_name(@name, @index), made only for a warning) when it is not a
 * number, or out of range. */
static bool read_time(record_ctx *rc, const tw__jtok *v, const char *name, long index, int64_t *us)
{
    char buf[64];
    if (IS_INTEGER(v)) {
        if (tw__time_int_to_us(v->v.i, rc->unit, us))
            return true;
    } else if (IS_REAL(v)) {
        double d = v->v.d;
        if (tw__time_to_us(d, rc->unit, us)) {
            if (rc->unit == TW__TIME_US && d != floor(d))
                tw__wire_warn(rc->in, rc->line_no, "%s: fractional value %.17g rounded to %lld",
                              field_name(buf, sizeof buf, name, index), d, (long long)*us);
            return true;
        }
    } else if (IS_STRING(v) && v->len > 0 && v->len <= 19 &&
               strspn(v->v.str, "0123456789") == v->len) {
        /* Some emitters quote their numbers; the value is still clear. */
        long long n = strtoll(v->v.str, NULL, 10);
        if (tw__time_int_to_us(n, rc->unit, us)) {
            tw__wire_warn(rc->in, rc->line_no, "%s: a number given as a string",
                          field_name(buf, sizeof buf, name, index));
            return true;
        }
    }
    tw__wire_warn(rc->in, rc->line_no, "%s: not a usable number, ignored",
                  field_name(buf, sizeof buf, name, index));
    return false;
}

/* ---- ids ---------------------------------------------------------------------------------- */

/* A trace id by tw__parse_trace_id's rules: the common 16 or 32 hex digits
 * (not all zero) here, anything else there (with its reason). */
static bool read_trace_id(const record_ctx *rc, const tw__jtok *v, uint64_t *hi, uint64_t *lo,
                          char *why, size_t why_size)
{
    if (rc->base != TW__ID_DEC) { /* hex: a digit, never '-', comes first */
        if (v->len == 32 && tw__hex16(v->v.str, hi) && tw__hex16(v->v.str + 16, lo) && (*hi | *lo))
            return true;
        if (v->len == 16 && tw__hex16(v->v.str, lo) && *lo) {
            *hi = 0;
            return true;
        }
    }
    return tw__parse_trace_id(v->v.str, v->len, rc->base, hi, lo, why, why_size);
}

/* A span or parent id by tw__parse_span_id's rules, the same way. */
static bool read_span_id(const record_ctx *rc, const tw__jtok *v, bool allow_zero, uint64_t *id,
                         char *why, size_t why_size)
{
    if (rc->base != TW__ID_DEC && v->len == 16 && tw__hex16(v->v.str, id) && (*id || allow_zero))
        return true;
    return tw__parse_span_id(v->v.str, v->len, rc->base, allow_zero, id, why, why_size);
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
    if (tw__ipv4_is_canonical(text)) {
        *is_v4 = true;
        size_t len = strlen(text);
        memcpy(out, text, len + 1);
        return true;
    }
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
    bool service_has_nul;
    char ipv4[INET6_ADDRSTRLEN], ipv6[INET6_ADDRSTRLEN]; /* "" when absent */
    int64_t port;                                        /* 0 when absent */
} endpoint;

/* Reads an Endpoint object; bad members are dropped with a warning. */
static void read_endpoint(record_ctx *rc, const tw__json_scan *s, size_t at, const char *name,
                          endpoint *ep)
{
    static const tw__json_key keys[] = {TW__JKEY("serviceName"), TW__JKEY("ipv4"), TW__JKEY("ipv6"),
                                        TW__JKEY("port")};
    enum { K_SERVICE, K_IPV4, K_IPV6, K_PORT, N_KEYS };
    ep->service = NULL;
    ep->service_len = 0;
    ep->service_has_nul = false;
    ep->ipv4[0] = ep->ipv6[0] = '\0';
    ep->port = 0;
    const tw__jtok *obj = tok(s, at);
    if (!obj || IS_NULL(obj))
        return;
    if (!IS_OBJECT(obj)) {
        tw__wire_warn(rc->in, rc->line_no, "%s: not an object, ignored", name);
        return;
    }
    size_t m[N_KEYS];
    tw__json_scan_pick(s, at, keys, N_KEYS, m);
    const tw__jtok *service = tok(s, m[K_SERVICE]);
    if (IS_STRING(service) && service->len > 0) {
        ep->service = service->v.str;
        ep->service_len = service->len;
        ep->service_has_nul = service->has_nul;
    } else if (service && !IS_NULL(service) && !IS_STRING(service)) {
        tw__wire_warn(rc->in, rc->line_no, "%s.serviceName: not a string, ignored", name);
    }
    static const char *const addr_keys[2] = {"ipv4", "ipv6"};
    for (int k = 0; k < 2; k++) {
        const tw__jtok *a = tok(s, m[K_IPV4 + k]);
        if (!a || IS_NULL(a))
            continue;
        char text[INET6_ADDRSTRLEN];
        bool is_v4;
        if (!IS_STRING(a) || !parse_ip(a->v.str, text, &is_v4)) {
            tw__wire_warn(rc->in, rc->line_no, "%s.%s: not an IP address, ignored", name,
                          addr_keys[k]);
            continue;
        }
        memcpy(is_v4 ? ep->ipv4 : ep->ipv6, text, sizeof text);
    }
    const tw__jtok *port = tok(s, m[K_PORT]);
    if (IS_INTEGER(port)) {
        int64_t p = port->v.i;
        if (p > 65535)
            tw__wire_warn(rc->in, rc->line_no, "%s.port: %lld is over 65535, ignored", name,
                          (long long)p);
        else if (p > 0)
            ep->port = p;
        /* 0 or negative: "absent" in Zipkin's model, silently */
    } else if (port && !IS_NULL(port)) {
        tw__wire_warn(rc->in, rc->line_no, "%s.port: not an integer, ignored", name);
    }
}

static bool set_local(const endpoint *ep, tw__process *p)
{
    /* A service holding a NUL byte is cut there (service names are C strings). */
    if (ep->service &&
        !(ep->service_has_nul ? tw__process_set_service(p, ep->service)
                              : tw__process_set_service_n(p, ep->service, ep->service_len)))
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
    if (ep->service && !tw__span_data_add_str_tag_n(s, "peer.service", sizeof "peer.service" - 1,
                                                    ep->service, ep->service_len))
        return false;
    if (ep->ipv4[0] && !tw__span_data_add_str_tag_n(s, "peer.ipv4", sizeof "peer.ipv4" - 1,
                                                    ep->ipv4, strlen(ep->ipv4)))
        return false;
    if (ep->ipv6[0] && !tw__span_data_add_str_tag_n(s, "peer.ipv6", sizeof "peer.ipv6" - 1,
                                                    ep->ipv6, strlen(ep->ipv6)))
        return false;
    tw_value port = {.type = TW_VALUE_INT64, .as.i64 = ep->port};
    return !ep->port || tw__span_data_add_tag_n(s, "peer.port", sizeof "peer.port" - 1, &port);
}

/* ---- one span ------------------------------------------------------------------------------ */

static const char *const kinds[] = {"CLIENT", "SERVER", "PRODUCER", "CONSUMER"};
static const char *const kinds_lower[] = {"client", "server", "producer", "consumer"};

/* The span's kind: 0..3 for the Zipkin kinds, -1 for none, -2 for another
 * value (kept as a tag as given). */
static int read_kind(record_ctx *rc, const tw__jtok *kind, tw__span_data *s)
{
    if (!kind || IS_NULL(kind))
        return -1;
    if (!IS_STRING(kind)) {
        tw__wire_warn(rc->in, rc->line_no, "kind: not a string, ignored");
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        size_t len = strlen(kinds[k]); /* folded: the names are literals */
        if (kind->len == len && strcasecmp(kind->v.str, kinds[k]) == 0) {
            if (!tw__span_data_add_str_tag_n(s, "span.kind", sizeof "span.kind" - 1, kinds_lower[k],
                                             len))
                rc->is_nomem = true;
            return k;
        }
    }
    tw__wire_warn(rc->in, rc->line_no, "kind: unknown value \"%.40s\", kept as tag span.kind",
                  kind->v.str);
    if (!tw__span_data_add_str_tag_n(s, "span.kind", sizeof "span.kind" - 1, kind->v.str,
                                     kind->len))
        rc->is_nomem = true;
    return -2;
}

static void read_annotations(record_ctx *rc, const tw__json_scan *js, size_t at, tw__span_data *s)
{
    static const tw__json_key keys[] = {TW__JKEY("timestamp"), TW__JKEY("value")};
    const tw__jtok *list = tok(js, at);
    if (!list || IS_NULL(list))
        return;
    if (!IS_ARRAY(list)) {
        tw__wire_warn(rc->in, rc->line_no, "annotations: not an array, ignored");
        return;
    }
    size_t i = 0;
    for (size_t a = at + 1; a < list->end; a = js->tok[a].end, i++) {
        size_t m[2] = {0, 0};
        tw__json_scan_pick(js, a, keys, 2, m); /* all 0 when a is not an object */
        const tw__jtok *ts = tok(js, m[0]);
        const tw__jtok *value = tok(js, m[1]);
        if (!ts || !value || IS_NULL(value)) {
            tw__wire_warn(rc->in, rc->line_no,
                          "annotations[%zu]: needs a timestamp and a value, dropped", i);
            continue;
        }
        int64_t us;
        if (!read_time(rc, ts, "timestamp", (long)i, &us))
            continue;
        size_t len;
        char *to_free;
        const char *text = value_text(js, m[1], &len, &to_free);
        if (!text) {
            rc->is_nomem = true;
            return;
        }
        if (!IS_STRING(value))
            tw__wire_warn(rc->in, rc->line_no, "annotations[%zu].value: not a string, stringified",
                          i);
        bool ok = tw__span_data_add_event(s, us, text, len);
        free(to_free);
        if (!ok) {
            rc->is_nomem = true;
            return;
        }
    }
}

static void read_tags(record_ctx *rc, const tw__json_scan *js, size_t at, tw__span_data *s)
{
    const tw__jtok *tags = tok(js, at);
    if (!tags || IS_NULL(tags))
        return;
    if (!IS_OBJECT(tags)) {
        tw__wire_warn(rc->in, rc->line_no, "tags: not an object, ignored");
        return;
    }
    for (size_t k = at + 1; k < tags->end; k = js->tok[k + 1].end) {
        const char *key = js->tok[k].v.str;
        const tw__jtok *value = &js->tok[k + 1];
        /* A key holds no NUL (the scanner refuses one): its length is the
         * token's. A string value, the usual tag, is added straight. */
        if (value->type == TW__J_STRING) {
            if (!tw__span_data_add_str_tag_n(s, key, js->tok[k].len, value->v.str, value->len)) {
                rc->is_nomem = true;
                return;
            }
            continue;
        }
        if (IS_NULL(value)) {
            tw__wire_warn(rc->in, rc->line_no, "tags.%.60s: null value, dropped", key);
            continue;
        }
        size_t len;
        char *to_free;
        const char *text = value_text(js, k + 1, &len, &to_free);
        if (!text) {
            rc->is_nomem = true;
            return;
        }
        tw__wire_warn(rc->in, rc->line_no, "tags.%.60s: not a string, stringified", key);
        bool ok = tw__span_data_add_str_tag_n(s, key, js->tok[k].len, text, len);
        free(to_free);
        if (!ok) {
            rc->is_nomem = true;
            return;
        }
    }
}

/* The members of a span object, in the order Zipkin writes them (the
 * order tw__json_scan_pick tries first). */
static const tw__json_key span_keys[] = {
    TW__JKEY("traceId"),       TW__JKEY("parentId"),       TW__JKEY("id"),
    TW__JKEY("kind"),          TW__JKEY("name"),           TW__JKEY("timestamp"),
    TW__JKEY("duration"),      TW__JKEY("debug"),          TW__JKEY("shared"),
    TW__JKEY("localEndpoint"), TW__JKEY("remoteEndpoint"), TW__JKEY("annotations"),
    TW__JKEY("tags")};
enum {
    M_TRACE_ID,
    M_PARENT_ID,
    M_ID,
    M_KIND,
    M_NAME,
    M_TIMESTAMP,
    M_DURATION,
    M_DEBUG,
    M_SHARED,
    M_LOCAL,
    M_REMOTE,
    M_ANNOTATIONS,
    M_TAGS,
    N_SPAN_KEYS
};

/* Decodes the span object at token 0 of @js. Returns the record (with
 * *process filled), or NULL with @why set (rc->is_nomem on allocation
 * failure). */
static tw__span_data *decode_span(record_ctx *rc, const tw__json_scan *js, tw__process *process,
                                  char *why, size_t why_size)
{
    char reason[160];
    uint64_t hi, lo, id, parent = 0;
    size_t m[N_SPAN_KEYS];
    if (!tw__json_scan_pick(js, 0, span_keys, N_SPAN_KEYS, m)) {
        snprintf(why, why_size, "not a JSON object");
        return NULL;
    }
    const tw__jtok *v = tok(js, m[M_TRACE_ID]);
    if (!IS_STRING(v)) {
        snprintf(why, why_size, "traceId: missing or not a string");
        return NULL;
    }
    if (!read_trace_id(rc, v, &hi, &lo, reason, sizeof reason)) {
        snprintf(why, why_size, "traceId: %s", reason);
        return NULL;
    }
    v = tok(js, m[M_ID]);
    if (!IS_STRING(v)) {
        snprintf(why, why_size, "id: missing or not a string");
        return NULL;
    }
    if (!read_span_id(rc, v, false, &id, reason, sizeof reason)) {
        snprintf(why, why_size, "id: %s", reason);
        return NULL;
    }
    const tw__jtok *pv = tok(js, m[M_PARENT_ID]);
    if (pv && !IS_NULL(pv)) {
        if (!IS_STRING(pv)) {
            snprintf(why, why_size, "parentId: not a string");
            return NULL;
        }
        if (!read_span_id(rc, pv, true, &parent, reason, sizeof reason)) {
            snprintf(why, why_size, "parentId: %s", reason);
            return NULL;
        }
        if (parent == id)
            parent = 0; /* Zipkin drops a "circular" parent */
    }
    const tw__jtok *name = tok(js, m[M_NAME]);
    if (name && !IS_NULL(name) && !IS_STRING(name)) {
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
    if (!tw__span_data_set_operation(s, IS_STRING(name) ? name->v.str : "",
                                     IS_STRING(name) ? name->len : 0))
        goto nomem;

    const tw__jtok *debug = tok(js, m[M_DEBUG]);
    if (IS_TRUE(debug))
        s->flags |= TW__FLAG_DEBUG;
    else if (debug && !IS_BOOLEAN(debug) && !IS_NULL(debug))
        tw__wire_warn(rc->in, rc->line_no, "debug: not a boolean, ignored");

    int kind = read_kind(rc, tok(js, m[M_KIND]), s);
    const tw__jtok *shared = tok(js, m[M_SHARED]);
    if (IS_TRUE(shared))
        s->shared = kind != 0; /* Zipkin clears it on a CLIENT span */
    else if (shared && !IS_BOOLEAN(shared) && !IS_NULL(shared))
        tw__wire_warn(rc->in, rc->line_no, "shared: not a boolean, ignored");

    endpoint local, remote;
    read_endpoint(rc, js, m[M_LOCAL], "localEndpoint", &local);
    read_endpoint(rc, js, m[M_REMOTE], "remoteEndpoint", &remote);
    /* The tags still to come, room made at once: the remote endpoint's and
     * the tags object's members (the array is not grown on the way). */
    const tw__jtok *tags = tok(js, m[M_TAGS]);
    size_t n_more = (remote.service != NULL) + (remote.ipv4[0] != '\0') + (remote.ipv6[0] != '\0') +
                    (remote.port != 0) + (IS_OBJECT(tags) ? tags->n : 0);
    if (rc->is_nomem || !set_local(&local, process) || !tw__span_data_reserve_tags(s, n_more) ||
        !set_remote(&remote, s))
        goto nomem;
    read_tags(rc, js, m[M_TAGS], s);
    read_annotations(rc, js, m[M_ANNOTATIONS], s);
    if (rc->is_nomem)
        goto nomem;

    const tw__jtok *ts = tok(js, m[M_TIMESTAMP]);
    int64_t us = 0;
    if (ts && !IS_NULL(ts) && read_time(rc, ts, "timestamp", -1, &us) && us > 0)
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
    const tw__jtok *dur = tok(js, m[M_DURATION]);
    s->is_duration_unknown = true;
    if (dur && !IS_NULL(dur) && read_time(rc, dur, "duration", -1, &us)) {
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
    tw__json_scan *js = malloc(sizeof *js);
    if (!js) {
        *is_nomem = true;
        return true;
    }
    tw__json_scan_init(js);
    tw__span_data *span = NULL;
    if (!json_is_object(obj))
        snprintf(why, sizeof why, "not a JSON object");
    else if (!tw__json_scan_value(js, obj))
        snprintf(why, sizeof why, "nested too deep, or too large to read");
    else
        span = decode_span(&rc, js, &process, why, sizeof why);
    tw__json_scan_free(js);
    free(js);
    *is_nomem = rc.is_nomem;
    bool go_on = true;
    if (!rc.is_nomem)
        go_on = span ? tw__wire_emit(in, line_no, span, &process, raw, raw_len)
                     : in->reject(in, line_no, raw, raw_len, why);
    tw__process_clear(&process);
    return go_on;
}

/* ---- the direct reader's spans ------------------------------------------------------------ */

/* An endpoint the direct reader took, as read_endpoint would read it; false
 * where read_endpoint would warn (an address that is none, a port over
 * 65535), so that the record goes the token path. */
static bool direct_endpoint(const tw__z2d_endpoint *in, endpoint *ep)
{
    ep->service = in->service.len ? in->service.s : NULL; /* "" is absent */
    ep->service_len = in->service.len;
    ep->service_has_nul = false; /* the direct reader declines U+0000 */
    ep->ipv4[0] = ep->ipv6[0] = '\0';
    ep->port = 0;
    const tw__z2d_str *addrs[2] = {&in->ipv4, &in->ipv6};
    for (int k = 0; k < 2; k++) {
        if (!addrs[k]->s)
            continue;
        char text[INET6_ADDRSTRLEN], addr[INET6_ADDRSTRLEN];
        bool is_v4;
        if (addrs[k]->len >= sizeof addr)
            return false; /* no address is that long */
        memcpy(addr, addrs[k]->s, addrs[k]->len);
        addr[addrs[k]->len] = '\0';
        if (!parse_ip(addr, text, &is_v4))
            return false;
        memcpy(is_v4 ? ep->ipv4 : ep->ipv6, text, sizeof text);
    }
    if (in->has_port) {
        if (in->port > 65535)
            return false;
        if (in->port > 0)
            ep->port = in->port;
    }
    return true;
}

/* What was made of memo slot @slot's text of @gen (@in, as the reader took
 * it): made now when it was made of another text. */
static slot_made *slot_endpoint(record_ctx *rc, int slot, uint64_t gen, const tw__z2d_endpoint *in)
{
    slot_made *m = &rc->em->made[slot];
    if (m->gen != gen) {
        endpoint ep;
        m->is_ok = direct_endpoint(in, &ep);
        if (m->is_ok) {
            memcpy(m->ipv4, ep.ipv4, sizeof m->ipv4);
            memcpy(m->ipv6, ep.ipv6, sizeof m->ipv6);
            m->port = ep.port;
        }
        m->gen = gen;
        m->process_gen = 0;
    }
    return m;
}

/* The endpoint of @m (is_ok), with the service the reader took (@in). */
static void made_endpoint(const slot_made *m, const tw__z2d_endpoint *in, endpoint *ep)
{
    ep->service = in->service.len ? in->service.s : NULL; /* "" is absent */
    ep->service_len = in->service.len;
    ep->service_has_nul = false;
    memcpy(ep->ipv4, m->ipv4, sizeof ep->ipv4);
    memcpy(ep->ipv6, m->ipv6, sizeof ep->ipv6);
    ep->port = m->port;
}

/* The kind the direct reader took, as read_kind reads it: 0..3, -1 for
 * none; -2 (an unknown one: read_kind warns) declines. */
static int direct_kind(const tw__z2d_str *kind)
{
    if (!kind->s)
        return -1;
    /* The names are 6 or 8 letters: the bytes given, each with its 0x20 bit
     * set (which makes a letter lower case and no other byte a letter),
     * against the lower-case names, as one word (strncasecmp cost about 80
     * instructions a span). */
    static const uint64_t lower = UINT64_C(0x2020202020202020);
    uint64_t w = 0, name;
    if (kind->len == 6) {
        memcpy(&w, kind->s, 6);
        w |= lower >> 16;
        for (int k = 0; k < 2; k++) {
            name = 0;
            memcpy(&name, kinds_lower[k], 6);
            if (w == name)
                return k;
        }
    } else if (kind->len == 8) {
        memcpy(&w, kind->s, 8);
        w |= lower;
        for (int k = 2; k < 4; k++) {
            memcpy(&name, kinds_lower[k], 8);
            if (w == name)
                return k;
        }
    }
    return -2;
}

/* A span the direct reader took, built with decode_span's model calls in
 * its order, with its values. NULL (nothing kept; rc->is_nomem untouched:
 * the token path meets the same lack of memory and reports it) when the
 * span is not one decode_span reads without a warning or a reject: the
 * record then goes that way. */
static tw__span_data *build_direct(record_ctx *rc, const tw__z2d_span *d, tw__process *process)
{
    uint64_t hi, lo, id, parent = 0;
    rc->direct_stamp = 0;
    /* The ids: decode_span's fast forms only (the others give reasons). */
    if (d->trace_id.len == 32) {
        if (!tw__jd_hex16(d->trace_id.s, &hi) || !tw__jd_hex16(d->trace_id.s + 16, &lo) ||
            !(hi | lo))
            return NULL;
    } else if (d->trace_id.len == 16) {
        hi = 0;
        if (!tw__jd_hex16(d->trace_id.s, &lo) || !lo)
            return NULL;
    } else {
        return NULL;
    }
    if (d->id.len != 16 || !tw__jd_hex16(d->id.s, &id) || !id)
        return NULL;
    if (d->parent_id.s) {
        if (d->parent_id.len != 16 || !tw__jd_hex16(d->parent_id.s, &parent))
            return NULL;
        if (parent == id)
            parent = 0; /* Zipkin drops a "circular" parent */
    }
    int kind = direct_kind(&d->kind);
    if (kind == -2)
        return NULL;
    endpoint local, remote;
    /* The endpoints: by their memo slots when they have them, where a text
     * read before has its endpoint and process made already. */
    slot_made *local_made = NULL;
    bool is_same_local = false;
    if (rc->em && d->local_slot >= 0) {
        local_made = slot_endpoint(rc, d->local_slot, d->local_gen, &d->local);
        if (!local_made->is_ok)
            return NULL;
        if (local_made->process_gen != local_made->gen)
            made_endpoint(local_made, &d->local, &local);
    } else {
        is_same_local =
            rc->is_local_kept && d->local_text.len == rc->local_len &&
            (rc->local_len == 0 || memcmp(d->local_text.s, rc->local_text, rc->local_len) == 0);
        if (!is_same_local && !direct_endpoint(&d->local, &local))
            return NULL;
    }
    /* The remote text took the slot of the local one: what the slot makes
     * stays the local one's (its process is in use). */
    if (rc->em && d->remote_slot >= 0 &&
        (d->remote_slot != d->local_slot || d->remote_gen == d->local_gen)) {
        const slot_made *m = slot_endpoint(rc, d->remote_slot, d->remote_gen, &d->remote);
        if (!m->is_ok)
            return NULL;
        made_endpoint(m, &d->remote, &remote);
    } else if (!d->has_remote) {
        remote.service = NULL; /* as direct_endpoint takes an absent one */
        remote.service_len = 0;
        remote.service_has_nul = false;
        remote.ipv4[0] = remote.ipv6[0] = '\0';
        remote.port = 0;
    } else if (!direct_endpoint(&d->remote, &remote)) {
        return NULL;
    }
    /* The times: integers only (the direct reader takes no other). */
    int64_t start = 0, duration = 0;
    if (d->has_timestamp && !tw__time_int_to_us(d->timestamp, rc->unit, &start))
        return NULL;
    if (d->has_duration && (!tw__time_int_to_us(d->duration, rc->unit, &duration) || duration < 0))
        return NULL;
    int64_t event_us[TW__Z2D_MAX_ANNOTATIONS];
    for (size_t i = 0; i < d->n_annotations; i++) {
        if (!tw__time_int_to_us(d->annotations[i].timestamp, rc->unit, &event_us[i]))
            return NULL;
    }

    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_high = hi;
    s->trace_id_low = lo;
    s->span_id = id;
    s->parent_id = parent;
    s->flags = TW__FLAG_SAMPLED;
    if (!tw__span_data_set_operation(s, d->name.s ? d->name.s : "", d->name.s ? d->name.len : 0))
        goto fail;
    if (d->debug)
        s->flags |= TW__FLAG_DEBUG;
    if (kind >= 0 && !tw__span_data_add_str_tag_n(s, "span.kind", sizeof "span.kind" - 1,
                                                  kinds_lower[kind], kind < 2 ? 6 : 8))
        goto fail;
    if (d->shared)
        s->shared = kind != 0; /* Zipkin clears it on a CLIENT span */
    size_t n_more = (remote.service != NULL) + (remote.ipv4[0] != '\0') + (remote.ipv6[0] != '\0') +
                    (remote.port != 0) + d->n_tags;
    if (local_made) {
        if (local_made->process_gen != local_made->gen) {
            tw__process_reset(&local_made->process);
            if (!set_local(&local, &local_made->process))
                goto fail; /* made again next time */
            local_made->process_gen = local_made->gen;
            /* New content at this address: a stamp the bridge has not seen. */
            local_made->process_stamp = tw__wire_new_stamp();
        }
        rc->direct_process = &local_made->process;
        rc->direct_stamp = local_made->process_stamp;
    } else if (!is_same_local) {
        rc->direct_process = process;
        tw__process_reset(process);
        rc->is_local_kept = false;
        if (!set_local(&local, process))
            goto fail;
        if (d->local_text.len <= sizeof rc->local_text) {
            if (d->local_text.len) /* absent: no text */
                memcpy(rc->local_text, d->local_text.s, d->local_text.len);
            rc->local_len = d->local_text.len;
            rc->is_local_kept = true;
        }
    } else {
        rc->direct_process = process;
    }
    if (!tw__span_data_reserve_tags(s, n_more) || !set_remote(&remote, s))
        goto fail;
    for (size_t i = 0; i < d->n_tags; i++) {
        const tw__z2d_pair *t = &d->tags[i];
        if (!tw__span_data_add_str_tag_n(s, t->key.s, t->key.len, t->value.s, t->value.len))
            goto fail;
    }
    for (size_t i = 0; i < d->n_annotations; i++) {
        const tw__z2d_annotation *a = &d->annotations[i];
        if (!tw__span_data_add_event(s, event_us[i], a->value.s, a->value.len))
            goto fail;
    }
    if (start > 0) {
        s->start_us = start;
    } else {
        /* Zipkin: 0 or negative is absent; the earliest annotation gives it. */
        for (size_t i = 0; i < s->n_logs; i++) {
            int64_t t = s->logs[i].timestamp_us;
            if (t > 0 && (s->start_us == 0 || t < s->start_us))
                s->start_us = t;
        }
    }
    s->is_duration_unknown = duration <= 0;
    if (duration > 0)
        s->duration_us = duration;
    return s;

fail:
    tw__span_data_unref(s);
    return NULL;
}

/* The direct reader (tw__json_direct_fn): the span object at @text read
 * straight, and built, or declined with nothing kept. */
static bool read_direct(void *arg, const char *text, size_t len, size_t *used)
{
    record_ctx *rc = arg;
    /* Escaped strings only: a span whose escaped strings need more is read
     * the token way. */
    char scratch[4096];
    tw__jd_scratch sc = {scratch, 0, sizeof scratch};
    if (!tw__zipkin_v2_direct_parse(text, len, &sc, rc->em ? &rc->em->memo : NULL, &rc->direct,
                                    used))
        return false;
    rc->direct_span = build_direct(rc, &rc->direct, &rc->process);
    return rc->direct_span != NULL;
}

/* One record (tw__json_scan_record_fn): a span emitted, or the record rejected. */
static tw_status read_record(void *arg, const tw__json_scan *js, const char *rec, size_t len,
                             size_t line_no, const char *parse_error, tw_error **err)
{
    record_ctx *rc = arg;
    tw__wire_input *in = rc->in;
    rc->line_no = line_no;
    char why[256];
    tw__span_data *span = NULL;
    /* The emit copies what it keeps of the process (the bridge interns it). */
    if (!js && !parse_error) {
        /* Taken and built by read_direct. */
        span = rc->direct_span;
        rc->direct_span = NULL;
        /* A memo slot's process keeps its content while its stamp lasts. */
        in->process_stamp = rc->direct_stamp;
        bool go_on = tw__wire_emit(in, line_no, span, rc->direct_process, rec, len);
        in->process_stamp = 0;
        return go_on ? TW_OK : TW_E_STATE;
    }
    tw__process_reset(&rc->process);
    rc->is_local_kept = false;
    if (!js)
        snprintf(why, sizeof why, "not valid JSON: %s", parse_error);
    else
        span = decode_span(rc, js, &rc->process, why, sizeof why);
    if (rc->is_nomem) {
        tw__set_error(err, TW_E_NOMEM, "%s:%zu: out of memory", in->name, line_no);
        return TW_E_NOMEM;
    }
    bool go_on = span ? tw__wire_emit(in, line_no, span, &rc->process, rec, len)
                      : in->reject(in, line_no, rec, len, why);
    return go_on ? TW_OK : TW_E_STATE;
}

tw_status tw__zipkin_v2_json_read(FILE *stream, tw__wire_input *in, bool is_direct, tw_error **err)
{
    record_ctx rc = {.in = in, .unit = TW__TIME_US, .base = TW__ID_HEX};
    if (in->opts && in->opts->time_unit != TW__TIME_AUTO)
        rc.unit = in->opts->time_unit;
    if (in->opts && in->opts->id_base != TW__ID_AUTO)
        rc.base = in->opts->id_base;
    tw__process_init(&rc.process);
    /* The direct reader reads hex ids only. */
    bool use_direct = is_direct && rc.base != TW__ID_DEC;
    if (use_direct) {
        /* Without it (no memory) the direct reader reads every endpoint. */
        rc.em = calloc(1, sizeof *rc.em);
        for (size_t i = 0; rc.em && i < TW__Z2D_MEMO_SLOTS; i++)
            tw__process_init(&rc.em->made[i].process);
    }
    tw_status status = tw__json_scan_records(
        stream, in, MAX_RECORD_BYTES, use_direct ? read_direct : NULL, read_record, &rc, err);
    if (rc.em) {
        for (size_t i = 0; i < TW__Z2D_MEMO_SLOTS; i++)
            tw__process_clear(&rc.em->made[i].process);
        free(rc.em);
    }
    tw__process_clear(&rc.process);
    return status;
}

static tw_status read_zipkin_v2(FILE *stream, tw__wire_input *in, tw_error **err)
{
    return tw__zipkin_v2_json_read(stream, in, true, err);
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
