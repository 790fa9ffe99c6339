/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_map.h: the one mapping between the span model
 * (wire/model/span_data.h) and OpenTelemetry's trace data model (internal).
 *
 * OTLP has two encodings, JSON (otlp_json.c and the bridge's otlp-json
 * reader) and protobuf (otlp_proto.c, otlp_proto_decode.c). They differ in
 * bytes only: which tag becomes an attribute, the kind, the status, the
 * events and links, the resource, and back, are decided here once, so the
 * two encodings cannot drift apart. Encoders ask for a "plan" of a span
 * (what to write) and write it in their own syntax; decoders read their
 * syntax into plain fields and call the builders below, which apply the
 * reading rules and fill a model record.
 *
 * The rules (docs/bridge.md and docs/CONFIGURATION.md repeat them for
 * users; they follow the OpenTelemetry Collector's Jaeger translator, so a
 * span reads the same whichever way it reaches a backend):
 *
 * Model -> OTLP
 *   resource   service.name = the process's service, then the process tags
 *              (the last of repeated keys wins), typed; `hostname` is
 *              renamed host.name (unless the process has a host.name tag);
 *              a process tag named service.name is left out
 *   scope      name "tracewire", version tw_version()
 *   kind       from the last span.kind tag: 1 INTERNAL (also with no tag or
 *              an unknown value), 2 SERVER, 3 CLIENT, 4 PRODUCER,
 *              5 CONSUMER; a known value is not repeated as an attribute
 *   times      start_us * 1000 and (start_us + duration_us) * 1000 ns (a
 *              start <= 0 is written as 0; past 2^64 ns, 2^64 - 1)
 *   attributes the span's tags, the last of repeated keys winning, minus
 *              those the kind and the status consumed
 *   events     one per log: name = the first string `event` field (absent
 *              when none; every string `event` field is then left out),
 *              attributes = the other fields, the last of a key winning
 *   links      every reference except the first that is the parent (same
 *              trace and span id as the parent): attribute
 *              opentracing.ref_type = "child_of" | "follows_from"
 *   status     from the last `error` tag: true (bool true, a non-zero
 *              number, "true") -> ERROR with the message of the first
 *              event=error log, else of a string otel.status_description
 *              tag (then not repeated); false -> no status; another string
 *              -> ERROR with it as the message. The error tag is not
 *              repeated. With no error tag, otel.status_code "OK"/"ERROR"/
 *              "UNSET" (any case) with otel.status_description give the
 *              status and are not repeated. Otherwise no status (UNSET).
 *
 * OTLP -> model
 *   resource   service.name (the text of any value) -> the service; every
 *              other attribute -> a process tag, typed
 *   scope      name and version -> span tags otel.scope.name /
 *              otel.scope.version when not empty; the scope "tracewire"
 *              (ours) is not kept, so OTLP -> X -> OTLP adds nothing
 *   ids        parent 0 or equal to the span: root; else the parent and a
 *              CHILD_OF reference to it first in the references
 *   times      ns -> µs rounded half away from zero (a start below 500 ns is
 *              1 µs: 0 means "no start" in the model); duration = end - start
 *              in µs, at least 1 when end > start in ns, 0 when the end is
 *              absent or earlier (a warning); no start, or 0: the span is
 *              refused
 *   kind       2..5 -> tag span.kind server|client|producer|consumer; 0, 1:
 *              no tag (the model's kind-less span, which encodes as
 *              INTERNAL)
 *   links      references: CHILD_OF when an attribute opentracing.ref_type
 *              is "child_of" (any case), else FOLLOWS_FROM
 *   status     ERROR -> tag error = true (bool) and the message in
 *              otel.status_description; OK -> otel.status_code = "OK";
 *              UNSET: nothing
 *   trace_state -> tag w3c.tracestate when not empty
 *   events     logs: the time; the name -> field `event` first (when not
 *              empty); attributes -> fields, typed
 *   flags      TW__FLAG_SAMPLED (exported spans were sampled)
 *   Tag order: attributes, span.kind, status tags, w3c.tracestate, scope
 *   tags.
 *
 * Locking: none; plans belong to the caller. Memory: a plan of a span with
 * more than 16 tags (or a log with more than 16 fields) holds one heap
 * array; clear it.
 */
#ifndef TW_WIRE_OTLP_MAP_H
#define TW_WIRE_OTLP_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"

/* The instrumentation scope our encoders write. */
#define TW__OTLP_SCOPE_NAME "tracewire"
/* The link attribute that carries an OpenTracing reference type. */
#define TW__OTLP_REF_TYPE_KEY "opentracing.ref_type"

/* OTLP SpanKind and Status.StatusCode numbers (trace.proto). */
enum {
    TW__OTLP_KIND_UNSPECIFIED = 0,
    TW__OTLP_KIND_INTERNAL = 1,
    TW__OTLP_KIND_SERVER = 2,
    TW__OTLP_KIND_CLIENT = 3,
    TW__OTLP_KIND_PRODUCER = 4,
    TW__OTLP_KIND_CONSUMER = 5
};
enum { TW__OTLP_STATUS_UNSET = 0, TW__OTLP_STATUS_OK = 1, TW__OTLP_STATUS_ERROR = 2 };

/* ---- model -> OTLP ------------------------------------------------------------------------ */

/* What an encoder writes for one span. */
typedef struct tw__otlp_span_plan {
    uint32_t kind;                 /* TW__OTLP_KIND_INTERNAL..CONSUMER */
    uint32_t status_code;          /* TW__OTLP_STATUS_*; UNSET: no status message at all */
    const tw__tag *status_message; /* a string tag of the span, or NULL */
    uint64_t start_ns, end_ns;
    size_t parent_ref;  /* index in refs of the reference that is the parent (not a
                           link); SIZE_MAX when none */
    bool *is_attribute; /* per tag: written as an attribute */
    bool small[16];
} tw__otlp_span_plan;

/* Plans @s. False on allocation failure (nothing to clear then). */
bool tw__otlp_plan_span(const tw__span_data *s, tw__otlp_span_plan *plan);
void tw__otlp_span_plan_clear(tw__otlp_span_plan *plan);

/* What an encoder writes for one log (an event). */
typedef struct tw__otlp_event_plan {
    uint64_t time_ns;
    const tw__tag *name; /* the first string `event` field, or NULL */
    bool *is_attribute;  /* per field */
    bool small[16];
} tw__otlp_event_plan;

bool tw__otlp_plan_event(const tw__log *log, tw__otlp_event_plan *plan);
void tw__otlp_event_plan_clear(tw__otlp_event_plan *plan);

/* "child_of" or "follows_from". */
const char *tw__otlp_ref_type_name(tw__ref_type type);

/* A µs time as OTLP's unsigned ns (0 for a time <= 0; UINT64_MAX past the
 * year 2554). */
uint64_t tw__otlp_unix_nano(int64_t us);

/* One resource attribute: the key to write and the typed value. */
typedef struct tw__otlp_attr {
    const char *key;
    size_t key_len;
    const tw__tag *value;
} tw__otlp_attr;

/* The resource attributes of a process, in the order to write them. It
 * points into itself (the service tag) and into the process: do not copy
 * it, keep the process alive while it is used. */
typedef struct tw__otlp_resource_plan {
    tw__otlp_attr *attrs;
    size_t n_attrs;
    tw__tag service; /* service.name, a string tag made from the service */
} tw__otlp_resource_plan;

/* Plans the resource of @p (NULL: no attributes). False on allocation
 * failure (nothing to clear). */
bool tw__otlp_plan_resource(const tw__process *p, tw__otlp_resource_plan *plan);
void tw__otlp_resource_plan_clear(tw__otlp_resource_plan *plan);

/* ---- OTLP -> model ------------------------------------------------------------------------ */

/* A span's scalar fields as a decoder read them (strings need not be
 * NUL-terminated; NULL with length 0 is absent). */
typedef struct tw__otlp_span_fields {
    uint64_t trace_id_high, trace_id_low, span_id;
    uint64_t parent_id; /* 0: none */
    const char *name;
    size_t name_len;
    int64_t kind; /* 0..5 (the decoder refuses other values or names) */
    bool has_start, has_end;
    int64_t start_ns, end_ns; /* valid when has_*; >= 0 */
    int64_t status_code;      /* TW__OTLP_STATUS_*; others read as UNSET */
    const char *status_message;
    size_t status_message_len;
    const char *trace_state;
    size_t trace_state_len;
} tw__otlp_span_fields;

typedef enum tw__otlp_build {
    TW__OTLP_BUILD_OK = 0,
    TW__OTLP_BUILD_NO_START, /* no start time, or 0: the decoder refuses the span */
    TW__OTLP_BUILD_NOMEM
} tw__otlp_build;

/* Step 1: a new record with the ids, parent (and its CHILD_OF reference),
 * name, times, flags. *is_end_before_start is set when the end is earlier
 * than the start (the decoder warns; the duration is 0). */
tw__otlp_build tw__otlp_span_new(const tw__otlp_span_fields *f, tw__span_data **out,
                                 bool *is_end_before_start);
/* Step 2, any number of times: a link, CHILD_OF when @is_child_of (see
 * tw__otlp_link_attribute_is_child_of). False on allocation failure. */
bool tw__otlp_span_add_link(tw__span_data *s, uint64_t trace_hi, uint64_t trace_lo,
                            uint64_t span_id, bool is_child_of);
/* Whether a link attribute says CHILD_OF: key opentracing.ref_type with the
 * string value "child_of" in any case. */
bool tw__otlp_link_attribute_is_child_of(const char *key, const char *value, size_t value_len);
/* Step 3, per attribute in input order: a typed tag. False on allocation
 * failure. */
bool tw__otlp_span_add_attribute(tw__span_data *s, const char *key, const tw_value *value);
/* The same with the key's length given (@key_len bytes, no NUL among them,
 * need not be NUL-terminated): the protobuf reader's keys are in its input. */
bool tw__otlp_span_add_attribute_n(tw__span_data *s, const char *key, size_t key_len,
                                   const tw_value *value);
/* Step 4: the tags the scalar fields and the scope make (kind, status,
 * trace state, scope; strings of the scope need not be NUL-terminated).
 * False on allocation failure. */
bool tw__otlp_span_add_field_tags(tw__span_data *s, const tw__otlp_span_fields *f,
                                  const char *scope_name, size_t scope_name_len,
                                  const char *scope_version, size_t scope_version_len);
/* Step 5, per event: a log at @time_ns with room for @n_attributes more
 * fields; its `event` field (the name) is added when @name is not empty.
 * NULL on allocation failure. Fill it with tw__otlp_event_add_attribute. */
tw__log *tw__otlp_span_add_event(tw__span_data *s, int64_t time_ns, const char *name,
                                 size_t name_len, size_t n_attributes);
/* A field of @log (at most the n_attributes it was made with). */
bool tw__otlp_event_add_attribute(tw__span_data *s, tw__log *log, const char *key,
                                  const tw_value *value);
/* The same with the key's length given (as tw__otlp_span_add_attribute_n). */
bool tw__otlp_event_add_attribute_n(tw__span_data *s, tw__log *log, const char *key, size_t key_len,
                                    const tw_value *value);

/* ns -> µs, rounded half away from zero. */
int64_t tw__otlp_ns_to_us(int64_t ns);

/* The resource: sets the service of @p from the value of service.name (its
 * text: a string as it is, other types as tw__value_text writes them).
 * False on allocation failure. */
bool tw__otlp_process_set_service(tw__process *p, const tw_value *value);
/* Whether a resource attribute is the service name (not a process tag). */
bool tw__otlp_is_service_key(const char *key);

#endif /* TW_WIRE_OTLP_MAP_H */
