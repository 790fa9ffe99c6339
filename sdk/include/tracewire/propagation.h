/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/propagation.h: carrying span contexts across process boundaries
 * (OpenTracing inject/extract) in the Jaeger, Zipkin B3 and W3C Trace
 * Context formats, and the carriers they read and write.
 *
 * A propagator is an ordered list of codecs. Inject writes every codec's
 * headers; extract returns the context of the first codec, in list order,
 * whose headers are present. The tracer's propagator (default: Jaeger) is set
 * with tw_tracer_options_set_propagator(); tw_tracer_inject/extract use it.
 *
 * Extract is strict about the trace context and lenient about baggage: a
 * malformed context header (wrong field count or length, non-hex digits, zero
 * ids, an overlong header, bad percent-encoding of the context header) gives
 * "no context" and an error naming the header and the reason, never a partial
 * context. Baggage problems never cost the trace: a badly %-encoded value is
 * kept raw, items beyond the limits (TW_BAGGAGE_MAX_*) are dropped, and every
 * problem is reported to the warning callback and the logger. docs/PROPAGATION.md
 * lists every rule.
 *
 * Ownership: carriers are borrowed for the duration of the call. Extracted
 * contexts are owned by the caller (tw_span_context_unref).
 * Thread safety: propagators are immutable once built: any thread may inject
 * and extract with one concurrently. A carrier is used by one thread at a time.
 */
#ifndef TRACEWIRE_PROPAGATION_H
#define TRACEWIRE_PROPAGATION_H

#include "tracewire/common.h"
#include "tracewire/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OpenTracing carrier formats. TEXT_MAP values are written raw; HTTP_HEADERS
 * values are %-encoded where a format says so (Jaeger baggage). BINARY is
 * only for tw_binary_inject/extract: the key/value calls refuse it. */
typedef enum tw_format {
    TW_FORMAT_TEXT_MAP = 0,
    TW_FORMAT_HTTP_HEADERS = 1,
    TW_FORMAT_BINARY = 2
} tw_format;

/* Codecs. */
typedef enum tw_codec {
    TW_CODEC_JAEGER = 0,    /* uber-trace-id, uberctx-*, jaeger-debug-id, jaeger-baggage */
    TW_CODEC_B3 = 1,        /* X-B3-* multi-header (extract also reads the single b3 header) */
    TW_CODEC_B3_SINGLE = 2, /* single "b3" header */
    TW_CODEC_W3C = 3        /* traceparent, tracestate, and W3C baggage */
} tw_codec;

/* Limits on extracted baggage (W3C baggage limits, which Jaeger's Go client
 * applies to all formats), per baggage header kind and again for the merged
 * result; items beyond them are dropped with a warning. Inject applies them
 * to the W3C baggage header only. */
#define TW_BAGGAGE_MAX_ITEMS 180
#define TW_BAGGAGE_MAX_ITEM_BYTES 4096 /* key + value */
#define TW_BAGGAGE_MAX_TOTAL_BYTES 8192

/* ---- carriers ------------------------------------------------------------------------- */

/* Writes one key/value pair into the carrier (a header, a map entry),
 * replacing an existing value of the key where the carrier can. Both strings
 * are valid only during the call. Returns TW_OK or an error that aborts the
 * inject (pairs already written stay written). */
typedef tw_status (*tw_carrier_set_fn)(void *user_data, const char *key, const char *value);

/* Calls @handler for each key/value pair of the carrier, in order, stopping
 * at the first non-TW_OK status it returns (which foreach then returns; the
 * extract then fails with that status). The strings passed to @handler need
 * to be valid only during that call of @handler (the codecs copy what they
 * keep); a NULL key or value is skipped. The codecs' handler never stops the
 * iteration. */
typedef tw_status (*tw_carrier_handler_fn)(void *handler_data, const char *key, const char *value);
typedef tw_status (*tw_carrier_foreach_fn)(void *user_data, tw_carrier_handler_fn handler,
                                           void *handler_data);

typedef struct tw_carrier_writer {
    tw_carrier_set_fn set;
    void *user_data;
} tw_carrier_writer;

typedef struct tw_carrier_reader {
    tw_carrier_foreach_fn foreach;
    void *user_data;
} tw_carrier_reader;

/*
 * tw_headers: a ready-made carrier: an ordered list of key/value pairs
 * (duplicates kept, keys compared ignoring ASCII case by the codecs and by
 * tw_headers_get/set).
 * Thread safety: one thread at a time per object.
 */
typedef struct tw_headers tw_headers;

/**
 * tw_headers_new: an empty list.
 * Returns: (transfer full) (nullable) NULL only when out of memory; free with
 * tw_headers_free(). Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_headers *tw_headers_new(void);
/** tw_headers_free: frees the list and its strings; NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_headers_free(tw_headers *headers);
/** tw_headers_clear: removes every pair (keeps the list's capacity). Since: 0.1 */
TW_EXTERN void tw_headers_clear(tw_headers *headers);
/**
 * tw_headers_add: appends a pair (both strings copied), even when the key is
 * already present (HTTP allows repeated fields).
 * Returns: TW_OK, TW_E_INVALID_ARG (a NULL argument), TW_E_NOMEM (the list is
 * unchanged). Since: 0.1
 */
TW_EXTERN tw_status tw_headers_add(tw_headers *headers, const char *key, const char *value);
/**
 * tw_headers_set: sets @key to @value: the first pair with the key (ignoring
 * ASCII case) gets the new key and value, later pairs with the key are
 * removed; without one, appends. This is what tw_headers_writer() does.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM (the list is unchanged).
 * Since: 0.1
 */
TW_EXTERN tw_status tw_headers_set(tw_headers *headers, const char *key, const char *value);
/** tw_headers_count: the number of pairs; 0 for NULL. Since: 0.1 */
TW_EXTERN size_t tw_headers_count(const tw_headers *headers);
/** tw_headers_item: the @index-th pair; false when out of range. @key and
 * @value (each nullable) are borrowed until the list changes or is freed.
 * Since: 0.1 */
TW_EXTERN bool tw_headers_item(const tw_headers *headers, size_t index, const char **key,
                               const char **value);
/** tw_headers_get: Returns: (transfer none) (nullable) the first value whose
 * key equals @key ignoring ASCII case, borrowed until the list changes.
 * Since: 0.1 */
TW_EXTERN const char *tw_headers_get(const tw_headers *headers, const char *key);
/** tw_headers_writer: a writer that sets pairs in @headers (tw_headers_set).
 * tw_headers_reader: a reader over @headers' pairs, in order. @headers is
 * borrowed: it must outlive the writer/reader's use. Since: 0.1 */
TW_EXTERN tw_carrier_writer tw_headers_writer(tw_headers *headers);
TW_EXTERN tw_carrier_reader tw_headers_reader(const tw_headers *headers);

/* ---- propagators ------------------------------------------------------------------------ */

typedef struct tw_propagator tw_propagator;

/**
 * tw_propagator_new: a propagator over @n codecs, in extract priority order
 * (duplicates refused). TW_CODEC_B3 and TW_CODEC_B3_SINGLE may be combined
 * (inject writes both forms).
 * Returns: (transfer full) (nullable) NULL with @err set (TW_E_INVALID_ARG)
 * for an empty list, an unknown or repeated codec; TW_E_NOMEM.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_propagator *tw_propagator_new(const tw_codec *codecs, size_t n, tw_error **err);

/**
 * tw_propagator_parse: a propagator from a comma list of codec names
 * ("jaeger", "b3", "b3-single", "w3c"; ASCII case ignored, spaces and tabs
 * around names ignored), as JAEGER_PROPAGATION spells them.
 * Returns: (transfer full) (nullable) NULL with @err set: TW_E_CONFIG naming
 * an empty, unknown or repeated entry; TW_E_INVALID_ARG for NULL.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_propagator *tw_propagator_parse(const char *list, tw_error **err);
/** tw_propagator_free: NULL is a no-op. Thread safety: no concurrent use of
 * @propagator. Since: 0.1 */
TW_EXTERN void tw_propagator_free(tw_propagator *propagator);

/** Callback for baggage (and tracestate, debug id) problems found while
 * extracting: the context is still returned. @message names the header and
 * the problem and is valid only during the call. Called on the extracting
 * thread, before extract returns: the first 16 problems of an extract one
 * by one, then one summary line for the rest. The same messages go to the
 * logger (TW_LOG_WARN). */
typedef void (*tw_extract_warning_fn)(const char *message, void *user_data);

/**
 * tw_propagator_inject: writes @ctx with every codec of @propagator, in
 * order. A deferred context is written as not sampled (B3: without a
 * sampling state). jaeger-debug-id is never written.
 * @format: TEXT_MAP or HTTP_HEADERS (BINARY has its own call).
 * Returns: TW_OK; TW_E_INVALID_ARG for NULL arguments, another format, or a
 * context without ids (an extracted hint: start a span from it first);
 * TW_E_NOMEM; or the carrier's own error (the pairs written before it stay).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_status tw_propagator_inject(const tw_propagator *propagator,
                                         const tw_span_context *ctx, tw_format format,
                                         const tw_carrier_writer *carrier);

/**
 * tw_propagator_extract: reads a context from the carrier, which is read
 * once for all codecs.
 * @format: TEXT_MAP or HTTP_HEADERS (how baggage values are decoded).
 * @warn: (nullable) receives baggage problems; see tw_extract_warning_fn.
 * Returns: (transfer full) (nullable) the context of the first codec (in
 * order) whose trace context header is present; without one, the first
 * codec's hint: a context without ids carrying only a debug id
 * (jaeger-debug-id), a sampling decision (B3 "b3: 1") and/or baggage (see
 * tw_span_context_is_valid(); a span started from it begins a new trace that
 * keeps them). Baggage is merged from all codecs' baggage headers, earlier
 * codecs winning for equal keys. NULL with @err set otherwise:
 * TW_E_NOT_FOUND when none of the codecs' headers are present (not logged
 * when @err is NULL); TW_E_MALFORMED with the header and the reason when the
 * deciding codec's trace context is bad (no other codec is tried);
 * TW_E_INVALID_ARG; TW_E_NOMEM; or the carrier's foreach error.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_propagator_extract(const tw_propagator *propagator, tw_format format,
                                                 const tw_carrier_reader *carrier,
                                                 tw_extract_warning_fn warn, void *warn_data,
                                                 tw_error **err);

/**
 * tw_span_context_with_tracestate: a new context equal to @ctx whose W3C
 * tracestate has @key set to @value, for a vendor that keeps its own member in
 * the list. Following W3C Trace Context ("Mutating the tracestate Field"): the
 * member goes to the left of the list, an existing member with @key is removed
 * first (an update moves it to the left), the other members keep their order;
 * beyond 32 members the right-most ones are removed; beyond the 512 bytes
 * tracewire propagates, other members are removed as extract truncates (those
 * over 128 bytes first, then from the right). Removed members are logged
 * (TW_LOG_WARN). A NULL @value removes @key's member. Baggage, flags and the
 * debug id are kept. @ctx is not changed (contexts are immutable): inject the
 * returned one, or start spans from it (children inherit its tracestate).
 * @key: 1-256 characters of a-z 0-9 _ - * / @, starting with a-z or 0-9.
 * @value: (nullable) 1-256 printable ASCII characters other than ',' and '=',
 * not ending in a space.
 * Returns: (transfer full) (nullable) NULL with @err set: TW_E_INVALID_ARG for
 * NULL @ctx or @key, a context without ids (a hint: tracestate needs a
 * traceparent), or a key or value outside the grammar; TW_E_LIMIT when the
 * member alone exceeds 512 bytes; TW_E_NOMEM.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_span_context_with_tracestate(const tw_span_context *ctx,
                                                           const char *key, const char *value,
                                                           tw_error **err);

/**
 * Jaeger's BINARY layout, big-endian: trace id high (8), trace id low (8),
 * span id (8), parent id (8), flags (1), baggage count (4), then per item
 * key length (4), key, value length (4), value.
 *
 * tw_binary_inject writes at most @size bytes into @buf (nullable when @size
 * is 0, to ask for the size) and sets *@len to the bytes written; it returns
 * TW_E_LIMIT (and the needed size in *@len) when @buf is too small, and
 * TW_E_INVALID_ARG for NULL arguments or a context without ids.
 *
 * tw_binary_extract reads @len bytes. Returns: (transfer full) (nullable) a
 * context, or NULL with @err set: TW_E_MALFORMED for a short header, zero
 * ids, or counts and lengths that run past @len; TW_E_INVALID_ARG; TW_E_NOMEM.
 * Baggage items over the limits are dropped with a warning, as are trailing
 * bytes. Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_status tw_binary_inject(const tw_span_context *ctx, uint8_t *buf, size_t size,
                                     size_t *len);
TW_EXTERN tw_span_context *tw_binary_extract(const uint8_t *buf, size_t len,
                                             tw_extract_warning_fn warn, void *warn_data,
                                             tw_error **err);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_PROPAGATION_H */
