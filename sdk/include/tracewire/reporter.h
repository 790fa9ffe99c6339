/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/reporter.h: where finished sampled spans go.
 *
 * Reporters: the Jaeger agent UDP reporter (Thrift compact emitBatch, a
 * bounded queue and a background thread: the application thread only
 * enqueues, never sends) and its Thrift binary twin (agent port 6832), the
 * Dapper-style local span log (one JSON line per span in a size-rotated
 * file, docs/dapper-log-format.md, on the same queue and thread), the
 * HTTP reporters (Jaeger collector Thrift, Zipkin v2 JSON, OTLP/HTTP JSON or protobuf;
 * same queue and thread, libcurl), an in-memory reporter (for tests,
 * including the users' own), a logging reporter (one line per span to a
 * tw_log_fn), and a composite that fans out to several.
 *
 * Ownership: a reporter given to tw_tracer_options_set_reporter() belongs to
 * the options and then to the tracer, which closes and frees it; the caller
 * may keep the pointer to read counters or memory-reporter spans until
 * tw_tracer_free(). A reporter never given to a tracer is freed with
 * tw_reporter_free().
 *
 * Accounting: every span handed to a reporter ends in exactly one counter:
 * sent, dropped because the queue was full (of spans or of bytes), dropped
 * because it was too large for one packet, or failed to emit (a send
 * error). So reported = sent + queue_full + too_large + failed once the
 * reporter has flushed. TW_COUNTER_DROPPED_QUEUE_BYTES says how many of the
 * queue_full drops were at the byte bound.
 *
 * Thread safety: reporter functions may be called from any thread.
 *
 * fork(): the queued reporters (UDP, file, HTTP) survive it. The parent is
 * unaffected. In the child, the reporter starts empty: the spans that were
 * queued or batched in the parent at the fork are the parent's to send, so
 * the child drops them without counting them, its counters restart at 0,
 * and its background thread starts again lazily, on the child's first
 * reported span or flush. fork() never waits for the transport: a batch
 * being sent at that moment (an HTTP request in flight, however slow the
 * collector) stays the parent's, and the child sends with a transport of
 * its own (new connection, new socket or file descriptor). Spans of the two
 * processes never arrive twice. The same holds for every lock of the
 * library (samplers, logger, id generator, span records): fork() from any
 * thread, at any time, leaves the child with none held.
 *
 * Close: closing a queued reporter hands what is queued to the transport
 * until its close deadline (tw_reporter_options_set_close_timeout_ms,
 * default 5 s) and counts what it could not send as failed to emit; it
 * returns by then whatever the transport does.
 */
#ifndef TRACEWIRE_REPORTER_H
#define TRACEWIRE_REPORTER_H

#include "tracewire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_reporter tw_reporter;
typedef struct tw_reporter_options tw_reporter_options;
typedef struct tw_finished_span tw_finished_span;

/* ---- options of the asynchronous (network) reporters -------------------------------------- */

/** tw_reporter_options_new: defaults as in docs/CONFIGURATION.md. Since: 0.1 */
TW_EXTERN tw_reporter_options *tw_reporter_options_new(void);
TW_EXTERN void tw_reporter_options_free(tw_reporter_options *opts);

/** Agent host (name, IPv4 or IPv6 literal, the latter with or without
 * brackets and with an optional %zone; default "127.0.0.1") and UDP port
 * (default 6831). Anything else (a port, a path, user info) is
 * TW_E_INVALID_ARG. Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_agent(tw_reporter_options *opts, const char *host,
                                                  unsigned int port);
/** Queue capacity in spans (default 8192; at least 1;
 * JAEGER_REPORTER_MAX_QUEUE_SIZE). The queue is also bounded in bytes
 * (tw_reporter_options_set_max_queue_bytes): a span is dropped when either
 * bound is reached. Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_max_queue_size(tw_reporter_options *opts,
                                                           size_t max_spans);
/**
 * tw_reporter_options_set_max_queue_bytes: the queued reporters' (UDP,
 * file, HTTP) second bound: the heap memory of the spans in the queue, each
 * counted from when it is queued until the reporter thread has handed it to
 * the transport (its record and arena blocks, malloc's overhead included).
 * Default 8 MiB (8388608; 65536..2^40; TRACEWIRE_REPORTER_MAX_QUEUE_BYTES),
 * room for the default 8192 spans of a typical size, so it binds for large
 * spans or a long queue. A span that would take the queue past it is
 * dropped and counted in TW_COUNTER_DROPPED_QUEUE_FULL and, as well, in
 * TW_COUNTER_DROPPED_QUEUE_BYTES; an empty queue takes any span, so one
 * larger than the bound is still sent. After a burst the reporter thread
 * gives the freed memory back to the system (glibc: malloc_trim).
 * Returns: TW_OK, TW_E_INVALID_ARG.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_max_queue_bytes(tw_reporter_options *opts,
                                                            size_t bytes);
/** Flush interval in milliseconds (default 1000; at least 1). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_flush_interval_ms(tw_reporter_options *opts,
                                                              unsigned int interval_ms);
/**
 * tw_reporter_options_set_close_timeout_ms: the close deadline of the
 * queued reporters (UDP, file, HTTP): how long closing (tw_tracer_close(),
 * tw_tracer_free(), tw_reporter_free()) may spend handing what is still
 * queued to the transport (default 5000 ms, as Jaeger's Go client;
 * 1..3600000; TRACEWIRE_REPORTER_CLOSE_TIMEOUT). At the deadline a request
 * in flight is abandoned, no retry starts, and every span not sent is
 * counted as failed to emit, so close returns by then whatever the
 * collector does. The reporters of a composite close at the same time:
 * closing it takes the longest of their deadlines, not their sum.
 * Returns: TW_OK, TW_E_INVALID_ARG.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_close_timeout_ms(tw_reporter_options *opts,
                                                             unsigned int timeout_ms);
/** Largest UDP datagram in bytes, whole serialized message (default 65000;
 * 512..65507). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_max_packet_size(tw_reporter_options *opts,
                                                            size_t bytes);
/** How often the agent host name is resolved again (default 30000 ms; 0
 * turns re-resolution off). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_resolve_interval_ms(tw_reporter_options *opts,
                                                                unsigned int interval_ms);

/**
 * tw_reporter_options_set_file_path: the span log that tw_reporter_file_new()
 * appends to (required there; no default). The directory must exist; the
 * file is created (mode 0644 less the umask) when missing and appended to
 * when present. Rotated files are named @path.1 (newest) to @path.N.
 * @opts: the options. @path: (transfer none) non-empty; copied.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_file_path(tw_reporter_options *opts, const char *path);
/**
 * tw_reporter_options_set_max_file_bytes: size at which the span log is
 * rotated (default 64 MiB; at least 1024). No file grows beyond it: a span
 * whose line alone is longer is dropped and counted as too large.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_max_file_bytes(tw_reporter_options *opts, size_t bytes);
/**
 * tw_reporter_options_set_max_files: rotated span logs kept besides the
 * current one (default 5, at most 1000): @path.1 .. @path.N, the oldest
 * deleted. 0 keeps none: a full file is deleted and started again.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_max_files(tw_reporter_options *opts, size_t max_files);

/* ---- options of the HTTP reporters (Jaeger collector, Zipkin, OTLP/HTTP) -------------------- */

/**
 * tw_reporter_options_set_endpoint: the full URL the HTTP reporters POST to,
 * http:// or https://. Defaults: tw_reporter_jaeger_http_new()
 * "http://localhost:14268/api/traces", tw_reporter_zipkin_new()
 * "http://localhost:9411/api/v2/spans", tw_reporter_otlp_http_new()
 * "http://localhost:4318/v1/traces". The URL is checked by the constructor.
 * @url: (nullable) copied; NULL restores the reporter's default.
 * Returns: TW_OK, TW_E_INVALID_ARG (empty @url), TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_endpoint(tw_reporter_options *opts, const char *url);

/**
 * tw_reporter_options_set_basic_auth: HTTP basic authentication (RFC 7617)
 * for the HTTP reporters. Replaces a bearer token (the last one set wins).
 * Send it over https:// only: basic credentials are not encrypted.
 * @user: (nullable) copied, without ':'; NULL (with @password NULL) removes it.
 * @password: (nullable) copied; NULL is an empty password.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_basic_auth(tw_reporter_options *opts, const char *user,
                                                       const char *password);

/**
 * tw_reporter_options_set_bearer_token: sends "Authorization: Bearer @token"
 * with every HTTP request. Replaces basic authentication (the last one set
 * wins).
 * @token: (nullable) copied, non-empty, one line; NULL removes it.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_bearer_token(tw_reporter_options *opts,
                                                         const char *token);

/**
 * tw_reporter_options_set_ca_file: PEM file of the certificate authorities
 * that https:// endpoints are verified against (default: the system's
 * store). Server certificates and host names are always verified.
 * @path: (nullable) copied; NULL restores the system's store. The
 * constructor fails with TW_E_CONFIG when the file cannot be read.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_ca_file(tw_reporter_options *opts, const char *path);

/**
 * tw_reporter_options_set_client_cert: a client certificate for https://
 * endpoints that ask for one (mutual TLS), both files PEM.
 * @cert_path: (nullable) copied; NULL (with @key_path NULL) removes it.
 * @key_path: (nullable) copied; NULL when the key is in @cert_path.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_client_cert(tw_reporter_options *opts,
                                                        const char *cert_path,
                                                        const char *key_path);

/**
 * tw_reporter_options_add_header: a header sent with every HTTP request, in
 * the order added (at most 64). Use it for tenant or API-key headers
 * (OTEL_EXPORTER_OTLP_HEADERS).
 * @name: an RFC 9110 token; not Content-Type, Content-Length, Host,
 * Transfer-Encoding, Expect or Connection, which the transport owns.
 * @value: copied; one line (no CR or LF); may be empty.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_LIMIT (64 already), TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_add_header(tw_reporter_options *opts, const char *name,
                                                   const char *value);

/**
 * tw_reporter_options_set_http_timeouts_ms: time allowed to connect
 * (default 5000 ms, TLS handshake included) and for one whole request
 * attempt, connecting included (default 10000 ms). Both at least 1.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_http_timeouts_ms(tw_reporter_options *opts,
                                                             unsigned int connect_timeout_ms,
                                                             unsigned int timeout_ms);

/**
 * tw_reporter_options_set_max_body_size: largest HTTP request body in bytes
 * (default 1048576, as Jaeger's Java and C++ clients; 512..1073741824),
 * measured on the encoded body. A batch is sent before it would grow past
 * it; a span whose body alone would is dropped and counted as too large.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_max_body_size(tw_reporter_options *opts, size_t bytes);

/**
 * tw_reporter_options_set_max_retries: how many times a batch is sent again
 * after a 5xx answer or a transport failure (default 3; 0..100). 4xx answers
 * are never retried.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_max_retries(tw_reporter_options *opts,
                                                        unsigned int max_retries);

/**
 * tw_reporter_options_set_retry_backoff_ms: the first delay before a retry
 * (default 100 ms; it doubles with each retry, jittered, and is at least a
 * Retry-After the server sent) and the time after a batch's first attempt
 * past which no retry starts (default 15000 ms). Both at least 1.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_retry_backoff_ms(tw_reporter_options *opts,
                                                             unsigned int initial_ms,
                                                             unsigned int max_retry_time_ms);

/**
 * tw_reporter_options_set_gzip: sends HTTP bodies gzip-compressed
 * (Content-Encoding: gzip; OTEL_EXPORTER_OTLP_COMPRESSION=gzip). Default
 * off. The max body size still bounds the uncompressed body, so batching
 * does not change. Turn it on only for a backend that takes gzip bodies
 * (Zipkin and the OpenTelemetry Collector do).
 * @opts: the options. @is_gzip: true to compress.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (options unchanged).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_gzip(tw_reporter_options *opts, bool is_gzip);

/**
 * tw_otlp_protocol: the encoding of tw_reporter_otlp_http_new()'s requests,
 * as OTEL_EXPORTER_OTLP_TRACES_PROTOCOL names them. Since: 0.1
 */
typedef enum tw_otlp_protocol {
    TW_OTLP_HTTP_JSON = 0,    /* "http/json": OTLP/JSON, application/json (the default) */
    TW_OTLP_HTTP_PROTOBUF = 1 /* "http/protobuf": protobuf, application/x-protobuf */
} tw_otlp_protocol;

/**
 * tw_reporter_options_set_otlp_protocol: how tw_reporter_otlp_http_new()
 * encodes its requests (default TW_OTLP_HTTP_JSON). Both carry the same
 * ExportTraceServiceRequest (the same mapping); protobuf bodies are about
 * half the size and cheaper to encode. Other reporters ignore it.
 * Returns: TW_OK, TW_E_INVALID_ARG (an unknown value), TW_E_NOMEM.
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_reporter_options_set_otlp_protocol(tw_reporter_options *opts,
                                                          tw_otlp_protocol protocol);

/* ---- reporters ---------------------------------------------------------------------------- */

/**
 * tw_reporter_jaeger_udp_new: the Jaeger agent UDP reporter (Thrift compact
 * Agent.emitBatch). The socket is opened here; a host name that does not
 * resolve yet is not an error (sends fail and are counted until it does).
 * @opts: (nullable) NULL for defaults.
 * Returns: (transfer full) (nullable) NULL with @err set on invalid options or
 * when no socket can be opened. Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_jaeger_udp_new(const tw_reporter_options *opts, tw_error **err);

/**
 * tw_reporter_jaeger_udp_binary_new: the Jaeger agent UDP reporter speaking
 * the Thrift binary protocol (the agent's port 6832), for agents or proxies
 * that only take binary. Same queue, batching (exact sizes: binary encodings
 * are larger, so fewer spans fit a datagram), counters and resolution rules
 * as tw_reporter_jaeger_udp_new(). The port is 6832 unless
 * tw_reporter_options_set_agent() was called on @opts.
 * @opts: (nullable) NULL for defaults.
 * Returns: (transfer full) (nullable) NULL with @err set on invalid options
 * or when no socket can be opened. Name: "jaeger-udp-binary".
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_jaeger_udp_binary_new(const tw_reporter_options *opts,
                                                         tw_error **err);

/**
 * tw_reporter_file_new: the Dapper-style local span log: one JSON line per
 * finished span (docs/dapper-log-format.md, which the tracewire bridge
 * reads), appended to the file named by tw_reporter_options_set_file_path()
 * and rotated by size (set_max_file_bytes, set_max_files). It uses the
 * queue, flush interval and background thread of the network reporters: the
 * file is opened, written, rotated and synced on that thread only, so the
 * application never waits for the disk.
 *
 * Durability: every batch reaches the kernel with write(2) on O_APPEND
 * (complete lines only) at least once per flush interval; the file is
 * fdatasync'ed at each flush when something was written since the last
 * sync, before each rotation and at close. A crash of the process loses
 * the spans not written yet (about one flush interval's worth); a crash of
 * the machine at most one flush interval more.
 *
 * Failures are never fatal: a path that cannot be opened (missing directory,
 * permissions), a full disk, RLIMIT_FSIZE or a failed rotation count the
 * spans as failed to emit and are retried with the next batch; a span whose
 * line is longer than the max file size counts as too large. A record cut by
 * a short write is ended with a newline before the next one, so readers lose
 * only that line. The reporter thread blocks SIGXFSZ and SIGPIPE, so the
 * limit and a named pipe without a reader show as errors, not signals.
 *
 * Several processes may append to one path (a prefork server and its
 * children): whole-line O_APPEND writes do not interleave, and a writer that
 * finds the path already rotated by another reopens it instead of rotating
 * again. Paths that are not regular files (a FIFO, /dev/stdout) are written
 * but never rotated or synced.
 *
 * @opts: the options; the path is required.
 * Returns: (transfer full) (nullable) NULL with @err set when @opts is NULL or
 * has no path (TW_E_CONFIG). The file is first opened by the reporter thread,
 * for the first span it writes. Name: "dapper-file".
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_file_new(const tw_reporter_options *opts, tw_error **err);

/*
 * The HTTP reporters. Each POSTs batches from the same bounded queue and
 * background thread as the UDP reporter, so tw_span_finish never waits for
 * the network; libcurl (OpenSSL) does HTTP/1.1 and HTTPS on that thread,
 * keeping the connection open between batches. Batches are cut by the size
 * of the encoded body (tw_reporter_options_set_max_body_size) and sent at
 * least every flush interval. 5xx answers and transport failures are
 * retried with exponential backoff, bounded in count and time; 4xx answers
 * are not. A batch that does not get through counts its spans as failed to
 * emit. After a batch has used up its retries, the next batches fail at once
 * for a cool-down (1 to 30 s), so a collector that is down cannot hold up
 * tw_tracer_close() for more than about one retry cycle. Counters: sent,
 * dropped (queue full, too large), failed, batches and bytes (bodies that got
 * through). The options above apply; docs/CONFIGURATION.md lists defaults.
 *
 * Each returns: (transfer full) (nullable) NULL with @err set when the
 * endpoint is not an http(s) URL or a TLS file cannot be read
 * (TW_E_CONFIG), or on allocation failure. No connection is made here.
 * @opts: (nullable) NULL for defaults.
 * Thread safety: any thread. Since: 0.1
 */

/** tw_reporter_jaeger_http_new: the Jaeger collector: a Thrift binary Batch
 * (with seqNo and ClientStats), Content-Type application/x-thrift. Name:
 * "jaeger-http". */
TW_EXTERN tw_reporter *tw_reporter_jaeger_http_new(const tw_reporter_options *opts, tw_error **err);

/** tw_reporter_zipkin_new: Zipkin's v2 API: a JSON list of Zipkin v2 spans,
 * Content-Type application/json. Name: "zipkin". */
TW_EXTERN tw_reporter *tw_reporter_zipkin_new(const tw_reporter_options *opts, tw_error **err);

/** tw_reporter_otlp_http_new: OpenTelemetry's OTLP/HTTP: one
 * ExportTraceServiceRequest per batch, in the encoding
 * tw_reporter_options_set_otlp_protocol() chose: JSON (Content-Type
 * application/json, name "otlp-http", the default) or protobuf (Content-Type
 * application/x-protobuf, name "otlp-http-proto"). */
TW_EXTERN tw_reporter *tw_reporter_otlp_http_new(const tw_reporter_options *opts, tw_error **err);

/**
 * tw_reporter_memory_new: keeps finished spans in memory, in finish order, up
 * to @max_spans (0 = 1,000,000); later spans are dropped and counted as
 * queue_full. Synchronous: a span is visible as soon as tw_span_finish returns.
 * Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_memory_new(size_t max_spans);

/**
 * tw_reporter_logging_new: writes one line per finished span to @fn at
 * TW_LOG_INFO, on the finishing thread. @fn NULL writes to stderr.
 * Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_logging_new(tw_log_fn fn, void *user_data);

/**
 * tw_reporter_null_new: accepts every span and keeps none (what a disabled
 * tracer, JAEGER_DISABLED=true, reports to). Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_null_new(void);

/**
 * tw_reporter_composite_new: reports every span to each of @reporters, which
 * it takes ownership of (also on failure). Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_composite_new(tw_reporter *const *reporters, size_t n);

/** tw_reporter_composite_count: number of children of a composite; 0 for any
 * other reporter. Since: 0.1 */
TW_EXTERN size_t tw_reporter_composite_count(const tw_reporter *reporter);
/** tw_reporter_composite_get: the @index-th child. Returns: (transfer none)
 * (nullable) borrowed as long as the composite lives. Since: 0.1 */
TW_EXTERN tw_reporter *tw_reporter_composite_get(const tw_reporter *reporter, size_t index);

/** tw_reporter_free: for a reporter that no tracer owns; NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_reporter_free(tw_reporter *reporter);

/** tw_reporter_name: "jaeger-udp", "jaeger-udp-binary", "dapper-file", "jaeger-http",
 * "zipkin", "otlp-http", "otlp-http-proto", "memory", "logging", "null", "composite"; "" for
 * NULL. The transport names are the names TRACEWIRE_REPORTER and `tracewire convert
 * --send-format` take. Thread safety: any thread. Since: 0.1 */
TW_EXTERN const char *tw_reporter_name(const tw_reporter *reporter);

/* ---- counters ----------------------------------------------------------------------------- */

typedef enum tw_counter {
    TW_COUNTER_SPANS_REPORTED = 0, /* handed to the reporter */
    TW_COUNTER_SPANS_SENT = 1,     /* written to the transport (UDP: datagram accepted;
                                      file: line written; HTTP: 2xx answer) */
    TW_COUNTER_DROPPED_QUEUE_FULL = 2,
    TW_COUNTER_DROPPED_TOO_LARGE = 3,
    TW_COUNTER_FAILED_TO_EMIT = 4,
    TW_COUNTER_BATCHES_SENT = 5,
    TW_COUNTER_BYTES_SENT = 6,
    TW_COUNTER_QUEUE_LENGTH = 7, /* gauge: spans waiting now */
    TW_COUNTER_RESOLVE_FAILURES = 8,
    TW_COUNTER_DROPPED_QUEUE_BYTES = 9, /* of DROPPED_QUEUE_FULL, those dropped at the
                                           queue's byte bound (max_queue_bytes) */
    TW_COUNTER_QUEUE_BYTES = 10         /* gauge: heap bytes of the spans queued now */
} tw_counter;

/**
 * tw_reporter_counter: reads a counter (cumulative since the reporter was
 * created). A composite sums its children. Unknown counters read 0.
 * Since: 0.1
 */
TW_EXTERN uint64_t tw_reporter_counter(const tw_reporter *reporter, tw_counter counter);

/* ---- finished spans (memory reporter) --------------------------------------------------- */

/** Number of spans the memory reporter holds; 0 for other reporters. Since: 0.1 */
TW_EXTERN size_t tw_memory_reporter_count(const tw_reporter *reporter);
/**
 * tw_memory_reporter_span: the @index-th span (finish order).
 * Returns: (transfer none) (nullable) borrowed until tw_memory_reporter_clear()
 * or the reporter is freed. Since: 0.1
 */
TW_EXTERN const tw_finished_span *tw_memory_reporter_span(const tw_reporter *reporter,
                                                          size_t index);
/** Forgets every held span. Since: 0.1 */
TW_EXTERN void tw_memory_reporter_clear(tw_reporter *reporter);

/* Read accessors of a finished span; NULL reads as 0 / "". Since: 0.1 */
TW_EXTERN const char *tw_finished_span_operation(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_trace_id_high(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_trace_id_low(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_span_id(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_parent_id(const tw_finished_span *span);
TW_EXTERN unsigned int tw_finished_span_flags(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_start_us(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_duration_us(const tw_finished_span *span);
TW_EXTERN size_t tw_finished_span_tag_count(const tw_finished_span *span);
/** The @index-th tag: sets the borrowed *key and *value; false when out of range. */
TW_EXTERN bool tw_finished_span_tag(const tw_finished_span *span, size_t index, const char **key,
                                    tw_value *value);
/** The last tag named @key; false when absent. */
TW_EXTERN bool tw_finished_span_find_tag(const tw_finished_span *span, const char *key,
                                         tw_value *value);
TW_EXTERN size_t tw_finished_span_log_count(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_log_timestamp_us(const tw_finished_span *span, size_t log);
TW_EXTERN size_t tw_finished_span_log_field_count(const tw_finished_span *span, size_t log);
TW_EXTERN bool tw_finished_span_log_field(const tw_finished_span *span, size_t log, size_t field,
                                          const char **key, tw_value *value);
TW_EXTERN size_t tw_finished_span_reference_count(const tw_finished_span *span);
/** The @index-th reference: type (tw_reference_type values), trace id and span id. */
TW_EXTERN bool tw_finished_span_reference(const tw_finished_span *span, size_t index, int *type,
                                          uint64_t *trace_id_high, uint64_t *trace_id_low,
                                          uint64_t *span_id);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_REPORTER_H */
