/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/tags.h: the standard names of span tags and log fields, so that
 * instrumentation does not spell strings (a typo is a compile error, not a
 * tag nobody queries).
 *
 * Two vocabularies. TW_TAG_* and TW_FIELD_* are OpenTracing's semantic
 * conventions, the model of this library: the tracer acts on
 * sampling.priority, and the Zipkin and OTLP writers map span.kind, error
 * and peer.* onto their wire formats (docs/CONFIGURATION.md has each
 * mapping). TW_ATTR_* are OpenTelemetry's semantic conventions for the same
 * things (HTTP, database, messaging, network); they are written as
 * ordinary tags, passed through unchanged by every writer, for backends
 * that query by them. Use one vocabulary per service.
 *
 * Plain string macros: no symbols, no ABI. Thread safety: not applicable.
 * Since: 0.1
 */
#ifndef TRACEWIRE_TAGS_H
#define TRACEWIRE_TAGS_H

/* ---- OpenTracing span tags ---------------------------------------------------------------- */

#define TW_TAG_SPAN_KIND                                                                           \
    "span.kind" /* "server", "client", "producer", "consumer": tw_span_set_kind */
#define TW_TAG_COMPONENT "component"                 /* the library that made the span: "libcurl" */
#define TW_TAG_ERROR "error"                         /* bool: tw_span_set_error() sets it */
#define TW_TAG_SAMPLING_PRIORITY "sampling.priority" /* > 0 forces sampling, 0 unsamples */
#define TW_TAG_HTTP_METHOD "http.method"
#define TW_TAG_HTTP_URL "http.url"
#define TW_TAG_HTTP_STATUS_CODE "http.status_code" /* int64 */
#define TW_TAG_PEER_SERVICE "peer.service"
#define TW_TAG_PEER_HOSTNAME "peer.hostname"
#define TW_TAG_PEER_IPV4 "peer.ipv4"
#define TW_TAG_PEER_IPV6 "peer.ipv6"
#define TW_TAG_PEER_PORT "peer.port" /* int64 */
#define TW_TAG_DB_TYPE "db.type"
#define TW_TAG_DB_INSTANCE "db.instance"
#define TW_TAG_DB_STATEMENT "db.statement"
#define TW_TAG_DB_USER "db.user"
#define TW_TAG_MESSAGE_BUS_DESTINATION "message_bus.destination"

/* ---- OpenTracing log fields ---------------------------------------------------------------- */

#define TW_FIELD_EVENT "event" /* "error" for an error log */
#define TW_FIELD_MESSAGE "message"
#define TW_FIELD_ERROR_KIND "error.kind"
#define TW_FIELD_ERROR_OBJECT "error.object"
#define TW_FIELD_STACK "stack"

/* ---- OpenTelemetry semantic conventions (written as plain tags) ---------------------------- */

#define TW_ATTR_HTTP_REQUEST_METHOD "http.request.method"
#define TW_ATTR_HTTP_RESPONSE_STATUS_CODE "http.response.status_code"
#define TW_ATTR_HTTP_ROUTE "http.route" /* the route template: "/stock/{id}" */
#define TW_ATTR_URL_FULL "url.full"
#define TW_ATTR_URL_PATH "url.path"
#define TW_ATTR_SERVER_ADDRESS "server.address"
#define TW_ATTR_SERVER_PORT "server.port"
#define TW_ATTR_CLIENT_ADDRESS "client.address"
#define TW_ATTR_NETWORK_PEER_ADDRESS "network.peer.address"
#define TW_ATTR_NETWORK_PEER_PORT "network.peer.port"
#define TW_ATTR_DB_SYSTEM "db.system"
#define TW_ATTR_DB_NAMESPACE "db.namespace"
#define TW_ATTR_DB_QUERY_TEXT "db.query.text"
#define TW_ATTR_MESSAGING_SYSTEM "messaging.system"
#define TW_ATTR_MESSAGING_DESTINATION_NAME "messaging.destination.name"
#define TW_ATTR_EXCEPTION_TYPE "exception.type"
#define TW_ATTR_EXCEPTION_MESSAGE "exception.message"

#endif /* TRACEWIRE_TAGS_H */
