/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/udp_sink.c: see udp_sink.h.
 */
#include "udp_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool udp_sink_open(udp_sink *sink, const char *host)
{
    memset(sink, 0, sizeof(*sink));
    bool is_dual = strcmp(host, "dual") == 0;
    if (is_dual)
        host = "::";
    bool is_v6 = strchr(host, ':') != NULL;
    sink->fd = socket(is_v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    if (sink->fd < 0)
        return false;
    if (is_dual) {
        int off = 0; /* receive both 127.0.0.1 and ::1 traffic on one port */
        setsockopt(sink->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    /* A large buffer, so a burst is not lost before it is read. FORCE needs
     * CAP_NET_ADMIN; without it, take what net.core.rmem_max allows. */
    int rcvbuf = 8 << 20;
    if (setsockopt(sink->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
        setsockopt(sink->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (is_v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        inet_pton(AF_INET6, host, &a->sin6_addr);
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        inet_pton(AF_INET, host, &a->sin_addr);
        len = sizeof(*a);
    }
    if (bind(sink->fd, (struct sockaddr *)&ss, len) != 0 ||
        getsockname(sink->fd, (struct sockaddr *)&ss, &len) != 0) {
        close(sink->fd);
        return false;
    }
    sink->port = ntohs(is_v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                             : ((struct sockaddr_in *)&ss)->sin_port);
    return true;
}

size_t udp_sink_collect(udp_sink *sink, size_t want, int timeout_ms)
{
    static uint8_t buf[70000];
    while (sink->n < want) {
        struct pollfd p = {.fd = sink->fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        ssize_t got = recv(sink->fd, buf, sizeof buf, 0);
        if (got < 0)
            break;
        sink->data = realloc(sink->data, (sink->n + 1) * sizeof(*sink->data));
        sink->len = realloc(sink->len, (sink->n + 1) * sizeof(*sink->len));
        sink->data[sink->n] = malloc((size_t)got ? (size_t)got : 1);
        memcpy(sink->data[sink->n], buf, (size_t)got);
        sink->len[sink->n] = (size_t)got;
        sink->n++;
    }
    return sink->n;
}

void udp_sink_close(udp_sink *sink)
{
    for (size_t i = 0; i < sink->n; i++)
        free(sink->data[i]);
    free(sink->data);
    free(sink->len);
    if (sink->fd >= 0)
        close(sink->fd);
    memset(sink, 0, sizeof(*sink));
    sink->fd = -1;
}

/* ---- span counting: a minimal Thrift compact reader ---------------------------------------- */

typedef struct {
    const uint8_t *p, *end;
    bool is_bad;
} reader;

static uint64_t varint(reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->is_bad = true;
            return 0;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->is_bad = true;
    return 0;
}

static void skip_bytes(reader *r, uint64_t n)
{
    if ((uint64_t)(r->end - r->p) < n) {
        r->is_bad = true;
        r->p = r->end;
        return;
    }
    r->p += n;
}

static void skip_value(reader *r, int type, int depth);

static void skip_struct(reader *r, int depth)
{
    while (!r->is_bad) {
        if (r->p >= r->end) {
            r->is_bad = true;
            return;
        }
        uint8_t h = *r->p++;
        if (h == 0)
            return; /* stop */
        if ((h >> 4) == 0)
            varint(r); /* long-form field id (zigzag i16) */
        skip_value(r, h & 0x0f, depth + 1);
    }
}

static void skip_value(reader *r, int type, int depth)
{
    if (depth > 32) {
        r->is_bad = true;
        return;
    }
    switch (type) {
    case 1: /* bool true, in the header */
    case 2: /* bool false */
        break;
    case 3: /* byte */
        skip_bytes(r, 1);
        break;
    case 4: /* i16 */
    case 5: /* i32 */
    case 6: /* i64 */
        varint(r);
        break;
    case 7: /* double */
        skip_bytes(r, 8);
        break;
    case 8: /* binary */
        skip_bytes(r, varint(r));
        break;
    case 9:    /* list */
    case 10: { /* set */
        if (r->p >= r->end) {
            r->is_bad = true;
            return;
        }
        uint8_t h = *r->p++;
        uint64_t n = (h >> 4) == 15 ? varint(r) : (uint64_t)(h >> 4);
        for (uint64_t i = 0; i < n && !r->is_bad; i++)
            skip_value(r, (h & 0x0f) == 2 ? 3 : h & 0x0f, depth + 1); /* bools are bytes */
        break;
    }
    case 11: { /* map */
        uint64_t n = varint(r);
        if (n) {
            if (r->p >= r->end) {
                r->is_bad = true;
                return;
            }
            uint8_t kv = *r->p++;
            for (uint64_t i = 0; i < n && !r->is_bad; i++) {
                skip_value(r, kv >> 4, depth + 1);
                skip_value(r, kv & 0x0f, depth + 1);
            }
        }
        break;
    }
    case 12:
        skip_struct(r, depth);
        break;
    default:
        r->is_bad = true;
    }
}

long udp_sink_count_spans(const uint8_t *data, size_t len)
{
    reader r = {data, data + len, false};
    /* Message header: protocol id 0x82, version|type, seqid, name. */
    if (len < 2 || data[0] != 0x82)
        return -1;
    r.p += 2;
    varint(&r);
    skip_bytes(&r, varint(&r));
    /* Args struct: field 1 (struct) is the Batch; in it field 1 is the process
     * (skipped) and field 2 the span list, whose header holds the count. */
    for (int level = 0; level < 2 && !r.is_bad; level++) {
        if (r.p >= r.end)
            return -1;
        uint8_t h = *r.p++;
        if (h != 0x1c) /* delta 1, type struct */
            return -1;
    }
    skip_struct(&r, 0);                             /* the process */
    if (r.is_bad || r.p >= r.end || *r.p++ != 0x19) /* delta 1, type list */
        return -1;
    if (r.p >= r.end)
        return -1;
    uint8_t h = *r.p++;
    uint64_t n = (h >> 4) == 15 ? varint(&r) : (uint64_t)(h >> 4);
    return r.is_bad || (h & 0x0f) != 12 ? -1 : (long)n;
}
