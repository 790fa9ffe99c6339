/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline/handler_apply.h: runs one finished-span handler
 * (tracewire/handler.h: the SDK's redaction by regex, drop by name, or any
 * handler a user wrote) on a span record outside a tracer. A narrow,
 * documented entry point for the `tracewire agent` pipeline
 * (bridge/agent/pipeline.c), which offers the SDK's handlers as options and
 * never includes the SDK's private headers: only the public handler header
 * and the span model (sdk/wire/model/) are needed. Not part of
 * libtracewire.so (libtracewire-narrow.la, linked by the command).
 *
 * Ownership: the record stays the caller's; the handler may change it in
 * place (tags, logs, operation name), as inside a tracer.
 *
 * The record must be private to the caller (no other thread reads it during
 * the call); a handler that adds values is bounded by @max_value_bytes per
 * value and @max_tags tags. Thread safety: the handler's own (the built-in
 * ones run on any number of threads at once).
 */
#ifndef TW_OFFLINE_HANDLER_APPLY_H
#define TW_OFFLINE_HANDLER_APPLY_H

#include <stddef.h>

#include "wire/model/span_data.h"
#include "tracewire/handler.h"

/* Runs @h's on_finish on @d, with the limits a tracer would give it.
 * Returns TW_HANDLER_KEEP or TW_HANDLER_DROP, as the handler decided. */
tw_handler_result tw__handler_apply(const tw_span_handler *h, tw__span_data *d, size_t max_tags,
                                    size_t max_value_bytes);

#endif /* TW_OFFLINE_HANDLER_APPLY_H */
