/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/agent/otlp_sink.c: the backend of `make bench` for the agent:
 * a libmicrohttpd server on 127.0.0.1 (an ephemeral port, printed on the
 * first line) that accepts POST bodies (gzip inflated with zlib) and counts
 * the spans in them (occurrences of "traceId": one per span in OTLP/JSON and in
 * Zipkin v2 JSON; for application/x-protobuf, the `spans` fields of an OTLP
 * ExportTraceServiceRequest, walked by their tags and lengths), the bodies and
 * the bytes. GET /count prints {"spans":N,"bodies":N,"bytes":N}. Kept cheap
 * so that it is not the bottleneck: no JSON parse.
 *
 * Usage: otlp_sink   (runs until killed)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static atomic_ullong spans, bodies, bytes;

typedef struct req {
    unsigned char *data;
    size_t len, cap;
} req;

static size_t count_spans(const unsigned char *p, size_t len)
{
    size_t n = 0;
    const unsigned char *end = p + len;
    while (p < end) {
        const unsigned char *hit = memmem(p, (size_t)(end - p), "\"traceId\"", 9);
        if (!hit)
            break;
        n++;
        p = hit + 9;
    }
    return n;
}

/* Reads a protobuf varint at *p (< end); false when cut or too long. */
static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (unsigned int shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* The length-delimited fields numbered @want in [p, end), each handed to
 * @each (depth 0: count them); other fields are skipped by wire type.
 * Returns the count, or SIZE_MAX when the bytes are not protobuf. */
static size_t proto_walk(const unsigned char *p, const unsigned char *end, const unsigned int *path,
                         size_t depth)
{
    size_t n = 0;
    while (p < end) {
        uint64_t tag, len;
        if (!varint(&p, end, &tag))
            return SIZE_MAX;
        switch (tag & 7) {
        case 0:
            if (!varint(&p, end, &len))
                return SIZE_MAX;
            continue;
        case 1:
            p += 8;
            continue;
        case 5:
            p += 4;
            continue;
        case 2:
            if (!varint(&p, end, &len) || len > (uint64_t)(end - p))
                return SIZE_MAX;
            if ((tag >> 3) == path[0]) {
                size_t k = depth == 0 ? 1 : proto_walk(p, p + len, path + 1, depth - 1);
                if (k == SIZE_MAX)
                    return SIZE_MAX;
                n += k;
            }
            p += len;
            continue;
        default:
            return SIZE_MAX;
        }
    }
    return p == end ? n : SIZE_MAX;
}

/* ExportTraceServiceRequest.resource_spans(1).scope_spans(2).spans(2). */
static size_t count_proto_spans(const unsigned char *p, size_t len)
{
    static const unsigned int path[] = {1, 2, 2};
    size_t n = proto_walk(p, p + len, path, 2);
    return n == SIZE_MAX ? 0 : n;
}

/* Inflates a whole gzip body into *out (grown); its length, or 0. */
static size_t inflate_all(const unsigned char *in, size_t len, unsigned char **out, size_t *cap)
{
    z_stream z = {0};
    if (inflateInit2(&z, 31) != Z_OK)
        return 0;
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)len;
    size_t have = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
        if (*cap - have < 65536) {
            *cap = *cap ? *cap * 2 : 1 << 20;
            *out = realloc(*out, *cap);
        }
        z.next_out = *out + have;
        z.avail_out = (uInt)(*cap - have);
        rc = inflate(&z, Z_NO_FLUSH);
        have = *cap - z.avail_out;
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? have : 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *up,
                              size_t *up_size, void **con_cls)
{
    (void)cls;
    (void)version;
    if (strcmp(method, "GET") == 0) {
        char text[128];
        snprintf(text, sizeof text, "{\"spans\":%llu,\"bodies\":%llu,\"bytes\":%llu}\n",
                 (unsigned long long)spans, (unsigned long long)bodies, (unsigned long long)bytes);
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_COPY);
        enum MHD_Result rc = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return rc;
    }
    (void)url;
    req *q = *con_cls;
    if (!q) {
        *con_cls = calloc(1, sizeof(req));
        return MHD_YES;
    }
    if (*up_size) {
        if (q->len + *up_size > q->cap) {
            q->cap = (q->len + *up_size) * 2;
            q->data = realloc(q->data, q->cap);
        }
        memcpy(q->data + q->len, up, *up_size);
        q->len += *up_size;
        *up_size = 0;
        return MHD_YES;
    }
    bytes += q->len;
    const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    bool is_gzip = enc && strcmp(enc, "gzip") == 0;
    size_t n;
    if (type && strncmp(type, "application/x-protobuf", 22) == 0) {
        static __thread unsigned char *plain;
        static __thread size_t plain_cap;
        if (is_gzip) {
            size_t have = inflate_all(q->data, q->len, &plain, &plain_cap);
            n = count_proto_spans(plain, have);
        } else {
            n = count_proto_spans(q->data, q->len);
        }
    } else if (is_gzip) {
        /* Inflated in 1 MiB pieces: repetitive benchmark spans compress 50 times. */
        static __thread unsigned char *out;
        const size_t piece = 1 << 20;
        if (!out)
            out = malloc(piece + 16);
        z_stream z = {0};
        inflateInit2(&z, 31);
        z.next_in = q->data;
        z.avail_in = (uInt)q->len;
        n = 0;
        size_t keep = 0; /* bytes of a possibly split "traceId" kept from the last piece */
        int rc = Z_OK;
        while (rc == Z_OK) {
            z.next_out = out + keep;
            z.avail_out = (uInt)piece;
            rc = inflate(&z, Z_NO_FLUSH);
            size_t have = keep + (piece - z.avail_out);
            n += count_spans(out, have);
            keep = have < 8 ? have : 8;
            memmove(out, out + have - keep, keep);
            if (z.avail_out != 0 && rc == Z_OK && z.avail_in == 0)
                break;
        }
        inflateEnd(&z);
    } else {
        n = count_spans(q->data, q->len);
    }
    spans += n;
    bodies++;
    struct MHD_Response *r = MHD_create_response_from_buffer(2, "{}", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
                 enum MHD_RequestTerminationCode t)
{
    (void)cls;
    (void)c;
    (void)t;
    req *q = *con_cls;
    if (q) {
        free(q->data);
        free(q);
    }
    *con_cls = NULL;
}

int main(void)
{
    struct sockaddr_in loopback = {.sin_family = AF_INET};
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&loopback, MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
    if (!d)
        return 1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("%u\n", (unsigned)i->port);
    fflush(stdout);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
