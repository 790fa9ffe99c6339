/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/framing.h: the body framing of each HTTP trace format, written
 * once for the whole tree: how a list of spans of one process becomes the
 * body of one POST. Used by the SDK's HTTP reporters (report/http_sender.c),
 * `tracewire convert --send` (through transport/sender.h) and `tracewire
 * agent` (bridge/agent/batch.c); the spans themselves are encoded by the
 * wire layer's one encoder per format (sdk/wire/).
 *
 *   tw__http_jaeger_format      application/x-thrift: a jaeger.thrift Batch
 *                               (binary protocol), one process per body
 *   tw__http_zipkin_format      application/json: a Zipkin v2 span list;
 *                               each span carries its process (localEndpoint),
 *                               so one body may mix processes (encode_with)
 *   tw__http_otlp_format        application/json: an ExportTraceServiceRequest,
 *                               one resourceSpans (process) per body
 *   tw__http_otlp_proto_format  application/x-protobuf: the same in protobuf
 *
 * Ownership: a tw__http_format is its creator's (new_format/free_format);
 * the process given to open stays the caller's and must outlive the
 * format's use of it. Items are the creator's until free_item.
 * Locking: none; a format instance belongs to one thread at a time (the
 * vtables are immutable and shared).
 */
#ifndef TW_TRANSPORT_FRAMING_H
#define TW_TRANSPORT_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracewire/common.h"
#include "transport/http_head.h"       /* tw__http_retry_rule */
#include "wire/jaeger/jaeger_thrift.h" /* tw__buf, tw__client_stats, tw__process */

/* ---- formats ------------------------------------------------------------------------------ */

typedef struct tw__http_format tw__http_format;

/* What encode's items are: one span's bytes as they go into a body. A
 * caller that allocates items itself (encode_to) gives build pointers to
 * this layout. */
typedef struct tw__http_item {
    size_t len;
    uint8_t data[];
} tw__http_item;

/*
 * A body format. The sender keeps the pending spans as opaque encoded items
 * (one per span, made by encode) and asks the format for the exact size a
 * body of n items would have, so batches are cut on the real encoded size.
 * body_size must equal the length that build writes, byte for byte.
 */
typedef struct tw__http_format_vtable {
    size_t size;
    const char *name;               /* the reporter's name: "jaeger-http" */
    const char *content_type;       /* of the POST body */
    const char *default_endpoint;   /* full URL */
    tw__http_retry_rule retry_rule; /* which answers are retried (transport/http_head.h) */
    tw__http_format *(*new_format)(void);
    void (*free_format)(tw__http_format *f); /* NULL is a no-op */
    /* Prepares what every body repeats; @process stays valid until
     * free_format. */
    tw_status (*open)(tw__http_format *f, const tw__process *process, tw_error **err);
    /* One span as an item; NULL on failure. *size: the bytes it adds. */
    void *(*encode)(tw__http_format *f, const tw__span_data *span, size_t *size);
    void (*free_item)(void *item);
    /* Exact body size of @n >= 1 items whose sizes total @items_size. */
    size_t (*body_size)(const tw__http_format *f, size_t n, size_t items_size);
    /* Writes the body of items[0..n) into @out (replaced); seqNo and stats
     * go where the format has room for them (Jaeger's Batch). False on
     * allocation failure. */
    bool (*build)(tw__http_format *f, void *const *items, size_t n, int64_t seq_no,
                  const tw__client_stats *stats, tw__buf *out);
    /* NULL where a body holds one process. Non-NULL where each span carries
     * its own process (Zipkin's localEndpoint): one span encoded with
     * @process (NULL: none), whatever the format was opened with, so one
     * body may mix the spans of many processes. */
    void *(*encode_with)(tw__http_format *f, const tw__process *process, const tw__span_data *span,
                         size_t *size);
    /* Appends the bytes encode's item would hold to @out, so that a caller
     * can keep them in memory of its own (a tw__http_item it allocates)
     * instead of one allocation per span; false on failure. */
    bool (*encode_to)(tw__http_format *f, const tw__span_data *span, tw__buf *out);
} tw__http_format_vtable;

extern const tw__http_format_vtable tw__http_jaeger_format;
extern const tw__http_format_vtable tw__http_zipkin_format;
extern const tw__http_format_vtable tw__http_otlp_format;
extern const tw__http_format_vtable tw__http_otlp_proto_format; /* OTLP protobuf */

#endif /* TW_TRANSPORT_FRAMING_H */
