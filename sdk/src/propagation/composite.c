/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/composite.c: propagators: an ordered list of text codecs
 * (jaeger.c, b3.c, w3c.c) behind tw_propagator_inject/extract, and the
 * single carrier scan that feeds all of them (propagation.h, "phase 1").
 *
 * Inject writes the context with every codec, in order. Extract:
 *   1. reads the carrier once, filing each key some codec asked for;
 *   2. asks the codecs, in order, for a trace context: the first codec whose
 *      context header is present decides, valid or not (a malformed one is
 *      TW_E_MALFORMED, never a fall-back to another codec's ids);
 *   3. without any context, the first codec with a hint (a sampling
 *      decision, a debug id) decides;
 *   4. baggage is merged from every codec's baggage headers, codec order
 *      deciding between equal keys; baggage alone is a hint that defers the
 *      sampling decision;
 *   5. nothing at all is TW_E_NOT_FOUND.
 *
 * A propagator is immutable after tw_propagator_new(), so any number of
 * threads may use one; each extract keeps its state on its own stack and
 * allocates only for the returned context (plus, past 1 KiB of header
 * values, one scratch buffer). Adding a codec: its file, its vtable, and one
 * line in `registry` below.
 */
#include "propagation/propagation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CODECS 4

/* Indexed by nothing in particular: looked up by tw__codec_vtable.id. */
static const tw__codec_vtable *const registry[] = {
    &tw__codec_jaeger,
    &tw__codec_b3,
    &tw__codec_b3_single,
    &tw__codec_w3c,
};
#define N_REGISTRY (sizeof registry / sizeof registry[0])

typedef struct lookup_entry {
    const tw__header_spec *spec;
    uint8_t slot; /* index into tw__scan.slots */
} lookup_entry;

struct tw_propagator {
    size_t n_codecs;
    const tw__codec_vtable *codecs[MAX_CODECS];
    uint8_t slot_base[MAX_CODECS]; /* each codec's first slot */
    lookup_entry entries[TW__SLOTS_MAX];
    size_t n_entries;
    /* Quick rejection of keys no codec reads, so that the ordinary headers
     * of a request cost a byte test each: the first characters of all names
     * (both cases); bit n of exact_lengths set when some exact header name
     * has n bytes (keys of 32 bytes or more can only match a prefix). */
    bool is_first_char[256];
    uint32_t exact_lengths;
    size_t min_prefix;                 /* shortest prefix name; SIZE_MAX when there is none */
    tw__source sources[TW__SRC_COUNT]; /* baggage sources in merge order */
    size_t n_sources;
};

static const tw__codec_vtable *find_codec(tw_codec id)
{
    for (size_t i = 0; i < N_REGISTRY; i++) {
        if (registry[i]->id == id)
            return registry[i];
    }
    return NULL;
}

tw_propagator *tw_propagator_new(const tw_codec *codecs, size_t n, tw_error **err)
{
    if (!codecs || n == 0) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_propagator_new: no codecs given");
        return NULL;
    }
    tw_propagator *p = calloc(1, sizeof(*p));
    if (!p) {
        tw__set_error(err, TW_E_NOMEM, "tw_propagator_new: out of memory");
        return NULL;
    }
    p->min_prefix = SIZE_MAX;
    size_t n_slots = 0;
    for (size_t i = 0; i < n; i++) {
        const tw__codec_vtable *vt = find_codec(codecs[i]);
        if (!vt) {
            tw__set_error(err, TW_E_INVALID_ARG, "tw_propagator_new: unknown codec %d",
                          (int)codecs[i]);
            goto fail;
        }
        for (size_t j = 0; j < p->n_codecs; j++) {
            if (p->codecs[j] == vt) {
                tw__set_error(err, TW_E_INVALID_ARG, "tw_propagator_new: codec %s listed twice",
                              vt->name);
                goto fail;
            }
        }
        /* The registry's codecs together have fewer headers than
         * TW__SLOTS_MAX and each is listed at most once, so this holds; it
         * is checked for a codec added without raising the limit. */
        if (n_slots + vt->n_headers > TW__SLOTS_MAX) {
            tw__set_error(err, TW_E_INVALID_ARG, "tw_propagator_new: too many headers");
            goto fail;
        }
        p->slot_base[p->n_codecs] = (uint8_t)n_slots;
        p->codecs[p->n_codecs++] = vt;
        for (size_t h = 0; h < vt->n_headers; h++) {
            const tw__header_spec *spec = &vt->headers[h];
            p->entries[p->n_entries++] = (lookup_entry){spec, (uint8_t)(n_slots + h)};
            unsigned char c0 = (unsigned char)spec->name[0]; /* names are lower case */
            p->is_first_char[c0] = true;
            if (c0 >= 'a' && c0 <= 'z')
                p->is_first_char[c0 - ('a' - 'A')] = true;
            if (spec->is_prefix) {
                if (spec->name_len < p->min_prefix)
                    p->min_prefix = spec->name_len;
            } else {
                p->exact_lengths |= (uint32_t)1 << spec->name_len;
            }
        }
        n_slots += vt->n_headers;
        for (size_t s = 0; s < vt->n_sources; s++) {
            bool is_listed = false;
            for (size_t k = 0; k < p->n_sources; k++)
                is_listed = is_listed || p->sources[k] == vt->sources[s];
            if (!is_listed)
                p->sources[p->n_sources++] = vt->sources[s];
        }
    }
    return p;
fail:
    free(p);
    return NULL;
}

tw_propagator *tw__propagator_default(void)
{
    static const tw_codec jaeger = TW_CODEC_JAEGER;
    return tw_propagator_new(&jaeger, 1, NULL);
}

tw_propagator *tw_propagator_parse(const char *list, tw_error **err)
{
    if (!list) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_propagator_parse: list is NULL");
        return NULL;
    }
    tw_codec codecs[MAX_CODECS];
    size_t n = 0;
    const char *end = list + strlen(list);
    for (const char *entry = list;;) {
        const char *comma = memchr(entry, ',', (size_t)(end - entry));
        size_t len = (size_t)((comma ? comma : end) - entry);
        const char *name = tw__trim_ows(entry, &len);
        char shown[TW__EXCERPT_SIZE];
        tw__excerpt(shown, name, len);
        if (len == 0) {
            tw__set_error(err, TW_E_CONFIG,
                          "propagation list \"%.64s\": empty entry (use jaeger, b3, b3-single, "
                          "w3c)",
                          list);
            return NULL;
        }
        const tw__codec_vtable *vt = NULL;
        for (size_t i = 0; i < N_REGISTRY && !vt; i++) {
            if (strlen(registry[i]->name) == len && tw__equals_lower(name, registry[i]->name, len))
                vt = registry[i];
        }
        if (!vt) {
            tw__set_error(err, TW_E_CONFIG,
                          "propagation list: unknown format \"%s\" (use jaeger, b3, b3-single, "
                          "w3c)",
                          shown);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            if (codecs[i] == vt->id) {
                tw__set_error(err, TW_E_CONFIG, "propagation list: \"%s\" is listed twice", shown);
                return NULL;
            }
        }
        codecs[n++] = vt->id; /* at most N_REGISTRY distinct entries get here */
        if (!comma)
            break;
        entry = comma + 1;
    }
    return tw_propagator_new(codecs, n, err);
}

void tw_propagator_free(tw_propagator *propagator)
{
    free(propagator);
}

/* ---- inject ------------------------------------------------------------------------------- */

tw_status tw_propagator_inject(const tw_propagator *propagator, const tw_span_context *ctx,
                               tw_format format, const tw_carrier_writer *carrier)
{
    TW_CHECK_ARG(propagator && ctx && carrier && carrier->set, TW_E_INVALID_ARG);
    TW_CHECK_ARG(format == TW_FORMAT_TEXT_MAP || format == TW_FORMAT_HTTP_HEADERS,
                 TW_E_INVALID_ARG);
    TW_CHECK_ARG(tw__context_has_ids(ctx), TW_E_INVALID_ARG);
    for (size_t i = 0; i < propagator->n_codecs; i++) {
        tw_status status = propagator->codecs[i]->inject(ctx, format, carrier);
        if (status != TW_OK)
            return status;
    }
    return TW_OK;
}

/* ---- extract ------------------------------------------------------------------------------ */

typedef struct scan_call {
    const tw_propagator *propagator;
    tw__scan *scan;
} scan_call;

/* The carrier's handler: files a pair into the slots of every header it
 * matches (B3 and B3-single share names). Never stops the carrier. */
static tw_status on_pair(void *data, const char *key, const char *value)
{
    scan_call *call = data;
    const tw_propagator *p = call->propagator;
    if (!key || !value || !p->is_first_char[(unsigned char)key[0]])
        return TW_OK; /* most keys of an HTTP request end here */
    size_t key_len = strlen(key);
    if (key_len < 32 ? !(p->exact_lengths & ((uint32_t)1 << key_len)) && key_len < p->min_prefix
                     : p->min_prefix == SIZE_MAX)
        return TW_OK;
    size_t value_len = SIZE_MAX;
    for (size_t i = 0; i < p->n_entries; i++) {
        const tw__header_spec *spec = p->entries[i].spec;
        bool is_match =
            spec->is_prefix
                ? key_len >= spec->name_len && tw__equals_lower(key, spec->name, spec->name_len)
                : key_len == spec->name_len && tw__equals_lower(key, spec->name, key_len);
        if (!is_match)
            continue;
        if (value_len == SIZE_MAX)
            value_len = strlen(value);
        tw__slot *slot = &call->scan->slots[p->entries[i].slot];
        if (spec->on_value)
            spec->on_value(call->scan, slot, key, key_len, value, value_len);
        else
            tw__scan_keep_first(call->scan, slot, spec, value, value_len);
    }
    return TW_OK;
}

static void extracted_init(tw__extracted *out)
{
    out->found = TW__FOUND_NONE;
    memset(&out->parts, 0, sizeof out->parts);
    out->header = NULL;
    out->value = NULL;
    out->value_len = 0;
    out->reason[0] = '\0';
}

static void set_not_found(const tw_propagator *p, tw_error **err)
{
    if (!err)
        return; /* a normal outcome: nothing to log when nobody asks */
    char names[64] = "";
    size_t pos = 0;
    for (size_t i = 0; i < p->n_codecs; i++)
        pos += (size_t)snprintf(names + pos, sizeof names - pos, "%s%s", i ? ", " : "",
                                p->codecs[i]->name);
    tw__set_error(err, TW_E_NOT_FOUND, "extract: no trace context or baggage (%s) in the carrier",
                  names);
}

tw_span_context *tw__propagator_extract(const tw_propagator *propagator, tw_format format,
                                        const tw_carrier_reader *carrier,
                                        tw_extract_warning_fn warn, void *warn_data,
                                        size_t *n_warnings, tw_error **err)
{
    if (n_warnings)
        *n_warnings = 0;
    if (!propagator || !carrier || !carrier->foreach) {
        tw__set_error(err, TW_E_INVALID_ARG, "extract: NULL %s",
                      !propagator ? "propagator" : "carrier");
        return NULL;
    }
    if (format != TW_FORMAT_TEXT_MAP && format != TW_FORMAT_HTTP_HEADERS) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "extract: format %d is not TEXT_MAP or HTTP_HEADERS (BINARY: use "
                      "tw_binary_extract)",
                      (int)format);
        return NULL;
    }
    tw_span_context *ctx = NULL;
    char stack[1024];
    tw__scan scan;
    tw__scan_init(&scan, format, warn, warn_data, stack, sizeof stack);
    scan_call call = {propagator, &scan};
    tw_status status = carrier->foreach (carrier->user_data, on_pair, &call);
    if (status != TW_OK) {
        tw__set_error(err, status, "extract: the carrier failed: %s", tw_status_str(status));
        goto done;
    }
    if (scan.failed != TW_OK)
        goto nomem;

    /* Phase 2: the first codec with a trace context (or a malformed one)
     * wins; otherwise the first hint. ex[hint_at] holds that hint while later
     * codecs use the other element. */
    tw__extracted ex[2];
    tw__extracted *winner = NULL;
    int hint_at = -1;
    for (size_t i = 0; i < propagator->n_codecs && !winner; i++) {
        tw__extracted *cur = &ex[hint_at == 0 ? 1 : 0];
        extracted_init(cur);
        propagator->codecs[i]->extract(&scan, &scan.slots[propagator->slot_base[i]], cur);
        if (cur->found == TW__FOUND_CONTEXT || cur->found == TW__FOUND_MALFORMED)
            winner = cur;
        else if (cur->found == TW__FOUND_HINT && hint_at < 0)
            hint_at = (int)(cur - ex);
    }
    if (scan.failed != TW_OK)
        goto nomem;
    if (winner && winner->found == TW__FOUND_MALFORMED) {
        char shown[TW__EXCERPT_SIZE];
        tw__excerpt(shown, winner->value ? winner->value : "", winner->value_len);
        tw__set_error(err, TW_E_MALFORMED, "%s: %s%s%s%s", winner->header, winner->reason,
                      winner->value ? " (value \"" : "", winner->value ? shown : "",
                      winner->value ? "\")" : "");
        goto done;
    }
    if (!winner && hint_at >= 0)
        winner = &ex[hint_at];

    bool is_empty = true;
    tw__baggage *baggage =
        tw__scan_build_baggage(&scan, propagator->sources, propagator->n_sources, &is_empty);
    if (!baggage && !is_empty)
        goto nomem;
    tw__context_parts baggage_only = {.flags = TW__FLAG_DEFERRED};
    tw__context_parts *parts = winner ? &winner->parts : &baggage_only;
    if (!winner && !baggage) {
        set_not_found(propagator, err);
        goto done;
    }
    parts->baggage = baggage;
    ctx = tw__span_context_build(parts);
    tw__baggage_unref(baggage);
    if (!ctx)
        goto nomem;
    goto done;

nomem:
    tw__set_error(err, TW_E_NOMEM, "extract: out of memory");
done:
    tw__scan_warn_summary(&scan);
    if (n_warnings)
        *n_warnings = scan.n_warnings;
    tw__scan_free(&scan);
    return ctx;
}

tw_span_context *tw_propagator_extract(const tw_propagator *propagator, tw_format format,
                                       const tw_carrier_reader *carrier, tw_extract_warning_fn warn,
                                       void *warn_data, tw_error **err)
{
    return tw__propagator_extract(propagator, format, carrier, warn, warn_data, NULL, err);
}
