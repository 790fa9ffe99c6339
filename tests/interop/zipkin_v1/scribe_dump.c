/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/zipkin_v1/scribe_dump.c: runs one of the Zipkin v1 readers
 * (sdk/wire/zipkin/zipkin_v1_*.c) over a file and prints every model span it
 * emits as one line of JSON, so a peer written with another Thrift library
 * (run_scribe_interop.sh, make_scribe.py) can compare field by field.
 *
 * Usage: scribe_dump json|thrift FILE [CATEGORY]
 * Output (stdout), one line per span, keys in this order:
 *   {"trace_id_high","trace_id","id","parent_id" (16 hex each), "name", "kind",
 *    "shared", "start", "duration", "flags", "service", "process_tags":{k:v},
 *    "tags":{k:v}, "logs":[[ts,event],...]}
 * Tag values are written as JSON of their type (binary as base64).
 * Rejects and warnings go to stderr as "reject: line N: reason" and
 * "warning: reason". Exit status: 0, or 1 when anything was rejected, 2 on
 * a usage or read error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "convert.h"
#include "wire/core/json_common.h"

static size_t n_rejects;

static json_t *tag_json(const tw__tag *t)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        return json_stringn(t->v.str, t->len);
    case TW_VALUE_BOOL:
        return json_boolean(t->v.boolean);
    case TW_VALUE_INT64:
        return json_integer(t->v.i64);
    case TW_VALUE_DOUBLE:
        return json_real(t->v.dbl);
    default: {
        char *b64 = tw__base64(t->v.bin, t->len);
        json_t *j = json_string(b64 ? b64 : "");
        free(b64);
        return j;
    }
    }
}

static json_t *tags_json(const tw__tag *tags, size_t n, const char *skip)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        if (skip && strcmp(tags[i].key, skip) == 0)
            continue;
        json_object_set_new(o, tags[i].key, tag_json(&tags[i]));
    }
    return o;
}

static bool dump_emit(twb_input *in, tw__span_data *s, const tw__process *p)
{
    (void)in;
    char hex[4][17];
    tw__hex64(s->trace_id_high, hex[0]);
    tw__hex64(s->trace_id_low, hex[1]);
    tw__hex64(s->span_id, hex[2]);
    tw__hex64(s->parent_id, hex[3]);
    const tw__tag *kind = tw__span_data_find_tag(s, "span.kind");
    json_t *logs = json_array();
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *l = &s->logs[i];
        json_array_append_new(logs, json_pack("[I,o]", (json_int_t)l->timestamp_us,
                                              l->n_fields ? tag_json(&l->fields[0]) : json_null()));
    }
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:b,s:I,s:I,s:i,s:s,s:o,s:o,s:o}", "trace_id_high",
                  hex[0], "trace_id", hex[1], "id", hex[2], "parent_id", hex[3], "name",
                  s->operation ? s->operation : "", "kind",
                  kind && kind->type == TW_VALUE_STRING ? kind->v.str : NULL, "shared", s->shared,
                  "start", (json_int_t)s->start_us, "duration", (json_int_t)s->duration_us, "flags",
                  (int)s->flags, "service", p->service_name ? p->service_name : "", "process_tags",
                  tags_json(p->tags, p->n_tags, NULL), "tags",
                  tags_json(s->tags, s->n_tags, "span.kind"), "logs", logs);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text)
        puts(text);
    free(text);
    json_decref(o);
    tw__span_data_unref(s);
    return true;
}

static bool dump_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                        const char *reason)
{
    (void)in, (void)raw, (void)raw_len;
    n_rejects++;
    fprintf(stderr, "reject: line %zu: %s\n", line_no, reason);
    return true;
}

static void dump_warn(twb_input *in, size_t line_no, const char *reason)
{
    (void)in;
    fprintf(stderr, "warning: line %zu: %s\n", line_no, reason);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "json") != 0 && strcmp(argv[1], "thrift") != 0)) {
        fprintf(stderr, "usage: scribe_dump json|thrift FILE [CATEGORY]\n");
        return 2;
    }
    const twb_reader *reader =
        strcmp(argv[1], "json") == 0 ? &twb_reader_zipkin_v1_json : &twb_reader_zipkin_v1_thrift;
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 2;
    }
    twb_options opts = {.scribe_category = argc > 3 ? argv[3] : NULL};
    twb_input in = {.name = argv[2],
                    .opts = &opts,
                    .emit = dump_emit,
                    .reject = dump_reject,
                    .warn = dump_warn};
    tw_error *err = NULL;
    tw_status st = reader->read(f, &in, &err);
    fclose(f);
    if (st != TW_OK) {
        fprintf(stderr, "read: %s\n", err ? tw_error_message(err) : tw_status_name(st));
        tw_error_free(err);
        return 2;
    }
    tw__span_data_pool_trim();
    return n_rejects ? 1 : 0;
}
