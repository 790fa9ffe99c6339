# SPDX-License-Identifier: Apache-2.0
# jaeger.thrift: the span model that Jaeger clients send to the agent and the
# collector, written for tracewire from the public wire specification (the
# jaeger-idl repository, thrift/jaeger.thrift; see docs/wire/jaeger-thrift.md).
#
# Field ids, types and requiredness are the wire contract: they must stay
# identical to the published IDL, or a Jaeger agent would skip or misread our
# fields. Names only matter to generated code. Only the c_glib namespace is
# ours: it prefixes every generated symbol with twire_jaeger_ so that the
# generated code can never collide with the public tw_ API.
#
# Identifiers are unsigned 64-bit values carried in signed i64 fields (a plain
# cast, no conversion); times are microseconds since the Unix epoch.

namespace c_glib TwireJaeger

# The type of a Tag's value; it names the one value field that is set.
enum TagType { STRING, DOUBLE, BOOL, LONG, BINARY }

# A typed key/value pair. Jaeger keeps it flat (one optional field per value
# type) instead of using a union, and so do we on the wire.
struct Tag {
  1: required string  key
  2: required TagType vType
  3: optional string  vStr
  4: optional double  vDouble
  5: optional bool    vBool
  6: optional i64     vLong
  7: optional binary  vBinary
}

# A timestamped event inside a span, made of tags.
struct Log {
  1: required i64       timestamp
  2: required list<Tag> fields
}

enum SpanRefType { CHILD_OF, FOLLOWS_FROM }

# A causal link from this span to another span, possibly in another trace.
struct SpanRef {
  1: required SpanRefType refType
  2: required i64         traceIdLow
  3: required i64         traceIdHigh
  4: required i64         spanId
}

# One unit of work. traceIdHigh is 0 for a 64-bit trace id; parentSpanId is 0
# for a root span; flags: 1 sampled, 2 debug (8 firehose in some clients).
struct Span {
  1:  required i64           traceIdLow
  2:  required i64           traceIdHigh
  3:  required i64           spanId
  4:  required i64           parentSpanId
  5:  required string        operationName
  6:  optional list<SpanRef> references
  7:  required i32           flags
  8:  required i64           startTime
  9:  required i64           duration
  10: optional list<Tag>     tags
  11: optional list<Log>     logs
}

# The emitting service and its process-wide tags (hostname, ip, client
# version), sent once per batch rather than once per span.
struct Process {
  1: required string    serviceName
  2: optional list<Tag> tags
}

# Counters a client keeps since it started, so that the backend can report
# loss even when the application exports no metrics of its own.
struct ClientStats {
  1: required i64 fullQueueDroppedSpans
  2: required i64 tooLargeDroppedSpans
  3: required i64 failedToEmitSpans
}

# What one UDP datagram or one collector HTTP request carries. seqNo grows by
# one per batch so that the receiver can count lost datagrams.
struct Batch {
  1: required Process     process
  2: required list<Span>  spans
  3: optional i64         seqNo
  4: optional ClientStats stats
}

struct BatchSubmitResponse {
  1: required bool ok
}

# The collector's RPC interface (historically served over TChannel).
service Collector {
  list<BatchSubmitResponse> submitBatches(1: list<Batch> batches)
}
