/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_view.h: what every Jaeger target of `tracewire
 * convert` (jaeger-thrift, jaeger-json, the collector and agent senders)
 * applies to a span before its encoder sees it, so that they agree:
 *
 *   error tag  bool stays; the string "true" or "" (any case) -> bool true;
 *              "false" -> bool false; any other string -> bool true plus a
 *              string tag error.message = that string (Zipkin's convention
 *              is to put the message in the error tag)
 *   lc         Zipkin's local-component tag `lc` is renamed `component` (the
 *              OpenTracing name Jaeger's own Zipkin converter uses), unless
 *              the span already has a `component` tag
 *   duration   a span whose duration is unknown (a one-way RPC half) gets
 *              1 µs, as Jaeger's collector gives a span without one: Jaeger
 *              has no "absent" and treats 0 as an error
 *   service    an empty service name becomes "empty-service-name", the name
 *              Jaeger's collector gives such spans
 *
 * A view is a shallow copy: the record is not changed (other writers may
 * see it), only the tag array is replaced while the view is used.
 * Single-threaded; a view is reused from span to span.
 */
#ifndef TW_WIRE_JAEGER_JAEGER_VIEW_H
#define TW_WIRE_JAEGER_JAEGER_VIEW_H

#include "wire/model/span_data.h"

#define TW__JAEGER_EMPTY_SERVICE "empty-service-name"

typedef struct tw__jaeger_view {
    tw__span_data span; /* shallow copy of the last span viewed */
    tw__tag *tags;      /* its tag array, when it differs from the record's */
    size_t cap_tags;
} tw__jaeger_view;

void tw__jaeger_view_init(tw__jaeger_view *v);
void tw__jaeger_view_clear(tw__jaeger_view *v);
/* @s itself when nothing changes, else the view (valid until the next call
 * on @v); NULL on allocation failure. */
const tw__span_data *tw__jaeger_view_of(tw__jaeger_view *v, const tw__span_data *s);
/* @p, or @scratch (a shallow copy named TW__JAEGER_EMPTY_SERVICE) when its
 * service is empty. */
const tw__process *tw__jaeger_process(const tw__process *p, tw__process *scratch);

/* OTLP targets: an empty service becomes "unknown_service", the name the
 * OpenTelemetry specification gives a resource without service.name. */
#define TW__OTLP_EMPTY_SERVICE "unknown_service"
/* @p, or @scratch (a shallow copy named @name) when its service is empty. */
const tw__process *tw__process_named(const tw__process *p, const char *name, tw__process *scratch);

#endif /* TW_WIRE_JAEGER_JAEGER_VIEW_H */
