/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/formats.c: the format registry (wire/formats.h): every module of the
 * wire layer is one row here, and one folder in sdk/wire/ (adding a format
 * touches its own files and one row).
 *
 * Detection: each decoder with a sniff function scores the first bytes of a
 * file; the highest score wins, ties going to the earlier row. `custom`
 * never detects itself: its fields must be mapped.
 *
 * The protobuf family are rows like the others: otlp-proto and
 * zipkin-v2-proto (application/x-protobuf, read and written), and
 * jaeger-api-v2-json (read only: Jaeger's api_v2 protobuf-JSON, rewritten
 * into the query-API form the jaeger-json decoder reads).
 */
#include "wire/formats.h"

#include <string.h>

static const tw__wire_format dapper = {"dapper", NULL, &tw__dapper_decoder, &tw__dapper_encoder};
static const tw__wire_format zipkin_v2_json = {
    "zipkin-v2-json", "application/json", &tw__zipkin_v2_json_decoder, &tw__zipkin_v2_json_encoder};
static const tw__wire_format zipkin_v1_json = {
    "zipkin-v1-json", "application/json", &tw__zipkin_v1_json_decoder, &tw__zipkin_v1_json_encoder};
static const tw__wire_format jaeger_json = {"jaeger-json", "application/json",
                                            &tw__jaeger_json_decoder, &tw__jaeger_json_encoder};
static const tw__wire_format otlp_json = {"otlp-json", "application/json", &tw__otlp_json_decoder,
                                          &tw__otlp_json_encoder};
static const tw__wire_format zipkin_v1_thrift = {"zipkin-v1-thrift", "application/x-thrift",
                                                 &tw__zipkin_v1_thrift_decoder, NULL};
static const tw__wire_format jaeger_thrift = {"jaeger-thrift", "application/x-thrift",
                                              &tw__jaeger_thrift_decoder,
                                              &tw__jaeger_thrift_encoder};
static const tw__wire_format otlp_proto = {"otlp-proto", "application/x-protobuf",
                                           &tw__otlp_proto_decoder, &tw__otlp_proto_encoder};
static const tw__wire_format zipkin_v2_proto = {"zipkin-v2-proto", "application/x-protobuf",
                                                &tw__zipkin_v2_proto_decoder,
                                                &tw__zipkin_v2_proto_encoder};
static const tw__wire_format jaeger_api_v2_json = {"jaeger-api-v2-json", "application/json",
                                                   &tw__jaeger_api_v2_json_decoder, NULL};
static const tw__wire_format custom = {"custom", NULL, &tw__custom_decoder, NULL};

const tw__wire_format *const tw__wire_formats[] = {
    &dapper,          &zipkin_v2_json,     &zipkin_v1_json, &jaeger_json,
    &otlp_json,       &zipkin_v1_thrift,   &jaeger_thrift,  &otlp_proto,
    &zipkin_v2_proto, &jaeger_api_v2_json, &custom,         NULL,
};

const tw__wire_format *tw__wire_format_find(const char *name)
{
    for (size_t i = 0; name && tw__wire_formats[i]; i++) {
        if (strcmp(tw__wire_formats[i]->name, name) == 0)
            return tw__wire_formats[i];
    }
    return NULL;
}

size_t tw__wire_detect(const uint8_t *head, size_t len, const tw__wire_format **out, int *scores,
                       size_t max)
{
    const tw__wire_format *found[32];
    int score_of[32];
    size_t n = 0;
    for (size_t i = 0; tw__wire_formats[i] && n < 32; i++) {
        const tw__wire_decoder *d = tw__wire_formats[i]->decoder;
        int score = d && d->sniff ? d->sniff(head, len) : 0;
        if (score <= 0)
            continue;
        /* Insertion after every equal or higher score: registry order breaks ties. */
        size_t at = n;
        while (at > 0 && score_of[at - 1] < score) {
            found[at] = found[at - 1];
            score_of[at] = score_of[at - 1];
            at--;
        }
        found[at] = tw__wire_formats[i];
        score_of[at] = score;
        n++;
    }
    if (n > max)
        n = max;
    for (size_t k = 0; k < n; k++) {
        out[k] = found[k];
        if (scores)
            scores[k] = score_of[k];
    }
    return n;
}
