/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/jaeger_thrift/read_driver.c: reads a file with the
 * `--from jaeger-thrift` reader (sdk/wire/jaeger/jaeger_thrift_read.c) and prints
 * every span with its process as JSON, in the form write_batches.py writes
 * its expectations (ids as 16 hex digits, doubles as their 64-bit pattern,
 * binary as hex), for run_reader_interop.sh. Exits 1 on any reject or error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "convert.h"

static json_t *spans_out;
static int n_rejects;

static json_t *hex64(uint64_t v)
{
    char buf[17];
    snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return json_string(buf);
}

static json_t *bytes_hex(const uint8_t *p, size_t n)
{
    char *buf = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++)
        snprintf(buf + 2 * i, 3, "%02x", p[i]);
    buf[2 * n] = '\0';
    json_t *s = json_string(buf);
    free(buf);
    return s;
}

static json_t *tags_json(const tw__tag *tags, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const tw__tag *t = &tags[i];
        json_t *item = json_array();
        json_array_append_new(item, json_string(t->key));
        char num[32];
        uint64_t bits;
        switch (t->type) {
        case TW_VALUE_STRING:
            json_array_append_new(item, json_string("string"));
            json_array_append_new(item, json_stringn(t->v.str, t->len));
            break;
        case TW_VALUE_DOUBLE:
            memcpy(&bits, &t->v.dbl, sizeof bits);
            json_array_append_new(item, json_string("double"));
            json_array_append_new(item, hex64(bits));
            break;
        case TW_VALUE_BOOL:
            json_array_append_new(item, json_string("bool"));
            json_array_append_new(item, json_boolean(t->v.boolean));
            break;
        case TW_VALUE_INT64:
            snprintf(num, sizeof num, "%" PRId64, t->v.i64);
            json_array_append_new(item, json_string("int64"));
            json_array_append_new(item, json_string(num));
            break;
        case TW_VALUE_BINARY:
            json_array_append_new(item, json_string("binary"));
            json_array_append_new(item, bytes_hex(t->v.bin, t->len));
            break;
        }
        json_array_append_new(list, item);
    }
    return list;
}

static bool emit(twb_input *in, tw__span_data *s, const tw__process *p)
{
    (void)in;
    json_t *o = json_object();
    json_object_set_new(o, "service", json_string(p->service_name));
    json_object_set_new(o, "process_tags", tags_json(p->tags, p->n_tags));
    json_object_set_new(o, "trace_id_high", hex64(s->trace_id_high));
    json_object_set_new(o, "trace_id_low", hex64(s->trace_id_low));
    json_object_set_new(o, "span_id", hex64(s->span_id));
    json_object_set_new(o, "parent_id", hex64(s->parent_id));
    json_object_set_new(o, "operation", json_string(s->operation));
    json_object_set_new(o, "flags", json_integer(s->flags));
    json_object_set_new(o, "start_us", json_integer(s->start_us));
    json_object_set_new(o, "duration_us", json_integer(s->duration_us));
    json_t *refs = json_array();
    for (size_t i = 0; i < s->n_refs; i++) {
        json_t *r = json_array();
        json_array_append_new(r, json_integer(s->refs[i].type));
        json_array_append_new(r, hex64(s->refs[i].trace_id_high));
        json_array_append_new(r, hex64(s->refs[i].trace_id_low));
        json_array_append_new(r, hex64(s->refs[i].span_id));
        json_array_append_new(refs, r);
    }
    json_object_set_new(o, "refs", refs);
    json_object_set_new(o, "tags", tags_json(s->tags, s->n_tags));
    json_t *logs = json_array();
    for (size_t i = 0; i < s->n_logs; i++) {
        json_t *l = json_array();
        json_array_append_new(l, json_integer(s->logs[i].timestamp_us));
        json_array_append_new(l, tags_json(s->logs[i].fields, s->logs[i].n_fields));
        json_array_append_new(logs, l);
    }
    json_object_set_new(o, "logs", logs);
    json_array_append_new(spans_out, o);
    tw__span_data_unref(s);
    return true;
}

static bool reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                   const char *reason)
{
    (void)line_no;
    (void)raw;
    (void)raw_len;
    fprintf(stderr, "%s: %s\n", in->name, reason);
    n_rejects++;
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    twb_options opts = {0};
    twb_input in = {.name = argv[1], .opts = &opts, .emit = emit, .reject = reject};
    spans_out = json_array();
    tw_error *err = NULL;
    tw_status st = twb_reader_jaeger_thrift.read(f, &in, &err);
    fclose(f);
    if (st != TW_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], tw_error_message(err));
        tw_error_free(err);
        return 1;
    }
    json_dumpf(spans_out, stdout, JSON_INDENT(1));
    putchar('\n');
    json_decref(spans_out);
    return n_rejects ? 1 : 0;
}
