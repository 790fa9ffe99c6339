/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1.c: Zipkin v1 span -> span-model spans (the
 * V1 -> V2 conversion of Zipkin's V1SpanConverter, written from the
 * rules, for the zipkin-v1-json and zipkin-v1-thrift readers).
 *
 * Where it sits: reader (fills a tw__zipkin_v1_span) -> tw__zipkin_v1_emit
 * -> in->emit, once per host of the record. Owns nothing past the call; no
 * locks (single-threaded, like all of `tracewire convert`).
 *
 * The rules, in the order applied:
 *  1. One model span per distinct local service among annotation and binary
 *     annotation hosts (service names compared ASCII case-insensitively, ""
 *     equal to ""), all with the record's trace id, id, parent, name and
 *     debug. Data with no host goes to the first span; the first host seen
 *     fills a span whose local endpoint is still unknown. An endpoint with
 *     no field set (service "", no address, port 0) counts as unknown.
 *  2. A core annotation needs a 2-character value AND a host: cs/cr make
 *     the span CLIENT, sr/ss SERVER, ms PRODUCER, mr CONSUMER; ws/wr are
 *     held. Every other annotation becomes a log {event: value} on its
 *     host's span.
 *  3. No cs but cr at exactly span.timestamp + span.duration: cs is
 *     synthesized at span.timestamp (same for sr from ss).
 *  4. cs and sr: the client gets span.timestamp/duration when both are set,
 *     else cs and cr - cs; the server half gets shared = true, start sr and
 *     duration ss - sr. Same service on both sides (loopback): the server
 *     half is still its own span. No cr and no span.duration: the client
 *     has no duration (one-way).
 *  5. Only cs+cr or only sr+ss: span timestamp/duration when both set, else
 *     from the pair. Otherwise (incomplete RPC) the start annotation gives
 *     the timestamp, the end annotation stays as a log, and a set
 *     span.timestamp/duration goes to the first span.
 *  6. Server-only (sr, no cs): shared = true when span.timestamp is unset,
 *     or when ss exists and span.duration is unset.
 *  7. ms alone: PRODUCER, duration ws - ms when ws exists. mr alone:
 *     CONSUMER, from wr (duration mr - wr) when wr exists. ms and mr: a
 *     PRODUCER and a shared CONSUMER (its own span on loopback). No
 *     messaging: ws/wr become logs.
 *  8. ca/sa/ma binary annotations are addresses whatever their value (one
 *     without a host is ignored); `lc` stays tag `lc` (an empty
 *     lc adds no tag, but its host still picks the span); every other
 *     binary annotation is a tag on its host's span. No core annotations:
 *     ca+sa -> the ca host's span gets remote sa; sa alone -> remote of
 *     the first span, no kind; ca alone -> the first span becomes SERVER
 *     with remote ca. Otherwise ca is the server half's remote (its
 *     service name dropped when it equals the server's, and ignored when
 *     it equals the server's endpoint), sa the client half's, ma both the
 *     producer's and the consumer's.
 * Model mapping (bridge/convert.h): kind -> tag span.kind; remote endpoint
 * -> tags peer.service (when non-empty), peer.ipv4 (dotted text),
 * peer.ipv6 (canonical text), peer.port (int64, when non-zero); local
 * endpoint -> the process: service name (kept "" when unknown: writers
 * apply their target's default), tag `ip` (IPv4 text, else IPv6 text),
 * `ipv6` when both exist, `port` (int64) when non-zero. An IPv6 that is
 * IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d, a != 0) is
 * the IPv4 address. Binary annotation values: STRING as is; BOOL (1
 * byte), I16/I32/I64 (2/4/8 bytes, big-endian, signed) and DOUBLE (8
 * bytes, IEEE big-endian) become typed bool/int64/double tags; BYTES a
 * binary tag; a wrong length or an unknown type a binary tag plus a
 * warning. Flags: SAMPLED always, DEBUG when debug. Parent: 0 when absent
 * or equal to the id. Times <= 0 are unset; a negative duration is unset
 * with a warning; an unset duration is `is_duration_unknown`. A span that
 * still has no timestamp takes its earliest log's.
 */
#include "wire/zipkin/zipkin_v1.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum kind { K_NONE = 0, K_CLIENT, K_SERVER, K_PRODUCER, K_CONSUMER } kind;

static const char *const kind_names[] = {NULL, "client", "server", "producer", "consumer"};
static const uint8_t kind_name_lens[] = {0, 6, 6, 8, 8}; /* their strlen, not measured per span */

typedef struct builder {
    const tw__zipkin_endpoint *local; /* NULL: unknown yet */
    const tw__zipkin_endpoint *remote;
    bool remote_without_service;
    kind kind;
    bool shared;
    bool has_ts, has_dur;
    int64_t ts, dur;
    tw__span_data *span; /* collects logs and tags */
} builder;

#define N_SEEN 4 /* a record's items come from two or three hosts */

typedef struct conv {
    tw__wire_input *in;
    size_t line_no;
    const tw__zipkin_v1_span *src;
    builder *b; /* b[0] is Zipkin's "first" span; points to few[] or the heap */
    size_t n, cap;
    bool is_nomem;
    const tw__zipkin_annotation *cs, *sr, *ss, *cr, *ms, *mr, *ws, *wr;
    tw__zipkin_annotation synth_cs, synth_sr;
    /* for_endpoint's last answers, by endpoint address (see there). */
    const tw__zipkin_endpoint *seen[N_SEEN];
    size_t seen_at[N_SEEN];
    unsigned next_seen;
    /* Last, and not zeroed with the rest: new_builder clears each builder
     * it hands out. Most records make one or two spans: no malloc for them. */
    builder few[4];
} conv;

/* ---- base64 -------------------------------------------------------------------------------- */

/* ---- endpoints ------------------------------------------------------------------------------ */

void tw__ipv4_text(uint32_t ipv4, char *out)
{
    /* By hand: snprintf was a fifth of the Thrift reader's time (callgrind). */
    size_t n = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        unsigned v = (ipv4 >> shift) & 0xff;
        if (v >= 100)
            out[n++] = (char)('0' + v / 100);
        if (v >= 10)
            out[n++] = (char)('0' + v / 10 % 10);
        out[n++] = (char)('0' + v % 10);
        out[n++] = shift ? '.' : '\0';
    }
}

/* The IPv4 address an IPv6 one embeds (mapped ::ffff:a.b.c.d, or
 * compatible ::a.b.c.d with a != 0), else 0. */
static uint32_t embedded_ipv4(const uint8_t v6[16])
{
    static const uint8_t zero[10] = {0};
    if (memcmp(v6, zero, 10) != 0)
        return 0;
    bool is_mapped = v6[10] == 0xff && v6[11] == 0xff;
    bool is_compat = v6[10] == 0 && v6[11] == 0 && v6[12] != 0;
    if (!is_mapped && !is_compat)
        return 0;
    return (uint32_t)v6[12] << 24 | (uint32_t)v6[13] << 16 | (uint32_t)v6[14] << 8 | v6[15];
}

/* Addresses of an endpoint as text: ipv4 ("" when none) and ipv6 ("" when
 * none or embedding the ipv4). */
static void endpoint_texts(const tw__zipkin_endpoint *e, char v4[16], char v6[INET6_ADDRSTRLEN])
{
    uint32_t ipv4 = e->ipv4;
    v4[0] = v6[0] = '\0';
    if (e->has_ipv6) {
        uint32_t embedded = embedded_ipv4(e->ipv6);
        if (embedded && !ipv4)
            ipv4 = embedded;
        else if (!embedded && !inet_ntop(AF_INET6, e->ipv6, v6, INET6_ADDRSTRLEN))
            v6[0] = '\0';
    }
    if (ipv4)
        tw__ipv4_text(ipv4, v4);
}

static bool endpoint_is_empty(const tw__zipkin_endpoint *e)
{
    return e->service_len == 0 && e->ipv4 == 0 && !e->has_ipv6 && e->port == 0;
}

static bool same_service(const tw__zipkin_endpoint *a, const tw__zipkin_endpoint *b)
{
    if (a == b) /* the decoder shares one endpoint among items of the same host */
        return true;
    const char *x = a ? a->service_name : "", *y = b ? b->service_name : "";
    return strcasecmp(x, y) == 0;
}

static bool same_endpoint(const tw__zipkin_endpoint *a, const tw__zipkin_endpoint *b)
{
    if (!a || !b)
        return a == b;
    return same_service(a, b) && a->ipv4 == b->ipv4 && a->port == b->port &&
           a->has_ipv6 == b->has_ipv6 && (!a->has_ipv6 || memcmp(a->ipv6, b->ipv6, 16) == 0);
}

/* ---- builders ------------------------------------------------------------------------------- */

static size_t new_builder(conv *c, const tw__zipkin_endpoint *local)
{
    if (c->n == c->cap) {
        size_t ncap = c->cap * 2;
        builder *fresh =
            c->b == c->few ? malloc(ncap * sizeof *fresh) : realloc(c->b, ncap * sizeof *fresh);
        if (!fresh) {
            c->is_nomem = true;
            return 0; /* the first span takes it; the conversion fails anyway */
        }
        if (c->b == c->few)
            memcpy(fresh, c->few, sizeof c->few);
        c->b = fresh;
        c->cap = ncap;
    }
    builder *b = &c->b[c->n];
    memset(b, 0, sizeof *b);
    b->span = tw__span_data_new();
    if (!b->span) {
        c->is_nomem = true;
        return 0;
    }
    if (local && !endpoint_is_empty(local))
        b->local = local;
    return c->n++;
}

/* Whether the span of @b is the one for @e; an unknown local endpoint
 * takes @e (Zipkin's closeEnoughEndpoint). */
static bool close_enough(builder *b, const tw__zipkin_endpoint *e)
{
    if (!b->local) {
        if (!endpoint_is_empty(e))
            b->local = e;
        return true;
    }
    return same_service(b->local, e);
}

#if defined(__GNUC__)
#define V1_INLINE static inline __attribute__((always_inline))
#else
#define V1_INLINE static inline
#endif

static size_t find_builder(conv *c, const tw__zipkin_endpoint *e)
{
    for (size_t i = 0; i < c->n; i++) {
        if (close_enough(&c->b[i], e))
            return i;
    }
    return new_builder(c, e);
}

/* The span for data reported by @e (Zipkin's forEndpoint). The decoder
 * gives every item of a host the same endpoint, and once the answer for
 * @e is a span with a known local endpoint it stays the answer for the
 * whole record: builders before it have a local endpoint of another
 * service (else they would have answered), local endpoints never change
 * once set, and new builders go at the end. So an address seen before is
 * answered without comparing service names again. Not remembered: an
 * answer whose span has no local endpoint yet (the next non-empty
 * endpoint may take it), and anything after a failed allocation. */
V1_INLINE size_t for_endpoint(conv *c, const tw__zipkin_endpoint *e)
{
    if (!e)
        return 0;
    for (unsigned k = 0; k < N_SEEN; k++) {
        if (c->seen[k] == e)
            return c->seen_at[k];
    }
    size_t i = find_builder(c, e);
    if (!c->is_nomem && c->b[i].local) {
        c->seen[c->next_seen] = e;
        c->seen_at[c->next_seen] = i;
        c->next_seen = (c->next_seen + 1) % N_SEEN;
    }
    return i;
}

static void add_log(conv *c, size_t i, const tw__zipkin_annotation *a)
{
    if (!tw__span_data_add_event(c->b[i].span, a->timestamp_us, a->value, a->value_len))
        c->is_nomem = true;
}

static void set_ts(builder *b, int64_t ts)
{
    b->has_ts = ts > 0;
    b->ts = ts;
}

/* @to - @from, or INT64_MIN when that overflows (hostile times). */
static int64_t between(int64_t from, int64_t to)
{
    int64_t d;
    return __builtin_sub_overflow(to, from, &d) ? INT64_MIN : d;
}

static void set_dur(conv *c, builder *b, int64_t dur)
{
    if (dur == INT64_MIN)
        tw__wire_warn(c->in, c->line_no, "span %016llx: duration out of range, left out",
                      (unsigned long long)c->src->id);
    else if (dur < 0)
        tw__wire_warn(c->in, c->line_no, "span %016llx: negative duration %lld us left out",
                      (unsigned long long)c->src->id, (long long)dur);
    b->has_dur = dur > 0;
    b->dur = dur;
}

static int64_t src_ts(const conv *c)
{
    return c->src->has_timestamp ? c->src->timestamp_us : 0;
}

static int64_t src_dur(const conv *c)
{
    return c->src->has_duration ? c->src->duration_us : 0;
}

/* Zipkin's maybeTimestampDuration. */
static void maybe_timestamp_duration(conv *c, const tw__zipkin_annotation *begin,
                                     const tw__zipkin_annotation *end)
{
    size_t i = for_endpoint(c, begin->host); /* may move c->b */
    builder *b = &c->b[i];
    if (src_ts(c) != 0 && src_dur(c) != 0) {
        set_ts(b, src_ts(c));
        set_dur(c, b, src_dur(c));
    } else {
        set_ts(b, begin->timestamp_us);
        if (end)
            set_dur(c, b, between(begin->timestamp_us, end->timestamp_us));
    }
}

static bool end_reflects_duration(const conv *c, const tw__zipkin_annotation *end)
{
    int64_t sum;
    return end && src_ts(c) != 0 && src_dur(c) != 0 &&
           !__builtin_add_overflow(src_ts(c), src_dur(c), &sum) && sum == end->timestamp_us;
}

/* ---- annotations (rules 1-7) ---------------------------------------------------------------- */

static void process_annotations(conv *c)
{
    const tw__zipkin_v1_span *s = c->src;
    for (size_t i = 0; i < s->n_annotations; i++) {
        const tw__zipkin_annotation *a = &s->annotations[i];
        size_t cur = for_endpoint(c, a->host);
        if (a->value_len == 2 && a->host) {
            const char *v = a->value;
            kind k = K_NONE;
            if (memcmp(v, "cs", 2) == 0) {
                k = K_CLIENT;
                c->cs = a;
            } else if (memcmp(v, "sr", 2) == 0) {
                k = K_SERVER;
                c->sr = a;
            } else if (memcmp(v, "ss", 2) == 0) {
                k = K_SERVER;
                c->ss = a;
            } else if (memcmp(v, "cr", 2) == 0) {
                k = K_CLIENT;
                c->cr = a;
            } else if (memcmp(v, "ms", 2) == 0) {
                k = K_PRODUCER;
                c->ms = a;
            } else if (memcmp(v, "mr", 2) == 0) {
                k = K_CONSUMER;
                c->mr = a;
            } else if (memcmp(v, "ws", 2) == 0) {
                c->ws = a;
                continue;
            } else if (memcmp(v, "wr", 2) == 0) {
                c->wr = a;
                continue;
            } else {
                add_log(c, cur, a);
                continue;
            }
            c->b[cur].kind = k;
        } else {
            add_log(c, cur, a);
        }
    }

    /* Rule 3: bridges that emit only end events. */
    if (!c->cs && end_reflects_duration(c, c->cr)) {
        c->synth_cs = (tw__zipkin_annotation){src_ts(c), "cs", 2, c->cr->host};
        c->cs = &c->synth_cs;
    }
    if (!c->sr && end_reflects_duration(c, c->ss)) {
        c->synth_sr = (tw__zipkin_annotation){src_ts(c), "sr", 2, c->ss->host};
        c->sr = &c->synth_sr;
    }

    if (c->cs && c->sr) { /* rule 4 */
        maybe_timestamp_duration(c, c->cs, c->cr);
        size_t client = for_endpoint(c, c->cs->host), server;
        if (same_service(c->cs->host, c->sr->host)) {
            c->b[client].kind = K_CLIENT;
            server = new_builder(c, c->sr->host);
            c->b[server].kind = K_SERVER;
        } else {
            server = for_endpoint(c, c->sr->host);
        }
        builder *sb = &c->b[server];
        sb->shared = true;
        set_ts(sb, c->sr->timestamp_us);
        if (c->ss)
            set_dur(c, sb, between(c->sr->timestamp_us, c->ss->timestamp_us));
        if (!c->cr && src_dur(c) == 0)
            c->b[client].has_dur = false; /* one-way */
    } else if (c->cs && c->cr) {          /* rule 5 */
        maybe_timestamp_duration(c, c->cs, c->cr);
    } else if (c->sr && c->ss) {
        maybe_timestamp_duration(c, c->sr, c->ss);
    } else { /* incomplete RPC */
        for (size_t i = 0; i < c->n; i++) {
            builder *b = &c->b[i];
            if (b->kind == K_CLIENT) {
                if (c->cs)
                    set_ts(b, c->cs->timestamp_us);
                if (c->cr)
                    add_log(c, i, c->cr);
            } else if (b->kind == K_SERVER) {
                if (c->sr)
                    set_ts(b, c->sr->timestamp_us);
                if (c->ss)
                    add_log(c, i, c->ss);
            }
        }
        if (src_ts(c) != 0) {
            set_ts(&c->b[0], src_ts(c));
            set_dur(c, &c->b[0], src_dur(c));
        }
    }

    /* Rule 6: v1 had no shared flag; an unset timestamp meant shared. */
    if (!c->cs && c->sr && (src_ts(c) == 0 || (c->ss && src_dur(c) == 0))) {
        size_t server = for_endpoint(c, c->sr->host);
        c->b[server].shared = true;
    }

    /* Rule 7: messaging. */
    if (c->ms && c->mr) {
        size_t producer = for_endpoint(c, c->ms->host), consumer;
        if (same_service(c->ms->host, c->mr->host)) {
            c->b[producer].kind = K_PRODUCER;
            consumer = new_builder(c, c->mr->host);
            c->b[consumer].kind = K_CONSUMER;
        } else {
            consumer = for_endpoint(c, c->mr->host);
        }
        builder *cb = &c->b[consumer];
        cb->shared = true;
        if (c->wr) {
            set_ts(cb, c->wr->timestamp_us);
            set_dur(c, cb, between(c->wr->timestamp_us, c->mr->timestamp_us));
        } else {
            set_ts(cb, c->mr->timestamp_us);
        }
        builder *pb = &c->b[producer];
        set_ts(pb, c->ms->timestamp_us);
        pb->has_dur = false;
        if (c->ws)
            set_dur(c, pb, between(c->ms->timestamp_us, c->ws->timestamp_us));
    } else if (c->ms) {
        maybe_timestamp_duration(c, c->ms, c->ws);
    } else if (c->mr) {
        if (c->wr)
            maybe_timestamp_duration(c, c->wr, c->mr);
        else
            maybe_timestamp_duration(c, c->mr, NULL);
    } else {
        if (c->ws)
            add_log(c, for_endpoint(c, c->ws->host), c->ws);
        if (c->wr)
            add_log(c, for_endpoint(c, c->wr->host), c->wr);
    }
}

/* ---- binary annotations (rule 8) ------------------------------------------------------------ */

static const char *const type_names[] = {"BOOL", "BYTES", "I16", "I32", "I64", "DOUBLE", "STRING"};

static int64_t be_signed(const uint8_t *p, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x = x << 8 | p[i];
    if (n < 8 && (x >> (n * 8 - 1)) & 1)
        x |= ~(uint64_t)0 << (n * 8); /* sign-extend */
    return (int64_t)x;
}

/* The length of a binary annotation's key as text: up to its first NUL
 * (the Thrift decoder's keys point into the input, not NUL-terminated). */
static size_t key_text_len(const tw__zipkin_binary_annotation *ba)
{
    /* Most keys are short and hold no NUL: their words are tested for a
     * zero byte inline (the last word overlapping the one before, within
     * the key), and only a key with one, or a long one, goes to memchr,
     * which finds where. */
    size_t n = ba->key_len;
    if (n >= 8 && n <= 64) {
        const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
        uint64_t any = 0, x;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, ba->key + i, 8);
            any |= (x - ones) & ~x & highs;
        }
        memcpy(&x, ba->key + n - 8, 8);
        any |= (x - ones) & ~x & highs;
        if (!any)
            return n;
    } else if (n >= 4 && n < 8) {
        const uint32_t ones = UINT32_C(0x01010101), highs = UINT32_C(0x80808080);
        uint32_t x, y;
        memcpy(&x, ba->key, 4);
        memcpy(&y, ba->key + n - 4, 4);
        if (!(((x - ones) & ~x & highs) | ((y - ones) & ~y & highs)))
            return n;
    } else if (n > 0 && n < 4) {
        if (ba->key[0] && ba->key[n >> 1] && ba->key[n - 1])
            return n;
    }
    const char *nul = memchr(ba->key, '\0', n);
    return nul ? (size_t)(nul - ba->key) : n;
}

/* @key_len: key_text_len(ba). */
static void add_tag(conv *c, size_t i, const tw__zipkin_binary_annotation *ba, size_t key_len)
{
    static const uint8_t empty[1] = {0};
    /* `lc` stays `lc`, Zipkin's own v2 convention; the Jaeger targets rename it
     * `component` (sinks/jaeger_view.h), as Jaeger's Zipkin converter does. */
    tw_value v = {.type = TW_VALUE_BINARY, .len = ba->value_len};
    v.as.bin = ba->value ? ba->value : empty;
    size_t want = 0;
    switch (ba->type) {
    case TW__ZIPKIN_STRING:
        v.type = TW_VALUE_STRING;
        v.as.str = (const char *)v.as.bin;
        break;
    case TW__ZIPKIN_BYTES:
        break;
    case TW__ZIPKIN_BOOL:
        want = 1;
        if (ba->value_len == 1) {
            v.type = TW_VALUE_BOOL;
            v.as.boolean = ba->value[0] != 0;
        }
        break;
    case TW__ZIPKIN_I16:
    case TW__ZIPKIN_I32:
    case TW__ZIPKIN_I64:
        want = ba->type == TW__ZIPKIN_I16 ? 2 : ba->type == TW__ZIPKIN_I32 ? 4 : 8;
        if (ba->value_len == want) {
            v.type = TW_VALUE_INT64;
            v.as.i64 = be_signed(ba->value, want);
        }
        break;
    case TW__ZIPKIN_DOUBLE:
        want = 8;
        if (ba->value_len == 8) {
            uint64_t bits = (uint64_t)be_signed(ba->value, 8);
            v.type = TW_VALUE_DOUBLE;
            memcpy(&v.as.dbl, &bits, sizeof v.as.dbl);
        }
        break;
    default:
        tw__wire_warn(c->in, c->line_no,
                      "binary annotation '%.*s': unknown annotation_type %d, kept as binary",
                      (int)key_len, ba->key, (int)ba->type);
        break;
    }
    if (want && v.type == TW_VALUE_BINARY)
        tw__wire_warn(
            c->in, c->line_no,
            "binary annotation '%.*s': %s value has %zu bytes, expected %zu; kept as binary",
            (int)key_len, ba->key, type_names[ba->type], ba->value_len, want);
    tw__span_data *s = c->b[i].span;
    if (v.type == TW_VALUE_STRING) { /* most are: the string path, straight */
        if (!tw__span_data_add_str_tag_n(s, ba->key, key_len, v.as.str, v.len))
            c->is_nomem = true;
        return;
    }
    /* tw__span_data_add_tag with the key's length known. */
    tw__tag *t = tw__span_data_push_tag(s);
    bool was_truncated = false;
    if (!t || !tw__tag_set_n(&s->arena, t, ba->key, key_len, &v, SIZE_MAX, &was_truncated)) {
        c->is_nomem = true;
        return;
    }
    s->n_tags++; /* commits the tag */
}

static void set_remote(conv *c, size_t i, const tw__zipkin_endpoint *e, bool without_service)
{
    c->b[i].remote = e;
    c->b[i].remote_without_service = without_service;
}

static void process_binary_annotations(conv *c)
{
    const tw__zipkin_v1_span *s = c->src;
    const tw__zipkin_endpoint *ca = NULL, *sa = NULL, *ma = NULL;
    for (size_t i = 0; i < s->n_binary_annotations; i++) {
        const tw__zipkin_binary_annotation *ba = &s->binary_annotations[i];
        if (ba->key_len == 2 && ba->key[1] == 'a' &&
            (ba->key[0] == 'c' || ba->key[0] == 's' || ba->key[0] == 'm')) {
            if (ba->key[0] == 'c')
                ca = ba->host;
            else if (ba->key[0] == 's')
                sa = ba->host;
            else
                ma = ba->host;
            continue;
        }
        size_t cur = for_endpoint(c, ba->host);
        size_t key_len = key_text_len(ba);
        if (key_len == 2 && memcmp(ba->key, "lc", 2) == 0 && ba->value_len == 0)
            continue;
        add_tag(c, cur, ba, key_len);
    }

    bool has_no_core = !c->cs && !c->cr && !c->ss && !c->sr;
    if (has_no_core && (ca || sa)) {
        if (ca && sa) {
            set_remote(c, for_endpoint(c, ca), sa, false);
        } else if (sa) {
            set_remote(c, 0, sa, false);
        } else {
            c->b[0].kind = K_SERVER;
            set_remote(c, 0, ca, false);
        }
        return;
    }
    const tw__zipkin_annotation *server = c->sr ? c->sr : c->ss;
    if (ca && server && !same_endpoint(ca, server->host)) {
        /* Finagle puts the client's socket port in a ca carrying the
         * server's own service: dropping the name avoids a loopback link. */
        set_remote(c, for_endpoint(c, server->host), ca, same_service(ca, server->host));
    }
    if (sa) {
        if (c->cs)
            set_remote(c, for_endpoint(c, c->cs->host), sa, false);
        else if (c->cr)
            set_remote(c, for_endpoint(c, c->cr->host), sa, false);
    }
    if (ma) {
        if (c->ms)
            set_remote(c, for_endpoint(c, c->ms->host), ma, false);
        if (c->mr)
            set_remote(c, for_endpoint(c, c->mr->host), ma, false);
    }
}

/* ---- model spans ---------------------------------------------------------------------------- */

static bool tag_i64(tw__span_data *s, const char *key, int64_t value)
{
    tw_value v = {.type = TW_VALUE_INT64, .as.i64 = value};
    return tw__span_data_add_tag(s, key, &v);
}

/* tw__span_data_add_str_tag for a literal key: its length known, the
 * string path straight (the same tag). */
#define add_str_tag(s, key, value, len)                                                            \
    tw__span_data_add_str_tag_n((s), (key), sizeof(key) - 1, (value), (len))

static bool fill_remote(const builder *b)
{
    const tw__zipkin_endpoint *e = b->remote;
    char v4[16], v6[INET6_ADDRSTRLEN];
    endpoint_texts(e, v4, v6);
    tw__span_data *s = b->span;
    return (b->remote_without_service || e->service_len == 0 ||
            add_str_tag(s, "peer.service", e->service_name, e->service_len)) &&
           (!v4[0] || add_str_tag(s, "peer.ipv4", v4, strlen(v4))) &&
           (!v6[0] || add_str_tag(s, "peer.ipv6", v6, strlen(v6))) &&
           (!e->port || tag_i64(s, "peer.port", e->port));
}

static bool fill_process(const builder *b, tw__process *p)
{
    const tw__zipkin_endpoint *e = b->local;
    if (!tw__process_set_service(p, e ? e->service_name : TW__ZIPKIN_V1_NO_SERVICE))
        return false;
    if (!e)
        return true;
    char v4[16], v6[INET6_ADDRSTRLEN];
    endpoint_texts(e, v4, v6);
    tw_value v = {.type = TW_VALUE_STRING};
    if (v4[0] || v6[0]) {
        v.as.str = v4[0] ? v4 : v6;
        v.len = strlen(v.as.str);
        if (!tw__process_add_tag(p, "ip", &v))
            return false;
    }
    if (v4[0] && v6[0]) {
        v.as.str = v6;
        v.len = strlen(v6);
        if (!tw__process_add_tag(p, "ipv6", &v))
            return false;
    }
    if (e->port) {
        tw_value port = {.type = TW_VALUE_INT64, .as.i64 = e->port};
        if (!tw__process_add_tag(p, "port", &port))
            return false;
    }
    return true;
}

/* ---- processes: built once per distinct local endpoint ----------------------------------------
 */

/* A process and the endpoint it was built from: fill_process reads nothing
 * else, so an endpoint equal in every field gets an equal process. */
typedef struct proc_memo {
    bool is_used;
    bool has_local; /* false: the process of a span without a local endpoint */
    char *service;  /* service_len bytes (malloc) */
    size_t service_len;
    uint32_t ipv4;
    uint16_t port;
    bool has_ipv6;
    uint8_t ipv6[16];
    tw__process process;
} proc_memo;

#define N_PROC_MEMOS 32 /* replaced round robin */

#define N_HINTS 64 /* a power of two */

struct tw__zipkin_v1_procs {
    proc_memo memo[N_PROC_MEMOS];
    unsigned next; /* the slot a new endpoint takes */
    /* By a hash of the endpoint's scalars, the slot (+ 1; 0: none) that last
     * matched one with that hash: tried first, so that a hit costs one
     * comparison instead of a scan. Only a hint: the slot is still
     * compared, and a miss scans every slot. */
    uint8_t hint[N_HINTS];
};

tw__zipkin_v1_procs *tw__zipkin_v1_procs_new(void)
{
    tw__zipkin_v1_procs *procs = calloc(1, sizeof *procs);
    for (size_t i = 0; procs && i < N_PROC_MEMOS; i++)
        tw__process_init(&procs->memo[i].process);
    return procs;
}

static void proc_memo_clear(proc_memo *m)
{
    free(m->service);
    tw__process_clear(&m->process);
    m->service = NULL;
    m->is_used = false;
}

void tw__zipkin_v1_procs_free(tw__zipkin_v1_procs *procs)
{
    if (!procs)
        return;
    for (size_t i = 0; i < N_PROC_MEMOS; i++)
        proc_memo_clear(&procs->memo[i]);
    free(procs);
}

static bool proc_memo_matches(const proc_memo *m, const tw__zipkin_endpoint *e)
{
    if (!m->is_used || m->has_local != (e != NULL))
        return false;
    return !e || (m->service_len == e->service_len && m->ipv4 == e->ipv4 && m->port == e->port &&
                  m->has_ipv6 == e->has_ipv6 &&
                  memcmp(m->service, e->service_name, e->service_len) == 0 &&
                  (!e->has_ipv6 || memcmp(m->ipv6, e->ipv6, 16) == 0));
}

/* Builds the process of @b into a free slot; NULL on allocation failure. */
static const tw__process *proc_memo_add(tw__zipkin_v1_procs *procs, const builder *b)
{
    proc_memo *m = &procs->memo[procs->next];
    procs->next = (procs->next + 1) % N_PROC_MEMOS;
    proc_memo_clear(m);
    const tw__zipkin_endpoint *e = b->local;
    m->has_local = e != NULL;
    if (e) {
        m->service = malloc(e->service_len + 1);
        if (!m->service)
            return NULL;
        memcpy(m->service, e->service_name, e->service_len);
        m->service_len = e->service_len;
        m->ipv4 = e->ipv4;
        m->port = e->port;
        m->has_ipv6 = e->has_ipv6;
        memcpy(m->ipv6, e->ipv6, 16);
    }
    if (!fill_process(b, &m->process)) {
        proc_memo_clear(m);
        return NULL;
    }
    m->is_used = true;
    return &m->process;
}

static unsigned hint_of(const tw__zipkin_endpoint *e)
{
    if (!e)
        return 0;
    uint32_t h = e->ipv4 * 0x9e3779b1u ^ (uint32_t)e->port * 0x85ebca6bu ^
                 (uint32_t)e->service_len * 0xc2b2ae35u;
    return (h >> 16) & (N_HINTS - 1);
}

static const tw__process *memo_process(tw__zipkin_v1_procs *procs, const builder *b)
{
    unsigned k = hint_of(b->local);
    unsigned hinted = procs->hint[k];
    if (hinted && proc_memo_matches(&procs->memo[hinted - 1], b->local))
        return &procs->memo[hinted - 1].process;
    for (size_t i = 0; i < N_PROC_MEMOS; i++) {
        if (proc_memo_matches(&procs->memo[i], b->local)) {
            procs->hint[k] = (uint8_t)(i + 1);
            return &procs->memo[i].process;
        }
    }
    unsigned slot = procs->next;
    const tw__process *p = proc_memo_add(procs, b);
    if (p)
        procs->hint[k] = (uint8_t)(slot + 1);
    return p;
}

/* The process of @b's span: from @procs, else built in @scratch (an
 * init'ed process the caller clears). NULL on allocation failure. */
static const tw__process *process_of(const builder *b, tw__zipkin_v1_procs *procs,
                                     tw__process *scratch)
{
    if (procs)
        return memo_process(procs, b);
    return fill_process(b, scratch) ? scratch : NULL;
}

/* Fills the record of @b from the builder state; false on allocation failure. */
static bool finish_span(const conv *c, builder *b)
{
    const tw__zipkin_v1_span *src = c->src;
    tw__span_data *s = b->span;
    s->trace_id_high = src->trace_id_high;
    s->trace_id_low = src->trace_id;
    s->span_id = src->id;
    s->parent_id = src->has_parent_id && src->parent_id != src->id ? src->parent_id : 0;
    s->flags = TW__FLAG_SAMPLED | (src->debug ? TW__FLAG_DEBUG : 0);
    s->shared = b->shared;
    if (!tw__span_data_set_operation(s, src->name, src->name_len))
        return false;
    if (!b->has_ts) {
        /* Still no start: the earliest log's (the duration stays unknown). */
        for (size_t i = 0; i < s->n_logs; i++) {
            int64_t t = s->logs[i].timestamp_us;
            if (t > 0 && (!b->has_ts || t < b->ts)) {
                b->ts = t;
                b->has_ts = true;
            }
        }
    }
    s->start_us = b->has_ts ? b->ts : 0;
    s->duration_us = b->has_dur ? b->dur : 0;
    s->is_duration_unknown = !b->has_dur;
    if (b->kind != K_NONE &&
        !add_str_tag(s, "span.kind", kind_names[b->kind], kind_name_lens[b->kind]))
        return false;
    return !b->remote || fill_remote(b);
}

/* Applies a forced time unit to every time of @v1; false on overflow. */
static bool apply_time_unit(tw__wire_input *in, tw__zipkin_v1_span *v1)
{
    tw__time_unit unit = in->opts ? in->opts->time_unit : TW__TIME_AUTO;
    if (unit == TW__TIME_AUTO || unit == TW__TIME_US)
        return true;
    bool ok = tw__time_int_to_us(v1->timestamp_us, unit, &v1->timestamp_us) &&
              tw__time_int_to_us(v1->duration_us, unit, &v1->duration_us);
    for (size_t i = 0; ok && i < v1->n_annotations; i++)
        ok = tw__time_int_to_us(v1->annotations[i].timestamp_us, unit,
                                &v1->annotations[i].timestamp_us);
    return ok;
}

bool tw__zipkin_v1_emit(tw__wire_input *in, size_t line_no, tw__zipkin_v1_span *v1, const void *raw,
                        size_t raw_len)
{
    return tw__zipkin_v1_emit_with(in, line_no, v1, raw, raw_len, NULL);
}

bool tw__zipkin_v1_emit_with(tw__wire_input *in, size_t line_no, tw__zipkin_v1_span *v1,
                             const void *raw, size_t raw_len, tw__zipkin_v1_procs *procs)
{
    if (v1->trace_id == 0 && v1->trace_id_high == 0)
        return tw__wire_reject(in, line_no, raw, raw_len, "trace id is zero or missing");
    if (v1->id == 0)
        return tw__wire_reject(in, line_no, raw, raw_len, "span id is zero or missing");
    if (!apply_time_unit(in, v1))
        return tw__wire_reject(in, line_no, raw, raw_len, "a time overflows in microseconds");
    if (v1->dropped_annotations)
        tw__wire_warn(in, line_no,
                      "span %016llx: %zu annotation(s) without timestamp, value or key dropped",
                      (unsigned long long)v1->id, v1->dropped_annotations);
    if (v1->bad_ipv6)
        tw__wire_warn(in, line_no, "span %016llx: %zu ipv6 address(es) not 16 bytes left out",
                      (unsigned long long)v1->id, v1->bad_ipv6);

    conv c;
    memset(&c, 0, offsetof(conv, few));
    c.in = in;
    c.line_no = line_no;
    c.src = v1;
    c.cap = 4;
    c.b = c.few;
    new_builder(&c, NULL);
    if (!c.is_nomem)
        process_annotations(&c);
    if (!c.is_nomem)
        process_binary_annotations(&c);
    for (size_t i = 0; !c.is_nomem && i < c.n; i++) {
        if (!finish_span(&c, &c.b[i]))
            c.is_nomem = true;
    }
    bool go_on = true;
    if (c.is_nomem) {
        go_on = tw__wire_reject(in, line_no, raw, raw_len, "out of memory converting span %016llx",
                                (unsigned long long)v1->id);
        for (size_t i = 0; i < c.n; i++)
            tw__span_data_unref(c.b[i].span);
    } else {
        tw__process p;
        size_t i = 0;
        for (; go_on && i < c.n; i++) {
            tw__process_init(&p);
            const tw__process *process = process_of(&c.b[i], procs, &p);
            if (!process) {
                tw__span_data_unref(c.b[i].span);
                go_on = tw__wire_reject(in, line_no, raw, raw_len, "out of memory");
            } else {
                go_on = tw__wire_emit(in, line_no, c.b[i].span, process, raw, raw_len);
            }
            tw__process_clear(&p);
        }
        for (; i < c.n; i++)
            tw__span_data_unref(c.b[i].span);
    }
    if (c.b != c.few)
        free(c.b);
    return go_on;
}
