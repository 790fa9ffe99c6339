/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.c: status strings (from the X-macro table in common.h), tw_error
 * objects, and version queries. No shared state.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tw_error {
    tw_status status;
    char message[];
};

const char *tw_status_str(tw_status status)
{
    switch (status) {
#define TW__STATUS_STR(name, value, msg)                                                           \
    case name:                                                                                     \
        return msg;
        TW_STATUS_MAP(TW__STATUS_STR)
#undef TW__STATUS_STR
    }
    return "unknown status";
}

const char *tw_status_name(tw_status status)
{
    switch (status) {
#define TW__STATUS_NAME(name, value, msg)                                                          \
    case name:                                                                                     \
        return #name;
        TW_STATUS_MAP(TW__STATUS_NAME)
#undef TW__STATUS_NAME
    }
    return "TW_E_UNKNOWN";
}

/* The one error kept when the message cannot be allocated, so a caller
 * that asked for an error always gets one. Never freed (tw_error_free
 * recognises it). */
static struct {
    tw_status status;
    char message[32];
} oom_error = {TW_E_NOMEM, "out of memory"};

void tw__set_error(tw_error **err, tw_status status, const char *fmt, ...)
{
    char raw[512], stack[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (n < 0)
        raw[0] = '\0';
    /* Messages quote input (header values, variables): control bytes are
     * escaped and URL credentials masked before anyone sees them. */
    tw__redact_text(raw, stack, sizeof stack);
    /* Where the log line goes: "not found" is an answer, not a problem (an
     * untraced request has no context to extract); an error the caller
     * receives is theirs to report (info, for whoever wants both); one
     * nobody receives is a warning, else it would be lost. */
    tw_log_level level = status == TW_E_NOT_FOUND ? TW_LOG_DEBUG
                         : err != NULL            ? TW_LOG_INFO
                                                  : TW_LOG_WARN;
    tw__log_cause(level, fmt, stack);
    if (!err || *err) /* GError rule: never overwrite a set error */
        return;
    size_t len = strlen(stack);
    tw_error *e = malloc(sizeof(*e) + len + 1);
    if (!e) {
        *err = (tw_error *)&oom_error;
        return;
    }
    e->status = status;
    memcpy(e->message, stack, len + 1);
    *err = e;
}

tw_status tw_error_status(const tw_error *err)
{
    return err ? err->status : TW_E_INVALID_ARG;
}

const char *tw_error_message(const tw_error *err)
{
    return err ? err->message : "(no error)";
}

void tw_error_free(tw_error *err)
{
    if (err && err != (tw_error *)&oom_error)
        free(err);
}

const char *tw_version(void)
{
    return TW_VERSION_STRING;
}

unsigned int tw_version_num(void)
{
    return TW_VERSION_NUM;
}
