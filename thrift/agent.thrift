# SPDX-License-Identifier: Apache-2.0
# agent.thrift: the interface of the Jaeger agent's UDP listeners, written for
# tracewire from the public wire specification (jaeger-idl thrift/agent.thrift;
# see docs/wire/jaeger-thrift.md).
#
# Each UDP datagram is one complete oneway Thrift message: a message header
# naming the method, then the method's argument struct. Port 6831 takes the
# compact protocol and port 6832 the binary protocol for emitBatch; 5775 took
# compact emitZipkinBatch and is legacy. There is no reply, so a client never
# learns whether a datagram arrived; Batch.seqNo lets the agent count losses.
#
# tracewire writes these messages through the Thrift protocol API in
# sdk/src/wire/jaeger_thrift.c; the generated code of this file serves tests.

include "jaeger.thrift"
include "zipkincore.thrift"

namespace c_glib TwireJaeger

service Agent {
  oneway void emitZipkinBatch(1: list<zipkincore.Span> spans)
  oneway void emitBatch(1: jaeger.Batch batch)
}
