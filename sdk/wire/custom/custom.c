/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/custom/custom.c: `--from custom`: any JSON-lines or TSV span log,
 * read through a field mapping given with --map / --map-file
 * (tw__custom_map, parsed here by tw__custom_map_parse), because real
 * legacy logs never match a spec. Never auto-detected (no sniff).
 *
 * Where it sits: the first stage of `tracewire convert` (bridge/convert.h).
 * It reads one line at a time (at most MAX_LINE_BYTES; memory is one line)
 * and emits one span per line, with a process made of the mapped service,
 * host (process tag `hostname`) and ip (process tag `ip`).
 *
 * Fields (docs/bridge.md, `custom` input):
 *   JSON: a member name, or a dotted path into nested objects ("span.id":
 *         a member literally named so first, else span -> id). TSV: a
 *         column name (header=yes: the first line names the columns) or a
 *         1-based column number. An empty TSV cell or a JSON null is absent.
 *   trace_id, span_id (required), parent_id: text per the shared id rules
 *         (twb_parse_*; base: id_base= of the mapping, else --id-base); a
 *         JSON integer is decimal (negative: two's complement). An absent,
 *         empty or zero parent, or one equal to the span id: root.
 *   start (required): a number in time_unit= (else --time-unit, else by
 *         magnitude: s, ms, µs or ns; float seconds like 1700000000.25
 *         work), or RFC 3339 text (2024-01-02T03:04:05.123456Z, +hh:mm
 *         offsets, a space for T).
 *   end (same rules) or duration (in duration_unit=, else the unit the
 *         start was read in; µs when the start was RFC 3339 text): one of
 *         them must be mapped; an absent value gives duration 0 (warning);
 *         an end before the start rejects the line.
 *   name -> operation; kind: client|server|producer|consumer (any case;
 *         SPAN_KIND_ prefix allowed) -> tag span.kind; "internal" or empty:
 *         no tag; another value: no tag and a warning.
 *   error: true/1/yes/y/t/error (any case), JSON true or a non-zero number
 *         -> tag error=true (bool); false/0/no/n/f/ok/none/null or empty:
 *         nothing; any other text -> error=true and tag error.message = it.
 *   tags=a|b|c: those fields become tags named as listed (JSON values typed:
 *         string, int64, float64, bool; objects and arrays as JSON text;
 *         TSV cells as strings). Other members and columns are dropped.
 *   Every span gets TW__FLAG_SAMPLED.
 * A bad line is rejected ("line N: <field>: reason", raw = the line) and
 * reading goes on. Single-threaded.
 */
#include "wire/custom/custom.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "wire/core/error.h"
#include "wire/core/json_common.h"
#include "wire/core/json_error.h"
#include "wire/core/line_reader.h"
#include "wire/formats.h"

#define MAX_LINE_BYTES ((size_t)16 * 1024 * 1024)

/* ---- the mapping ---------------------------------------------------------------------------- */

static void why_set(char *why, size_t why_size, const char *fmt, ...) TW_PRINTF(3, 4);
static void why_set(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || !why_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

void tw__custom_map_clear(tw__custom_map *m)
{
    if (!m)
        return;
    char **fields[] = {&m->trace_id, &m->span_id,  &m->parent_id, &m->name,
                       &m->service,  &m->host,     &m->ip,        &m->start,
                       &m->end,      &m->duration, &m->kind,      &m->error};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        free(*fields[i]);
    for (size_t i = 0; m->tag_fields && m->tag_fields[i]; i++)
        free(m->tag_fields[i]);
    free(m->tag_fields);
    memset(m, 0, sizeof *m);
}

static char **field_slot(tw__custom_map *m, const char *key)
{
    static const char *const names[] = {"trace_id", "span_id",  "parent_id", "name",
                                        "service",  "host",     "ip",        "start",
                                        "end",      "duration", "kind",      "error"};
    char **slots[] = {&m->trace_id, &m->span_id,  &m->parent_id, &m->name,
                      &m->service,  &m->host,     &m->ip,        &m->start,
                      &m->end,      &m->duration, &m->kind,      &m->error};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(key, names[i]) == 0)
            return slots[i];
    }
    return NULL;
}

static bool set_tags(tw__custom_map *m, const char *value, char *why, size_t why_size)
{
    size_t n = 1;
    for (const char *p = value; *p; p++)
        n += *p == '|';
    char **list = calloc(n + 1, sizeof *list);
    if (!list) {
        why_set(why, why_size, "out of memory");
        return false;
    }
    size_t k = 0;
    for (const char *p = value;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len > 0) {
            list[k] = strndup(p, len);
            if (!list[k]) {
                for (size_t i = 0; i < k; i++)
                    free(list[i]);
                free(list);
                why_set(why, why_size, "out of memory");
                return false;
            }
            k++;
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    for (size_t i = 0; m->tag_fields && m->tag_fields[i]; i++)
        free(m->tag_fields[i]);
    free(m->tag_fields);
    m->tag_fields = list;
    return true;
}

static bool parse_entry(tw__custom_map *m, const char *key, const char *value, char *why,
                        size_t why_size)
{
    char **slot = field_slot(m, key);
    if (slot) {
        if (!value[0]) {
            why_set(why, why_size, "%s= names no field", key);
            return false;
        }
        char *copy = strdup(value);
        if (!copy) {
            why_set(why, why_size, "out of memory");
            return false;
        }
        free(*slot);
        *slot = copy;
        return true;
    }
    if (strcmp(key, "tags") == 0)
        return set_tags(m, value, why, why_size);
    if (strcmp(key, "format") == 0) {
        if (strcasecmp(value, "tsv") == 0 || strcasecmp(value, "jsonl") == 0 ||
            strcasecmp(value, "json") == 0) {
            m->is_tsv = strcasecmp(value, "tsv") == 0;
            return true;
        }
        why_set(why, why_size, "format=%s: use jsonl or tsv", value);
        return false;
    }
    if (strcmp(key, "header") == 0) {
        if (strcasecmp(value, "yes") == 0 || strcasecmp(value, "true") == 0) {
            m->has_header = true;
            return true;
        }
        if (strcasecmp(value, "no") == 0 || strcasecmp(value, "false") == 0) {
            m->has_header = false;
            return true;
        }
        why_set(why, why_size, "header=%s: use yes or no", value);
        return false;
    }
    if (strcmp(key, "id_base") == 0) {
        if (strcasecmp(value, "hex") == 0)
            m->id_base = TW__ID_HEX;
        else if (strcasecmp(value, "dec") == 0 || strcasecmp(value, "decimal") == 0)
            m->id_base = TW__ID_DEC;
        else if (strcasecmp(value, "auto") == 0)
            m->id_base = TW__ID_AUTO;
        else {
            why_set(why, why_size, "id_base=%s: use hex, dec or auto", value);
            return false;
        }
        return true;
    }
    if (strcmp(key, "time_unit") == 0 || strcmp(key, "duration_unit") == 0) {
        tw__time_unit u = tw__time_unit_parse(value);
        if ((int)u < 0) {
            why_set(why, why_size, "%s=%s: use s, ms, us, ns or auto", key, value);
            return false;
        }
        if (key[0] == 't')
            m->time_unit = u;
        else
            m->duration_unit = u;
        return true;
    }
    why_set(why, why_size, "unknown mapping key \"%s\"", key);
    return false;
}

/* Copies [p, p+len) trimmed of spaces into a NUL-terminated buffer. */
static char *trimmed(const char *p, size_t len)
{
    while (len > 0 && isspace((unsigned char)*p))
        p++, len--;
    while (len > 0 && isspace((unsigned char)p[len - 1]))
        len--;
    return strndup(p, len);
}

bool tw__custom_map_parse(tw__custom_map *m, const char *spec, bool is_file_text, char *why,
                          size_t why_size)
{
    if (!m || !spec) {
        why_set(why, why_size, "no mapping");
        return false;
    }
    const char sep = is_file_text ? '\n' : ',';
    size_t entry_no = 0;
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t)(end - p) : strlen(p);
        entry_no++;
        char *entry = trimmed(p, len);
        if (!entry) {
            why_set(why, why_size, "out of memory");
            return false;
        }
        p = end ? end + 1 : p + len;
        if (!entry[0] || (is_file_text && entry[0] == '#')) {
            free(entry);
            continue;
        }
        char *eq = strchr(entry, '=');
        char inner[200];
        bool ok = false;
        if (!eq && is_file_text) {
            /* A file's line is not quoted: a file given by mistake (a
             * credentials file) would be shown. */
            snprintf(inner, sizeof inner,
                     "not field=name (the line is not shown: it may hold a secret)");
        } else if (!eq) {
            snprintf(inner, sizeof inner, "\"%.60s\" is not field=name", entry);
        } else {
            *eq = '\0';
            char *key = trimmed(entry, strlen(entry)), *value = trimmed(eq + 1, strlen(eq + 1));
            if (key && value)
                ok = parse_entry(m, key, value, inner, sizeof inner);
            else
                snprintf(inner, sizeof inner, "out of memory");
            free(key);
            free(value);
        }
        free(entry);
        if (!ok) {
            if (is_file_text)
                why_set(why, why_size, "line %zu: %s", entry_no, inner);
            else
                why_set(why, why_size, "%s", inner);
            return false;
        }
    }
    return true;
}

/* ---- values --------------------------------------------------------------------------------- */

/* A field's value as found in the record. */
typedef struct field {
    bool has;
    json_t *json;     /* JSON input: the value (borrowed) */
    const char *text; /* TSV, or a JSON string */
    size_t len;
} field;

typedef struct reader {
    tw__wire_input *in;
    const tw__custom_map *m;
    tw__time_unit time_unit;
    tw__id_base id_base;
    /* TSV */
    char **columns; /* header names */
    size_t n_columns;
    const char **cells; /* the current line's cells */
    size_t *cell_lens;
    size_t n_cells, cap_cells;
    json_t *doc; /* JSON: the current line's object */
    char why[300];
} reader;

static bool is_number_text(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return false;
    }
    return true;
}

static void lookup(reader *r, const char *name, field *f)
{
    *f = (field){0};
    if (!name)
        return;
    if (r->m->is_tsv) {
        size_t col = SIZE_MAX;
        if (r->m->has_header) {
            for (size_t i = 0; i < r->n_columns; i++) {
                if (strcmp(r->columns[i], name) == 0) {
                    col = i;
                    break;
                }
            }
        }
        if (col == SIZE_MAX && is_number_text(name))
            col = strtoul(name, NULL, 10) - 1;
        if (col < r->n_cells && r->cell_lens[col] > 0) {
            f->has = true;
            f->text = r->cells[col];
            f->len = r->cell_lens[col];
        }
        return;
    }
    json_t *v = json_object_get(r->doc, name);
    if (!v && strchr(name, '.')) {
        json_t *at = r->doc;
        const char *p = name;
        while (at && *p) {
            const char *dot = strchr(p, '.');
            size_t len = dot ? (size_t)(dot - p) : strlen(p);
            char key[256];
            if (len >= sizeof key) {
                at = NULL;
                break;
            }
            memcpy(key, p, len);
            key[len] = '\0';
            at = json_object_get(at, key);
            p = dot ? dot + 1 : p + len;
        }
        v = at;
    }
    if (!v || json_is_null(v))
        return;
    f->has = true;
    f->json = v;
    if (json_is_string(v)) {
        f->text = json_string_value(v);
        f->len = json_string_length(v);
    }
}

static bool fail(reader *r, const char *field_name, const char *fmt, ...) TW_PRINTF(3, 4);
static bool fail(reader *r, const char *field_name, const char *fmt, ...)
{
    char inner[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inner, sizeof inner, fmt, ap);
    va_end(ap);
    snprintf(r->why, sizeof r->why, "%s: %s", field_name, inner);
    return false;
}

/* Text of a field for messages. */
static const char *shown(const field *f, char *buf, size_t size)
{
    if (f->text)
        snprintf(buf, size, "\"%.*s\"", (int)(f->len > 40 ? 40 : f->len), f->text);
    else
        snprintf(buf, size, "a JSON %s",
                 json_is_number(f->json)    ? "number"
                 : json_is_boolean(f->json) ? "bool"
                                            : "object or array");
    return buf;
}

static bool parse_trace(reader *r, const char *what, const field *f, uint64_t *hi, uint64_t *lo)
{
    char why[160];
    if (f->json && json_is_integer(f->json)) {
        *hi = 0;
        *lo = (uint64_t)json_integer_value(f->json);
        if (*lo == 0)
            return fail(r, what, "the trace id is all zeros");
        return true;
    }
    if (!f->text) {
        char b[64];
        return fail(r, what, "%s is not an id", shown(f, b, sizeof b));
    }
    if (!tw__parse_trace_id(f->text, f->len, r->id_base, hi, lo, why, sizeof why))
        return fail(r, what, "%s", why);
    return true;
}

static bool parse_span(reader *r, const char *what, const field *f, bool allow_zero, uint64_t *id)
{
    char why[160];
    if (f->json && json_is_integer(f->json)) {
        *id = (uint64_t)json_integer_value(f->json);
        if (*id == 0 && !allow_zero)
            return fail(r, what, "the span id is all zeros");
        return true;
    }
    if (!f->text) {
        char b[64];
        return fail(r, what, "%s is not an id", shown(f, b, sizeof b));
    }
    if (!tw__parse_span_id(f->text, f->len, r->id_base, allow_zero, id, why, sizeof why))
        return fail(r, what, "%s", why);
    return true;
}

static tw__time_unit by_magnitude(double v)
{
    double a = fabs(v);
    return a < 1e11 ? TW__TIME_S : a < 1e14 ? TW__TIME_MS : a < 1e17 ? TW__TIME_US : TW__TIME_NS;
}

/* RFC 3339 text to µs; false when it is not such text. */
static bool parse_rfc3339(const char *s, size_t len, int64_t *us)
{
    char buf[64];
    if (len < 19 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int y, mo, d, h, mi, se, n = 0;
    if (sscanf(buf, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 ||
        n != 19)
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    const char *p = buf + 19;
    int64_t frac_us = 0;
    if (*p == '.' || *p == ',') {
        p++;
        int digits = 0;
        int64_t scale = 100000;
        while (isdigit((unsigned char)*p)) {
            if (digits < 6)
                frac_us += (*p - '0') * scale, scale /= 10;
            else if (digits == 6 && *p >= '5')
                frac_us++; /* rounds to the nearest µs */
            digits++;
            p++;
        }
        if (!digits)
            return false;
    }
    int offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2 || strlen(p) != 6)
            return false;
        offset_s = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    }
    if (*p)
        return false;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = se};
    time_t t = timegm(&tm);
    *us = ((int64_t)t - offset_s) * 1000000 + frac_us;
    return true;
}

/* A time or a duration in @unit (AUTO: by magnitude); *used: the unit
 * applied (TW__TIME_US for RFC 3339 text). */
static bool parse_time(reader *r, const char *what, const field *f, tw__time_unit unit,
                       bool allow_text_date, int64_t *us, tw__time_unit *used)
{
    char b[64];
    double dv = 0;
    int64_t iv = 0;
    bool is_int = false;
    if (f->json && json_is_integer(f->json)) {
        iv = json_integer_value(f->json);
        is_int = true;
    } else if (f->json && json_is_real(f->json)) {
        dv = json_real_value(f->json);
    } else if (f->text) {
        char text[64];
        if (f->len == 0 || f->len >= sizeof text)
            return fail(r, what, "%s is not a time", shown(f, b, sizeof b));
        memcpy(text, f->text, f->len);
        text[f->len] = '\0';
        char *end;
        errno = 0;
        long long ll = strtoll(text, &end, 10);
        if (!*end && errno == 0 && end != text) {
            iv = ll;
            is_int = true;
        } else {
            errno = 0;
            dv = strtod(text, &end);
            if (*end || end == text || errno || !isfinite(dv)) {
                if (allow_text_date && parse_rfc3339(f->text, f->len, us)) {
                    *used = TW__TIME_US;
                    return true;
                }
                return fail(r, what, "%s is not a number or an RFC 3339 time",
                            shown(f, b, sizeof b));
            }
        }
    } else {
        return fail(r, what, "%s is not a time", shown(f, b, sizeof b));
    }
    if (unit == TW__TIME_AUTO)
        unit = by_magnitude(is_int ? (double)iv : dv);
    *used = unit;
    bool ok = is_int ? tw__time_int_to_us(iv, unit, us) : tw__time_to_us(dv, unit, us);
    if (!ok)
        return fail(r, what, "%s does not fit in 64-bit microseconds", shown(f, b, sizeof b));
    return true;
}

static bool is_word(const field *f, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (f->len == strlen(words[i]) && strncasecmp(f->text, words[i], f->len) == 0)
            return true;
    }
    return false;
}

/* ---- one record ------------------------------------------------------------------------------ */

static bool add_typed_tag(reader *r, tw__span_data *s, const char *key, const field *f)
{
    tw_value v;
    char *owned = NULL;
    if (f->text) {
        v = (tw_value){.type = TW_VALUE_STRING, .len = f->len, .as.str = f->text};
    } else if (json_is_integer(f->json)) {
        v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = json_integer_value(f->json)};
    } else if (json_is_real(f->json)) {
        v = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = json_real_value(f->json)};
    } else if (json_is_boolean(f->json)) {
        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = json_is_true(f->json)};
    } else {
        owned = json_dumps(f->json, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        if (!owned)
            return false;
        v = (tw_value){.type = TW_VALUE_STRING, .len = strlen(owned), .as.str = owned};
    }
    (void)r;
    bool ok = tw__span_data_add_tag(s, key, &v);
    free(owned);
    return ok;
}

typedef enum outcome { REC_OK, REC_BAD, REC_NOMEM } outcome;

static outcome build(reader *r, size_t line_no, tw__span_data **out, tw__process *process)
{
    const tw__custom_map *m = r->m;
    field f;
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return REC_NOMEM;
    *out = NULL;
    lookup(r, m->trace_id, &f);
    if (!f.has) {
        fail(r, m->trace_id, "missing (trace_id)");
        goto bad;
    }
    if (!parse_trace(r, m->trace_id, &f, &s->trace_id_high, &s->trace_id_low))
        goto bad;
    lookup(r, m->span_id, &f);
    if (!f.has) {
        fail(r, m->span_id, "missing (span_id)");
        goto bad;
    }
    if (!parse_span(r, m->span_id, &f, false, &s->span_id))
        goto bad;
    lookup(r, m->parent_id, &f);
    if (f.has && !(f.text && f.len == 4 && strncasecmp(f.text, "null", 4) == 0) &&
        !parse_span(r, m->parent_id, &f, true, &s->parent_id))
        goto bad;
    if (s->parent_id == s->span_id)
        s->parent_id = 0;

    lookup(r, m->start, &f);
    if (!f.has) {
        fail(r, m->start, "missing (start)");
        goto bad;
    }
    tw__time_unit start_unit;
    if (!parse_time(r, m->start, &f, r->time_unit, true, &s->start_us, &start_unit))
        goto bad;
    field fe, fd;
    lookup(r, m->end, &fe);
    lookup(r, m->duration, &fd);
    if (fe.has) {
        int64_t end_us;
        tw__time_unit unused;
        if (!parse_time(r, m->end, &fe, r->time_unit == TW__TIME_AUTO ? start_unit : r->time_unit,
                        true, &end_us, &unused))
            goto bad;
        if (end_us < s->start_us) {
            fail(r, m->end, "the end is before the start");
            goto bad;
        }
        s->duration_us = end_us - s->start_us;
    } else if (fd.has) {
        tw__time_unit unit = m->duration_unit != TW__TIME_AUTO ? m->duration_unit : start_unit;
        tw__time_unit unused;
        if (!parse_time(r, m->duration, &fd, unit, false, &s->duration_us, &unused))
            goto bad;
        if (s->duration_us < 0) {
            fail(r, m->duration, "negative duration");
            goto bad;
        }
    } else {
        tw__wire_warn(r->in, line_no, "%s: no value: duration 0", m->end ? m->end : m->duration);
    }
    s->flags = TW__FLAG_SAMPLED;

    lookup(r, m->name, &f);
    if (f.has && !f.text) {
        fail(r, m->name, "not a string");
        goto bad;
    }
    if (f.has && !tw__span_data_set_operation(s, f.text, f.len))
        goto nomem;
    if (m->tag_fields) {
        for (size_t i = 0; m->tag_fields[i]; i++) {
            lookup(r, m->tag_fields[i], &f);
            if (f.has && !add_typed_tag(r, s, m->tag_fields[i], &f))
                goto nomem;
        }
    }
    lookup(r, m->kind, &f);
    if (f.has) {
        static const char *const kinds[] = {"client", "server", "producer", "consumer"};
        const char *k = NULL;
        field g = f;
        if (g.text && g.len > 10 && strncasecmp(g.text, "SPAN_KIND_", 10) == 0)
            g.text += 10, g.len -= 10;
        for (size_t i = 0; g.text && i < 4; i++) {
            if (is_word(&g, &kinds[i], 1))
                k = kinds[i];
        }
        static const char *const none[] = {"internal", "unspecified"};
        if (k && !tw__span_data_add_str_tag(s, "span.kind", k, strlen(k)))
            goto nomem;
        if (!k && !(g.text && is_word(&g, none, 2))) {
            char b[64];
            tw__wire_warn(r->in, line_no, "%s: %s is not a span kind: no kind", m->kind,
                          shown(&f, b, sizeof b));
        }
    }
    lookup(r, m->error, &f);
    if (f.has) {
        static const char *const yes[] = {"true", "1", "yes", "y", "t", "error"};
        static const char *const no[] = {"false", "0", "no", "n", "f", "ok", "none", "null", ""};
        bool is_true = false, has_message = false;
        if (f.text) {
            is_true = !is_word(&f, no, 9);
            has_message = is_true && !is_word(&f, yes, 6);
        } else if (json_is_boolean(f.json)) {
            is_true = json_is_true(f.json);
        } else if (json_is_number(f.json)) {
            is_true = json_number_value(f.json) != 0;
        } else {
            is_true = true;
        }
        tw_value v = {.type = TW_VALUE_BOOL, .as.boolean = true};
        if (is_true && !tw__span_data_add_tag(s, "error", &v))
            goto nomem;
        if (has_message && !tw__span_data_add_str_tag(s, "error.message", f.text, f.len))
            goto nomem;
    }

    /* The process. */
    lookup(r, m->service, &f);
    char *service = f.has && f.text ? strndup(f.text, f.len) : strdup("");
    bool ok = service && tw__process_set_service(process, service);
    free(service);
    if (!ok)
        goto nomem;
    lookup(r, m->host, &f);
    if (f.has && f.text) {
        tw_value v = {.type = TW_VALUE_STRING, .len = f.len, .as.str = f.text};
        char *copy = strndup(f.text, f.len); /* NUL-terminated for the tag */
        v.as.str = copy;
        ok = copy && tw__process_add_tag(process, "hostname", &v);
        free(copy);
        if (!ok)
            goto nomem;
    }
    lookup(r, m->ip, &f);
    if (f.has && f.text) {
        char *copy = strndup(f.text, f.len);
        tw_value v = {.type = TW_VALUE_STRING, .len = f.len, .as.str = copy};
        ok = copy && tw__process_add_tag(process, "ip", &v);
        free(copy);
        if (!ok)
            goto nomem;
    }
    *out = s;
    return REC_OK;
bad:
    tw__span_data_unref(s);
    return REC_BAD;
nomem:
    tw__span_data_unref(s);
    return REC_NOMEM;
}

/* ---- lines ------------------------------------------------------------------------------------
 */

/* Splits @line at tabs into r->cells. */
static bool split_tsv(reader *r, const char *line, size_t len)
{
    r->n_cells = 0;
    for (size_t start = 0;;) {
        const char *tab = memchr(line + start, '\t', len - start);
        size_t end = tab ? (size_t)(tab - line) : len;
        if (r->n_cells == r->cap_cells) {
            size_t cap = r->cap_cells ? 2 * r->cap_cells : 16;
            const char **cells = realloc(r->cells, cap * sizeof *cells);
            if (!cells)
                return false;
            r->cells = cells;
            size_t *lens = realloc(r->cell_lens, cap * sizeof *lens);
            if (!lens)
                return false;
            r->cell_lens = lens;
            r->cap_cells = cap;
        }
        r->cells[r->n_cells] = line + start;
        r->cell_lens[r->n_cells] = end - start;
        r->n_cells++;
        if (!tab)
            return true;
        start = end + 1;
    }
}

bool tw__custom_map_check(const tw__custom_map *m, char *why, size_t why_size)
{
    if (!m) {
        why_set(why, why_size, "--from custom needs a mapping (--map or --map-file)");
        return false;
    }
    if (!m->trace_id || !m->span_id || !m->start) {
        why_set(why, why_size, "the mapping needs trace_id=, span_id= and start=");
        return false;
    }
    if (!m->end && !m->duration) {
        why_set(why, why_size, "the mapping needs end= or duration=");
        return false;
    }
    if (m->is_tsv && !m->has_header) {
        const char *const names[] = {m->trace_id, m->span_id,  m->parent_id, m->name,
                                     m->service,  m->host,     m->ip,        m->start,
                                     m->end,      m->duration, m->kind,      m->error};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (names[i] && !is_number_text(names[i])) {
                why_set(why, why_size,
                        "TSV column \"%s\" is a name: add header=yes, or use column numbers",
                        names[i]);
                return false;
            }
        }
    }
    return true;
}

static tw_status read_custom(FILE *stream, tw__wire_input *in, tw_error **err)
{
    const tw__custom_map *m = in->opts ? in->opts->custom : NULL;
    char why[300];
    if (!tw__custom_map_check(m, why, sizeof why)) {
        tw__set_error(err, TW_E_CONFIG, "%s: %s", in->name, why);
        return TW_E_CONFIG;
    }
    reader r = {.in = in, .m = m};
    r.time_unit = m->time_unit != TW__TIME_AUTO ? m->time_unit : in->opts->time_unit;
    r.id_base = m->id_base != TW__ID_AUTO ? m->id_base : in->opts->id_base;
    /* The one line reader: a NUL byte stays inside its line (which is then
     * rejected) instead of cutting it and gluing the next line on. */
    tw__line_reader lines;
    tw__line_reader_init(&lines, stream, MAX_LINE_BYTES);
    tw__buf text; /* the line, NUL-terminated, for the parsers */
    tw__buf_init(&text);
    if (in->reject_part) { /* an oversized line goes whole to the rejects */
        lines.spill = tw__wire_reject_part;
        lines.spill_arg = in;
    }
    struct {
        char *buf;
        size_t len;
    } lr = {NULL, 0};
    tw_status rc = TW_OK;
    size_t line_no = 0;
    bool nomem = false, is_read_error = false, need_header = m->is_tsv && m->has_header;
    for (;;) {
        int got = tw__line_reader_next(&lines);
        if (got == TW__LINE_END)
            break;
        if (got == TW__LINE_NOMEM) {
            nomem = true;
            break;
        }
        if (got == TW__LINE_IO) {
            is_read_error = true;
            break;
        }
        line_no = lines.line_no;
        if (got == TW__LINE_TOO_LONG) {
            if (!tw__wire_reject(in, line_no, "", 0, "line longer than %zu MiB",
                                 MAX_LINE_BYTES >> 20)) {
                rc = TW_E_STATE;
                break;
            }
            continue;
        }
        /* The line without its end (a CR too), copied and NUL-terminated
         * for the parsers below (which cut cells in place). */
        lr.len = lines.line_len;
        while (lr.len > 0 && lines.line[lr.len - 1] == '\r')
            lr.len--;
        tw__buf_reset(&text);
        if (!tw__buf_reserve(&text, lr.len + 1) || !tw__buf_append(&text, lines.line, lr.len)) {
            nomem = true;
            break;
        }
        lr.buf = (char *)text.data;
        lr.buf[lr.len] = '\0';
        const char *nul = memchr(lr.buf, '\0', lr.len);
        if (nul) {
            if (!tw__wire_reject(in, line_no, lr.buf, lr.len, "a NUL byte at column %zu",
                                 (size_t)(nul - lr.buf) + 1)) {
                rc = TW_E_STATE;
                break;
            }
            continue;
        }
        size_t blank = 0;
        while (blank < lr.len && isspace((unsigned char)lr.buf[blank]))
            blank++;
        if (blank == lr.len)
            continue;
        if (need_header) {
            need_header = false;
            if (!split_tsv(&r, lr.buf, lr.len)) {
                nomem = true;
                break;
            }
            r.columns = calloc(r.n_cells ? r.n_cells : 1, sizeof *r.columns);
            if (!r.columns) {
                nomem = true;
                break;
            }
            r.n_columns = r.n_cells;
            for (size_t i = 0; i < r.n_cells; i++) {
                r.columns[i] = trimmed(r.cells[i], r.cell_lens[i]);
                if (!r.columns[i]) {
                    nomem = true;
                    break;
                }
            }
            if (nomem)
                break;
            continue;
        }
        outcome o;
        tw__span_data *span = NULL;
        tw__process process;
        tw__process_init(&process);
        if (m->is_tsv) {
            if (!split_tsv(&r, lr.buf, lr.len)) {
                tw__process_clear(&process);
                nomem = true;
                break;
            }
            o = build(&r, line_no, &span, &process);
        } else {
            json_error_t jerr;
            r.doc = json_loadb(lr.buf, lr.len, 0, &jerr);
            if (!r.doc) {
                char jtext[JSON_ERROR_TEXT_LENGTH + 64];
                snprintf(r.why, sizeof r.why, "invalid JSON: %s (column %d)",
                         tw__json_error_text(&jerr, jtext, sizeof jtext), jerr.column);
                o = REC_BAD;
            } else if (!json_is_object(r.doc)) {
                snprintf(r.why, sizeof r.why, "not a JSON object");
                o = REC_BAD;
            } else {
                o = build(&r, line_no, &span, &process);
            }
            json_decref(r.doc);
            r.doc = NULL;
        }
        bool go_on = true;
        if (o == REC_OK)
            go_on = tw__wire_emit(in, line_no, span, &process, lr.buf, lr.len);
        else if (o == REC_BAD)
            go_on = tw__wire_reject(in, line_no, lr.buf, lr.len, "%s", r.why);
        tw__process_clear(&process);
        if (o == REC_NOMEM) {
            nomem = true;
            break;
        }
        if (!go_on) {
            rc = TW_E_STATE;
            break;
        }
    }
    if (nomem) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        rc = TW_E_NOMEM;
    } else if (rc == TW_OK && (is_read_error || ferror(stream))) {
        tw__set_error(err, TW_E_IO, "%s: read error: %s", in->name, strerror(errno));
        rc = TW_E_IO;
    }
    for (size_t i = 0; i < r.n_columns; i++)
        free(r.columns[i]);
    free(r.columns);
    free(r.cells);
    free(r.cell_lens);
    tw__line_reader_free(&lines);
    tw__buf_free(&text);
    return rc;
}

const tw__wire_decoder tw__custom_decoder = {
    .name = "custom",
    .summary = "any JSON-lines or TSV span log, with --map / --map-file",
    .read = read_custom,
    .sniff = NULL,
};
