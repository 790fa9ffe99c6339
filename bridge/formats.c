/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/formats.c: `tracewire convert`'s view of the format registry
 * (sdk/wire/formats.h): the readers (--from) are the registry's decoders,
 * in its detection order; the writers (--to) are one generic writer
 * (sinks/writers.c) per registry encoder.
 */
#include "convert.h"

#include <stdio.h>
#include <string.h>

const twb_reader *const twb_readers[] = {
    &tw__dapper_decoder,          &tw__zipkin_v2_json_decoder,
    &tw__zipkin_v1_json_decoder,  &tw__jaeger_json_decoder,
    &tw__otlp_json_decoder,       &tw__zipkin_v1_thrift_decoder,
    &tw__jaeger_thrift_decoder,   &tw__otlp_proto_decoder,
    &tw__zipkin_v2_proto_decoder, &tw__jaeger_api_v2_json_decoder,
    &tw__custom_decoder,          NULL,
};

const twb_writer_vtable *const twb_writers[] = {
    &twb_writer_zipkin_v2_json, &twb_writer_zipkin_v1_json,  &twb_writer_jaeger_json,
    &twb_writer_jaeger_thrift,  &twb_writer_otlp_json,       &twb_writer_dapper,
    &twb_writer_otlp_proto,     &twb_writer_zipkin_v2_proto, NULL,
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

/* The dry run of twb_reader_alternative: what a reader makes of the head. */
typedef struct {
    twb_input in;
    size_t emitted, rejected;
    bool first_is_emit, has_first;
} dry_run;

static bool dry_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    (void)process;
    dry_run *d = (dry_run *)in;
    tw__span_data_unref(span);
    if (!d->has_first)
        d->first_is_emit = d->has_first = true;
    d->emitted++;
    return true;
}

static bool dry_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                       const char *reason)
{
    (void)line_no;
    (void)raw;
    (void)raw_len;
    (void)reason;
    dry_run *d = (dry_run *)in;
    d->has_first = true;
    d->rejected++;
    return true;
}

const twb_reader *twb_reader_alternative(const uint8_t *head, size_t len,
                                         const twb_reader *rejected, const twb_options *opts)
{
    for (size_t i = 0; tw__wire_formats[i]; i++) {
        const twb_reader *r = tw__wire_formats[i]->decoder;
        if (!r || !r->sniff || r == rejected)
            continue;
        FILE *f = fmemopen((void *)head, len, "r");
        if (!f)
            return NULL;
        dry_run d = {
            .in = {.name = "<head>", .opts = opts, .emit = dry_emit, .reject = dry_reject}};
        tw_error *err = NULL;
        r->read(f, &d.in, &err);
        tw_error_free(err);
        fclose(f);
        if (d.first_is_emit)
            return r;
    }
    return NULL;
}
