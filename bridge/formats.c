/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/formats.c: `tracewire convert`'s view of the format registry
 * (sdk/wire/formats.h): the readers (--from) are the registry's decoders,
 * in its detection order; the writers (--to) are one generic writer
 * (sinks/writers.c) per registry encoder.
 */
#include "convert.h"

#include <string.h>

const twb_reader *const twb_readers[] = {
    &tw__dapper_decoder,        &tw__zipkin_v2_json_decoder, &tw__zipkin_v1_json_decoder,
    &tw__jaeger_json_decoder,   &tw__otlp_json_decoder,      &tw__zipkin_v1_thrift_decoder,
    &tw__jaeger_thrift_decoder, &tw__custom_decoder,         NULL,
};

const twb_writer_vtable *const twb_writers[] = {
    &twb_writer_zipkin_v2_json,
    &twb_writer_zipkin_v1_json,
    &twb_writer_jaeger_json,
    &twb_writer_jaeger_thrift,
    &twb_writer_otlp_json,
    &twb_writer_dapper,
    NULL,
};

const twb_reader *twb_reader_find(const char *name)
{
    const tw__wire_format *f = tw__wire_format_find(name);
    return f ? f->decoder : NULL;
}

const twb_reader *twb_reader_detect(const uint8_t *head, size_t len)
{
    const tw__wire_format *best;
    return tw__wire_detect(head, len, &best, NULL, 1) ? best->decoder : NULL;
}

const twb_writer_vtable *twb_writer_find(const char *name)
{
    for (size_t i = 0; name && twb_writers[i]; i++) {
        if (strcmp(twb_writers[i]->name, name) == 0)
            return twb_writers[i];
    }
    return NULL;
}
