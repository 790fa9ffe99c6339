/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/net.h: the agent's listeners: addresses (`host:port`,
 * `:port`, `[v6]:port`), the UDP receivers (udp.c) and the HTTP servers
 * (http_mhd.c: receivers, sampling, metrics and health).
 *
 * UDP: one thread per receiver, reading with recvmmsg (up to 16 datagrams a
 * call into 64 KiB buffers: datagrams up to 65,507 bytes), decoding each
 * (decode.h) and handing its spans to the pipeline. The socket asks for a
 * large receive buffer (--udp-rcvbuf) and the size the kernel granted is
 * logged and exported, since a small one drops datagrams silently.
 *
 * Locking: a listener is started and stopped by the main thread; its own
 * thread(s) touch only its twa_spanbuf and the thread-safe pipeline.
 */
#ifndef TW_BRIDGE_AGENT_NET_H
#define TW_BRIDGE_AGENT_NET_H

#include <sys/socket.h>

#include "agent/agent.h"
#include "agent/decode.h"

/* Parses @text (`host:port`, `:port`, `[v6]:port`, or "" for the default)
 * into a bound-ready address; `:port` and "" listen on every interface (IPv6
 * and IPv4). False with @why. */
bool twa_parse_addr(const char *text, const char *default_host, unsigned int default_port,
                    struct sockaddr_storage *out, socklen_t *out_len, char *why, size_t why_size);
/* "host:port" / "[v6]:port" of a socket address. */
void twa_addr_text(const struct sockaddr *sa, char *out, size_t size);
/* A socket of @type bound to @addr (IPV6_V6ONLY off for the any address);
 * -1 with @why. */
int twa_bind(const struct sockaddr_storage *addr, socklen_t len, int type, char *why,
             size_t why_size);

typedef struct twa_udp twa_udp;

twa_udp *twa_udp_start(const char *name, const struct sockaddr_storage *addr, socklen_t len,
                       twa_decode_fn decode, twa_pipeline *p, size_t rcvbuf_bytes, char *why,
                       size_t why_size);
/* The bound address (port 0 resolved). */
void twa_udp_address(const twa_udp *u, char *out, size_t size);
/* Stops the thread (it sees the flag within 200 ms), frees everything. */
void twa_udp_stop(twa_udp *u);

#endif /* TW_BRIDGE_AGENT_NET_H */
