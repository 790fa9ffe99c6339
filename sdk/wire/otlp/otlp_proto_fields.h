/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_fields.h: the field numbers of the OTLP protobuf
 * messages tracewire reads and writes (opentelemetry-proto:
 * collector/trace/v1, trace/v1, common/v1, resource/v1; proto/ holds the
 * files), shared by the encoder (otlp_proto.c) and the reader
 * (otlp_proto_decode.c) so that both use one list. Internal.
 */
#ifndef TW_WIRE_OTLP_PROTO_FIELDS_H
#define TW_WIRE_OTLP_PROTO_FIELDS_H

enum {
    /* ExportTraceServiceRequest */
    REQUEST_RESOURCE_SPANS = 1,
    /* ResourceSpans */
    RS_RESOURCE = 1,
    RS_SCOPE_SPANS = 2,
    /* Resource */
    RESOURCE_ATTRIBUTES = 1,
    /* ScopeSpans */
    SS_SCOPE = 1,
    SS_SPANS = 2,
    /* InstrumentationScope */
    SCOPE_NAME = 1,
    SCOPE_VERSION = 2,
    /* Span */
    SPAN_TRACE_ID = 1,
    SPAN_SPAN_ID = 2,
    SPAN_TRACE_STATE = 3,
    SPAN_PARENT_SPAN_ID = 4,
    SPAN_NAME = 5,
    SPAN_KIND = 6,
    SPAN_START = 7,
    SPAN_END = 8,
    SPAN_ATTRIBUTES = 9,
    SPAN_EVENTS = 11,
    SPAN_LINKS = 13,
    SPAN_STATUS = 15,
    /* Span.Event */
    EVENT_TIME = 1,
    EVENT_NAME = 2,
    EVENT_ATTRIBUTES = 3,
    /* Span.Link */
    LINK_TRACE_ID = 1,
    LINK_SPAN_ID = 2,
    LINK_ATTRIBUTES = 4,
    /* Status */
    STATUS_MESSAGE = 2,
    STATUS_CODE = 3,
    /* KeyValue, AnyValue, ArrayValue */
    KV_KEY = 1,
    KV_VALUE = 2,
    ANY_STRING = 1,
    ANY_BOOL = 2,
    ANY_INT = 3,
    ANY_DOUBLE = 4,
    ANY_ARRAY = 5,
    ANY_KVLIST = 6,
    ANY_BYTES = 7,
    LIST_VALUES = 1
};

#endif /* TW_WIRE_OTLP_PROTO_FIELDS_H */
