/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/decode.c: the receivers' decoding (decode.h). Each function
 * fills a twa_spanbuf with the spans of one datagram or body and counts the
 * rejected ones; the caller flushes or discards the buffer.
 */
#include "agent/decode.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "wire/formats.h"
#include "wire/jaeger/jaeger_thrift_decode.h"
#include "wire/zipkin/zipkin_v1.h"
#include "wire/zipkin/zipkin_v1_thrift.h"

/* ---- Jaeger Thrift -------------------------------------------------------------------------- */

/* One Jaeger record: a Batch carries one process, interned once for all
 * its spans (the table's lock and hash once per datagram, not per span). */
typedef struct jaeger_ctx {
    twa_spanbuf *b;
    const tw__process *last; /* the decoder's process, valid during the decode */
    twa_proc *last_interned; /* one reference */
} jaeger_ctx;

static bool on_span(void *arg, tw__span_data *span, const tw__process *process)
{
    jaeger_ctx *c = arg;
    if (!c->last_interned || c->last != process) {
        twa_proc_unref(c->last_interned);
        c->last = process;
        c->last_interned = twa_procs_intern(twa_pipeline_procs(c->b->pipeline), process);
        if (!c->last_interned) { /* out of memory: the buffer counts it */
            twa_spanbuf_add(c->b, span, process);
            return true;
        }
    }
    twa_spanbuf_add_interned(c->b, span, c->last_interned);
    return true;
}

static bool on_bad_span(void *arg, size_t index, size_t offset, size_t len, const char *why)
{
    (void)offset;
    (void)len;
    jaeger_ctx *c = arg;
    char reason[256];
    snprintf(reason, sizeof reason, "span %zu: %s", index + 1, why);
    twa_spanbuf_reject(c->b, reason);
    return true;
}

static twa_decode_result jaeger(const uint8_t *data, size_t len, twa_spanbuf *b,
                                tw__thrift_protocol want, bool want_message, char *why,
                                size_t why_size)
{
    tw__thrift_protocol protocol;
    bool is_message;
    int kind = tw__jaeger_detect(data, len, &protocol, &is_message);
    if (kind <= 0 || protocol != want || is_message != want_message) {
        snprintf(why, why_size, "not a Jaeger %s %s (first bytes %02x %02x)",
                 want == TW__THRIFT_COMPACT ? "compact" : "binary",
                 want_message ? "emitBatch message" : "Batch", len ? data[0] : 0,
                 len > 1 ? data[1] : 0);
        return TWA_DECODE_MALFORMED;
    }
    /* The spans enter the model through the span buffer's input: their times
     * are checked there (a span out of the model's range is a bad span). */
    jaeger_ctx ctx = {b, NULL, NULL};
    const tw__jaeger_sink sink = {on_span, on_bad_span, NULL, &ctx,
                                  twa_spanbuf_input(b, want_message ? "jaeger" : "jaeger-http")};
    tw__jaeger_record info;
    size_t need = 0, at = 0;
    char reason[256] = "";
    tw__thrift_result r = tw__jaeger_decode(data, len, protocol, is_message, &sink, &info, &need,
                                            &at, reason, sizeof reason);
    twa_proc_unref(ctx.last_interned);
    switch (r) {
    case TW__THRIFT_OK:
        if (info.size != len)
            twa_log(TWA_DEBUG, "%zu bytes after the Jaeger record ignored", len - info.size);
        return TWA_DECODE_OK;
    case TW__THRIFT_SHORT:
        snprintf(why, why_size, "truncated: the record needs at least %zu bytes, got %zu", need,
                 len);
        return TWA_DECODE_MALFORMED;
    case TW__THRIFT_NOMEM:
        snprintf(why, why_size, "out of memory");
        return TWA_DECODE_NOMEM;
    default:
        snprintf(why, why_size, "malformed at byte %zu: %s", at, reason);
        return TWA_DECODE_MALFORMED;
    }
}

twa_decode_result twa_decode_jaeger_compact(const uint8_t *data, size_t len, twa_spanbuf *b,
                                            char *why, size_t why_size)
{
    return jaeger(data, len, b, TW__THRIFT_COMPACT, true, why, why_size);
}

twa_decode_result twa_decode_jaeger_binary(const uint8_t *data, size_t len, twa_spanbuf *b,
                                           char *why, size_t why_size)
{
    return jaeger(data, len, b, TW__THRIFT_BINARY, true, why, why_size);
}

static twa_decode_result jaeger_http(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                     size_t why_size)
{
    return jaeger(data, len, b, TW__THRIFT_BINARY, false, why, why_size);
}

/* ---- Zipkin emitZipkinBatch (compact): the one Zipkin v1 Thrift decoder ------------------------
 */

twa_decode_result twa_decode_zipkin_compact(const uint8_t *data, size_t len, twa_spanbuf *b,
                                            char *why, size_t why_size)
{
    uint32_t count = 0;
    size_t pos = 0;
    tw__thrift_result d = tw__zipkin_compact_emit_begin(data, len, &count, &pos, why, why_size);
    if (d != TW__THRIFT_OK)
        return d == TW__THRIFT_NOMEM ? TWA_DECODE_NOMEM : TWA_DECODE_MALFORMED;
    tw__zipkin_v1_span *span = malloc(sizeof *span);
    if (!span) {
        snprintf(why, why_size, "out of memory");
        return TWA_DECODE_NOMEM;
    }
    tw__zipkin_v1_span_init(span);
    twb_input *in = twa_spanbuf_input(b, "zipkin-compact");
    twa_decode_result res = TWA_DECODE_OK;
    for (uint32_t k = 0; k < count; k++) {
        size_t size = 0;
        char reason[256];
        d = tw__zipkin_compact_decode_span(data + pos, len - pos, span, &size, reason,
                                           sizeof reason);
        if (d != TW__THRIFT_OK) {
            /* No way to find the next span: the rest of the datagram is lost. */
            snprintf(why, why_size, "span %u of %u: %s", k + 1, count, reason);
            if (b->n == 0) {
                res = d == TW__THRIFT_NOMEM ? TWA_DECODE_NOMEM : TWA_DECODE_MALFORMED;
            } else {
                for (uint32_t j = k; j < count; j++)
                    twa_spanbuf_reject(b, why);
            }
            break;
        }
        tw__zipkin_v1_emit(in, 0, span, data + pos, size);
        tw__zipkin_v1_span_clear(span);
        pos += size;
    }
    tw__zipkin_v1_span_clear(span);
    free(span);
    return res;
}

/* ---- the format registry's decoders ----------------------------------------------------------
 */

/* A body through the registry's decoder of @format (wire/formats.h), the one
 * `tracewire convert --from` runs. */
static twa_decode_result with_format(const char *format, const char *name, const uint8_t *data,
                                     size_t len, twa_spanbuf *b, char *why, size_t why_size)
{
    if (len == 0)
        return TWA_DECODE_OK;
    const tw__wire_format *fmt = tw__wire_format_find(format);
    if (!fmt || !fmt->decoder) {
        snprintf(why, why_size, "no %s decoder in this build", format);
        return TWA_DECODE_UNSUPPORTED;
    }
    FILE *f = fmemopen((void *)data, len, "r");
    if (!f) {
        snprintf(why, why_size, "out of memory");
        return TWA_DECODE_NOMEM;
    }
    tw_error *e = NULL;
    tw_status st = fmt->decoder->read(f, twa_spanbuf_input(b, name), &e);
    fclose(f);
    if (st == TW_E_NOMEM) {
        snprintf(why, why_size, "out of memory");
        tw_error_free(e);
        return TWA_DECODE_NOMEM;
    }
    if (st != TW_OK && st != TW_E_STATE) {
        snprintf(why, why_size, "%s", e ? tw_error_message(e) : "cannot read the body");
        tw_error_free(e);
        return TWA_DECODE_MALFORMED;
    }
    tw_error_free(e);
    if (b->n == 0 && b->n_rejected > 0) {
        snprintf(why, why_size, "%s", b->first_reject);
        return TWA_DECODE_MALFORMED;
    }
    return TWA_DECODE_OK;
}

static twa_decode_result otlp_json(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                   size_t why_size)
{
    return with_format("otlp-json", "otlp", data, len, b, why, why_size);
}

static twa_decode_result otlp_proto(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                    size_t why_size)
{
    return with_format("otlp-proto", "otlp", data, len, b, why, why_size);
}

static twa_decode_result zipkin_v2_proto(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                         size_t why_size)
{
    return with_format("zipkin-v2-proto", "zipkin", data, len, b, why, why_size);
}

static twa_decode_result zipkin_v2_json(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                        size_t why_size)
{
    return with_format("zipkin-v2-json", "zipkin", data, len, b, why, why_size);
}

static twa_decode_result zipkin_v1_json(const uint8_t *data, size_t len, twa_spanbuf *b, char *why,
                                        size_t why_size)
{
    return with_format("zipkin-v1-json", "zipkin", data, len, b, why, why_size);
}

static twa_decode_result zipkin_v1_thrift(const uint8_t *data, size_t len, twa_spanbuf *b,
                                          char *why, size_t why_size)
{
    if (len && data[0] != 12) { /* only the binary list: no Scribe text over HTTP */
        snprintf(why, why_size, "not a Thrift binary list<Span> (first byte %u, expected 12)",
                 data[0]);
        return TWA_DECODE_MALFORMED;
    }
    return with_format("zipkin-v1-thrift", "zipkin", data, len, b, why, why_size);
}

/* ---- the HTTP body table ----------------------------------------------------------------------
 */

static const twa_body_format body_formats[] = {
    {"/v1/traces", "application/json", "otlp", otlp_json, NULL},
    {"/v1/traces", "application/x-protobuf", "otlp", otlp_proto, NULL},
    {"/api/v2/spans", "application/json", "zipkin", zipkin_v2_json, NULL},
    {"/api/v2/spans", "application/x-protobuf", "zipkin", zipkin_v2_proto, NULL},
    {"/api/v1/spans", "application/json", "zipkin", zipkin_v1_json, NULL},
    {"/api/v1/spans", "application/x-thrift", "zipkin", zipkin_v1_thrift, NULL},
    {"/api/traces", "application/x-thrift", "jaeger-http", jaeger_http, NULL},
    {"/api/traces", "application/vnd.apache.thrift.binary", "jaeger-http", jaeger_http, NULL},
};
#define N_BODY_FORMATS (sizeof body_formats / sizeof body_formats[0])

const twa_body_format *twa_body_format_find(const char *route, const char *content_type,
                                            bool *is_known_route)
{
    *is_known_route = false;
    size_t len = content_type ? strcspn(content_type, ";") : 0;
    while (len && (content_type[len - 1] == ' ' || content_type[len - 1] == '\t'))
        len--;
    for (size_t i = 0; i < N_BODY_FORMATS; i++) {
        if (strcmp(body_formats[i].route, route) != 0)
            continue;
        if (!*is_known_route && len == 0) {
            *is_known_route = true;
            return &body_formats[i];
        }
        *is_known_route = true;
        if (strlen(body_formats[i].content_type) == len &&
            g_ascii_strncasecmp(body_formats[i].content_type, content_type, len) == 0)
            return &body_formats[i];
    }
    return NULL;
}

void twa_body_formats_of(const char *route, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_BODY_FORMATS; i++) {
        if (strcmp(body_formats[i].route, route) != 0 || !body_formats[i].decode)
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "",
                         body_formats[i].content_type);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

/* ---- gzip -------------------------------------------------------------------------------------
 */

/* @window_bits as inflateInit2 takes them; @name ("gzip", "deflate") names
 * the encoding in the errors; @has_members: another stream may follow the
 * first (gzip members). */
static twa_decode_result inflate_body(const uint8_t *data, size_t len, int window_bits,
                                      const char *name, bool has_members, size_t max_bytes,
                                      tw__buf *out, char *why, size_t why_size)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits) != Z_OK) {
        snprintf(why, why_size, "out of memory");
        return TWA_DECODE_NOMEM;
    }
    tw__buf_reset(out);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    twa_decode_result res = TWA_DECODE_OK;
    for (;;) {
        /* Grown up to one byte over the bound, which tells a body of
         * exactly max_bytes from a larger one; a reused buffer may have that
         * room already. */
        if (out->cap - out->len < 64 * 1024 && out->cap < max_bytes + 1) {
            size_t want = out->cap ? out->cap * 2 : 64 * 1024;
            if (want > max_bytes + 1)
                want = max_bytes + 1;
            if (!tw__buf_reserve(out, want)) {
                snprintf(why, why_size, "out of memory");
                res = TWA_DECODE_NOMEM;
                break;
            }
        }
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)(out->cap - out->len);
        int rc = inflate(&z, Z_NO_FLUSH);
        out->len = out->cap - z.avail_out;
        if (out->len > max_bytes) {
            snprintf(why, why_size, "the inflated body is larger than %zu bytes", max_bytes);
            res = TWA_DECODE_TOO_LARGE;
            break;
        }
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0)
                break;
            if (!has_members) {
                snprintf(why, why_size, "bad %s body: data after its end", name);
                res = TWA_DECODE_MALFORMED;
                break;
            }
            /* Another gzip member follows (allowed by RFC 1952). */
            if (inflateReset(&z) != Z_OK) {
                res = TWA_DECODE_NOMEM;
                break;
            }
            continue;
        }
        if (rc == Z_BUF_ERROR && z.avail_in == 0) {
            snprintf(why, why_size, "the %s body is truncated", name);
            res = TWA_DECODE_MALFORMED;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            snprintf(why, why_size, "bad %s body: %s", name, z.msg ? z.msg : "corrupt data");
            res = TWA_DECODE_MALFORMED;
            break;
        }
    }
    inflateEnd(&z);
    return res;
}

twa_decode_result twa_inflate(const uint8_t *data, size_t len, size_t max_bytes, tw__buf *out,
                              char *why, size_t why_size)
{
    /* 32: gzip or zlib, by the header */
    return inflate_body(data, len, 15 + 32, "gzip", true, max_bytes, out, why, why_size);
}

twa_decode_result twa_inflate_deflate(const uint8_t *data, size_t len, size_t max_bytes,
                                      tw__buf *out, char *why, size_t why_size)
{
    /* HTTP's deflate is zlib (RFC 9110), but many clients send raw deflate:
     * a zlib header (CM 8, the check bits) says which, as browsers do. */
    bool is_zlib = len >= 2 && (data[0] & 0x0f) == 8 && (data[0] >> 4) <= 7 &&
                   ((unsigned)data[0] << 8 | data[1]) % 31 == 0;
    return inflate_body(data, len, is_zlib ? 15 : -15, "deflate", false, max_bytes, out, why,
                        why_size);
}
