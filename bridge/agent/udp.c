/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/udp.c: addresses and the UDP receivers of net.h (Jaeger
 * emitBatch compact/binary, Zipkin emitZipkinBatch). One thread per socket,
 * blocking in recvmmsg (up to 16 datagrams per call); an event loop would buy
 * nothing here and cost a wake-up hop. When a call fills all 16 slots more
 * datagrams are waiting: the thread then leaves the encoding of those spans
 * to the destination threads (twa_spanbuf.is_backlogged) so that the socket
 * buffer drains first. The kernel's drops for this socket (a full receive
 * buffer) are read with SO_RXQ_OVFL from each datagram, and with SO_MEMINFO
 * when the socket is idle and at the stop (drops after the last datagram),
 * and counted (tracewire_agent_udp_datagrams_dropped_total): no drop is
 * silent.
 */
#include "agent/net.h"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define VLEN 16
#define DATAGRAM_BYTES 65536

bool twa_parse_addr(const char *text, const char *default_host, unsigned int default_port,
                    struct sockaddr_storage *out, socklen_t *out_len, char *why, size_t why_size)
{
    char host[256] = "";
    unsigned long port = default_port;
    const char *p = text ? text : "";
    if (*p == '[') {
        const char *end = strchr(p, ']');
        if (!end || (size_t)(end - p - 1) >= sizeof host) {
            snprintf(why, why_size, "\"%s\": expected [IPv6]:PORT", text);
            return false;
        }
        memcpy(host, p + 1, (size_t)(end - p - 1));
        p = end + 1;
    } else {
        const char *colon = strrchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n >= sizeof host) {
            snprintf(why, why_size, "\"%s\": host too long", text);
            return false;
        }
        memcpy(host, p, n);
        p += n;
    }
    if (*p == ':') {
        char *end;
        errno = 0;
        port = strtoul(p + 1, &end, 10);
        if (end == p + 1 || *end || port > 65535 || errno) {
            snprintf(why, why_size, "\"%s\": the port must be 0..65535", text);
            return false;
        }
    } else if (*p) {
        snprintf(why, why_size, "\"%s\": expected HOST:PORT, :PORT or [IPv6]:PORT", text);
        return false;
    }
    if (!host[0] && default_host)
        snprintf(host, sizeof host, "%s", default_host);
    memset(out, 0, sizeof *out);
    if (!host[0]) { /* every interface, both families */
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_any;
        a->sin6_port = htons((uint16_t)port);
        *out_len = sizeof *a;
        return true;
    }
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res = NULL;
    char service[24];
    snprintf(service, sizeof service, "%lu", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(why, why_size, "\"%s\": %s", text, gai_strerror(rc));
        return false;
    }
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *out_len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

void twa_addr_text(const struct sockaddr *sa, char *out, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(out, size, "%s:%u", host, port);
    } else {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(out, size, "[%s]:%u", host, port);
    }
}

int twa_bind(const struct sockaddr_storage *addr, socklen_t len, int type, char *why,
             size_t why_size)
{
    int fd = socket(addr->ss_family, type | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, why_size, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1, zero = 0;
    if (type == SOCK_STREAM)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (addr->ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (const struct sockaddr *)addr, len) != 0) {
        char text[80];
        twa_addr_text((const struct sockaddr *)addr, text, sizeof text);
        snprintf(why, why_size, "cannot bind %s: %s", text, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

struct twa_udp {
    char *name;
    int fd;
    pthread_t thread;
    twa_decode_fn decode;
    twa_pipeline *pipeline;
    twa_recv_stats *stats;
    atomic_bool stop;
};

/* Counts the kernel's drops since *seen (SO_MEMINFO: the same count as
 * SO_RXQ_OVFL, readable when no datagram arrives). */
static void read_drops(twa_udp *u, uint32_t *seen)
{
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof mem;
    if (getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0 ||
        len <= SK_MEMINFO_DROPS * sizeof mem[0])
        return;
    twa_add(&u->stats->kernel_drops, (uint32_t)(mem[SK_MEMINFO_DROPS] - *seen)); /* wraps */
    *seen = mem[SK_MEMINFO_DROPS];
}

static void *udp_run(void *arg)
{
    twa_udp *u = arg;
    uint8_t *bufs = malloc((size_t)VLEN * DATAGRAM_BYTES);
    struct mmsghdr msgs[VLEN];
    struct iovec iov[VLEN];
    /* SO_RXQ_OVFL: each datagram carries the socket's drop count so far. */
    union {
        char buf[CMSG_SPACE(sizeof(uint32_t))];
        struct cmsghdr align;
    } ctl[VLEN];
    uint32_t drops_seen = 0;
    pthread_setname_np(pthread_self(), "tw-agent-udp"); /* top -H, perf */
    twa_spanbuf sb;
    twa_spanbuf_init(&sb, u->pipeline, u->stats);
    if (!bufs) {
        twa_log(TWA_ERROR, "%s: out of memory: receiver stopped", u->name);
        return NULL;
    }
    while (!atomic_load(&u->stop)) {
        memset(msgs, 0, sizeof msgs);
        for (int i = 0; i < VLEN; i++) {
            iov[i].iov_base = bufs + (size_t)i * DATAGRAM_BYTES;
            iov[i].iov_len = DATAGRAM_BYTES;
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = ctl[i].buf;
            msgs[i].msg_hdr.msg_controllen = sizeof ctl[i].buf;
        }
        int n = recvmmsg(u->fd, msgs, VLEN, MSG_WAITFORONE, NULL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                twa_log(TWA_WARN, "%s: receive: %s", u->name, strerror(errno));
            else /* idle: drops after the last datagram read are not reported with one */
                read_drops(u, &drops_seen);
            continue;
        }
        /* A full vector: more datagrams wait in the socket; this thread
         * keeps to decoding so that the kernel does not drop any. */
        sb.is_backlogged = n == VLEN;
        for (int i = 0; i < n; i++) {
            size_t len = msgs[i].msg_len;
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
                 c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL)
                    continue;
                uint32_t total;
                memcpy(&total, CMSG_DATA(c), sizeof total);
                twa_add(&u->stats->kernel_drops, (uint32_t)(total - drops_seen)); /* wraps */
                drops_seen = total;
            }
            twa_add(&u->stats->requests, 1);
            twa_add(&u->stats->bytes, len);
            char why[256];
            twa_spanbuf_input(&sb, u->name);
            twa_decode_result r = u->decode(iov[i].iov_base, len, &sb, why, sizeof why);
            if (r != TWA_DECODE_OK) {
                twa_add(&u->stats->bad_requests, 1);
                twa_log(TWA_DEBUG, "%s: datagram of %zu bytes refused: %s", u->name, len, why);
                sb.n_rejected = 0;
                twa_spanbuf_discard(&sb);
                continue;
            }
            twa_spanbuf_flush(&sb);
        }
    }
    read_drops(u, &drops_seen);
    twa_spanbuf_clear(&sb);
    free(bufs);
    return NULL;
}

twa_udp *twa_udp_start(const char *name, const struct sockaddr_storage *addr, socklen_t len,
                       twa_decode_fn decode, twa_pipeline *p, size_t rcvbuf_bytes, char *why,
                       size_t why_size)
{
    twa_udp *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    u->fd = twa_bind(addr, len, SOCK_DGRAM, why, why_size);
    if (u->fd < 0) {
        free(u);
        return NULL;
    }
    u->name = strdup(name);
    u->decode = decode;
    u->pipeline = p;
    u->stats = twa_stats_receiver(name);
    atomic_store(&u->stats->is_udp, true);
    atomic_init(&u->stop, false);
    int one = 1;
    if (setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) != 0)
        twa_log(TWA_WARN, "%s: SO_RXQ_OVFL: %s: the kernel's drops are not counted", name,
                strerror(errno));
    if (rcvbuf_bytes) {
        int want = rcvbuf_bytes > (size_t)INT32_MAX / 2 ? INT32_MAX / 2 : (int)rcvbuf_bytes;
        /* SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN only. */
        if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) != 0)
            setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    }
    /* Linux doubles the size it is given (room for its bookkeeping) and
     * reports the doubled figure: half of it is the size in the units
     * --udp-rcvbuf asks in. */
    int kernel = 0;
    socklen_t gl = sizeof kernel;
    getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &kernel, &gl);
    size_t granted = (size_t)(kernel > 0 ? kernel : 0) / 2;
    struct timeval tv = {0, 200000};
    setsockopt(u->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char at[96];
    twa_udp_address(u, at, sizeof at);
    if (rcvbuf_bytes)
        twa_log(TWA_INFO,
                "listening: %s udp %s (receive buffer: asked %zu bytes, granted %zu; the kernel "
                "reports %d, double, for its bookkeeping%s)",
                name, at, rcvbuf_bytes, granted, kernel,
                granted < rcvbuf_bytes ? "; raise net.core.rmem_max for more" : "");
    else
        twa_log(TWA_INFO,
                "listening: %s udp %s (receive buffer: the system's default, %zu bytes; the "
                "kernel reports %d, double, for its bookkeeping)",
                name, at, granted, kernel);
    int rc = pthread_create(&u->thread, NULL, udp_run, u);
    if (rc != 0) {
        snprintf(why, why_size, "cannot start a thread: %s", strerror(rc));
        close(u->fd);
        free(u->name);
        free(u);
        return NULL;
    }
    return u;
}

void twa_udp_address(const twa_udp *u, char *out, size_t size)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(u->fd, (struct sockaddr *)&ss, &len) == 0)
        twa_addr_text((struct sockaddr *)&ss, out, size);
    else
        snprintf(out, size, "?");
}

void twa_udp_stop(twa_udp *u)
{
    if (!u)
        return;
    atomic_store(&u->stop, true);
    pthread_join(u->thread, NULL);
    close(u->fd);
    free(u->name);
    free(u);
}
