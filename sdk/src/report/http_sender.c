/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/http_sender.c: the HTTP transport shared by the Jaeger collector,
 * Zipkin and OTLP reporters and by `tracewire convert --send` (through
 * transport/sender.h): batches spans by the exact size of the body a
 * format (transport/framing.h) would build, and POSTs each batch with
 * libcurl (OpenSSL) on the caller's thread (a reporter's: the async
 * reporter thread), retrying what can succeed later.
 *
 * Batching: the one batcher keyed by process (transport/batcher.h). Each
 * span is encoded once, on arrival, into an item whose size is known; a
 * span that would push the body past max_body_bytes sends the current batch
 * first, and a span whose body alone would exceed it is dropped and counted
 * too_large. A reporter has one process, so memory held between flushes is
 * bounded by one body (plus the async queue, which is bounded too); with
 * many processes (tw__http_sender_append_for) by max_open batches, and
 * their bodies together by two bodies.
 *
 * Sending: one attempt per try, with a connect timeout and a whole-attempt
 * timeout. The status line decides: once it and the headers say 2xx
 * (Jaeger answers 202, Zipkin 202, OTLP 200) the batch is accepted, and the
 * answer's body is read for at most ACCEPTED_BODY_MAX_MS and
 * ACCEPTED_BODY_MAX_BYTES; a body that is slow, cut or too long closes the
 * connection and is logged, but never makes the batch count as failed or be
 * sent again (a backend that answered 200 and trickled its body used to get
 * the same spans four times). Which other statuses are retried is the
 * format's retry rule (transport/http_head.h, shared with the agent): for
 * OTLP exactly 429, 502, 503 and 504, as the OTLP/HTTP specification says;
 * for the Jaeger collector and Zipkin those and 500 (a collector's
 * transient storage error). They and transport failures (refused, reset,
 * timed out, closed mid-request, DNS) are retried with exponential backoff
 * (initial_backoff_ms doubling, each delay drawn in [d/2, d] so that many
 * processes do not retry in step, at least the server's Retry-After when a
 * 429 or 503 sends one, in seconds or as an HTTP-date, capped at 30 s), at
 * most max_retries times and never past max_retry_time_ms after the first
 * attempt: no attempt starts later and each attempt's timeout is cut to the
 * time left. Every other status is final (401/403 auth, 404, 501, an OTLP
 * 500) and fails its batch at once, counted and logged, with no retry and
 * no cool-down; so are configuration errors such as a certificate that
 * does not verify. A batch that does not get through counts all its spans
 * as failed. The waits happen on the sender's thread (a reporter's own
 * thread), never the application's.
 *
 * Refused spans: a 400 (the backend cannot take some span: Zipkin, the
 * Jaeger collector and OTLP/HTTP all answer 400 to a body they reject) or a
 * 413 (the backend's size limit is below ours) on a body of several spans
 * sends each half of it as its own body, recursively, so the rest of the
 * batch still gets through and only the spans refused on their own count as
 * failed (reported with the start of the answer, to the refusal callback and
 * once per new reason to the log). The recursion is at most log2(n) deep; a
 * batch spends at most max_split_requests requests beyond its first on this
 * (n spans with k refused ones need about 2k*log2(n/k)); once they are used
 * up, the parts not yet sent fail as a whole. Each part is a retried request
 * of its own (retryable statuses and transport failures), and once the cool-down below
 * starts, the parts left fail at once.
 *
 * gzip (is_gzip): the body is compressed (zlib, level 1: most of the ratio
 * for a fraction of the CPU of the default level) and sent with
 * Content-Encoding: gzip. Batches are still cut on the uncompressed size
 * (max_body_bytes), which is what the backends limit after inflating; the
 * bytes counter counts what went over the wire.
 *
 * After a batch has used up its retries on a retryable failure, the sender
 * fails the next batches at once, without touching the network, for a
 * cool-down (clamp(initial_backoff << max_retries, 1 s, 30 s), at least
 * the server's last Retry-After); the first batch after it tries again. So
 * a collector that is down costs one retry cycle per cool-down, and close()
 * (which sends whatever is queued) waits at most about one retry cycle
 * instead of one per queued batch. The rejected option was to keep retrying
 * each batch: with a stuck collector, closing a tracer with a full queue
 * could take minutes.
 *
 * Patient mode (tw__http_sender_set_patience; `convert --send`, never a
 * reporter): a batch tool may wait where an application may not. A body
 * whose retries are used up waits out the cool-down, which doubles with
 * each failed round in a row (up to 30 s), and is sent again; the caller's
 * thread waits with it, so a batch tool reads no input meanwhile and memory
 * stays bounded by the batcher. A failure no retry cures (a 401) fails its
 * batch only. After `patience` failed rounds in a row the sender gives up:
 * every later span fails at once, counted in unattempted (as are the spans
 * failed by the cool-down or the close deadline, without a request).
 *
 * Waiting: each request runs on a multi handle of the sender's own
 * (curl_multi_poll), never in a blocking call, so that the async
 * reporter's close can end it: at the close deadline (give_up_at_ns, with
 * interrupt waking the wait at once through curl_multi_wakeup) a request in
 * flight is abandoned, a retry delay is cut short, no attempt or batch
 * starts, and every span not sent is counted as failed.
 *
 * The easy handle stays attached to the multi handle between batches so
 * connections (and TLS sessions) are reused. After fork() the child never
 * uses the parent's handles: an idle sender abandons them
 * (after_fork_child); a busy one is abandoned whole and replaced by a clone
 * (fork_clone, see report/async.c).
 *
 * Locking: none; a sender is used only by its reporter thread (and by
 * open/free, which happen before and after that thread runs).
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "clock.h"
#include "report/http.h"
#include "transport/batcher.h"
#include "transport/http_head.h"

#define BREAKER_MIN_MS 1000u
#define BREAKER_MAX_MS 30000u
#define RETRY_AFTER_MAX_MS BREAKER_MAX_MS /* the longest Retry-After honoured */
#define RESPONSE_SNIPPET 200              /* bytes of an error answer kept for the log */

/* Once the status line and headers say 2xx the batch is accepted; what is
 * left of the answer's body is read for at most this long and this many
 * bytes (only to keep the connection for the next request), then the
 * connection is dropped. Its failure is logged, never a resend. */
#define ACCEPTED_BODY_MAX_MS 1000u
#define ACCEPTED_BODY_MAX_BYTES ((size_t)64 << 10)

#define GZIP_LEVEL 1
#define MAX_SPLIT_DEPTH 64 /* log2 of any batch that fits in memory */

/* REFUSED: a 400 or 413, the answer to the body's content or size.
 * COOLING: a retryable failure that used up its retries (the cool-down
 * started); GIVE_UP: any other failure. */
typedef enum outcome { SENT, RETRY, GIVE_UP, REFUSED, COOLING } outcome;

typedef struct {
    tw__sender base;
    const tw__http_format_vtable *fmt_vt;

    /* copied options */
    char *url;
    char *log_url; /* url without user:password@, for messages */
    char *user, *password;
    char *ca_file, *cert_file, *key_file;
    struct curl_slist *headers; /* Content-Type, Expect:, auth, user headers */
    unsigned int connect_timeout_ms, timeout_ms;
    size_t max_body;
    unsigned int max_retries, initial_backoff_ms, max_retry_time_ms;
    unsigned int max_split_requests;
    bool is_gzip;

    CURL *curl;                /* NULL until the first send, and after a fork in the child */
    CURLM *multi;              /* the sender thread's; created with curl */
    _Atomic(CURLM *) wakeable; /* multi, published for interrupt (another thread) */
    bool is_attached;          /* curl is added to multi */
    char errbuf[CURL_ERROR_SIZE];
    char snippet[RESPONSE_SNIPPET + 1];
    size_t snippet_len;
    /* The answer of the request in flight, from its header lines: the
     * status of its last status line, whether that block of headers ended
     * (a final answer, not a 1xx), when, and the body bytes read since. */
    tw__http_head head; /* the answer's status line and headers */
    int64_t head_done_ns;
    size_t answer_bytes;

    /* the batches being filled, one per process (transport/batcher.h) */
    tw__batcher *batcher;
    const tw__process *process; /* open's: what append batches under */
    unsigned int flush_ms;
    size_t max_open;
    tw__batch *sending; /* the batch send_range sends */
    tw__client_stats batch_stats;
    int64_t seq_no;
    tw__buf body;  /* the body built */
    tw__buf gzbuf; /* the body compressed (is_gzip) */
    z_stream z;
    bool has_z;          /* z is initialised */
    const uint8_t *wire; /* what post_once sends: body or gzbuf */
    size_t wire_len;
    tw__http_refused_fn on_refused;
    void *refused_arg;
    tw__http_fate_fn on_fate; /* tw__http_sender_set_fate_fn; NULL: none */
    void *fate_arg;
    tw__http_sender_stats stats;

    int64_t breaker_until_ns;    /* batches fail at once before this (mono) */
    unsigned int retry_after_ms; /* the last Retry-After of the body being posted */
    /* Patient mode (tw__http_sender_set_patience): 0, the reporters' way;
     * else the failed rounds in a row after which the sender gives up. */
    unsigned int patience;
    unsigned int failed_rounds;            /* in a row: reset by an answer that is not a failure */
    bool has_given_up;                     /* patient mode ran out: nothing more is attempted */
    uint64_t rng;                          /* backoff jitter (xorshift64) */
    char last_error[CURL_ERROR_SIZE + 32]; /* the last failure logged, to log each new one once */
    char last_answer_cut[CURL_ERROR_SIZE + 64]; /* the same for accepted answers cut short */
} http_sender;

/* ---- curl ------------------------------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_status = CURLE_FAILED_INIT;

/* curl_global_init is not thread-safe before curl 7.84, so it runs once,
 * from the thread creating the first HTTP reporter. It is never undone: the
 * library cannot know whether the application still uses curl. */
static void curl_init_once(void)
{
    curl_init_status = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Whether the answer's status line and headers have arrived and say 2xx:
 * the backend took the batch, whatever happens to the body after. */
static bool is_accepted(const http_sender *h)
{
    return tw__http_head_is_accepted(&h->head);
}

/* Follows the answer's header lines: a status line starts a block (a 1xx
 * block is followed by another), the empty line ends it. */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    http_sender *h = arg;
    size_t len = size * n;
    if (tw__http_head_line(&h->head, data, len))
        h->head_done_ns = tw__mono_ns();
    return len;
}

/* Keeps the start of the answer for the log; the rest is discarded. */
static size_t on_response(char *data, size_t size, size_t n, void *arg)
{
    http_sender *h = arg;
    size_t len = size * n;
    h->answer_bytes += len;
    if (is_accepted(h) && h->answer_bytes > ACCEPTED_BODY_MAX_BYTES)
        return 0; /* accepted already: the rest is not worth reading (ends the transfer) */
    size_t room = RESPONSE_SNIPPET - h->snippet_len;
    size_t take = len < room ? len : room;
    /* Kept for a log line: control bytes (newlines, binary) become spaces. */
    for (size_t i = 0; i < take; i++) {
        unsigned char c = (unsigned char)data[i];
        h->snippet[h->snippet_len + i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    h->snippet_len += take;
    h->snippet[h->snippet_len] = '\0';
    return len;
}

/* Creates the easy handle with every option that does not change per
 * request. False on failure (logged). */
static bool make_handle(http_sender *h)
{
    CURL *c = curl_easy_init();
    if (!c) {
        tw__log_for(TW_LOG_ERROR, h->fmt_vt->name, "%s: cannot create a libcurl handle",
                    h->fmt_vt->name);
        return false;
    }
    bool ok = curl_easy_setopt(c, CURLOPT_URL, h->url) == CURLE_OK;
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tracewire/" TW_VERSION_STRING);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_response);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)h->connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    /* No redirects (the default, said out loud): a POST that is redirected
     * would be re-sent as a GET, and credentials must not follow. */
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85.0: CURLOPT_PROTOCOLS is deprecated */
    ok = ok && curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
#else
    ok = ok && curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) ==
                   CURLE_OK;
#endif
    if (h->user) {
        ok = ok && curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) == CURLE_OK &&
             curl_easy_setopt(c, CURLOPT_USERNAME, h->user) == CURLE_OK &&
             curl_easy_setopt(c, CURLOPT_PASSWORD, h->password ? h->password : "") == CURLE_OK;
    }
    if (h->ca_file)
        ok = ok && curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file) == CURLE_OK;
    if (h->cert_file)
        ok = ok && curl_easy_setopt(c, CURLOPT_SSLCERT, h->cert_file) == CURLE_OK;
    if (h->key_file)
        ok = ok && curl_easy_setopt(c, CURLOPT_SSLKEY, h->key_file) == CURLE_OK;
    if (!ok) {
        tw__log_for(TW_LOG_ERROR, h->fmt_vt->name,
                    "%s: libcurl refused an option (TLS or URL support missing?)", h->fmt_vt->name);
        curl_easy_cleanup(c);
        return false;
    }
    h->curl = c;
    if (!h->multi) {
        h->multi = curl_multi_init();
        if (!h->multi) {
            tw__log_for(TW_LOG_ERROR, h->fmt_vt->name, "%s: cannot create a libcurl multi handle",
                        h->fmt_vt->name);
            curl_easy_cleanup(c);
            h->curl = NULL;
            return false;
        }
        /* Published before the deadline is read for the first wait: either
         * close sees it and wakes the wait, or the wait sees the deadline. */
        atomic_store(&h->wakeable, h->multi);
    }
    return true;
}

/* Waits at most @ms on the multi handle (its transfers, its timers, a
 * wakeup from interrupt). */
static void poll_multi(http_sender *h, unsigned int ms)
{
    curl_multi_poll(h->multi, NULL, 0, (int)ms, NULL);
}

/* Runs the request on curl through the multi handle until it ends or the
 * sender gives up (CURLE_ABORTED_BY_CALLBACK, *gave_up set). */
static CURLcode perform(http_sender *h, bool *gave_up)
{
    *gave_up = false;
    if (h->is_attached)
        curl_multi_remove_handle(h->multi, h->curl); /* the last request's; keeps the connection */
    h->is_attached = curl_multi_add_handle(h->multi, h->curl) == CURLM_OK;
    if (!h->is_attached)
        return CURLE_OUT_OF_MEMORY;
    for (;;) {
        int running = 0;
        if (curl_multi_perform(h->multi, &running) != CURLM_OK)
            return CURLE_OUT_OF_MEMORY;
        if (running == 0)
            break;
        unsigned int wait_ms = 1000;
        if (is_accepted(h)) {
            /* Accepted: the body gets ACCEPTED_BODY_MAX_MS, then the
             * request is abandoned (the connection with it). */
            int64_t body_left_ns =
                h->head_done_ns + (int64_t)ACCEPTED_BODY_MAX_MS * 1000000 - tw__mono_ns();
            if (body_left_ns <= 0) {
                curl_multi_remove_handle(h->multi, h->curl);
                h->is_attached = false;
                return CURLE_OPERATION_TIMEDOUT;
            }
            if (body_left_ns / 1000000 + 1 < wait_ms)
                wait_ms = (unsigned int)(body_left_ns / 1000000 + 1);
        }
        unsigned int left_ms = tw__sender_ms_left(&h->base, wait_ms);
        if (left_ms == 0) {
            *gave_up = true;
            curl_multi_remove_handle(h->multi, h->curl); /* abandons the request */
            h->is_attached = false;
            return CURLE_ABORTED_BY_CALLBACK;
        }
        poll_multi(h, left_ms);
    }
    CURLcode rc = CURLE_OK;
    int queued = 0;
    CURLMsg *m;
    while ((m = curl_multi_info_read(h->multi, &queued)) != NULL) {
        if (m->msg == CURLMSG_DONE && m->easy_handle == h->curl)
            rc = m->data.result;
    }
    return rc;
}

/* Transport failures worth another attempt: the collector may be
 * restarting, overloaded or briefly unreachable. Everything else (bad URL,
 * TLS verification or certificate files, auth, unsupported protocol) will
 * fail the same way next time. */
static bool is_transient(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

/* Logs a failure when it differs from the last one logged, so a collector
 * that stays down costs one line, not one per batch. */
static void log_failure(http_sender *h, const char *what, size_t n_spans)
{
    if (strncmp(h->last_error, what, sizeof(h->last_error) - 1) == 0)
        return;
    snprintf(h->last_error, sizeof h->last_error, "%s", what);
    tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                "%s: POST %s failed: %s%s%s (%zu spans counted as failed; this "
                "message is not repeated until the error changes)",
                h->fmt_vt->name, h->log_url, what, h->snippet_len ? ": " : "", h->snippet, n_spans);
}

/* A 2xx whose body did not arrive whole: logged once per distinct cause
 * (at INFO: nothing was lost). */
static void log_answer_cut(http_sender *h, CURLcode rc)
{
    char what[CURL_ERROR_SIZE + 64];
    snprintf(what, sizeof what, "answer body after HTTP %ld: %s", h->head.status,
             rc == CURLE_WRITE_ERROR ? "longer than it is worth reading"
                                     : (h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc)));
    if (strncmp(h->last_answer_cut, what, sizeof(h->last_answer_cut) - 1) == 0)
        return;
    snprintf(h->last_answer_cut, sizeof h->last_answer_cut, "%s", what);
    tw__log_for(TW_LOG_INFO, h->fmt_vt->name,
                "%s: POST %s: %s; the batch was accepted and is not sent again (the connection is "
                "closed; this message is not repeated until the cause changes)",
                h->fmt_vt->name, h->log_url, what);
}

/* One POST of the current body. *retry_after_ms: the server's Retry-After
 * (0 if none). *what: a description of a failure. */
static outcome post_once(http_sender *h, unsigned int timeout_ms, unsigned int *retry_after_ms,
                         char *what, size_t what_size)
{
    *retry_after_ms = 0;
    if (!h->curl && !make_handle(h)) {
        snprintf(what, what_size, "no libcurl handle");
        return GIVE_UP;
    }
    h->errbuf[0] = '\0';
    h->snippet_len = 0;
    h->snippet[0] = '\0';
    tw__http_head_reset(&h->head);
    h->answer_bytes = 0;
    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, (const char *)h->wire);
    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)h->wire_len);
    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    bool gave_up = false;
    h->stats.requests++;
    CURLcode rc = perform(h, &gave_up);
    if (is_accepted(h)) {
        /* The status line decides: a 2xx took the batch, so a body that
         * then fails (slow, cut, too long, the close deadline) is logged
         * and the batch is never sent again. */
        if (rc != CURLE_OK)
            log_answer_cut(h, rc);
        return SENT;
    }
    if (gave_up) {
        snprintf(what, what_size, "abandoned at the close deadline");
        return GIVE_UP;
    }
    /* A final status line with its headers decides, even when the body
     * then failed: a 400 whose body is cut is still a 400. */
    if (rc != CURLE_OK && !h->head.is_done) {
        if (rc == CURLE_COULDNT_RESOLVE_HOST)
            tw__count(&h->base.counters->resolve_failures, 1);
        snprintf(what, what_size, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
        return is_transient(rc) ? RETRY : GIVE_UP;
    }
    long status = h->head.status;
    snprintf(what, what_size, "HTTP status %ld", status);
    /* One classification for every posting loop (transport/http_head.h):
     * OTLP retries 429, 502, 503 and 504; the collectors 500 too. */
    switch (tw__http_status_verdict(status, h->fmt_vt->retry_rule)) {
    case TW__HTTP_REFUSED:
        h->stats.refused_requests++;
        return REFUSED;
    case TW__HTTP_RETRY:
        break;
    default: /* final (a 2xx without its end of headers never gets here) */
        snprintf(what, what_size, "HTTP status %ld (not retried)", status);
        return GIVE_UP;
    }
    if (!tw__http_status_has_retry_after(status))
        return RETRY;
#if LIBCURL_VERSION_NUM >= 0x074200 /* 7.66.0: CURLINFO_RETRY_AFTER */
    /* libcurl reads both forms, seconds and an HTTP-date (a date already
     * past gives 0). Capped: a server asking for an hour gets the longest
     * cool-down, not an hour. */
    curl_off_t after_s = 0;
    if (curl_easy_getinfo(h->curl, CURLINFO_RETRY_AFTER, &after_s) == CURLE_OK && after_s > 0)
        *retry_after_ms = after_s > RETRY_AFTER_MAX_MS / 1000 ? RETRY_AFTER_MAX_MS
                                                              : (unsigned int)after_s * 1000u;
#endif
    return RETRY;
}

static uint64_t next_random(http_sender *h)
{
    h->rng ^= h->rng << 13;
    h->rng ^= h->rng >> 7;
    h->rng ^= h->rng << 17;
    return h->rng;
}

/* The delay before a retry: on the multi handle, so that interrupt (close)
 * ends it at once; never past the give-up time. */
static void sleep_ms(http_sender *h, unsigned int ms)
{
    int64_t end = tw__mono_ns() + (int64_t)ms * 1000000;
    for (;;) {
        int64_t left_ns = end - tw__mono_ns();
        unsigned int left_ms = left_ns > 0 ? (unsigned int)((left_ns + 999999) / 1000000) : 0;
        left_ms = tw__sender_ms_left(&h->base, left_ms);
        if (left_ms == 0)
            return;
        if (h->multi) {
            poll_multi(h, left_ms);
        } else {
            struct timespec t = {(time_t)(left_ms / 1000), (long)(left_ms % 1000) * 1000000L};
            nanosleep(&t, NULL);
        }
    }
}

/* The cool-down after a round of retries used up: clamp(initial_backoff <<
 * max_retries, 1 s, 30 s), at least the server's last Retry-After. In
 * patient mode it doubles with each failed round in a row (still at most
 * 30 s), so that a backend that is restarting gets time to come back. */
static unsigned int cool_down_ms(const http_sender *h)
{
    unsigned int shift = h->max_retries < 20 ? h->max_retries : 20;
    if (h->patience && h->failed_rounds > 0)
        shift += h->failed_rounds - 1 < 20 ? h->failed_rounds - 1 : 20;
    uint64_t cool_ms = (uint64_t)h->initial_backoff_ms << shift;
    if (cool_ms < BREAKER_MIN_MS)
        cool_ms = BREAKER_MIN_MS;
    if (cool_ms < h->retry_after_ms)
        cool_ms = h->retry_after_ms;
    if (cool_ms > BREAKER_MAX_MS)
        cool_ms = BREAKER_MAX_MS;
    return (unsigned int)cool_ms;
}

/* POSTs the body with retries: SENT, REFUSED (not logged: the caller
 * splits or reports; @what has the reason), COOLING (retries used up on a
 * retryable failure: logged, the cool-down started) or GIVE_UP (logged). */
static outcome post(http_sender *h, size_t n_spans, char *what, size_t what_size)
{
    int64_t start = tw__mono_ns();
    int64_t budget_ns = (int64_t)h->max_retry_time_ms * 1000000;
    uint64_t backoff_ms = h->initial_backoff_ms;
    h->retry_after_ms = 0;
    for (unsigned int attempt = 0;; attempt++) {
        int64_t left_ms = (budget_ns - (tw__mono_ns() - start)) / 1000000;
        unsigned int timeout = h->timeout_ms;
        if (attempt > 0 && left_ms < (int64_t)timeout)
            timeout = left_ms < 1 ? 1 : (unsigned int)left_ms;
        /* Closing: no attempt outlives the close deadline. */
        timeout = tw__sender_ms_left(&h->base, timeout);
        if (timeout == 0) {
            snprintf(what, what_size, "abandoned at the close deadline");
            log_failure(h, what, n_spans);
            return GIVE_UP;
        }
        unsigned int retry_after_ms;
        outcome o = post_once(h, timeout, &retry_after_ms, what, what_size);
        if (o == SENT) {
            if (h->last_error[0])
                tw__log_for(TW_LOG_INFO, h->fmt_vt->name, "%s: POST %s works again",
                            h->fmt_vt->name, h->log_url);
            h->last_error[0] = '\0';
            return SENT;
        }
        if (o == REFUSED) {
            /* The answer's start goes with the reason (control bytes are
             * spaces already). */
            size_t len = strlen(what);
            if (h->snippet_len && len + 3 < what_size)
                snprintf(what + len, what_size - len, ": %s", h->snippet);
            return REFUSED;
        }
        if (o == GIVE_UP) {
            log_failure(h, what, n_spans);
            return GIVE_UP;
        }
        /* Retryable. Equal jitter: half the delay fixed, half random. */
        h->retry_after_ms = retry_after_ms;
        uint64_t delay = backoff_ms / 2 + next_random(h) % (backoff_ms / 2 + 1);
        if (delay < retry_after_ms)
            delay = retry_after_ms;
        int64_t elapsed_ns = tw__mono_ns() - start;
        if (attempt >= h->max_retries || elapsed_ns + (int64_t)delay * 1000000 >= budget_ns)
            break;
        tw__log_for(TW_LOG_DEBUG, h->fmt_vt->name, "%s: POST %s: %s; retry %u in %llu ms",
                    h->fmt_vt->name, h->log_url, what, attempt + 1, (unsigned long long)delay);
        sleep_ms(h, (unsigned int)delay);
        h->stats.retries++;
        if (backoff_ms < 3600000u)
            backoff_ms *= 2;
    }
    h->breaker_until_ns = tw__mono_ns() + (int64_t)cool_down_ms(h) * 1000000;
    if (!h->patience) /* patient: post_patiently says what happens next */
        log_failure(h, what, n_spans);
    return COOLING;
}

/* ---- batching: transport/batcher.h over the format -------------------------------------- */

/* A batch's state is an instance of the format opened with its process. */
static void *batch_open(void *ctx, const void *key)
{
    http_sender *h = ctx;
    tw__http_format *f = h->fmt_vt->new_format();
    tw_error *e = NULL;
    if (f && h->fmt_vt->open(f, key, &e) == TW_OK)
        return f;
    tw__log_for(TW_LOG_WARN, h->fmt_vt->name, "%s: %s", h->fmt_vt->name,
                e ? tw_error_message(e) : "out of memory");
    tw_error_free(e);
    if (f)
        h->fmt_vt->free_format(f);
    return NULL;
}

static void batch_close(void *ctx, void *state)
{
    ((http_sender *)ctx)->fmt_vt->free_format(state);
}

/* @arg: the span's process when one body mixes processes (encode_with). */
static void *batch_encode(void *ctx, void *state, const tw__span_data *span, const void *arg,
                          size_t *size)
{
    http_sender *h = ctx;
    if (arg)
        return h->fmt_vt->encode_with(state, ((const tw__process *const *)arg)[0], span, size);
    return h->fmt_vt->encode(state, span, size);
}

static void batch_free_item(void *ctx, void *item)
{
    ((http_sender *)ctx)->fmt_vt->free_item(item);
}

static size_t batch_body_size(void *ctx, const void *state, size_t n, size_t items_size)
{
    return ((http_sender *)ctx)->fmt_vt->body_size(state, n, items_size);
}

static const tw__batch_ops batch_ops = {
    .open = batch_open,
    .close = batch_close,
    .encode = batch_encode,
    .free_item = batch_free_item,
    .body_size = batch_body_size,
};

static void snapshot_stats(http_sender *h)
{
    tw__report_counters *c = h->base.counters;
    h->batch_stats.full_queue_dropped_spans = (int64_t)tw__read(&c->queue_full);
    h->batch_stats.too_large_dropped_spans = (int64_t)tw__read(&c->too_large);
    h->batch_stats.failed_to_emit_spans = (int64_t)tw__read(&c->failed);
}

/* Compresses h->body into h->gzbuf (a gzip member). False on failure. */
static bool gzip_body(http_sender *h)
{
    if (!h->has_z) {
        memset(&h->z, 0, sizeof(h->z));
        /* 15 + 16: a 32 KiB window with the gzip wrapper. */
        if (deflateInit2(&h->z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return false;
        h->has_z = true;
    } else if (deflateReset(&h->z) != Z_OK) {
        return false;
    }
    /* max_body_bytes is at most 1 GiB, so the lengths fit in uInt. */
    uLong bound = deflateBound(&h->z, (uLong)h->body.len);
    tw__buf_reset(&h->gzbuf);
    if (!tw__buf_reserve(&h->gzbuf, (size_t)bound))
        return false;
    h->z.next_in = h->body.data;
    h->z.avail_in = (uInt)h->body.len;
    h->z.next_out = h->gzbuf.data;
    h->z.avail_out = (uInt)h->gzbuf.cap;
    if (deflate(&h->z, Z_FINISH) != Z_STREAM_END)
        return false;
    h->gzbuf.len = h->gzbuf.cap - h->z.avail_out;
    return true;
}

/* Reports the fate of items[lo, lo + n) of the batch being sent to the
 * fate callback (tw__http_sender_set_fate_fn), if any. */
static void report_fates(http_sender *h, size_t lo, size_t n, bool is_delivered)
{
    for (size_t i = lo; h->on_fate && i < lo + n; i++)
        h->on_fate(h->fate_arg, h->sending->meta[i].cookie, is_delivered);
}

/* Counts items[lo, lo + n) of the batch being sent as failed. */
static void fail_range(http_sender *h, size_t lo, size_t n, bool is_unattempted)
{
    tw__count(&h->base.counters->failed, n);
    if (is_unattempted)
        h->stats.unattempted += n;
    report_fates(h, lo, n, false);
}

/* A refused single span: counted, handed to the callback, logged once per
 * new reason. */
static void refuse_span(http_sender *h, const tw__batch_span *m, const char *why)
{
    h->stats.refused++;
    tw__count(&h->base.counters->failed, 1);
    if (h->on_fate)
        h->on_fate(h->fate_arg, m->cookie, false);
    if (h->on_refused) {
        /* The callback reports it (`convert --send` prints each one). */
        h->on_refused(h->refused_arg, m->trace_id_high, m->trace_id_low, m->span_id, why);
        return;
    }
    if (strncmp(h->last_error, why, sizeof(h->last_error) - 1) == 0)
        return;
    snprintf(h->last_error, sizeof h->last_error, "%s", why);
    tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                "%s: POST %s refused span %016" PRIx64 "%016" PRIx64 "/%016" PRIx64
                ": %s (counted as failed; this message is not repeated until the error changes)",
                h->fmt_vt->name, h->log_url, m->trace_id_high, m->trace_id_low, m->span_id, why);
}

/* Patient mode: waits until the cool-down ends (or the close deadline). */
static void wait_cool_down(http_sender *h)
{
    int64_t left_ns = h->breaker_until_ns - tw__mono_ns();
    if (left_ns > 0) {
        tw__log_for(TW_LOG_DEBUG, h->fmt_vt->name, "%s: POST %s: waiting %lld ms to try again",
                    h->fmt_vt->name, h->log_url, (long long)((left_ns + 999999) / 1000000));
        sleep_ms(h, (unsigned int)((left_ns + 999999) / 1000000));
    }
}

/* post(), and in patient mode again after each cool-down, the same body,
 * until it goes, is refused, or patience runs out: then the sender gives
 * up (logged once) and attempts nothing more. Outside patient mode, one
 * post(). */
static outcome post_patiently(http_sender *h, size_t n_spans, char *what, size_t what_size)
{
    for (;;) {
        outcome o = post(h, n_spans, what, what_size);
        if (o == SENT || o == REFUSED) {
            h->failed_rounds = 0;
            return o;
        }
        if (!h->patience)
            return o;
        h->failed_rounds++;
        if (h->failed_rounds >= h->patience) {
            h->has_given_up = true;
            snprintf(h->last_error, sizeof h->last_error, "%s", what);
            tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                        "%s: POST %s: giving up after %u failed rounds of retries in a row (the "
                        "last: %s); the spans not sent yet are not attempted",
                        h->fmt_vt->name, h->log_url, h->failed_rounds, what);
            return o;
        }
        /* A failure no retry cures (a 401, a certificate) fails this batch;
         * the next one tries again. Used-up retries wait for the
         * cool-down, then try the same body again. */
        if (o != COOLING)
            return o;
        unsigned int cool_ms = cool_down_ms(h);
        h->breaker_until_ns = tw__mono_ns() + (int64_t)cool_ms * 1000000;
        snprintf(h->last_error, sizeof h->last_error, "%s", what); /* "works again" follows */
        tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                    "%s: POST %s failed: %s%s%s (retries used up: round %u of %u); the same "
                    "%zu spans are tried again in %u ms",
                    h->fmt_vt->name, h->log_url, what, h->snippet_len ? ": " : "", h->snippet,
                    h->failed_rounds, h->patience, n_spans, cool_ms);
        wait_cool_down(h);
        if (tw__sender_gave_up(&h->base)) {
            snprintf(what, what_size, "abandoned at the close deadline");
            return GIVE_UP;
        }
    }
}

/*
 * Sends items[lo, lo + n) of the batch being sent as one body. A refused body of several spans is
 * sent again as two halves (at most @depth_left levels, while *budget
 * lasts), so that only the spans refused on their own are lost. Counts
 * every span in exactly one of sent / failed.
 */
static void send_range(http_sender *h, size_t lo, size_t n, unsigned int depth_left,
                       unsigned int *budget)
{
    tw__report_counters *c = h->base.counters;
    if (h->patience && !h->has_given_up && tw__mono_ns() < h->breaker_until_ns)
        wait_cool_down(h); /* patient: the batch waits (the caller's thread with it) */
    if (tw__sender_gave_up(&h->base)) {
        /* Closing, past the deadline: nothing more is sent. */
        tw__log_for(TW_LOG_DEBUG, h->fmt_vt->name, "%s: close deadline passed: %zu spans failed",
                    h->fmt_vt->name, n);
        fail_range(h, lo, n, true);
        return;
    }
    if (h->has_given_up) {
        fail_range(h, lo, n, true);
        return;
    }
    if (tw__mono_ns() < h->breaker_until_ns) {
        /* The endpoint failed a whole retry cycle moments ago. */
        tw__log_for(TW_LOG_DEBUG, h->fmt_vt->name,
                    "%s: cooling down after failed retries: %zu spans failed", h->fmt_vt->name, n);
        fail_range(h, lo, n, true);
        return;
    }
    tw__batch *b = h->sending;
    size_t items_size = 0;
    for (size_t i = lo; i < lo + n; i++)
        items_size += b->meta[i].size;
    if (!h->fmt_vt->build(b->state, b->items + lo, n, h->seq_no, &h->batch_stats, &h->body)) {
        tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                    "%s: cannot build a body of %zu spans (out of memory)", h->fmt_vt->name, n);
        fail_range(h, lo, n, false);
        return;
    }
    h->seq_no++;
    size_t expected = h->fmt_vt->body_size(b->state, n, items_size);
    if (h->body.len != expected)
        tw__log_for(TW_LOG_ERROR, h->fmt_vt->name,
                    "%s: body is %zu bytes, %zu were predicted (a bug)", h->fmt_vt->name,
                    h->body.len, expected);
    h->wire = h->body.data;
    h->wire_len = h->body.len;
    if (h->is_gzip) {
        if (!gzip_body(h)) {
            tw__log_for(TW_LOG_WARN, h->fmt_vt->name,
                        "%s: cannot gzip a body of %zu bytes (out of memory)", h->fmt_vt->name,
                        h->body.len);
            fail_range(h, lo, n, false);
            return;
        }
        h->wire = h->gzbuf.data;
        h->wire_len = h->gzbuf.len;
    }
    char what[CURL_ERROR_SIZE + RESPONSE_SNIPPET + 48] = "";
    outcome o = post_patiently(h, n, what, sizeof what);
    if (o == SENT) {
        tw__count(&c->sent, n);
        tw__count(&c->batches, 1);
        tw__count(&c->bytes, h->wire_len);
        h->stats.body_bytes += h->body.len;
        report_fates(h, lo, n, true);
        return;
    }
    if (o != REFUSED) {
        fail_range(h, lo, n, false); /* logged by post */
        return;
    }
    if (n == 1) {
        refuse_span(h, &b->meta[lo], what);
        return;
    }
    if (depth_left == 0 || *budget < 2) {
        char why[sizeof what + 64];
        snprintf(why, sizeof why, "%s (no requests left to isolate the refused spans)", what);
        h->snippet_len = 0; /* already in @why */
        h->snippet[0] = '\0';
        log_failure(h, why, n);
        fail_range(h, lo, n, false);
        return;
    }
    *budget -= 2;
    h->stats.split_requests += 2;
    size_t half = n / 2;
    send_range(h, lo, half, depth_left - 1, budget);
    send_range(h, lo + half, n - half, depth_left - 1, budget);
}

/* The batcher's emit callback: sends one batch (every span ends sent or
 * failed). */
static void emit(void *arg, tw__batch *batch)
{
    http_sender *h = arg;
    unsigned int budget = h->max_split_requests;
    snapshot_stats(h);
    h->sending = batch;
    send_range(h, 0, batch->n, MAX_SPLIT_DEPTH, &budget);
    h->sending = NULL;
    /* A body far larger than usual is not kept for the next batch. */
    if (h->body.cap > h->max_body * 2)
        tw__buf_free(&h->body);
    if (h->gzbuf.cap > h->max_body * 2)
        tw__buf_free(&h->gzbuf);
    tw__buf_reset(&h->body);
    tw__buf_reset(&h->gzbuf);
}

/* Batches @span under @key (encoded with *@process_arg when non-NULL) with
 * @cookie (tw__http_sender_append_tracked) and counts what cannot be.
 * Consumes the reference. */
static void add_span(http_sender *h, const void *key, const tw__process *const *process_arg,
                     tw__span_data *span, void *cookie)
{
    bool is_batched = false;
    if (!h->batcher) {
        tw__count(&h->base.counters->failed, 1);
    } else {
        switch (tw__batcher_add(h->batcher, key, span, process_arg, cookie, tw__mono_ns())) {
        case TW__BATCH_OK:
            is_batched = true;
            break;
        case TW__BATCH_TOO_LARGE:
            tw__sender_too_large(&h->base, tw__batcher_too_large_bytes(h->batcher), h->max_body);
            break;
        default:
            tw__count(&h->base.counters->failed, 1);
            break;
        }
    }
    if (!is_batched && h->on_fate)
        h->on_fate(h->fate_arg, cookie, false);
    tw__span_data_unref(span);
}

static void http_append(tw__sender *s, tw__span_data *span)
{
    http_sender *h = (http_sender *)s;
    add_span(h, h->process, NULL, span, NULL);
}

static void http_flush(tw__sender *s)
{
    http_sender *h = (http_sender *)s;
    if (h->batcher)
        tw__batcher_flush(h->batcher);
}

/* Checks that the format can encode @process (the error goes to the
 * caller now rather than to the log per batch); batches open their own
 * instance. */
static tw_status http_open(tw__sender *s, const tw__process *process, tw_error **err)
{
    http_sender *h = (http_sender *)s;
    tw__http_format *f = h->fmt_vt->new_format();
    if (!f) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", h->fmt_vt->name);
        return TW_E_NOMEM;
    }
    tw_status st = h->fmt_vt->open(f, process, err);
    h->fmt_vt->free_format(f);
    if (st == TW_OK)
        h->process = process;
    return st;
}

/* In a fork child: the partial batch is the parent's to send, and the
 * connection (a socket, maybe a TLS session) is shared with the parent.
 * curl_easy_cleanup could write a TLS close_notify into the parent's
 * session, so the child closes its copy of the socket and abandons the
 * handle (a one-time leak per fork) and makes a new one on its first send. */
static void http_after_fork_child(tw__sender *s)
{
    http_sender *h = (http_sender *)s;
    if (h->batcher)
        tw__batcher_discard(h->batcher);
    if (h->curl) {
        /* The kept-alive connection (found while curl is still attached). */
        curl_socket_t fd = CURL_SOCKET_BAD;
        if (h->is_attached && curl_easy_getinfo(h->curl, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK &&
            fd != CURL_SOCKET_BAD)
            close(fd);
        h->curl = NULL;
    }
    /* The multi handle's wakeup socket pair stays open, unused, in the
     * child (libcurl has no call that closes it without the cleanup). */
    h->multi = NULL;
    atomic_store(&h->wakeable, NULL);
    h->is_attached = false;
    h->breaker_until_ns = 0;
    h->failed_rounds = 0;
    h->rng ^= (uint64_t)getpid() << 17;
}

static void http_interrupt(tw__sender *s)
{
    http_sender *h = (http_sender *)s;
    CURLM *m = atomic_load(&h->wakeable);
    if (m)
        curl_multi_wakeup(m);
}

static tw__sender *http_fork_clone(const tw__sender *s);
static bool make_batcher(http_sender *h);

static void http_free(tw__sender *s)
{
    http_sender *h = (http_sender *)s;
    if (!h)
        return;
    tw__batcher_free(h->batcher);
    if (h->has_z)
        deflateEnd(&h->z);
    tw__buf_free(&h->gzbuf);
    if (h->curl && h->is_attached)
        curl_multi_remove_handle(h->multi, h->curl);
    if (h->curl)
        curl_easy_cleanup(h->curl);
    if (h->multi)
        curl_multi_cleanup(h->multi);
    curl_slist_free_all(h->headers);
    tw__buf_free(&h->body);
    free(h->url);
    free(h->log_url);
    free(h->user);
    free(h->password);
    free(h->ca_file);
    free(h->cert_file);
    free(h->key_file);
    free(h);
}

static const tw__sender_vtable http_vtable = {
    .size = sizeof(tw__sender_vtable),
    .name = "http",
    .open = http_open,
    .append = http_append,
    .flush = http_flush,
    .free = http_free,
    .after_fork_child = http_after_fork_child,
    .fork_clone = http_fork_clone,
    .interrupt = http_interrupt,
    .bound_unit = "HTTP body",
    .bound_setting = "tw_reporter_options_set_max_body_size",
    .bound_max = TW__HTTP_MAX_BODY_BYTES,
};

void tw__http_sender_set_refused_fn(tw__sender *s, tw__http_refused_fn fn, void *arg)
{
    if (!s || s->vtable != &http_vtable)
        return;
    http_sender *h = (http_sender *)s;
    h->on_refused = fn;
    h->refused_arg = arg;
}

void tw__http_sender_get_stats(const tw__sender *s, tw__http_sender_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (s && s->vtable == &http_vtable) {
        const http_sender *h = (const http_sender *)s;
        *out = h->stats;
        out->has_given_up = h->has_given_up;
        out->failed_rounds = h->failed_rounds;
    }
}

void tw__http_sender_set_patience(tw__sender *s, unsigned int rounds)
{
    if (s && s->vtable == &http_vtable)
        ((http_sender *)s)->patience = rounds;
}

void tw__http_sender_set_fate_fn(tw__sender *s, tw__http_fate_fn fn, void *arg)
{
    if (!s || s->vtable != &http_vtable)
        return;
    http_sender *h = (http_sender *)s;
    h->on_fate = fn;
    h->fate_arg = arg;
}

void tw__http_sender_append_tracked(tw__sender *s, const tw__process *process, tw__span_data *span,
                                    void *cookie)
{
    if (!s || s->vtable != &http_vtable) {
        tw__span_data_unref(span);
        return;
    }
    http_sender *h = (http_sender *)s;
    if (h->fmt_vt->encode_with)
        add_span(h, NULL, &process, span, cookie); /* one body for every process */
    else
        add_span(h, process, NULL, span, cookie);
}

void tw__http_sender_append_for(tw__sender *s, const tw__process *process, tw__span_data *span)
{
    tw__http_sender_append_tracked(s, process, span, NULL);
}

bool tw__http_sender_set_batching(tw__sender *s, size_t max_open, unsigned int flush_ms)
{
    if (!s || s->vtable != &http_vtable)
        return false;
    http_sender *h = (http_sender *)s;
    if (h->batcher && tw__batcher_spans(h->batcher))
        return false;
    tw__batcher *old = h->batcher;
    size_t old_open = h->max_open;
    unsigned int old_flush = h->flush_ms;
    h->max_open = max_open;
    h->flush_ms = flush_ms;
    if (!make_batcher(h)) {
        h->batcher = old;
        h->max_open = old_open;
        h->flush_ms = old_flush;
        return false;
    }
    tw__batcher_free(old);
    return true;
}

void tw__http_sender_tick(tw__sender *s, int64_t now_ns)
{
    if (s && s->vtable == &http_vtable && ((http_sender *)s)->batcher)
        tw__batcher_tick(((http_sender *)s)->batcher, now_ns);
}

size_t tw__http_sender_pending_bytes(const tw__sender *s)
{
    if (!s || s->vtable != &http_vtable)
        return 0;
    const http_sender *h = (const http_sender *)s;
    return h->batcher ? tw__batcher_pending_bytes(h->batcher) : 0;
}

/* ---- creation -------------------------------------------------------------------------------- */

static bool dup_opt(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return !src || *dst;
}

static bool add_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *grown = curl_slist_append(*list, line);
    if (!grown)
        return false;
    *list = grown;
    return true;
}

/* The URL must parse and be http or https. *log_url receives it without
 * credentials (free it). */
static tw_status check_url(const char *name, const char *url, char **log_url, tw_error **err)
{
    *log_url = NULL;
    CURLU *u = curl_url();
    if (!u) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
        return TW_E_NOMEM;
    }
    char *scheme = NULL;
    CURLUcode rc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    bool ok =
        rc == CURLUE_OK && scheme && (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
    if (ok) {
        /* For log lines: the URL under the whole-URL rules (user:password
         * and query values as ***, wire/core/redact.h), so that a quote or
         * '<' that curl takes in a query value does not end the mask early
         * when the log line is redacted as free text. */
        size_t size = 4 * strlen(url) + 16;
        if ((*log_url = malloc(size)))
            tw__redact_url(url, *log_url, size);
    }
    curl_free(scheme);
    curl_url_cleanup(u);
    if (!ok) {
        /* Not shown: a value that is not a URL cannot be told apart into
         * host and credentials (a password with a space or a '#'). */
        tw__set_error(err, TW_E_CONFIG,
                      "%s: endpoint is not an http:// or https:// URL (the value is not shown: "
                      "it may hold a secret)",
                      name);
        return TW_E_CONFIG;
    }
    return TW_OK;
}

static tw_status check_file(const char *name, const char *what, const char *path, tw_error **err)
{
    if (!path || access(path, R_OK) == 0)
        return TW_OK;
    tw__set_error(err, TW_E_CONFIG, "%s: %s \"%s\" cannot be read: %s", name, what, path,
                  strerror(errno));
    return TW_E_CONFIG;
}

static struct curl_slist *dup_slist(const struct curl_slist *l, bool *ok)
{
    struct curl_slist *copy = NULL;
    *ok = true;
    for (; l && *ok; l = l->next)
        *ok = add_header(&copy, l->data);
    return copy;
}

/* The batcher: bodies up to max_body; the open ones together (many
 * processes: transport/sender.h) up to two bodies. */
static bool make_batcher(http_sender *h)
{
    tw__batcher_limits limits = {h->max_body, h->max_open ? h->max_open : 1, h->flush_ms,
                                 2 * h->max_body};
    h->batcher = tw__batcher_new(&batch_ops, h, &limits, emit, h);
    return h->batcher != NULL;
}

/* A forked child's new sender: the configuration of @s, which never
 * changes after creation (the batch, the handles and the counters of @s
 * are the parent's thread's and are not read). */
static tw__sender *http_fork_clone(const tw__sender *s)
{
    const http_sender *o = (const http_sender *)s;
    http_sender *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->base.vtable = &http_vtable;
    h->fmt_vt = o->fmt_vt;
    bool ok = check_url(o->fmt_vt->name, o->url, &h->log_url, NULL) == TW_OK && h->log_url &&
              dup_opt(&h->url, o->url) && dup_opt(&h->user, o->user) &&
              dup_opt(&h->password, o->password) && dup_opt(&h->ca_file, o->ca_file) &&
              dup_opt(&h->cert_file, o->cert_file) && dup_opt(&h->key_file, o->key_file);
    if (ok)
        h->headers = dup_slist(o->headers, &ok);
    if (!ok) {
        http_free(&h->base);
        return NULL;
    }
    h->connect_timeout_ms = o->connect_timeout_ms;
    h->timeout_ms = o->timeout_ms;
    h->max_body = o->max_body;
    h->max_retries = o->max_retries;
    h->initial_backoff_ms = o->initial_backoff_ms;
    h->max_retry_time_ms = o->max_retry_time_ms;
    h->max_split_requests = o->max_split_requests;
    h->is_gzip = o->is_gzip;
    h->flush_ms = o->flush_ms;
    h->max_open = o->max_open;
    h->on_refused = o->on_refused;
    h->refused_arg = o->refused_arg;
    if (!make_batcher(h)) {
        http_free(&h->base);
        return NULL;
    }
    h->rng = (uint64_t)tw__mono_ns() ^ ((uint64_t)getpid() << 17) ^ 0x9e3779b97f4a7c15u;
    if (h->rng == 0)
        h->rng = 1;
    tw__buf_init(&h->body);
    tw__buf_init(&h->gzbuf);
    return &h->base;
}

tw__sender *tw__http_sender_new(const tw__http_format_vtable *format,
                                const tw_reporter_options *opts, tw_error **err)
{
    const char *name = format->name;
    tw__http_options defaults;
    tw__http_options_init(&defaults);
    const tw__http_options *o = opts && opts->http ? opts->http : &defaults;
    const char *url = o->endpoint ? o->endpoint : format->default_endpoint;

    pthread_once(&curl_once, curl_init_once);
    if (curl_init_status != CURLE_OK) {
        tw__set_error(err, TW_E_STATE, "%s: libcurl cannot be initialised: %s", name,
                      curl_easy_strerror(curl_init_status));
        return NULL;
    }
    char *log_url = NULL;
    tw_status st = check_url(name, url, &log_url, err);
    if (st == TW_OK)
        st = check_file(name, "CA file", o->ca_file, err);
    if (st == TW_OK)
        st = check_file(name, "client certificate", o->cert_file, err);
    if (st == TW_OK)
        st = check_file(name, "client key", o->key_file, err);
    if (st != TW_OK) {
        free(log_url);
        return NULL;
    }

    http_sender *h = calloc(1, sizeof(*h));
    if (!h || !log_url) {
        free(log_url);
        free(h);
        h = NULL;
        goto fail_nomem;
    }
    h->base.vtable = &http_vtable;
    h->log_url = log_url;
    h->fmt_vt = format;
    if (!dup_opt(&h->url, url) || !dup_opt(&h->user, o->user) ||
        !dup_opt(&h->password, o->password) || !dup_opt(&h->ca_file, o->ca_file) ||
        !dup_opt(&h->cert_file, o->cert_file) || !dup_opt(&h->key_file, o->key_file))
        goto fail_nomem;

    char line[64];
    snprintf(line, sizeof line, "Content-Type: %s", format->content_type);
    /* "Expect:" stops curl from waiting for a 100 Continue on large bodies,
     * which servers that do not answer it turn into a one-second stall. */
    if (!add_header(&h->headers, line) || !add_header(&h->headers, "Expect:"))
        goto fail_nomem;
    if (o->is_gzip && !add_header(&h->headers, "Content-Encoding: gzip"))
        goto fail_nomem;
    if (o->bearer_token) {
        size_t len = strlen("Authorization: Bearer ") + strlen(o->bearer_token) + 1;
        char *auth = malloc(len);
        bool ok = auth != NULL;
        if (ok) {
            snprintf(auth, len, "Authorization: Bearer %s", o->bearer_token);
            ok = add_header(&h->headers, auth);
            free(auth);
        }
        if (!ok)
            goto fail_nomem;
    }
    for (size_t i = 0; i < o->n_headers; i++) {
        if (!add_header(&h->headers, o->headers[i]))
            goto fail_nomem;
    }
    h->connect_timeout_ms = o->connect_timeout_ms;
    h->timeout_ms = o->timeout_ms;
    h->max_body = o->max_body_bytes;
    h->max_retries = o->max_retries;
    h->initial_backoff_ms = o->initial_backoff_ms;
    h->max_retry_time_ms = o->max_retry_time_ms;
    h->max_split_requests = o->max_split_requests;
    h->is_gzip = o->is_gzip;
    h->max_open = 1;
    if (!make_batcher(h))
        goto fail_nomem;
    h->rng = (uint64_t)tw__mono_ns() ^ (uint64_t)(uintptr_t)h ^ 0x9e3779b97f4a7c15u;
    if (h->rng == 0)
        h->rng = 1;
    tw__buf_init(&h->body);
    tw__buf_init(&h->gzbuf);
    return &h->base;

fail_nomem:
    http_free(h ? &h->base : NULL);
    tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
    return NULL;
}
