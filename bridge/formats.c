/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/formats.c: the registry of `tracewire convert`'s formats: every
 * reader (--from) and writer (--to) is one row here and one file in
 * readers/ or sinks/ (STYLE.md: adding a backend touches its own file and
 * one registry line).
 *
 * Detection (--from omitted): each reader with a sniff function scores the
 * first bytes of the file; the highest score wins, ties going to the
 * earlier row. `custom` never detects itself: its fields must be mapped.
 */
#include "convert.h"

#include <string.h>

const twb_reader *const twb_readers[] = {
    &twb_reader_dapper,          &twb_reader_zipkin_v2_json,
    &twb_reader_zipkin_v1_json,  &twb_reader_jaeger_json,
    &twb_reader_otlp_json,       &twb_reader_zipkin_v1_thrift,
    &twb_reader_jaeger_thrift,   &twb_reader_otlp_proto,
    &twb_reader_zipkin_v2_proto, &twb_reader_jaeger_api_v2_json,
    &twb_reader_custom,          NULL,
};

const twb_writer_vtable *const twb_writers[] = {
    &twb_writer_zipkin_v2_json, &twb_writer_zipkin_v1_json,  &twb_writer_jaeger_json,
    &twb_writer_jaeger_thrift,  &twb_writer_otlp_json,       &twb_writer_dapper,
    &twb_writer_otlp_proto,     &twb_writer_zipkin_v2_proto, NULL,
};

const twb_reader *twb_reader_find(const char *name)
{
    for (size_t i = 0; name && twb_readers[i]; i++) {
        if (strcmp(twb_readers[i]->name, name) == 0)
            return twb_readers[i];
    }
    return NULL;
}

const twb_reader *twb_reader_detect(const uint8_t *head, size_t len)
{
    const twb_reader *best = NULL;
    int best_score = 0;
    for (size_t i = 0; twb_readers[i]; i++) {
        if (!twb_readers[i]->sniff)
            continue;
        int score = twb_readers[i]->sniff(head, len);
        if (score > best_score) {
            best = twb_readers[i];
            best_score = score;
        }
    }
    return best;
}

const twb_writer_vtable *twb_writer_find(const char *name)
{
    for (size_t i = 0; name && twb_writers[i]; i++) {
        if (strcmp(twb_writers[i]->name, name) == 0)
            return twb_writers[i];
    }
    return NULL;
}
