/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/apply.h: runs one finished-span handler (tracewire/handler.h) on a
 * record outside a tracer: a narrow entry point for the `tracewire agent`
 * pipeline (bridge/agent/pipeline.c), which offers the SDK's redaction and
 * drop-by-name handlers as options and must not include the SDK's private
 * headers. Only the public handler header and the span model are needed.
 *
 * The record must be private to the caller (no other thread reads it during
 * the call); a handler that adds values is bounded by @max_value_bytes per
 * value and @max_tags tags. Thread safety: the handler's own (the built-in
 * ones run on any number of threads at once).
 */
#ifndef TW_HANDLERS_APPLY_H
#define TW_HANDLERS_APPLY_H

#include <stddef.h>

#include "wire/model/span_data.h"
#include "tracewire/handler.h"

/* TW_HANDLER_KEEP or TW_HANDLER_DROP, as the handler decided. */
tw_handler_result tw__handler_apply(const tw_span_handler *h, tw__span_data *d, size_t max_tags,
                                    size_t max_value_bytes);

#endif /* TW_HANDLERS_APPLY_H */
