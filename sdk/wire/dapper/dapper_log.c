/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log.c: encodes finished spans (wire/model/span_data.h)
 * as Dapper-style span log records, one JSON object per line
 * (docs/dapper-log-format.md, version 1; the layout is tabled in
 * wire/dapper/dapper_log.h). The SDK's file reporter (report/file_sender.c)
 * encodes on its reporter thread, `tracewire convert --to dapper` too; the
 * decoder is dapper_log_decode.c.
 *
 * Written directly into the output buffer (wire/core/json_write.h: the one
 * JSON escaper, the one typed-tag writer) instead of through a Jansson tree
 * per record, which cost 64,000 instructions per span on the reporter
 * thread (callgrind, tests/bench/bench_encode.c). The differential suite
 * tests/unit/wire/test_dapper_log.c parses the lines with Jansson and
 * compares them with the reference Jansson encoder (oracle_dapper.c) on a
 * large random corpus, and every line must decode back to its record. The
 * process object is the same on every line of a tracer: it is written once
 * per encoder and appended to every line.
 *
 * Locking: none. An encoder is used by one thread at a time.
 */
#include "wire/dapper/dapper_log.h"

#include <stdlib.h>
#include <string.h>

#include "wire/core/json_write.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/model/conventions.h"

#define PUT_LIT(out, lit) tw__buf_put((out), (lit), sizeof(lit) - 1)

/* ---- kinds and RPC annotations ---------------------------------------------------------- */

/* Indexed by tw__span_kind (wire/model/conventions.h), whose first five
 * values are none, client, server, producer, consumer; "internal" has no
 * RPC annotations and is written as no kind, like an absent one. */
const char *const tw__dapper_kind_names[5] = {"", "client", "server", "producer", "consumer"};

/* Begin and end annotation of each kind (Zipkin v1 core annotations): the
 * begin one at start_us, the end one at end_us. A consumer's begin is the
 * wire receive ("wr") and its end the message receive ("mr"), which is the
 * one kept alone. */
const char *const tw__dapper_kind_begin[5] = {"", "cs", "sr", "ms", "wr"};
const char *const tw__dapper_kind_end[5] = {"", "cr", "ss", "ws", "mr"};

/* The span's RPC kind: that of its last span.kind tag, read as every
 * encoder reads it (the four names in any case). */
static tw__span_kind rpc_kind_of(const tw__span_data *s)
{
    size_t index;
    tw__span_kind k = tw__span_kind_of(s, &index);
    return k >= TW__KIND_CLIENT && k <= TW__KIND_CONSUMER ? k : TW__KIND_NONE;
}

/* ---- pieces --------------------------------------------------------------------------------- */

static bool put_tags(tw__buf *out, const tw__tag *tags, size_t n)
{
    bool ok = tw__buf_put_byte(out, '[');
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && tw__json_put_typed_tag(out, &tags[i]);
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_annotation(tw__buf *out, int64_t ts_us, const char *value)
{
    return PUT_LIT(out, "{\"ts_us\":") && tw__json_put_int(out, ts_us) &&
           PUT_LIT(out, ",\"value\":\"") && tw__buf_put(out, value, strlen(value)) &&
           PUT_LIT(out, "\"}");
}

/* The RPC annotations (Zipkin's V2SpanConverter rules): the begin
 * annotation at the start, the end one at the end when the span lasted (a
 * zero duration is "unknown" in Zipkin, so only the begin is written; a
 * consumer then writes "mr" alone, at the start). */
static bool put_annotations(tw__buf *out, tw__span_kind kind, int64_t start_us, int64_t end_us)
{
    bool ok = PUT_LIT(out, ",\"annotations\":[");
    if (end_us > start_us)
        ok = ok && put_annotation(out, start_us, tw__dapper_kind_begin[kind]) &&
             tw__buf_put_byte(out, ',') && put_annotation(out, end_us, tw__dapper_kind_end[kind]);
    else
        ok = ok && put_annotation(out, start_us,
                                  kind == TW__KIND_CONSUMER ? tw__dapper_kind_end[kind]
                                                            : tw__dapper_kind_begin[kind]);
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_logs(tw__buf *out, const tw__log *logs, size_t n)
{
    bool ok = PUT_LIT(out, ",\"logs\":[");
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && PUT_LIT(out, "{\"ts_us\":") &&
             tw__json_put_int(out, logs[i].timestamp_us) && PUT_LIT(out, ",\"fields\":") &&
             put_tags(out, logs[i].fields, logs[i].n_fields) && tw__buf_put_byte(out, '}');
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_refs(tw__buf *out, const tw__ref *refs, size_t n)
{
    bool ok = PUT_LIT(out, ",\"refs\":[");
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) &&
             (refs[i].type == TW__REF_FOLLOWS_FROM ? PUT_LIT(out, "{\"type\":\"follows_from\"")
                                                   : PUT_LIT(out, "{\"type\":\"child_of\"")) &&
             PUT_LIT(out, ",\"trace_id\":") &&
             tw__json_put_trace_id(out, refs[i].trace_id_high, refs[i].trace_id_low) &&
             PUT_LIT(out, ",\"span_id\":") && tw__json_put_hex64(out, refs[i].span_id) &&
             tw__buf_put_byte(out, '}');
    return ok && tw__buf_put_byte(out, ']');
}

/* ,"process":{service, host, ip, tags}}\n: the tail of every line. */
static bool put_process_tail(tw__buf *out, const tw__process *p)
{
    const char *service = p->service_name ? p->service_name : "";
    bool ok = PUT_LIT(out, ",\"process\":{\"service\":") &&
              tw__json_append_text(out, service, strlen(service));
    const tw__tag *host = tw__process_find_tag(p, "hostname");
    if (ok && host && host->type == TW_VALUE_STRING)
        ok = PUT_LIT(out, ",\"host\":") && tw__json_append_text(out, host->v.str, host->len);
    const tw__tag *ip = tw__process_find_tag(p, "ip");
    if (ok && ip && ip->type == TW_VALUE_STRING)
        ok = PUT_LIT(out, ",\"ip\":") && tw__json_append_text(out, ip->v.str, ip->len);
    if (ok && p->n_tags)
        ok = PUT_LIT(out, ",\"tags\":") && put_tags(out, p->tags, p->n_tags);
    return ok && PUT_LIT(out, "}}\n");
}

/* ---- the encoder ------------------------------------------------------------------------------
 */

struct tw__dapper_log_encoder {
    tw__buf tail; /* `,"process":{...}}\n` */
};

tw__dapper_log_encoder *tw__dapper_log_encoder_new(const tw__process *process)
{
    if (!process)
        return NULL;
    tw__dapper_log_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc)
        return NULL;
    tw__buf_init(&enc->tail);
    if (!put_process_tail(&enc->tail, process)) {
        tw__dapper_log_encoder_free(enc);
        return NULL;
    }
    return enc;
}

void tw__dapper_log_encoder_free(tw__dapper_log_encoder *enc)
{
    if (!enc)
        return;
    tw__buf_free(&enc->tail);
    free(enc);
}

bool tw__dapper_log_encode_span(tw__dapper_log_encoder *enc, const tw__span_data *s, tw__buf *out)
{
    if (!enc || !s || !out || s->duration_us < 0 || s->start_us > INT64_MAX - s->duration_us)
        return false;
    int64_t end_us = s->start_us + s->duration_us;
    size_t before = out->len;
    tw__span_kind kind = rpc_kind_of(s);
    const char *name = s->operation ? s->operation : "";
    bool ok = PUT_LIT(out, "{\"v\":1,\"trace_id\":") &&
              tw__json_put_trace_id(out, s->trace_id_high, s->trace_id_low) &&
              PUT_LIT(out, ",\"span_id\":") && tw__json_put_hex64(out, s->span_id);
    if (ok && s->parent_id)
        ok = PUT_LIT(out, ",\"parent_id\":") && tw__json_put_hex64(out, s->parent_id);
    ok = ok && PUT_LIT(out, ",\"name\":") && tw__json_append_text(out, name, strlen(name));
    if (ok && kind != TW__KIND_NONE)
        ok = PUT_LIT(out, ",\"kind\":\"") &&
             tw__buf_put(out, tw__dapper_kind_names[kind], strlen(tw__dapper_kind_names[kind])) &&
             tw__buf_put_byte(out, '"');
    ok = ok && PUT_LIT(out, ",\"start_us\":") && tw__json_put_int(out, s->start_us) &&
         PUT_LIT(out, ",\"end_us\":") && tw__json_put_int(out, end_us) &&
         PUT_LIT(out, ",\"flags\":") && tw__json_put_uint(out, s->flags);
    if (ok && s->shared)
        ok = PUT_LIT(out, ",\"shared\":true");
    if (ok && s->is_duration_unknown)
        ok = PUT_LIT(out, ",\"duration_unknown\":true");
    if (ok && kind != TW__KIND_NONE)
        ok = put_annotations(out, kind, s->start_us, end_us);
    if (ok && s->n_tags)
        ok = PUT_LIT(out, ",\"tags\":") && put_tags(out, s->tags, s->n_tags);
    if (ok && s->n_logs)
        ok = put_logs(out, s->logs, s->n_logs);
    if (ok && s->n_refs)
        ok = put_refs(out, s->refs, s->n_refs);
    ok = ok && tw__buf_put(out, enc->tail.data, enc->tail.len);
    if (!ok)
        out->len = before;
    return ok;
}
