/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/agent/udp_blast.c: the load of `make bench` for the agent's UDP
 * receivers: Jaeger emitBatch datagrams (compact or binary, encoded by the
 * project's encoder, wire/jaeger/jaeger_thrift.h) of SPANS spans each, sent to
 * HOST:PORT at RATE spans per second for SECONDS with sendmmsg, paced every
 * millisecond. 64 different datagrams (distinct span ids) are cycled. Prints
 * one JSON line: spans and datagrams sent, bytes per datagram, seconds.
 *
 * Usage: udp_blast compact|binary HOST PORT RATE SECONDS SPANS_PER_DATAGRAM
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire/model/span_data.h"
#include "wire/jaeger/jaeger_thrift.h"

#define N_DATAGRAMS 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static tw__span_data *span(uint64_t id)
{
    tw__span_data *s = tw__span_data_new();
    s->trace_id_low = 0x1234567890abcdefULL ^ (id >> 4);
    s->span_id = id;
    s->parent_id = id > 1 ? id - 1 : 0;
    s->flags = 1;
    s->start_us = 1700000000000000LL + (int64_t)id;
    s->duration_us = 1234;
    tw__span_data_set_operation(s, "GET /api/v1/items", 17);
    static const char *keys[] = {"http.method", "http.url", "component", "peer.service"};
    static const char *vals[] = {"GET", "http://backend:8080/api/v1/items?id=42", "net/http",
                                 "backend"};
    for (int i = 0; i < 4; i++) {
        tw__tag *t = tw__span_data_push_tag(s);
        tw_value v = {.type = TW_VALUE_STRING, .len = strlen(vals[i]), .as.str = vals[i]};
        tw__tag_set(&s->arena, t, keys[i], &v, SIZE_MAX, NULL);
        s->n_tags++;
    }
    tw__tag *t = tw__span_data_push_tag(s);
    tw_value v = {.type = TW_VALUE_INT64, .as.i64 = 200};
    tw__tag_set(&s->arena, t, "http.status_code", &v, SIZE_MAX, NULL);
    s->n_tags++;
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: udp_blast compact|binary HOST PORT RATE SECONDS SPANS\n");
        return 2;
    }
    tw__thrift_protocol proto =
        strcmp(argv[1], "binary") == 0 ? TW__THRIFT_BINARY : TW__THRIFT_COMPACT;
    double rate = atof(argv[4]), seconds = atof(argv[5]);
    int per = atoi(argv[6]);
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res;
    if (getaddrinfo(argv[2], argv[3], &hints, &res) != 0)
        return 1;
    int fd = socket(res->ai_family, SOCK_DGRAM, 0);
    if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        perror("connect");
        return 1;
    }
    int sndbuf = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(proto);
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, "bench-service");
    tw_value hv = {.type = TW_VALUE_STRING, .len = 6, .as.str = "host-1"};
    tw__process_add_tag(&p, "hostname", &hv);
    tw__buf pb, spans, dg[N_DATAGRAMS];
    tw__buf_init(&pb);
    tw__buf_init(&spans);
    tw__jaeger_encode_process(enc, &p, &pb);
    uint64_t id = 1;
    size_t bytes = 0;
    for (int k = 0; k < N_DATAGRAMS; k++) {
        tw__buf_reset(&spans);
        for (int i = 0; i < per; i++) {
            tw__span_data *s = span(id++);
            tw__jaeger_encode_span(enc, s, &spans);
            tw__span_data_unref(s);
        }
        tw__buf_init(&dg[k]);
        if (!tw__jaeger_emit_batch_message(enc, pb.data, pb.len, spans.data, spans.len, (size_t)per,
                                           k, NULL, tw__jaeger_msg_seq_id(k), &dg[k])) {
            fprintf(stderr, "udp_blast: cannot encode\n");
            return 1;
        }
        bytes = dg[k].len;
    }
    if (bytes > 65507) {
        fprintf(stderr, "udp_blast: %zu-byte datagrams: use fewer spans per datagram\n", bytes);
        return 2;
    }
    double dps = rate / per; /* datagrams per second */
    double start = now_s(), end = start + seconds;
    unsigned long long sent = 0;
    struct mmsghdr msgs[64];
    struct iovec iov[64];
    while (now_s() < end) {
        double due = (now_s() - start) * dps;
        while ((double)sent < due) {
            int n = (int)(due - (double)sent + 1);
            if (n > 64)
                n = 64;
            for (int i = 0; i < n; i++) {
                tw__buf *b = &dg[(sent + (unsigned)i) % N_DATAGRAMS];
                iov[i].iov_base = b->data;
                iov[i].iov_len = b->len;
                memset(&msgs[i], 0, sizeof msgs[i]);
                msgs[i].msg_hdr.msg_iov = &iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            int r = sendmmsg(fd, msgs, (unsigned)n, 0);
            if (r > 0)
                sent += (unsigned)r;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    double took = now_s() - start;
    printf("{\"spans\": %llu, \"datagrams\": %llu, \"datagram_bytes\": %zu, \"seconds\": %.3f}\n",
           sent * (unsigned long long)per, sent, bytes, took);
    return 0;
}
