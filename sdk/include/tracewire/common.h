/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/common.h: status codes, errors, typed values and the logger hook
 * shared by every tracewire header.
 *
 * Ownership (default for all tracewire headers): `const char *` inputs are
 * copied before the call returns; returned `const` pointers are borrowed until
 * the event named in the function's doc; returned non-const objects are freed
 * with the named tw_*_free / tw_*_unref, which accept NULL.
 *
 * Thread safety (default): functions that take no object may be called from
 * any thread. Each function says otherwise where it differs.
 *
 * The library never aborts on bad input: it reports through return values,
 * tw_error, and the logger. The default logger (tw_log_default) writes
 * warnings and errors to stderr, at most one line per cause per minute and
 * never blocking; TRACEWIRE_LOG_LEVEL (or OTEL_LOG_LEVEL), tw_set_log_level()
 * and tw_set_logger() change or silence it. Nothing else is ever written to
 * stdout or stderr. Every message has its control bytes escaped (\\xNN) and
 * URL credentials masked before a logger sees it; secrets (passwords,
 * tokens, header values) are never part of a message.
 */
#ifndef TRACEWIRE_COMMON_H
#define TRACEWIRE_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TW_EXTERN __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define TW_EXTERN __attribute__((visibility("default")))
#else
#define TW_EXTERN
#endif

#if defined(__GNUC__)
#define TW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define TW_DEPRECATED(ver, msg) __attribute__((deprecated("since " #ver ": " msg)))
#else
#define TW_PRINTF(fmt, args)
#define TW_DEPRECATED(ver, msg)
#endif

/*
 * Status codes. TW_OK is 0. The list is append-only: codes are never
 * renumbered or reused. X(name, value, message).
 */
#define TW_STATUS_MAP(X)                                                                           \
    X(TW_OK, 0, "success")                                                                         \
    X(TW_E_INVALID_ARG, 1, "invalid argument")                                                     \
    X(TW_E_NOMEM, 2, "out of memory")                                                              \
    X(TW_E_CLOSED, 3, "object is closed")                                                          \
    X(TW_E_CONFIG, 4, "invalid configuration")                                                     \
    X(TW_E_RESOLVE, 5, "host name resolution failed")                                              \
    X(TW_E_IO, 6, "input/output error")                                                            \
    X(TW_E_STATE, 7, "operation not valid in the current state")                                   \
    X(TW_E_LIMIT, 8, "limit exceeded")                                                             \
    X(TW_E_ENCODE, 9, "encoding failed")                                                           \
    X(TW_E_TIMEOUT, 10, "timed out")                                                               \
    X(TW_E_NOT_FOUND, 11, "not found")                                                             \
    X(TW_E_MALFORMED, 12, "malformed input")

typedef enum tw_status {
#define TW__STATUS_ENUM(name, value, msg) name = value,
    TW_STATUS_MAP(TW__STATUS_ENUM)
#undef TW__STATUS_ENUM
} tw_status;

/**
 * tw_status_str: a static English description of a status code.
 * Returns: (transfer none) never NULL; "unknown status" for unknown codes.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN const char *tw_status_str(tw_status status);

/**
 * tw_status_name: the symbolic name of a status code ("TW_E_CLOSED").
 * Returns: (transfer none) never NULL. Thread safety: any thread. Since: 0.1
 */
TW_EXTERN const char *tw_status_name(tw_status status);

/*
 * Errors carry a status and a message naming the input at fault. GError's
 * rules: an `tw_error **err` parameter may be NULL; a call fails exactly when
 * it sets the error; a set error is never overwritten.
 */
typedef struct tw_error tw_error;

/** tw_error_status: Returns: the status of @err (TW_E_INVALID_ARG for NULL). Since: 0.1 */
TW_EXTERN tw_status tw_error_status(const tw_error *err);
/** tw_error_message: Returns: (transfer none) the message, valid until tw_error_free(); never NULL.
 */
TW_EXTERN const char *tw_error_message(const tw_error *err);
/** tw_error_free: frees @err; NULL is a no-op. Thread safety: one thread per error. Since: 0.1 */
TW_EXTERN void tw_error_free(tw_error *err);

/** Version of the linked library, "MAJOR.MINOR.PATCH". Returns: (transfer none) static. */
TW_EXTERN const char *tw_version(void);
/** Version of the linked library as 0xMMmmpp. */
TW_EXTERN unsigned int tw_version_num(void);

/* ---- typed values (tags and log fields) ------------------------------------------------- */

typedef enum tw_value_type {
    TW_VALUE_STRING = 0,
    TW_VALUE_DOUBLE = 1,
    TW_VALUE_BOOL = 2,
    TW_VALUE_INT64 = 3,
    TW_VALUE_BINARY = 4
} tw_value_type;

/*
 * A typed value as seen through read accessors (tw_finished_span_tag and
 * friends). A plain value type: the struct layout is part of the ABI.
 * String and binary pointers are borrowed from the object they were read
 * from; `len` is the byte length of a string (without NUL) or binary value.
 */
typedef struct tw_value {
    tw_value_type type;
    size_t len;
    union {
        const char *str;
        const uint8_t *bin;
        double dbl;
        bool boolean;
        int64_t i64;
    } as;
} tw_value;

/* ---- logging ----------------------------------------------------------------------------- */

typedef enum tw_log_level {
    TW_LOG_DEBUG = 0,
    TW_LOG_INFO = 1,
    TW_LOG_WARN = 2,
    TW_LOG_ERROR = 3,
    TW_LOG_OFF = 4 /* a minimum level only: nothing is logged. Since: 0.1 */
} tw_log_level;

/*
 * A logger receives the library's diagnostics (and the logging reporter's
 * span lines). It may be called from any thread, including the reporter
 * thread, so it must be thread-safe and must not call back into the tracer.
 */
typedef void (*tw_log_fn)(tw_log_level level, const char *message, void *user_data);

/**
 * tw_set_logger: installs the process-wide diagnostics logger; NULL removes
 * it (silence). Messages below @min_level are not formatted. A logger you
 * install receives every message at or above @min_level (no rate limit);
 * pass tw_log_default to restore the default.
 * Default, before any call: tw_log_default at TW_LOG_WARN, or at the level
 * named by TRACEWIRE_LOG_LEVEL, else OTEL_LOG_LEVEL (debug, info, warn,
 * error, off; read once, at the first message or logger call).
 * Thread safety: any thread; the previous logger may still receive a message
 * that was in flight. Since: 0.1
 */
TW_EXTERN void tw_set_logger(tw_log_fn fn, void *user_data, tw_log_level min_level);

/**
 * tw_set_log_level: changes the minimum level of the installed logger
 * (default or yours) without replacing it: TW_LOG_DEBUG to see everything,
 * TW_LOG_OFF to silence it. No effect after tw_set_logger(NULL, ...).
 * @min_level: a tw_log_level; values outside DEBUG..OFF mean OFF.
 * Overrides TRACEWIRE_LOG_LEVEL / OTEL_LOG_LEVEL.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN void tw_set_log_level(tw_log_level min_level);

/**
 * tw_log_default: the default logger: writes "tracewire: LEVEL: message"
 * lines to stderr without ever blocking the calling thread (a line is
 * written with one write(2) when poll(2) says stderr takes it, else
 * dropped). Installed as the logger (the default), it lets through at most
 * one line per cause (one place in the library that logs) per minute, and
 * the next line of that cause says how many were held back. Called
 * directly (say, as a logging reporter's function) it writes every line.
 * @user_data: ignored.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN void tw_log_default(tw_log_level level, const char *message, void *user_data);

/**
 * tw_log_to_stderr: a ready-made tw_log_fn that writes "tracewire: LEVEL: msg"
 * lines to stderr with stdio, every one, waiting for stderr if it must (for
 * tools and tests; applications keep tw_log_default). user_data is ignored.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN void tw_log_to_stderr(tw_log_level level, const char *message, void *user_data);

/**
 * tw_log_to_stdout: like tw_log_to_stderr, but writes the bare message to
 * stdout (used by demos that print reported spans). Since: 0.1
 */
TW_EXTERN void tw_log_to_stdout(tw_log_level level, const char *message, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_COMMON_H */
