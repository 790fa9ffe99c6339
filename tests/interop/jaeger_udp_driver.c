/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/jaeger_udp_driver.c: the C side of the Jaeger Thrift interop
 * test (run_jaeger_udp.sh), in two modes. Each writes datagrams and, next to
 * them, expected.json: what was sent, in the canonical JSON of
 * jaeger_thrift_decode.py, produced from what the library was given or
 * recorded, never from the bytes.
 *
 * Encoder mode (this file): builds span records through the model API and
 * encodes them with the wire encoder alone (sdk/wire/jaeger/jaeger_thrift.h) as
 * the agent datagrams and collector body a Jaeger backend receives, so that
 * every protocol, message form and extreme value is covered deterministically.
 *
 * Reporter mode (--reporter, reporter_capture.c): public API only; spans go
 * through tracers whose real Jaeger UDP reporter sends to a loopback socket,
 * and what arrives there is what gets decoded.
 *
 * Encoder-mode datagrams (OUTDIR/NN-*.bin, decoded in name order):
 *   01 compact emitBatch: process with every tag type; a 128-bit span with
 *      top-bit ids, every tag type, logs (one empty) and both reference
 *      types; a 64-bit root span; a typical server span; seqNo and stats.
 *   02 compact emitBatch: 20 spans (a two-byte list header), seqNo
 *      INT64_MAX (the longest varints) and extreme stats.
 *   03 compact emitBatch: no spans, no seqNo, no stats.
 *   04 binary emitBatch (agent port 6832) with the content of 01.
 *   05 bare binary Batch (collector HTTP body) with the spans of 01.
 *
 * Usage: jaeger_udp_driver [--reporter] OUTDIR. Exit 0 on success, 1 on
 * failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop_json.h"
#include "reporter_capture.h"
#include "span_builder.h"
#include "wire/jaeger/jaeger_thrift.h"

#define N_BUSY_SPANS 20

/* ---- building records ------------------------------------------------------------------- */

static tw__span_data *span_typical(uint64_t span_id, int64_t start_us)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = 0x4bf92f3577b34da6u;
    s->span_id = span_id;
    s->parent_id = 0x53995c3f42cd8ad8u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = start_us;
    s->duration_us = 15320;
    const char *op = "HTTP GET /api/orders";
    bool ok =
        tw__span_data_set_operation(s, op, strlen(op)) &&
        tw_test_add_tag(s, "span.kind", tw_test_str("server")) &&
        tw_test_add_tag(s, "http.method", tw_test_str("GET")) &&
        tw_test_add_tag(s, "http.status_code", tw_test_i64(200)) &&
        tw_test_add_tag(s, "error", tw_test_bool(false)) &&
        tw_test_add_tag(s, "db.latency_ms", tw_test_dbl(2.75)) &&
        tw__span_data_add_ref(s, TW__REF_FOLLOWS_FROM, 0, 0x4bf92f3577b34da6u, 0x1111111111111111u);
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

static bool build_process(tw__process *p)
{
    tw__process_init(p);
    tw_value v_ver = tw_test_str("C-0.1.0");
    tw_value v_ip = tw_test_i64(0x7f000001);
    tw_value v_dbl = tw_test_dbl(-1.5e300);
    tw_value v_bool = tw_test_bool(true);
    tw_value v_bin = tw_test_bin(tw_test_blob_with_nul, sizeof(tw_test_blob_with_nul));
    return tw__process_set_service(p, "tracewire-interop") &&
           tw__process_add_tag(p, "jaeger.version", &v_ver) &&
           tw__process_add_tag(p, "ip", &v_ip) && tw__process_add_tag(p, "load", &v_dbl) &&
           tw__process_add_tag(p, "canary", &v_bool) &&
           tw__process_add_tag(p, "fingerprint", &v_bin);
}

/* ---- expected JSON (the decoder's canonical form, from the records) ----------------------- */

static void json_record_tag(FILE *f, const tw__tag *t)
{
    tw_value value;
    tw__tag_to_value(t, &value);
    ij_tag(f, t->key, t->key_len, &value);
}

static void json_tags(FILE *f, const char *key, const tw__tag *tags, size_t n)
{
    fprintf(f, "\"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_record_tag(f, &tags[i]);
    }
    fputc(']', f);
}

static void json_span(FILE *f, const tw__span_data *s)
{
    fputc('{', f);
    ij_id(f, "traceIdLow", s->trace_id_low);
    fputs(", ", f);
    ij_id(f, "traceIdHigh", s->trace_id_high);
    fputs(", ", f);
    ij_id(f, "spanId", s->span_id);
    fputs(", ", f);
    ij_id(f, "parentSpanId", s->parent_id);
    fputs(", \"operationName\": ", f);
    ij_string(f, s->operation, strlen(s->operation));
    fprintf(f, ", \"flags\": %" PRIu32 ", \"startTime\": %" PRId64 ", \"duration\": %" PRId64,
            s->flags, s->start_us, s->duration_us);
    if (s->n_refs) {
        fputs(", \"references\": [", f);
        for (size_t i = 0; i < s->n_refs; i++) {
            const tw__ref *r = &s->refs[i];
            fprintf(f, "%s{\"refType\": \"%s\", ", i ? ", " : "",
                    r->type == TW__REF_CHILD_OF ? "CHILD_OF" : "FOLLOWS_FROM");
            ij_id(f, "traceIdLow", r->trace_id_low);
            fputs(", ", f);
            ij_id(f, "traceIdHigh", r->trace_id_high);
            fputs(", ", f);
            ij_id(f, "spanId", r->span_id);
            fputc('}', f);
        }
        fputc(']', f);
    }
    if (s->n_tags) {
        fputs(", ", f);
        json_tags(f, "tags", s->tags, s->n_tags);
    }
    if (s->n_logs) {
        fputs(", \"logs\": [", f);
        for (size_t i = 0; i < s->n_logs; i++) {
            fprintf(f, "%s{\"timestamp\": %" PRId64 ", ", i ? ", " : "", s->logs[i].timestamp_us);
            json_tags(f, "fields", s->logs[i].fields, s->logs[i].n_fields);
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* ---- one datagram ----------------------------------------------------------------------- */

typedef enum datagram_form { AGENT_MESSAGE, BARE_BATCH } datagram_form;

typedef struct datagram {
    const char *file;
    tw__thrift_protocol protocol;
    datagram_form form;
    const tw__process *process;
    tw__span_data *const *spans;
    size_t n_spans;
    int64_t seq_no;                /* < 0: no seqNo */
    const tw__client_stats *stats; /* NULL: no stats */
} datagram;

static bool write_file(const char *dir, const char *name, const tw__buf *bytes)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "jaeger_udp_driver: %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(bytes->data, 1, bytes->len, f) == bytes->len;
    return fclose(f) == 0 && ok;
}

static bool encode(const datagram *d, tw__buf *out)
{
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(d->protocol);
    tw__buf process = {0}, spans = {0};
    bool ok = enc && tw__jaeger_encode_process(enc, d->process, &process);
    for (size_t i = 0; ok && i < d->n_spans; i++)
        ok = tw__jaeger_encode_span(enc, d->spans[i], &spans);
    if (ok && d->form == AGENT_MESSAGE) {
        ok = tw__jaeger_emit_batch_message(enc, process.data, process.len, spans.data, spans.len,
                                           d->n_spans, d->seq_no, d->stats,
                                           tw__jaeger_msg_seq_id(d->seq_no), out) &&
             out->len == tw__jaeger_emit_batch_size(enc, process.len, d->n_spans, spans.len,
                                                    d->seq_no, d->stats);
    } else if (ok) {
        ok = tw__jaeger_batch_struct(enc, process.data, process.len, spans.data, spans.len,
                                     d->n_spans, d->seq_no, d->stats, out);
    }
    tw__buf_free(&process);
    tw__buf_free(&spans);
    tw__jaeger_encoder_free(enc);
    return ok;
}

static void json_datagram(FILE *f, const datagram *d)
{
    static const char *const formats[2][2] = {{"compact-message", "compact-struct"},
                                              {"binary-message", "binary-struct"}};
    fprintf(f, "{\"file\": \"%s\", \"format\": \"%s\", ", d->file, formats[d->protocol][d->form]);
    if (d->form == AGENT_MESSAGE)
        fprintf(f,
                "\"message\": {\"name\": \"emitBatch\", \"type\": \"ONEWAY\", \"seqid\": %" PRId32
                "}, ",
                tw__jaeger_msg_seq_id(d->seq_no));
    fputs("\"batch\": {\"process\": {\"serviceName\": ", f);
    ij_string(f, d->process->service_name, strlen(d->process->service_name));
    if (d->process->n_tags) {
        fputs(", ", f);
        json_tags(f, "tags", d->process->tags, d->process->n_tags);
    }
    fputs("}, \"spans\": [", f);
    for (size_t i = 0; i < d->n_spans; i++) {
        if (i)
            fputs(", ", f);
        json_span(f, d->spans[i]);
    }
    fputc(']', f);
    if (d->seq_no >= 0)
        fprintf(f, ", \"seqNo\": %" PRId64, d->seq_no);
    if (d->stats)
        fprintf(f,
                ", \"stats\": {\"fullQueueDroppedSpans\": %" PRId64
                ", \"tooLargeDroppedSpans\": %" PRId64 ", \"failedToEmitSpans\": %" PRId64 "}",
                d->stats->full_queue_dropped_spans, d->stats->too_large_dropped_spans,
                d->stats->failed_to_emit_spans);
    fputs("}}", f);
}

static int encoder_cases(const char *dir)
{
    int status = 1;
    tw__process process;
    tw__process empty_process;
    tw__span_data *mixed[3] = {tw_test_span_every_field(), tw_test_span_root_64bit(),
                               span_typical(7, 1000)};
    tw__span_data *busy[N_BUSY_SPANS] = {0};
    bool ok = build_process(&process);
    tw__process_init(&empty_process);
    ok = ok && tw__process_set_service(&empty_process, "idle");
    for (size_t i = 0; i < 3; i++)
        ok = ok && mixed[i];
    for (size_t i = 0; i < N_BUSY_SPANS; i++) {
        busy[i] = span_typical(0x100 + i, 1712345678901234 + (int64_t)i * 1000);
        ok = ok && busy[i];
    }
    const tw__client_stats stats = {1, 2, 3};
    const tw__client_stats extreme_stats = {INT64_MAX, 0, -1};
    const datagram datagrams[] = {
        {"01-compact-emitbatch.bin", TW__THRIFT_COMPACT, AGENT_MESSAGE, &process, mixed, 3, 42,
         &stats},
        {"02-compact-emitbatch-busy.bin", TW__THRIFT_COMPACT, AGENT_MESSAGE, &process, busy,
         N_BUSY_SPANS, INT64_MAX, &extreme_stats},
        {"03-compact-emitbatch-empty.bin", TW__THRIFT_COMPACT, AGENT_MESSAGE, &empty_process, NULL,
         0, -1, NULL},
        {"04-binary-emitbatch.bin", TW__THRIFT_BINARY, AGENT_MESSAGE, &process, mixed, 3, 42,
         &stats},
        {"05-binary-batch.bin", TW__THRIFT_BINARY, BARE_BATCH, &process, mixed, 3, 7, NULL},
    };
    const size_t n_datagrams = sizeof(datagrams) / sizeof(datagrams[0]);

    char json_path[4096];
    FILE *json = NULL;
    if (ok &&
        snprintf(json_path, sizeof(json_path), "%s/expected.json", dir) < (int)sizeof(json_path))
        json = fopen(json_path, "w");
    if (!ok || !json) {
        fprintf(stderr, "jaeger_udp_driver: cannot build the records or open expected.json\n");
        goto done;
    }
    fputs("{\"datagrams\": [\n", json);
    for (size_t i = 0; i < n_datagrams; i++) {
        tw__buf bytes = {0};
        bool written = encode(&datagrams[i], &bytes) && write_file(dir, datagrams[i].file, &bytes);
        tw__buf_free(&bytes);
        if (!written) {
            fprintf(stderr, "jaeger_udp_driver: %s: encoding or writing failed\n",
                    datagrams[i].file);
            goto done;
        }
        if (i)
            fputs(",\n", json);
        json_datagram(json, &datagrams[i]);
    }
    fputs("\n]}\n", json);
    status = 0;
done:
    if (json && fclose(json) != 0)
        status = 1;
    for (size_t i = 0; i < 3; i++)
        tw__span_data_unref(mixed[i]);
    for (size_t i = 0; i < N_BUSY_SPANS; i++)
        tw__span_data_unref(busy[i]);
    tw__process_clear(&process);
    tw__process_clear(&empty_process);
    return status;
}

int main(int argc, char **argv)
{
    bool is_reporter_mode = argc == 3 && strcmp(argv[1], "--reporter") == 0;
    if (argc != 2 && !is_reporter_mode) {
        fprintf(stderr, "usage: %s [--reporter] OUTDIR\n", argv[0]);
        return 1;
    }
    const char *dir = argv[argc - 1];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "jaeger_udp_driver: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    return is_reporter_mode ? reporter_capture(dir) : encoder_cases(dir);
}
