/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/reporter.c: the public reporter API: options, dispatch through the
 * reporter vtable, and counters. No state of its own.
 */
#include "report/report.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/redact.h"

static bool is_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* RFC 1123 labels; a last label all digits is no name (it would be a
 * mistyped IPv4 literal: no top-level domain is numeric). */
static bool is_dns_name(const char *s, size_t len)
{
    if (len > 0 && s[len - 1] == '.')
        len--;
    if (len == 0 || len > 253)
        return false;
    size_t start = 0;
    bool is_numeric = true;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            size_t n = i - start;
            if (n == 0 || n > 63 || s[start] == '-' || s[i - 1] == '-')
                return false;
            start = i + 1;
            if (i < len)
                is_numeric = true;
            continue;
        }
        if (!is_label_char(s[i]))
            return false;
        is_numeric = is_numeric && s[i] >= '0' && s[i] <= '9';
    }
    return !is_numeric;
}

tw__host_kind tw__host_check(const char *host, char *bare, size_t size)
{
    size_t len = host ? strlen(host) : 0;
    if (len == 0 || len >= size)
        return TW__HOST_INVALID;
    bool is_bracketed = host[0] == '[';
    if (is_bracketed) {
        if (len < 3 || host[len - 1] != ']')
            return TW__HOST_INVALID;
        host++;
        len -= 2;
    }
    memcpy(bare, host, len);
    bare[len] = '\0';
    /* An IPv6 literal, maybe with a %zone (an interface name or number). */
    char addr[64];
    const char *zone = strchr(bare, '%');
    size_t addr_len = zone ? (size_t)(zone - bare) : len;
    if (strchr(bare, ':') && addr_len < sizeof addr) {
        memcpy(addr, bare, addr_len);
        addr[addr_len] = '\0';
        struct in6_addr a6;
        bool is_zone_ok = !zone || zone[1] != '\0';
        for (const char *z = zone ? zone + 1 : ""; *z && is_zone_ok; z++)
            is_zone_ok = is_label_char(*z) || *z == '.';
        if (inet_pton(AF_INET6, addr, &a6) == 1 && is_zone_ok)
            return TW__HOST_IPV6;
        return TW__HOST_INVALID;
    }
    if (is_bracketed)
        return TW__HOST_INVALID;
    struct in_addr a4;
    if (inet_pton(AF_INET, bare, &a4) == 1)
        return TW__HOST_IPV4;
    return is_dns_name(bare, len) ? TW__HOST_NAME : TW__HOST_INVALID;
}

void tw__host_url(const char *host, unsigned int port, const char *path, char *out, size_t size)
{
    const char *zone = strchr(host, ':') ? strchr(host, '%') : NULL;
    if (strchr(host, ':'))
        snprintf(out, size, "http://[%.*s%s%s]:%u%s", zone ? (int)(zone - host) : (int)strlen(host),
                 host, zone ? "%25" : "", zone ? zone + 1 : "", port, path);
    else
        snprintf(out, size, "http://%s:%u%s", host, port, path);
}

void tw__host_port_text(const char *host, unsigned int port, char *out, size_t size)
{
    bool is_v6 = strchr(host, ':') != NULL;
    snprintf(out, size, "%s%s%s:%u", is_v6 ? "[" : "", host, is_v6 ? "]" : "", port);
}

void tw__host_shown(const char *host, char *out, size_t size)
{
    const char *at = strrchr(host, '@');
    if (!at) {
        tw__redact_url(host, out, size);
        return;
    }
    int n = snprintf(out, size, "***@");
    if (n > 0 && (size_t)n < size)
        tw__redact_url(at + 1, out + n, size - (size_t)n);
}

tw_reporter_options *tw_reporter_options_new(void)
{
    tw_reporter_options *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->agent_host = strdup("127.0.0.1");
    if (!o->agent_host) {
        free(o);
        return NULL;
    }
    o->agent_port = 6831;
    o->max_queue_size = TW__DEFAULT_QUEUE_SIZE;
    o->max_queue_bytes = TW__DEFAULT_QUEUE_BYTES;
    o->flush_interval_ms = TW__DEFAULT_FLUSH_INTERVAL_MS;
    o->close_timeout_ms = TW__DEFAULT_CLOSE_TIMEOUT_MS;
    o->max_packet_size = TW__DEFAULT_MAX_PACKET;
    o->resolve_interval_ms = TW__DEFAULT_RESOLVE_INTERVAL_MS;
    o->max_file_bytes = TW__DEFAULT_MAX_FILE_BYTES;
    o->max_files = TW__DEFAULT_MAX_FILES;
    return o;
}

void tw_reporter_options_free(tw_reporter_options *opts)
{
    if (!opts)
        return;
    free(opts->agent_host);
    free(opts->file_path);
    tw__http_options_free(opts->http);
    free(opts);
}

tw_status tw_reporter_options_set_agent(tw_reporter_options *opts, const char *host,
                                        unsigned int port)
{
    TW_CHECK_ARG(opts && host && *host, TW_E_INVALID_ARG);
    TW_CHECK_ARG(port > 0 && port <= 65535, TW_E_INVALID_ARG);
    char bare[256];
    TW_CHECK_ARG(tw__host_check(host, bare, sizeof bare) != TW__HOST_INVALID, TW_E_INVALID_ARG);
    char *copy = strdup(bare); /* "[::1]" as "::1": getaddrinfo takes no brackets */
    if (!copy)
        return TW_E_NOMEM;
    free(opts->agent_host);
    opts->agent_host = copy;
    opts->agent_port = port;
    opts->is_agent_set = true;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_queue_size(tw_reporter_options *opts, size_t max_spans)
{
    TW_CHECK_ARG(opts && max_spans >= 1 && max_spans <= (size_t)1 << 28, TW_E_INVALID_ARG);
    opts->max_queue_size = max_spans;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_queue_bytes(tw_reporter_options *opts, size_t bytes)
{
    TW_CHECK_ARG(opts && bytes >= TW__MIN_QUEUE_BYTES && bytes <= TW__MAX_QUEUE_BYTES,
                 TW_E_INVALID_ARG);
    opts->max_queue_bytes = bytes;
    return TW_OK;
}

tw_status tw_reporter_options_set_flush_interval_ms(tw_reporter_options *opts,
                                                    unsigned int interval_ms)
{
    TW_CHECK_ARG(opts && interval_ms >= 1, TW_E_INVALID_ARG);
    opts->flush_interval_ms = interval_ms;
    return TW_OK;
}

tw_status tw_reporter_options_set_close_timeout_ms(tw_reporter_options *opts,
                                                   unsigned int timeout_ms)
{
    TW_CHECK_ARG(opts && timeout_ms >= 1 && timeout_ms <= TW__MAX_CLOSE_TIMEOUT_MS,
                 TW_E_INVALID_ARG);
    opts->close_timeout_ms = timeout_ms;
    return TW_OK;
}

tw__async_options tw__async_options_from(const tw_reporter_options *opts)
{
    return (tw__async_options){.max_queue_size = opts->max_queue_size,
                               .flush_interval_ms = opts->flush_interval_ms,
                               .close_timeout_ms = opts->close_timeout_ms,
                               .max_queue_bytes = opts->max_queue_bytes};
}

tw_status tw_reporter_options_set_max_packet_size(tw_reporter_options *opts, size_t bytes)
{
    TW_CHECK_ARG(opts && bytes >= 512 && bytes <= 65507, TW_E_INVALID_ARG);
    opts->max_packet_size = bytes;
    return TW_OK;
}

tw_status tw_reporter_options_set_resolve_interval_ms(tw_reporter_options *opts,
                                                      unsigned int interval_ms)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->resolve_interval_ms = interval_ms;
    return TW_OK;
}

tw_reporter *tw_reporter_jaeger_udp_new(const tw_reporter_options *opts, tw_error **err)
{
    tw_reporter_options *defaults = NULL;
    if (!opts) {
        defaults = tw_reporter_options_new();
        if (!defaults) {
            tw__set_error(err, TW_E_NOMEM, "jaeger-udp reporter: out of memory");
            return NULL;
        }
        opts = defaults;
    }
    tw_reporter *r = NULL;
    tw__sender *sender = tw__udp_sender_new(opts, err);
    if (sender) {
        tw__async_options ao = tw__async_options_from(opts);
        r = tw__async_reporter_new("jaeger-udp", sender, &ao, err);
    }
    tw_reporter_options_free(defaults);
    return r;
}

tw_status tw__reporter_start(tw_reporter *r, const tw__process *process, tw_error **err)
{
    tw_status st = r->vtable->start ? r->vtable->start(r, process, err) : TW_OK;
    if (st == TW_OK)
        r->is_started = true;
    return st;
}

void tw__reporter_report(tw_reporter *r, tw__span_data *span)
{
    r->vtable->report(r, span);
}

tw_status tw__reporter_flush(tw_reporter *r, int64_t deadline_ns)
{
    uint64_t ticket = 0;
    if (r->vtable->flush_start) {
        tw_status st = r->vtable->flush_start(r, &ticket);
        if (st != TW_OK)
            return st;
    }
    return r->vtable->flush_wait ? r->vtable->flush_wait(r, ticket, deadline_ns) : TW_OK;
}

int64_t tw__flush_deadline(unsigned int timeout_ms)
{
    return tw__mono_ns() + (int64_t)(timeout_ms ? timeout_ms : 5000u) * 1000000;
}

void tw__reporter_close_start(tw_reporter *r)
{
    if (r && r->is_started && r->vtable->close_start)
        r->vtable->close_start(r);
}

void tw__reporter_close(tw_reporter *r)
{
    if (r && r->is_started && r->vtable->close)
        r->vtable->close(r);
}

void tw_reporter_free(tw_reporter *reporter)
{
    if (!reporter)
        return;
    tw__reporter_close(reporter);
    reporter->vtable->destroy(reporter);
}

const char *tw_reporter_name(const tw_reporter *reporter)
{
    if (!reporter)
        return "";
    return reporter->name ? reporter->name : reporter->vtable->name;
}

uint64_t tw_reporter_counter(const tw_reporter *reporter, tw_counter counter)
{
    if (!reporter || !reporter->vtable->counter)
        return 0;
    return reporter->vtable->counter(reporter, counter);
}

uint64_t tw__report_counters_get(const tw__report_counters *c, tw_counter which)
{
    switch (which) {
    case TW_COUNTER_SPANS_REPORTED:
        return tw__read(&c->reported);
    case TW_COUNTER_SPANS_SENT:
        return tw__read(&c->sent);
    case TW_COUNTER_DROPPED_QUEUE_FULL:
        return tw__read(&c->queue_full);
    case TW_COUNTER_DROPPED_TOO_LARGE:
        return tw__read(&c->too_large);
    case TW_COUNTER_FAILED_TO_EMIT:
        return tw__read(&c->failed);
    case TW_COUNTER_BATCHES_SENT:
        return tw__read(&c->batches);
    case TW_COUNTER_BYTES_SENT:
        return tw__read(&c->bytes);
    case TW_COUNTER_QUEUE_LENGTH:
        return tw__read(&c->queue_length);
    case TW_COUNTER_RESOLVE_FAILURES:
        return tw__read(&c->resolve_failures);
    case TW_COUNTER_DROPPED_QUEUE_BYTES:
        return tw__read(&c->queue_bytes_dropped);
    case TW_COUNTER_QUEUE_BYTES:
        return 0; /* a gauge of the queued reporters (async.c) */
    }
    return 0;
}
