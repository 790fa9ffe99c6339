/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/udp_sender.c: the Jaeger agent UDP transport: batches spans into
 * Thrift compact Agent.emitBatch datagrams (wire/jaeger/jaeger_thrift.h) and sends
 * them to the agent (default 127.0.0.1:6831, IPv4 or IPv6); or, as
 * "jaeger-udp-binary", the same datagrams in the Thrift binary protocol for
 * the agent's port 6832 (the encoder sizes both exactly).
 *
 * Packet sizing is exact, not estimated: each span is encoded once on its own
 * (a struct encodes the same inside the span list), and the size of the whole
 * datagram with n spans is computed from the real lengths of the process,
 * the spans, the list header, seqNo and ClientStats. A span that does not fit
 * even alone is dropped and counted as too large; otherwise the current
 * batch is sent first when the span would overflow it.
 *
 * The host name is resolved at creation (failure is not fatal, as in Jaeger's
 * Go client), again every resolve interval, and after a send error (at most
 * once a second), so an agent that restarts on a new address is found. The
 * socket is connected, so an absent agent shows as ECONNREFUSED on a later
 * send and is counted as failed, never fatal.
 *
 * After fork() the child forgets the partial batch (the parent sends it)
 * and keeps the connected socket, which both processes may send on; a
 * sender that was busy at the fork is replaced in the child by a clone of
 * its configuration (fork_clone) with a socket of its own.
 *
 * Locking: none; a sender is used only by its reporter thread (and by
 * start/free, which happen before and after that thread runs, and by the
 * fork hook in a single-threaded child).
 */
#include "report/report.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "wire/jaeger/jaeger_thrift.h"

typedef struct {
    tw__sender base;
    const char *name; /* "jaeger-udp" or "jaeger-udp-binary", for log lines */
    tw__thrift_protocol protocol;
    char *host;
    char port[8];
    size_t max_packet;
    int64_t resolve_interval_ns;

    int fd;           /* -1 when no socket */
    int family;       /* of fd */
    bool has_address; /* fd is connected to a resolved address */
    int64_t last_resolve_ns;
    int last_errno; /* last send error logged, to log each new error once */
    /* Shared with the other senders of one run (tw__udp_sender_share_errors):
     * the last error any of them logged, never reset; NULL: last_errno. */
    int *shared_errno;

    tw__jaeger_encoder *enc;
    tw__buf process; /* encoded Process struct */
    tw__buf spans;   /* encoded spans of the current batch */
    size_t n_spans;
    tw__client_stats batch_stats; /* ClientStats snapshot for the current batch */
    size_t empty_batch_len;       /* its datagram's size without spans (0: failed) */
    int64_t seq_no;
} udp_sender;

/* The resolver: getaddrinfo, replaceable by tests (a seam for tests
 * for clocks and ids) so that an agent moving to a new address can be
 * simulated without touching /etc/hosts. Read by reporter threads; set only
 * while no UDP reporter runs. */
static tw__resolve_fn resolver = getaddrinfo;

void tw__udp_sender_set_resolver(tw__resolve_fn fn)
{
    resolver = fn ? fn : getaddrinfo;
}

static void close_socket(udp_sender *u)
{
    if (u->fd >= 0)
        close(u->fd);
    u->fd = -1;
    u->has_address = false;
}

/* Resolves the agent address and (re)connects the socket. Returns false when
 * the name does not resolve or no socket could be made; the old connection
 * is kept in that case. */
static bool resolve(udp_sender *u)
{
    u->last_resolve_ns = tw__mono_ns();
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res = NULL;
    int rc = resolver(u->host, u->port, &hints, &res);
    if (rc != 0) {
        tw__count(&u->base.counters->resolve_failures, 1);
        tw__log_for(TW_LOG_WARN, u->name, "%s: cannot resolve agent host \"%s\": %s", u->name,
                    u->host, gai_strerror(rc));
        return false;
    }
    bool ok = false;
    for (struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next) {
        if (u->fd < 0 || u->family != ai->ai_family) {
            int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0)
                continue;
            /* Room for several full datagrams, so a burst does not block
             * the reporter thread on a small default buffer. */
            int sndbuf = (int)u->max_packet * 8;
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
            close_socket(u);
            u->fd = fd;
            u->family = ai->ai_family;
        }
        if (connect(u->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            ok = true;
            u->has_address = true;
        }
    }
    freeaddrinfo(res);
    if (!ok)
        tw__log_for(TW_LOG_WARN, u->name, "%s: cannot connect a socket to %s:%s", u->name, u->host,
                    u->port);
    return ok;
}

static size_t batch_size(udp_sender *u, size_t n_spans, size_t spans_len)
{
    return tw__jaeger_emit_batch_size(u->enc, u->process.len, n_spans, spans_len, u->seq_no,
                                      &u->batch_stats);
}

/* At the start of a batch: its ClientStats, and the size of its datagram
 * without spans. */
static void snapshot_stats(udp_sender *u)
{
    tw__report_counters *c = u->base.counters;
    u->batch_stats.full_queue_dropped_spans = (int64_t)tw__read(&c->queue_full);
    u->batch_stats.too_large_dropped_spans = (int64_t)tw__read(&c->too_large);
    u->batch_stats.failed_to_emit_spans = (int64_t)tw__read(&c->failed);
    u->empty_batch_len = batch_size(u, 0, 0);
}

/* Whether the current batch with @spans_len bytes of @n_spans spans fits
 * the datagram. The list header of n spans is at most 5 bytes longer than
 * that of none (a varint of the count): below that margin the answer needs
 * no encoding; near the limit the exact size decides. */
static bool batch_fits(udp_sender *u, size_t n_spans, size_t spans_len)
{
    if (u->empty_batch_len != 0 && u->empty_batch_len + 5 + spans_len <= u->max_packet)
        return true;
    size_t size = batch_size(u, n_spans, spans_len);
    return size != 0 && size <= u->max_packet;
}

static void emit(udp_sender *u)
{
    if (u->n_spans == 0)
        return;
    size_t n = u->n_spans;
    tw__report_counters *c = u->base.counters;
    int64_t now = tw__mono_ns();
    /* No name lookup while closing: getaddrinfo cannot be interrupted, and
     * a DNS server that does not answer would hold close past its deadline. */
    bool is_closing = atomic_load_explicit(&u->base.give_up_at_ns, memory_order_relaxed) != 0;
    if (!is_closing && (!u->has_address || (u->resolve_interval_ns > 0 &&
                                            now - u->last_resolve_ns >= u->resolve_interval_ns)))
        resolve(u);
    bool ok = false;
    tw__jaeger_frame frame;
    if (u->has_address &&
        tw__jaeger_emit_batch_frame(u->enc, u->process.len, n, u->spans.len, u->seq_no,
                                    &u->batch_stats, (int32_t)(u->seq_no & 0x7fffffff), &frame)) {
        /* One datagram gathered from the envelope, the process and the
         * spans where they are: nothing is copied in user space. */
        struct iovec iov[5] = {
            {(void *)frame.data, frame.head_len},
            {u->process.data, u->process.len},
            {(void *)(frame.data + frame.head_len), frame.mid_len},
            {u->spans.data, u->spans.len},
            {(void *)(frame.data + frame.head_len + frame.mid_len), frame.tail_len}};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 5};
        size_t packet_len =
            frame.head_len + u->process.len + frame.mid_len + u->spans.len + frame.tail_len;
        ssize_t rc = sendmsg(u->fd, &msg, 0);
        /* A closed port answers with ICMP port unreachable, which the
         * connected socket keeps as a pending error: on loopback it is
         * there as soon as send returns. Reading it now (one getsockopt, on
         * this thread) counts the datagram it refused as failed, and makes
         * a lone datagram to an absent agent (a short program's only one)
         * visible rather than counted as sent. */
        int pending = 0;
        socklen_t pending_len = sizeof pending;
        if (rc == (ssize_t)packet_len &&
            getsockopt(u->fd, SOL_SOCKET, SO_ERROR, &pending, &pending_len) == 0 && pending) {
            rc = -1;
            errno = pending;
        }
        if (rc == (ssize_t)packet_len) {
            ok = true;
            u->last_errno = 0;
            tw__count(&c->sent, n);
            tw__count(&c->batches, 1);
            tw__count(&c->bytes, packet_len);
        } else {
            int e = rc < 0 ? errno : EMSGSIZE;
            int *logged = u->shared_errno ? u->shared_errno : &u->last_errno;
            if (e != *logged)
                tw__log_for(TW_LOG_WARN, u->name,
                            "%s: send to %s:%s failed: %s; spans are being dropped%s (counted "
                            "as failed to emit; this message is not repeated until the error "
                            "changes)",
                            u->name, u->host, u->port, strerror(e),
                            e == ECONNREFUSED ? " (nothing listens there: is a Jaeger agent "
                                                "running? JAEGER_AGENT_HOST, JAEGER_AGENT_PORT)"
                                              : "");
            u->last_errno = e;
            *logged = e;
            /* Re-resolve soon: the agent may have moved (rate-limited to
             * once a second by last_resolve_ns). */
            if (now - u->last_resolve_ns > 1000000000LL)
                u->last_resolve_ns = now - u->resolve_interval_ns;
        }
    }
    if (!ok)
        tw__count(&c->failed, n);
    u->seq_no++;
    u->n_spans = 0;
    tw__buf_reset(&u->spans);
}

/* udp_append's rare case: the span just encoded (@span_len bytes after
 * @batch_len) may not fit the datagram; the exact size decides. */
static __attribute__((noinline)) void append_near_limit(udp_sender *u, size_t batch_len,
                                                        size_t span_len)
{
    if (batch_fits(u, u->n_spans + 1, u->spans.len)) {
        u->n_spans++;
        return;
    }
    u->spans.len = batch_len; /* the batch without this span */
    emit(u);
    snapshot_stats(u);
    if (!batch_fits(u, 1, span_len)) {
        tw__sender_too_large(&u->base, batch_size(u, 1, span_len), u->max_packet);
        return;
    }
    /* emit() emptied the buffer and left the bytes after it alone. */
    memmove(u->spans.data, u->spans.data + batch_len, span_len);
    u->spans.len = span_len;
    u->n_spans++;
}

/* The span is encoded straight after the batch's spans; when it does not
 * fit the datagram, the batch before it is sent and the span moves to the
 * front of the next one. */
static void udp_append(tw__sender *s, tw__span_data *span)
{
    udp_sender *u = (udp_sender *)s;
    size_t batch_len = u->spans.len;
    bool encoded = tw__jaeger_encode_span(u->enc, span, &u->spans);
    tw__span_data_unref(span);
    if (!encoded) {
        tw__count(&u->base.counters->failed, 1);
        return;
    }
    if (u->n_spans == 0)
        snapshot_stats(u);
    /* batch_fits' first test, inline: far from the limit, no exact size. */
    if (__builtin_expect(
            u->empty_batch_len != 0 && u->empty_batch_len + 5 + u->spans.len <= u->max_packet, 1)) {
        u->n_spans++;
        return;
    }
    append_near_limit(u, batch_len, u->spans.len - batch_len);
}

static void udp_flush(tw__sender *s)
{
    emit((udp_sender *)s);
}

static tw_status udp_open(tw__sender *s, const tw__process *process, tw_error **err)
{
    udp_sender *u = (udp_sender *)s;
    tw__buf_reset(&u->process);
    if (!tw__jaeger_encode_process(u->enc, process, &u->process)) {
        tw__set_error(err, TW_E_ENCODE, "%s: cannot encode the process", u->name);
        return TW_E_ENCODE;
    }
    tw__client_stats zero = {0, 0, 0};
    if (tw__jaeger_emit_batch_size(u->enc, u->process.len, 0, 0, 0, &zero) > u->max_packet) {
        tw__set_error(err, TW_E_CONFIG,
                      "%s: the process tags alone (%zu bytes) exceed the max packet size %zu",
                      u->name, u->process.len, u->max_packet);
        return TW_E_CONFIG;
    }
    resolve(u); /* not fatal: retried on every send until it works */
    return TW_OK;
}

static void udp_after_fork_child(tw__sender *s)
{
    udp_sender *u = (udp_sender *)s;
    u->n_spans = 0; /* the parent sends them */
    tw__buf_reset(&u->spans);
}

static void udp_free(tw__sender *s)
{
    udp_sender *u = (udp_sender *)s;
    if (!u)
        return;
    close_socket(u);
    tw__jaeger_encoder_free(u->enc);
    tw__buf_free(&u->process);
    tw__buf_free(&u->spans);
    free(u->host);
    free(u);
}

static tw__sender *udp_fork_clone(const tw__sender *s);

static const tw__sender_vtable udp_vtable = {
    .size = sizeof(tw__sender_vtable),
    .name = "jaeger-udp",
    .open = udp_open,
    .append = udp_append,
    .flush = udp_flush,
    .free = udp_free,
    .after_fork_child = udp_after_fork_child,
    .fork_clone = udp_fork_clone,
    .bound_unit = "UDP packet",
    .bound_setting = "JAEGER_REPORTER_MAX_PACKET_SIZE",
    .bound_max = 65507, /* the largest UDP payload over IPv4 */
};

/* The fields every UDP sender is made with; false when out of memory. */
static bool udp_init(udp_sender *u, const char *name, tw__thrift_protocol protocol,
                     const char *host)
{
    u->base.vtable = &udp_vtable;
    u->name = name;
    u->protocol = protocol;
    u->fd = -1;
    u->host = strdup(host);
    u->enc = tw__jaeger_encoder_new(protocol);
    tw__buf_init(&u->process);
    tw__buf_init(&u->spans);
    return u->host && u->enc;
}

/* A forked child's new sender: the configuration of @s (fixed at
 * creation), a socket of its own once opened. */
static tw__sender *udp_fork_clone(const tw__sender *s)
{
    const udp_sender *o = (const udp_sender *)s;
    udp_sender *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    if (!udp_init(u, o->name, o->protocol, o->host)) {
        udp_free(&u->base);
        return NULL;
    }
    memcpy(u->port, o->port, sizeof u->port);
    u->max_packet = o->max_packet;
    u->resolve_interval_ns = o->resolve_interval_ns;
    return &u->base;
}

static tw__sender *udp_sender_new(const tw_reporter_options *opts, tw__thrift_protocol protocol,
                                  tw_error **err)
{
    const char *name = protocol == TW__THRIFT_BINARY ? "jaeger-udp-binary" : "jaeger-udp";
    udp_sender *u = calloc(1, sizeof(*u));
    if (!u) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    if (!udp_init(u, name, protocol, opts->agent_host)) {
        udp_free(&u->base);
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    /* The binary agent port is 6832: options that never named an agent
     * (whose port is the compact default) get it. */
    unsigned int port =
        protocol == TW__THRIFT_BINARY && !opts->is_agent_set ? 6832u : opts->agent_port;
    snprintf(u->port, sizeof u->port, "%u", port);
    u->max_packet = opts->max_packet_size;
    u->resolve_interval_ns = (int64_t)opts->resolve_interval_ms * 1000000;
    /* Resolution happens in open(), once the async reporter has attached
     * its counters; a name that does not resolve yet is not an error there
     * (as in Jaeger's clients). A socket that cannot be created at all is. */
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe < 0)
        probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe < 0) {
        tw__set_error(err, TW_E_IO, "%s: cannot create a UDP socket: %s", name, strerror(errno));
        udp_free(&u->base);
        return NULL;
    }
    close(probe);
    return &u->base;
}

tw__sender *tw__udp_sender_new(const tw_reporter_options *opts, tw_error **err)
{
    return udp_sender_new(opts, TW__THRIFT_COMPACT, err);
}

tw__sender *tw__udp_sender_new_binary(const tw_reporter_options *opts, tw_error **err)
{
    return udp_sender_new(opts, TW__THRIFT_BINARY, err);
}

tw_reporter *tw_reporter_jaeger_udp_binary_new(const tw_reporter_options *opts, tw_error **err)
{
    tw_reporter_options *defaults = NULL;
    if (!opts) {
        defaults = tw_reporter_options_new();
        if (!defaults) {
            tw__set_error(err, TW_E_NOMEM, "jaeger-udp-binary reporter: out of memory");
            return NULL;
        }
        opts = defaults;
    }
    tw_reporter *r = NULL;
    tw__sender *sender = tw__udp_sender_new_binary(opts, err);
    if (sender) {
        tw__async_options ao = tw__async_options_from(opts);
        r = tw__async_reporter_new("jaeger-udp-binary", sender, &ao, err);
    }
    tw_reporter_options_free(defaults);
    return r;
}

void tw__udp_sender_share_errors(tw__sender *s, int *last_errno)
{
    if (s && s->vtable == &udp_vtable)
        ((udp_sender *)s)->shared_errno = last_errno;
}
