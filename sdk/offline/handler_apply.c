/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline/handler_apply.c: tw__handler_apply (handler_apply.h): the view a
 * handler gets inside a tracer's chain (sdk/src/handlers/handlers.h: the
 * record and its limits), made for one call.
 */
#include "offline/handler_apply.h"

#include "handlers/handlers.h"

tw_handler_result tw__handler_apply(const tw_span_handler *h, tw__span_data *d, size_t max_tags,
                                    size_t max_value_bytes)
{
    tw__limits limits = {max_tags, max_tags, max_tags, max_value_bytes};
    tw_mutable_span view = {.data = d, .limits = &limits};
    return h->on_finish(h->user_data, &view);
}
