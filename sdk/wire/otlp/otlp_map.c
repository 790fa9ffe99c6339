/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_map.c: the model <-> OTLP mapping rules of otlp_map.h,
 * shared by the OTLP/JSON and OTLP protobuf encoders and decoders. Plans
 * say what to write and never allocate for an ordinary span; builders fill
 * a model record in the record's arena.
 *
 * Locking: none (pure functions over the caller's data).
 */
#include "wire/otlp/otlp_map.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/model/conventions.h"

/* ---- flags arrays ---------------------------------------------------------------------------- */

/* A zeroed bool array of @n: @small when it fits, else the heap. */
static bool *flags_new(bool *small, size_t n)
{
    if (n <= 16) {
        memset(small, 0, 16 * sizeof(bool));
        return small;
    }
    return calloc(n, sizeof(bool));
}

static void flags_free(bool *flags, bool *small)
{
    if (flags != small)
        free(flags);
}

/* ---- model -> OTLP --------------------------------------------------------------------------- */

/* Whether tag @t's key is the literal @lit (length first: most keys differ there). */
#define KEY_IS(t, lit)                                                                             \
    ((t)->key_len == sizeof(lit) - 1 && memcmp((t)->key, lit, sizeof(lit) - 1) == 0)
uint64_t tw__otlp_unix_nano(int64_t us)
{
    /* Past 2554 (2^64 ns) the field saturates: readers refuse such a time
     * rather than read a wrapped one. */
    return us <= 0 ? 0 : (uint64_t)us > UINT64_MAX / 1000u ? UINT64_MAX : (uint64_t)us * 1000u;
}

const char *tw__otlp_ref_type_name(tw__ref_type type)
{
    return type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of";
}

static uint32_t kind_number(tw__span_kind kind)
{
    switch (kind) {
    case TW__KIND_SERVER:
        return TW__OTLP_KIND_SERVER;
    case TW__KIND_CLIENT:
        return TW__OTLP_KIND_CLIENT;
    case TW__KIND_PRODUCER:
        return TW__OTLP_KIND_PRODUCER;
    case TW__KIND_CONSUMER:
        return TW__OTLP_KIND_CONSUMER;
    case TW__KIND_INTERNAL:
    case TW__KIND_NONE:
        break;
    }
    return TW__OTLP_KIND_INTERNAL;
}

/* Where the tags the kind and the status read are: the last tag of each
 * key (SIZE_MAX: none), found in one pass over the tags by key length
 * first (one search per key cost a pass each, and most tags have none of
 * these lengths). */
typedef struct convention_tags {
    bool has_kind; /* a span.kind tag */
    size_t error, code, description;
} convention_tags;

static void find_convention_tags(const tw__span_data *s, convention_tags *c)
{
    *c = (convention_tags){false, SIZE_MAX, SIZE_MAX, SIZE_MAX};
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        switch (t->key_len) {
        case sizeof("span.kind") - 1:
            c->has_kind = c->has_kind || KEY_IS(t, "span.kind");
            break;
        case sizeof("error") - 1:
            if (KEY_IS(t, "error"))
                c->error = i;
            break;
        case sizeof("otel.status_code") - 1:
            if (KEY_IS(t, "otel.status_code"))
                c->code = i;
            break;
        case sizeof("otel.status_description") - 1:
            if (KEY_IS(t, "otel.status_description"))
                c->description = i;
            break;
        default:
            break;
        }
    }
}

/* The status of @s (otlp_map.h), marking in @skip the tags it consumed. */
static void plan_status(const tw__span_data *s, const convention_tags *c, bool *skip,
                        tw__otlp_span_plan *plan)
{
    size_t error_index = c->error, code_index = c->code, description_index = c->description;
    if (error_index == SIZE_MAX && code_index == SIZE_MAX)
        return; /* UNSET, nothing consumed */
    uint32_t code = TW__OTLP_STATUS_UNSET;
    const tw__tag *message = NULL;
    if (error_index != SIZE_MAX) {
        const tw__tag *error = &s->tags[error_index];
        int truth = tw__error_truth(error);
        if (truth >= 0)
            code = TW__OTLP_STATUS_ERROR;
        message = truth > 0 ? tw__error_message(s) : truth == 0 ? error : NULL;
        /* With no error log, a status description (what the OTLP readers and
         * the Collector's translators write) is the message. */
        if (truth > 0 && !message && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING) {
            message = &s->tags[description_index];
            skip[description_index] = true;
        }
        for (size_t i = 0; i < s->n_tags; i++)
            skip[i] = skip[i] || KEY_IS(&s->tags[i], "error");
    } else if (code_index != SIZE_MAX) {
        const char *value = tw__tag_str(&s->tags[code_index]);
        if (value && strcasecmp(value, "ok") == 0)
            code = TW__OTLP_STATUS_OK;
        else if (value && strcasecmp(value, "error") == 0)
            code = TW__OTLP_STATUS_ERROR;
        else if (!value || strcasecmp(value, "unset") != 0)
            return; /* not a status code: stays an attribute */
        if (code == TW__OTLP_STATUS_ERROR && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING)
            message = &s->tags[description_index];
        for (size_t i = 0; i < s->n_tags; i++) {
            skip[i] = skip[i] || KEY_IS(&s->tags[i], "otel.status_code") ||
                      KEY_IS(&s->tags[i], "otel.status_description");
        }
    }
    plan->status_code = code;
    plan->status_message =
        code != TW__OTLP_STATUS_UNSET && message && message->type == TW_VALUE_STRING ? message
                                                                                     : NULL;
}

bool tw__otlp_plan_span(const tw__span_data *s, tw__otlp_span_plan *plan)
{
    plan->is_attribute = flags_new(plan->small, s->n_tags);
    if (!plan->is_attribute || !tw__last_by_key(s->tags, s->n_tags, plan->is_attribute)) {
        flags_free(plan->is_attribute, plan->small);
        return false;
    }
    convention_tags c;
    find_convention_tags(s, &c);
    size_t kind_index;
    tw__span_kind kind = c.has_kind ? tw__span_kind_of(s, &kind_index) : TW__KIND_NONE;
    plan->kind = kind_number(kind);
    plan->status_code = TW__OTLP_STATUS_UNSET;
    plan->status_message = NULL;
    /* Most spans carry no tag the kind or the status consume: no skip pass. */
    if (kind != TW__KIND_NONE || c.error != SIZE_MAX || c.code != SIZE_MAX) {
        bool skip_small[16];
        bool *skip = flags_new(skip_small, s->n_tags);
        if (!skip) {
            flags_free(plan->is_attribute, plan->small);
            return false;
        }
        if (kind != TW__KIND_NONE) {
            /* Every span.kind tag goes: the kind says it. */
            for (size_t i = 0; i < s->n_tags; i++)
                skip[i] = KEY_IS(&s->tags[i], "span.kind");
        }
        plan_status(s, &c, skip, plan);
        for (size_t i = 0; i < s->n_tags; i++)
            plan->is_attribute[i] = plan->is_attribute[i] && !skip[i];
        flags_free(skip, skip_small);
    }

    plan->start_ns = tw__otlp_unix_nano(s->start_us);
    /* The end without signed overflow: the model keeps times far below
     * INT64_MAX (TW__MAX_TIME_US), but a record built by hand may not. */
    int64_t end_us = s->start_us;
    if (s->start_us > 0 && s->duration_us > 0)
        end_us =
            s->duration_us > INT64_MAX - s->start_us ? INT64_MAX : s->start_us + s->duration_us;
    plan->end_ns = tw__otlp_unix_nano(s->start_us > 0 ? end_us : 0);
    plan->parent_ref = SIZE_MAX;
    for (size_t i = 0; s->parent_id && i < s->n_refs; i++) {
        const tw__ref *ref = &s->refs[i];
        if (ref->span_id == s->parent_id && ref->trace_id_high == s->trace_id_high &&
            ref->trace_id_low == s->trace_id_low) {
            plan->parent_ref = i; /* it is parent_span_id */
            break;
        }
    }
    return true;
}

void tw__otlp_span_plan_clear(tw__otlp_span_plan *plan)
{
    flags_free(plan->is_attribute, plan->small);
    plan->is_attribute = NULL;
}

bool tw__otlp_plan_event(const tw__log *log, tw__otlp_event_plan *plan)
{
    plan->time_ns = tw__otlp_unix_nano(log->timestamp_us);
    plan->name = NULL;
    plan->is_attribute = flags_new(plan->small, log->n_fields);
    if (!plan->is_attribute || !tw__last_by_key(log->fields, log->n_fields, plan->is_attribute)) {
        flags_free(plan->is_attribute, plan->small);
        return false;
    }
    for (size_t f = 0; f < log->n_fields; f++) {
        const tw__tag *field = &log->fields[f];
        bool is_event = KEY_IS(field, "event") && field->type == TW_VALUE_STRING;
        if (is_event && !plan->name)
            plan->name = field;
        /* Every string event field goes once there is a name: the name says it. */
        if (plan->name && is_event)
            plan->is_attribute[f] = false;
    }
    return true;
}

void tw__otlp_event_plan_clear(tw__otlp_event_plan *plan)
{
    flags_free(plan->is_attribute, plan->small);
    plan->is_attribute = NULL;
}

bool tw__otlp_plan_resource(const tw__process *p, tw__otlp_resource_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    size_t n = p ? p->n_tags : 0;
    plan->attrs = malloc((n + 1) * sizeof *plan->attrs);
    bool small[16];
    bool *is_winner = flags_new(small, n);
    if (!plan->attrs || !is_winner || !tw__last_by_key(p ? p->tags : NULL, n, is_winner)) {
        flags_free(is_winner, small);
        free(plan->attrs);
        plan->attrs = NULL;
        return false;
    }
    if (p && p->service_name) {
        plan->service = (tw__tag){.key = "service.name",
                                  .key_len = 12,
                                  .type = TW_VALUE_STRING,
                                  .v.str = p->service_name,
                                  .len = strlen(p->service_name)};
        plan->attrs[plan->n_attrs++] = (tw__otlp_attr){"service.name", 12, &plan->service};
    }
    bool has_host_name = p && tw__process_find_tag(p, "host.name");
    for (size_t i = 0; i < n; i++) {
        const tw__tag *t = &p->tags[i];
        if (!is_winner[i] || tw__tag_key_is(t, "service.name"))
            continue;
        bool is_renamed = !has_host_name && tw__tag_key_is(t, "hostname");
        plan->attrs[plan->n_attrs++] = is_renamed ? (tw__otlp_attr){"host.name", 9, t}
                                                  : (tw__otlp_attr){t->key, t->key_len, t};
    }
    flags_free(is_winner, small);
    return true;
}

void tw__otlp_resource_plan_clear(tw__otlp_resource_plan *plan)
{
    free(plan->attrs);
    memset(plan, 0, sizeof *plan);
}

/* ---- OTLP -> model --------------------------------------------------------------------------- */

int64_t tw__otlp_ns_to_us(int64_t ns)
{
    int64_t q = ns / 1000, r = ns % 1000;
    if (r >= 500)
        q++;
    else if (r <= -500)
        q--;
    return q;
}

static bool add_tag(tw__span_data *s, const char *key, const tw_value *value)
{
    tw__tag *t = tw__span_data_push_tag(s);
    bool was_truncated = false;
    if (!t || !tw__tag_set(&s->arena, t, key, value, SIZE_MAX, &was_truncated))
        return false;
    s->n_tags++; /* commits the tag (model/span_data.h) */
    return true;
}

/* A string tag whose key is the literal @lit (its length known here, not measured). */
#define add_str_tag(s, lit, text, len)                                                             \
    tw__span_data_add_str_tag_n((s), lit, sizeof(lit) - 1, (text), (len))

tw__otlp_build tw__otlp_span_new(const tw__otlp_span_fields *f, tw__span_data **out,
                                 bool *is_end_before_start)
{
    *out = NULL;
    *is_end_before_start = false;
    if (!f->has_start || f->start_ns == 0)
        return TW__OTLP_BUILD_NO_START;
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return TW__OTLP_BUILD_NOMEM;
    s->trace_id_high = f->trace_id_high;
    s->trace_id_low = f->trace_id_low;
    s->span_id = f->span_id;
    s->parent_id = f->parent_id == f->span_id ? 0 : f->parent_id;
    s->flags = TW__FLAG_SAMPLED;
    /* A start within the epoch's first half microsecond stays a start (0 is "none"). */
    int64_t start = f->start_ns > 0 && f->start_ns < 500 ? 1 : tw__otlp_ns_to_us(f->start_ns);
    int64_t end = f->has_end ? tw__otlp_ns_to_us(f->end_ns) : 0;
    s->start_us = start;
    *is_end_before_start = f->has_end && end < start;
    s->duration_us = f->has_end && end > start ? end - start : 0;
    /* An end later than the start by less than 0.5 µs rounds to 0: keep it positive. */
    if (s->duration_us == 0 && f->has_end && f->end_ns > f->start_ns)
        s->duration_us = 1;
    if ((f->name && !tw__span_data_set_operation(s, f->name, f->name_len)) ||
        (s->parent_id && !tw__span_data_add_ref(s, TW__REF_CHILD_OF, s->trace_id_high,
                                                s->trace_id_low, s->parent_id))) {
        tw__span_data_unref(s);
        return TW__OTLP_BUILD_NOMEM;
    }
    *out = s;
    return TW__OTLP_BUILD_OK;
}

bool tw__otlp_span_add_link(tw__span_data *s, uint64_t trace_hi, uint64_t trace_lo,
                            uint64_t span_id, bool is_child_of)
{
    return tw__span_data_add_ref(s, is_child_of ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM, trace_hi,
                                 trace_lo, span_id);
}

bool tw__otlp_link_attribute_is_child_of(const char *key, const char *value, size_t value_len)
{
    return key && value && strcmp(key, TW__OTLP_REF_TYPE_KEY) == 0 && value_len == 8 &&
           strncasecmp(value, "child_of", 8) == 0;
}

bool tw__otlp_span_add_attribute(tw__span_data *s, const char *key, const tw_value *value)
{
    return add_tag(s, key, value);
}

bool tw__otlp_span_add_attribute_n(tw__span_data *s, const char *key, size_t key_len,
                                   const tw_value *value)
{
    return tw__span_data_add_tag_n(s, key, key_len, value);
}

static const char *kind_tag(int64_t kind)
{
    switch (kind) {
    case TW__OTLP_KIND_SERVER:
        return "server";
    case TW__OTLP_KIND_CLIENT:
        return "client";
    case TW__OTLP_KIND_PRODUCER:
        return "producer";
    case TW__OTLP_KIND_CONSUMER:
        return "consumer";
    default:
        return NULL;
    }
}

bool tw__otlp_span_add_field_tags(tw__span_data *s, const tw__otlp_span_fields *f,
                                  const char *scope_name, size_t scope_name_len,
                                  const char *scope_version, size_t scope_version_len)
{
    const char *kind = kind_tag(f->kind);
    if (kind && !add_str_tag(s, "span.kind", kind, strlen(kind)))
        return false;
    if (f->status_code == TW__OTLP_STATUS_ERROR) {
        tw_value yes = {.type = TW_VALUE_BOOL, .as.boolean = true};
        if (!add_tag(s, "error", &yes) ||
            (f->status_message_len > 0 &&
             !add_str_tag(s, "otel.status_description", f->status_message, f->status_message_len)))
            return false;
    } else if (f->status_code == TW__OTLP_STATUS_OK &&
               !add_str_tag(s, "otel.status_code", "OK", 2)) {
        return false;
    }
    if (f->trace_state_len > 0 &&
        !add_str_tag(s, "w3c.tracestate", f->trace_state, f->trace_state_len))
        return false;
    /* The scope "tracewire" is the one our own encoders write: it names this
     * library, not the instrumentation that made the span, so it is not kept. */
    bool is_ours = scope_name_len == strlen(TW__OTLP_SCOPE_NAME) &&
                   memcmp(scope_name, TW__OTLP_SCOPE_NAME, scope_name_len) == 0;
    if (!is_ours && scope_name_len > 0 &&
        !add_str_tag(s, "otel.scope.name", scope_name, scope_name_len))
        return false;
    if (!is_ours && scope_version_len > 0 &&
        !add_str_tag(s, "otel.scope.version", scope_version, scope_version_len))
        return false;
    return true;
}

tw__log *tw__otlp_span_add_event(tw__span_data *s, int64_t time_ns, const char *name,
                                 size_t name_len, size_t n_attributes)
{
    tw__log *log = tw__span_data_push_log(s, (name_len > 0 ? 1 : 0) + n_attributes);
    if (!log)
        return NULL;
    log->timestamp_us = tw__otlp_ns_to_us(time_ns);
    s->n_logs++; /* commits the log */
    if (name_len > 0) {
        tw_value v = {.type = TW_VALUE_STRING, .len = name_len, .as.str = name};
        bool was_truncated = false;
        if (!tw__tag_set(&s->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
            return NULL;
        log->n_fields = 1;
    }
    return log;
}

bool tw__otlp_event_add_attribute(tw__span_data *s, tw__log *log, const char *key,
                                  const tw_value *value)
{
    bool was_truncated = false;
    if (!tw__tag_set(&s->arena, &log->fields[log->n_fields], key, value, SIZE_MAX, &was_truncated))
        return false;
    log->n_fields++;
    return true;
}

bool tw__otlp_event_add_attribute_n(tw__span_data *s, tw__log *log, const char *key, size_t key_len,
                                    const tw_value *value)
{
    bool was_truncated = false;
    if (!tw__tag_set_n(&s->arena, &log->fields[log->n_fields], key, key_len, value, SIZE_MAX,
                       &was_truncated))
        return false;
    log->n_fields++;
    return true;
}

bool tw__otlp_is_service_key(const char *key)
{
    return key && strcmp(key, "service.name") == 0;
}

bool tw__otlp_process_set_service(tw__process *p, const tw_value *value)
{
    tw__buf text;
    tw__buf_init(&text);
    tw__tag t = {.key = "", .type = value->type, .len = value->len};
    memcpy(&t.v, &value->as, sizeof t.v);
    static const char nul = 0;
    bool ok = tw__value_text(&t, &text) && tw__buf_append(&text, &nul, 1) &&
              tw__process_set_service(p, (const char *)text.data);
    tw__buf_free(&text);
    return ok;
}
