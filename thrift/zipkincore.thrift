# SPDX-License-Identifier: Apache-2.0
# zipkincore.thrift: the Zipkin v1 span model, as the Jaeger agent accepts it
# in Agent.emitZipkinBatch, written for tracewire from the public wire
# specification (jaeger-idl thrift/zipkincore.thrift, which follows
# openzipkin's zipkinCore.thrift; see docs/wire/zipkin-v1.md).
#
# Field ids, types and requiredness must match the published IDL. Fields with
# no qualifier keep Thrift's default requiredness on purpose: the writer always
# sends them and the reader tolerates their absence, which is how Zipkin v1
# data in the wild behaves. Span field ids 2 and 7 were retired upstream and
# must never be reused.
#
# The c_glib namespace differs from jaeger.thrift's on purpose: both files
# define a struct Span, and agent.thrift includes both, so one namespace would
# give two TwireJaegerSpan types (a compile error, and a clash of GType names
# at run time). twire_zipkin_* still cannot collide with the public tw_ API.

namespace c_glib TwireZipkin

# Core annotation values: the RPC and messaging events whose timestamps give a
# span its start, end and kind.
const string CLIENT_SEND = "cs"
const string CLIENT_RECV = "cr"
const string SERVER_SEND = "ss"
const string SERVER_RECV = "sr"
const string MESSAGE_SEND = "ms"
const string MESSAGE_RECV = "mr"
const string WIRE_SEND = "ws"
const string WIRE_RECV = "wr"
const string CLIENT_SEND_FRAGMENT = "csf"
const string CLIENT_RECV_FRAGMENT = "crf"
const string SERVER_SEND_FRAGMENT = "ssf"
const string SERVER_RECV_FRAGMENT = "srf"

# Binary annotation keys: "lc" names the local component of a span with no
# RPC; "ca", "sa" and "ma" carry the remote peer's address in their host.
const string LOCAL_COMPONENT = "lc"
const string CLIENT_ADDR = "ca"
const string SERVER_ADDR = "sa"
const string MESSAGE_ADDR = "ma"

# A network endpoint. ipv4 is the address packed big-endian into a signed i32
# (so 192.168.1.1 is negative); port is unsigned in meaning although i16 on the
# wire, 0 when unknown; ipv6 is 16 raw bytes when present.
struct Endpoint {
  1: i32 ipv4
  2: i16 port
  3: string service_name
  4: optional binary ipv6
}

# A timestamped event (microseconds since the epoch) recorded by host.
struct Annotation {
  1: i64 timestamp
  2: string value
  3: optional Endpoint host
}

# How BinaryAnnotation.value is to be read; numbers are big-endian.
enum AnnotationType { BOOL, BYTES, I16, I32, I64, DOUBLE, STRING }

# A tag: a key and a typed value in raw bytes, recorded by host.
struct BinaryAnnotation {
  1: string key
  2: binary value
  3: AnnotationType annotation_type
  4: optional Endpoint host
}

# A Zipkin v1 span. timestamp and duration are microseconds; a non-zero
# trace_id_high makes the trace id 128 bits wide.
struct Span {
  1: i64 trace_id
  3: string name
  4: i64 id
  5: optional i64 parent_id
  6: list<Annotation> annotations
  8: list<BinaryAnnotation> binary_annotations
  9: optional bool debug = 0
  10: optional i64 timestamp
  11: optional i64 duration
  12: optional i64 trace_id_high
}

struct Response {
  1: required bool ok
}

# The Zipkin collector's RPC interface (historically served over TChannel).
service ZipkinCollector {
  list<Response> submitZipkinBatch(1: list<Span> spans)
}
