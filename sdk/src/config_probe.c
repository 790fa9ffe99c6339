/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_probe.c: tw_config_probe() (tracewire/config.h): does each
 * endpoint a configuration would use answer? What `tracewire config
 * --probe` prints, one line per endpoint.
 *
 * Where it sits: after tw_config_from_env() (config_env.c), with the
 * options it read. Each probe sends what the transport itself would send,
 * empty: an HTTP collector gets a batch of no spans in its format (the
 * reporter's own encoder, credentials, headers and TLS files), the remote
 * sampler's endpoint its GET ?service=NAME, a UDP agent an emitBatch
 * datagram of no spans. UDP cannot be confirmed: a connected socket learns
 * of a closed port only through ICMP port unreachable, which loopback
 * always sends and a firewall may swallow; silence is said as such.
 *
 * Blocking on purpose (a diagnostic tool); bounded by the caller's timeout
 * per endpoint. Nothing is shared between calls; any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "config_env.h"
#include "internal.h"
#include "report/http.h"
#include "report/report.h"
#include "sampling/strategy.h"
#include "wire/jaeger/jaeger_thrift.h"

#define DEFAULT_PROBE_TIMEOUT_MS 2000u

typedef struct probe {
    tw_config_probe_fn fn;
    void *user_data;
    unsigned int timeout_ms;
    size_t n_failed;
} probe;

static void report(probe *p, const char *what, bool is_ok, const char *fmt, ...) TW_PRINTF(4, 5);
static void report(probe *p, const char *what, bool is_ok, const char *fmt, ...)
{
    char message[768], clean[1024], shown_what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    tw__redact_text(message, clean, sizeof clean);
    tw__redact_text(what, shown_what, sizeof shown_what);
    if (!is_ok)
        p->n_failed++;
    if (p->fn)
        p->fn(p->user_data, shown_what, is_ok, clean);
}

/* ---- UDP ----------------------------------------------------------------------------------- */

static void probe_udp(probe *p, const char *name, const tw_reporter_options *ro,
                      const char *service)
{
    bool is_binary = strcmp(name, "jaeger-udp-binary") == 0;
    const char *host = ro->agent_host ? ro->agent_host : "localhost";
    unsigned int port = ro->is_agent_set ? ro->agent_port : is_binary ? 6832 : 6831;
    char what[400], at[300], port_s[16];
    tw__host_port_text(host, port, at, sizeof at);
    snprintf(what, sizeof what, "%s agent %s", name, at);
    snprintf(port_s, sizeof port_s, "%u", port);

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(host, port_s, &hints, &ai);
    if (rc != 0) {
        report(p, what, false, "cannot resolve \"%s\": %s", host, gai_strerror(rc));
        return;
    }
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        report(p, what, false, "cannot connect a UDP socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return;
    }
    freeaddrinfo(ai);

    /* An emitBatch of no spans: a real agent forwards nothing of note. */
    tw__jaeger_encoder *enc =
        tw__jaeger_encoder_new(is_binary ? TW__THRIFT_BINARY : TW__THRIFT_COMPACT);
    tw__process process;
    tw__process_init(&process);
    tw__buf proc = {0}, msg = {0};
    tw__client_stats stats = {0, 0, 0};
    bool built =
        enc && tw__process_set_service(&process, service) &&
        tw__jaeger_encode_process(enc, &process, &proc) &&
        tw__jaeger_emit_batch_message(enc, proc.data, proc.len, NULL, 0, 0, 0, &stats, 0, &msg);
    if (!built) {
        report(p, what, false, "cannot build the probe datagram (out of memory)");
    } else if (send(fd, msg.data, msg.len, 0) != (ssize_t)msg.len) {
        report(p, what, false, "send failed: %s%s", strerror(errno),
               errno == ECONNREFUSED ? " (nothing listens there: ICMP port unreachable)" : "");
    } else {
        /* A closed port answers with ICMP port unreachable, which a
         * connected socket reports as a pending error. */
        unsigned int wait_ms = p->timeout_ms < 500 ? p->timeout_ms : 500;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, (int)wait_ms);
        int err = 0;
        socklen_t len = sizeof err;
        if (ready > 0 && (pfd.revents & (POLLERR | POLLIN)))
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == ECONNREFUSED)
            report(p, what, false,
                   "nothing listens on UDP port %u (ICMP port unreachable): spans sent there are "
                   "lost; start a Jaeger agent (or collector with its agent ports) there, or set "
                   "JAEGER_AGENT_HOST / JAEGER_AGENT_PORT",
                   port);
        else if (err != 0)
            report(p, what, false, "the datagram was refused: %s", strerror(err));
        else
            report(p, what, true,
                   "datagram sent, no ICMP error within %u ms (UDP cannot confirm that an agent "
                   "listens: a remote host or a firewall may stay silent)",
                   wait_ms);
    }
    tw__buf_free(&proc);
    tw__buf_free(&msg);
    tw__process_clear(&process);
    tw__jaeger_encoder_free(enc);
    close(fd);
}

/* ---- HTTP ---------------------------------------------------------------------------------- */

static size_t keep_body(char *data, size_t size, size_t n, void *arg)
{
    tw__buf *body = arg;
    size_t len = size * n;
    if (body->len < 4096)
        tw__buf_append(body, data, len < 4096 - body->len ? len : 4096 - body->len);
    return len;
}

/* An easy handle with the transport's TLS files and timeouts. */
static CURL *easy_for(const tw__http_options *h, const char *url, unsigned int timeout_ms,
                      tw__buf *body)
{
    CURL *curl = curl_easy_init();
    if (!curl)
        return NULL;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (h && h->ca_file)
        curl_easy_setopt(curl, CURLOPT_CAINFO, h->ca_file);
    if (h && h->cert_file)
        curl_easy_setopt(curl, CURLOPT_SSLCERT, h->cert_file);
    if (h && h->key_file)
        curl_easy_setopt(curl, CURLOPT_SSLKEY, h->key_file);
    return curl;
}

/* "HTTP 404: <start of the answer>", for a status that is not 2xx. */
static void describe_status(long status, const tw__buf *body, char *out, size_t size)
{
    char excerpt[128];
    size_t n = body->len < sizeof excerpt - 1 ? body->len : sizeof excerpt - 1;
    memcpy(excerpt, body->data ? (const char *)body->data : "", n);
    excerpt[n] = '\0';
    for (char *c = excerpt; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    const char *hint = status == 401 || status == 403 ? " (the credentials were refused)"
                       : status == 404                ? " (no such path: check the endpoint URL)"
                       : status == 405 ? " (method not allowed: not a span endpoint?)"
                       : status >= 500 ? " (the backend failed)"
                                       : "";
    snprintf(out, size, "HTTP %ld%s%s%s", status, hint, n ? ": " : "", excerpt);
}

static void probe_http(probe *p, const char *name, const tw_reporter_options *ro,
                       const char *service)
{
    const tw__http_format_vtable *vt = strcmp(name, "jaeger-http") == 0 ? &tw__http_jaeger_format
                                       : strcmp(name, "zipkin") == 0    ? &tw__http_zipkin_format
                                                                        : &tw__http_otlp_format;
    const tw__http_options *h = ro->http;
    const char *url = h && h->endpoint ? h->endpoint : vt->default_endpoint;
    char what[600], shown[512];
    tw__show_url(url, shown, sizeof shown); /* masks user:password@, query values, ... */
    snprintf(what, sizeof what, "%s collector %s", name, shown);

    /* A batch of no spans, encoded by the reporter's own format. */
    tw__http_format *f = vt->new_format();
    tw__process process;
    tw__process_init(&process);
    tw__buf out = {0}, body = {0};
    tw__client_stats stats = {0, 0, 0};
    tw_error *e = NULL;
    bool built = f && tw__process_set_service(&process, service) &&
                 vt->open(f, &process, &e) == TW_OK && vt->build(f, NULL, 0, 0, &stats, &out);
    tw_error_free(e);
    struct curl_slist *headers = NULL;
    char line[600];
    snprintf(line, sizeof line, "Content-Type: %s", vt->content_type);
    headers = curl_slist_append(headers, line);
    for (size_t i = 0; h && i < h->n_headers; i++)
        headers = curl_slist_append(headers, h->headers[i]);
    if (h && h->bearer_token) {
        char *auth = malloc(strlen(h->bearer_token) + 32);
        if (auth) {
            sprintf(auth, "Authorization: Bearer %s", h->bearer_token);
            headers = curl_slist_append(headers, auth);
            memset(auth, 0, strlen(auth));
            free(auth);
        }
    }
    CURL *curl = built && headers ? easy_for(h, url, p->timeout_ms, &body) : NULL;
    if (!curl) {
        report(p, what, false, "cannot prepare the request (out of memory)");
        goto done;
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, out.data ? (const char *)out.data : "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)out.len);
    if (h && h->user) {
        curl_easy_setopt(curl, CURLOPT_USERNAME, h->user);
        curl_easy_setopt(curl, CURLOPT_PASSWORD, h->password ? h->password : "");
    }
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        report(p, what, false, "no answer: %s (spans sent there would be counted as failed)",
               curl_easy_strerror(rc));
    } else if (status >= 200 && status < 300) {
        report(p, what, true, "accepted an empty batch (HTTP %ld)", status);
    } else {
        char described[256];
        describe_status(status, &body, described, sizeof described);
        report(p, what, false, "refused an empty batch: %s", described);
    }
    curl_easy_cleanup(curl);
done:
    curl_slist_free_all(headers);
    tw__buf_free(&out);
    tw__buf_free(&body);
    tw__process_clear(&process);
    if (f)
        vt->free_format(f);
}

/* ---- the remote sampler's endpoint ----------------------------------------------------------- */

static void probe_sampling(probe *p, const char *endpoint, const char *service)
{
    char what[600], shown[512];
    tw__show_url(endpoint, shown, sizeof shown);
    snprintf(what, sizeof what, "sampling endpoint %s", shown);
    char *escaped = curl_easy_escape(NULL, service, 0);
    size_t size = strlen(endpoint) + (escaped ? strlen(escaped) : 0) + 16;
    char *url = malloc(size);
    tw__buf body = {0};
    CURL *curl = NULL;
    if (!escaped || !url || !(curl = easy_for(NULL, endpoint, p->timeout_ms, &body))) {
        report(p, what, false, "cannot prepare the request (out of memory)");
        goto done;
    }
    snprintf(url, size, "%s%cservice=%s", endpoint, strchr(endpoint, '?') ? '&' : '?', escaped);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        report(p, what, false,
               "no answer: %s; the remote sampler keeps its initial rate until it answers",
               curl_easy_strerror(rc));
    } else if (status != 200) {
        char described[256];
        describe_status(status, &body, described, sizeof described);
        report(p, what, false, "%s; the remote sampler keeps its initial rate", described);
    } else {
        tw__strategy s;
        tw_error *e = NULL;
        if (!tw__strategy_parse(body.data ? (const char *)body.data : "", body.len, &s, &e)) {
            report(p, what, false, "answered, but not with a strategy: %s", tw_error_message(e));
            tw_error_free(e);
        } else {
            if (s.kind == TW__STRATEGY_PROBABILISTIC)
                report(p, what, true, "serves probabilistic %g", s.probability);
            else if (s.kind == TW__STRATEGY_RATE_LIMITING)
                report(p, what, true, "serves rate limiting, %g traces/s", s.max_traces_per_second);
            else
                report(p, what, true, "serves per-operation sampling (%zu operations, default %g)",
                       s.n_operations, s.default_probability);
            tw__strategy_clear(&s);
        }
    }
done:
    if (curl)
        curl_easy_cleanup(curl);
    curl_free(escaped);
    free(url);
    tw__buf_free(&body);
}

/* ---- the span log ------------------------------------------------------------------------------
 */

static void probe_file(probe *p, const tw_reporter_options *ro)
{
    char what[PATH_MAX + 32], dir[PATH_MAX];
    const char *path = ro->file_path ? ro->file_path : "";
    snprintf(what, sizeof what, "dapper-file %s", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISFIFO(st.st_mode))
            report(p, what, true,
                   "a FIFO: written, never rotated or synced; lines are dropped "
                   "while no reader has it open");
        else if (access(path, W_OK) != 0)
            report(p, what, false, "exists but is not writable: %s", strerror(errno));
        else
            report(p, what, true, "exists and is writable (%lld bytes)", (long long)st.st_size);
    } else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        report(p, what, false, "the directory %s does not exist", dir);
    } else if (access(dir, W_OK | X_OK) != 0) {
        report(p, what, false, "the directory %s is not writable: %s", dir, strerror(errno));
    } else {
        report(p, what, true, "will be created in %s (writable)", dir);
    }
}

size_t tw_config_probe(const tw_config *config, unsigned int timeout_ms, tw_config_probe_fn fn,
                       void *user_data)
{
    if (!config || tw__config_has_errors(config))
        return 0;
    probe p = {fn, user_data, timeout_ms ? timeout_ms : DEFAULT_PROBE_TIMEOUT_MS, 0};
    const char *service = tw__config_service(config);
    for (size_t i = 0; i < tw__config_transport_count(config); i++) {
        const char *name = NULL;
        const tw_reporter_options *ro = tw__config_transport(config, i, &name);
        if (strcmp(name, "jaeger-udp") == 0 || strcmp(name, "jaeger-udp-binary") == 0)
            probe_udp(&p, name, ro, service);
        else if (strcmp(name, "dapper-file") == 0)
            probe_file(&p, ro);
        else
            probe_http(&p, name, ro, service);
    }
    const char *sampling = tw__config_sampling_endpoint(config);
    if (sampling)
        probe_sampling(&p, sampling, service);
    return p.n_failed;
}
