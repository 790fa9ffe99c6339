/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/udp_sink.h: a UDP receiver on loopback for reporter tests and
 * benchmarks: binds an ephemeral port on 127.0.0.1 or ::1 and collects
 * datagrams, so tests check what really went over the socket.
 */
#ifndef TW_TESTS_UDP_SINK_H
#define TW_TESTS_UDP_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct udp_sink {
    int fd;
    unsigned int port;
    size_t n;
    uint8_t **data;
    size_t *len;
} udp_sink;

/* Binds @host ("127.0.0.1", "::1", or "dual" for a dual-stack wildcard
 * socket that receives IPv4 and IPv6 loopback traffic) on an ephemeral port. */
bool udp_sink_open(udp_sink *sink, const char *host);
/* Receives datagrams until @want have arrived in total or @timeout_ms passes
 * without one; returns the total count. */
size_t udp_sink_collect(udp_sink *sink, size_t want, int timeout_ms);
void udp_sink_close(udp_sink *sink);

/* Counts the spans in an Agent.emitBatch compact datagram without building
 * any objects (a generic Thrift compact skipper, for the benchmark's sink,
 * which must keep up with the reporter). Returns -1 when malformed. The
 * UDP reporter tests check it against the generated c_glib decoder. */
long udp_sink_count_spans(const uint8_t *data, size_t len);

#endif
