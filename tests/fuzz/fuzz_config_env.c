/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_config_env.c: libFuzzer target for the parsers of the
 * Jaeger environment variables (sdk/src/config_env.h). The environment is
 * input the library does not control, so these parsers must never crash,
 * leak or hang on any byte string, and must fail exactly when they set an
 * error (docs/API.md).
 *
 * Input: byte 0 selects the parser (interval, JAEGER_TAGS, the key=value
 * lists of OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS, secret
 * or not, or several); the
 * rest, up to the first NUL, is the variable's value, copied into an
 * allocation of exactly its size so that AddressSanitizer catches a read past
 * the NUL. tw_tracer_new_from_env() is not called: it opens a reporter socket
 * and starts a thread per input, which would measure those, not the parsers.
 *
 * Each parser runs twice, with and without an error out parameter: the
 * results must agree (control flow never depends on @err), an error must be
 * set exactly on failure with a message that starts with the variable's
 * name, and JAEGER_TAGS must add one tag per non-empty item on success and
 * none on failure. The tag keys and values are checked against a second,
 * independent reading of the same value below.
 *
 * Built and run by tests/fuzz/run_fuzz.sh (clang, -fsanitize=fuzzer,address,
 * undefined); seeds in tests/fuzz/corpus/config_env/, tokens in
 * tests/fuzz/config_env.dict.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_env.h"
#include "internal.h"

/* Set once in LLVMFuzzerInitialize, so that ${VAR} and ${VAR:default} reach
 * both branches (set, empty, unset) without a setenv per input: glibc keeps
 * every value ever passed to setenv, which would grow without bound. */
static const char FUZZ_SET_VALUE[] = " spaced = value ";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *value)
{
    fprintf(stderr, "fuzz_config_env: %s (value \"%s\")\n", what, value);
    abort();
}

static void check_error(tw_error *err, const char *name, const char *value)
{
    tw_status st = tw_error_status(err);
    if (st != TW_E_CONFIG && st != TW_E_NOMEM)
        fail("the error status is neither TW_E_CONFIG nor TW_E_NOMEM", value);
    if (strncmp(tw_error_message(err), name, strlen(name)) != 0)
        fail("the error message does not start with the variable's name", value);
    tw_error_free(err);
}

/* ---- intervals ---------------------------------------------------------------------------- */

static void fuzz_interval(const char *value)
{
    static const char name[] = "JAEGER_REPORTER_FLUSH_INTERVAL";
    unsigned int ms_quiet = 0, ms = 0;
    tw_error *err = NULL;
    bool ok_quiet = tw__parse_interval_ms(name, value, &ms_quiet, NULL);
    bool ok = tw__parse_interval_ms(name, value, &ms, &err);
    if (ok != ok_quiet || (ok && ms != ms_quiet))
        fail("the interval parser's result depends on whether err is NULL", value);
    if (ok != (err == NULL))
        fail("the interval parser set an error on success or none on failure", value);
    if (!ok) {
        check_error(err, name, value);
        return;
    }
    /* Whatever was accepted starts with a number (no sign, no space). */
    if (!isdigit((unsigned char)value[0]) && value[0] != '.')
        fail("the interval parser accepted a value that does not start with a number", value);
    size_t n_digits = strspn(value, "0123456789");
    if (value[n_digits] == '\0' && ms != strtoull(value, NULL, 10))
        fail("plain milliseconds were not taken as they are", value);
}

/* ---- JAEGER_TAGS -------------------------------------------------------------------------- */

/* [*begin, *end) without leading and trailing isspace(), as the parser trims. */
static void trim_span(const char **begin, const char **end)
{
    while (*begin < *end && isspace((unsigned char)**begin))
        (*begin)++;
    while (*end > *begin && isspace((unsigned char)(*end)[-1]))
        (*end)--;
}

static bool span_equals(const char *begin, const char *end, const char *s, size_t len)
{
    return (size_t)(end - begin) == len && memcmp(begin, s, len) == 0;
}

/* The value an item's right-hand side [begin, end) must produce: itself, or
 * for ${VAR} / ${VAR:default} the variable (trimmed name) or the default. */
static bool value_matches(const char *begin, const char *end, const tw_value *got)
{
    trim_span(&begin, &end);
    size_t len = (size_t)(end - begin);
    if (len < 3 || begin[0] != '$' || begin[1] != '{' || end[-1] != '}')
        return span_equals(begin, end, got->as.str, got->len);
    const char *ref = begin + 2, *ref_end = end - 1;
    const char *colon = memchr(ref, ':', (size_t)(ref_end - ref));
    const char *fallback = colon ? colon + 1 : ref_end;
    if (colon)
        ref_end = colon;
    trim_span(&ref, &ref_end);
    char var[256];
    const char *from_env = NULL;
    if ((size_t)(ref_end - ref) < sizeof var) {
        memcpy(var, ref, (size_t)(ref_end - ref));
        var[ref_end - ref] = '\0';
        from_env = getenv(var);
    } else {
        return true; /* a name this long is set by no one: not worth a second buffer */
    }
    if (from_env && *from_env)
        return got->len == strlen(from_env) && memcmp(got->as.str, from_env, got->len) == 0;
    return span_equals(fallback, end - 1, got->as.str, got->len);
}

/* Checks the tags added on success against a reading of @value that shares
 * no code with the parser: one tag per non-empty comma-separated item, key
 * and value as the item says. Returns the number of items. */
static size_t check_added_tags(const char *value, const tw__process *tags, size_t first)
{
    size_t n_items = 0;
    const char *p = value;
    while (*p) {
        const char *item = p, *item_end = p + strcspn(p, ",");
        p = *item_end ? item_end + 1 : item_end;
        if (item == item_end)
            continue; /* empty items are skipped */
        size_t index = first + n_items++;
        if (index >= tags->n_tags)
            fail("JAEGER_TAGS was accepted with fewer tags than items", value);
        const tw__tag *t = &tags->tags[index];
        tw_value v;
        tw__tag_to_value(t, &v);
        const char *eq = memchr(item, '=', (size_t)(item_end - item));
        if (!eq)
            fail("JAEGER_TAGS was accepted with an item that has no '='", value);
        const char *key = item, *key_end = eq;
        trim_span(&key, &key_end);
        if (key == key_end || !span_equals(key, key_end, t->key, strlen(t->key)))
            fail("a JAEGER_TAGS key differs from its item", value);
        if (v.type != TW_VALUE_STRING || strlen(v.as.str) != v.len ||
            !value_matches(eq + 1, item_end, &v))
            fail("a JAEGER_TAGS value differs from its item", value);
    }
    return n_items;
}

/* One parse into fresh options that already hold one tag, so that "failure
 * leaves the options unchanged" is visible. Returns whether it succeeded and
 * the number of tags it added. */
static bool parse_tags_once(const char *value, bool wants_error, size_t *n_added)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    if (!opts || tw_tracer_options_add_tag_str(opts, "before", "kept") != TW_OK)
        abort(); /* out of memory before the code under test ran */
    const size_t n_before = opts->tags.n_tags;
    tw_error *err = NULL;
    bool ok = tw__parse_tags(opts, value, wants_error ? &err : NULL);
    if (wants_error && ok != (err == NULL))
        fail("the JAEGER_TAGS parser set an error on success or none on failure", value);
    if (err)
        check_error(err, "JAEGER_TAGS", value);
    if (!ok && opts->tags.n_tags != n_before)
        fail("a failed JAEGER_TAGS parse left tags in the options", value);
    if (strcmp(opts->tags.tags[0].key, "before") != 0)
        fail("the JAEGER_TAGS parser changed a tag it did not add", value);
    *n_added = opts->tags.n_tags - n_before;
    if (ok && check_added_tags(value, &opts->tags, n_before) != *n_added)
        fail("JAEGER_TAGS was accepted with more tags than items", value);
    tw_tracer_options_free(opts);
    return ok;
}

static void fuzz_tags(const char *value)
{
    size_t n_quiet = 0, n = 0;
    bool ok_quiet = parse_tags_once(value, false, &n_quiet);
    bool ok = parse_tags_once(value, true, &n);
    if (ok != ok_quiet || n != n_quiet)
        fail("the JAEGER_TAGS parser's result depends on whether err is NULL", value);
}

/* ---- key=value lists (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS) ------------------ */

typedef struct kv_seen {
    size_t n;
    const char *value; /* the input, for messages */
} kv_seen;

static bool count_item(void *arg, const char *name, const char *key, const char *value,
                       tw_error **err)
{
    (void)name;
    (void)err;
    kv_seen *seen = arg;
    /* Keys and values are trimmed before %-decoding: a decoded one may
     * start or end with an encoded space, on purpose; only emptiness is
     * impossible (a raw key is non-empty, and %XX never decodes to NUL). */
    if (!*key)
        fail("an empty key reached the callback", seen->value);
    (void)value;
    seen->n++;
    return true;
}

/* Items a reading of @value that shares no code with the parser finds: the
 * comma-separated parts that are not blank. */
static size_t count_items(const char *value)
{
    size_t n = 0;
    for (const char *p = value; *p;) {
        const char *end = p + strcspn(p, ",");
        bool blank = true;
        for (const char *q = p; q < end; q++)
            blank = blank && isspace((unsigned char)*q);
        n += !blank;
        p = *end ? end + 1 : end;
    }
    return n;
}

/* Whether @piece occurs in the key (before '=') of any item of @value: keys
 * may be quoted, so such a piece proves nothing. */
static bool in_some_key(const char *value, const char *piece, size_t len)
{
    for (const char *p = value; *p;) {
        const char *end = p + strcspn(p, ",");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        const char *k_end = eq ? eq : end;
        for (const char *q = p; q + len <= k_end; q++) {
            if (memcmp(q, piece, len) == 0)
                return true;
        }
        p = *end ? end + 1 : end;
    }
    return false;
}

/* A secret list's error never quotes a value: for each item "k=v" whose
 * trimmed v is 8 bytes or more and occurs in no key, v is not in @msg. */
static void check_no_value_quoted(const char *value, const char *msg)
{
    for (const char *p = value; *p;) {
        const char *end = p + strcspn(p, ",");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq) {
            const char *v = eq + 1, *v_end = end;
            trim_span(&v, &v_end);
            size_t vlen = (size_t)(v_end - v);
            char piece[64];
            if (vlen >= 8 && vlen < sizeof piece) {
                memcpy(piece, v, vlen);
                piece[vlen] = '\0';
                if (!in_some_key(value, piece, vlen) && strstr(msg, piece))
                    fail("a secret list's error quotes a value", value);
            }
        }
        p = *end ? end + 1 : end;
    }
}

static void fuzz_kv_list(const char *value, bool is_secret)
{
    static const char name[] = "OTEL_EXPORTER_OTLP_HEADERS";
    kv_seen quiet = {0, value}, loud = {0, value};
    tw_error *err = NULL;
    bool ok_quiet = tw__parse_kv_list(name, value, is_secret, count_item, &quiet, NULL);
    bool ok = tw__parse_kv_list(name, value, is_secret, count_item, &loud, &err);
    if (ok != ok_quiet || quiet.n != loud.n)
        fail("the key=value parser's result depends on whether err is NULL", value);
    if (ok != (err == NULL))
        fail("the key=value parser set an error on success or none on failure", value);
    if (ok && loud.n != count_items(value))
        fail("the key=value parser accepted a list but skipped or invented items", value);
    if (err) {
        if (is_secret)
            check_no_value_quoted(value, tw_error_message(err));
        check_error(err, name, value);
    }
}

/* ---- libFuzzer entry points --------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (setenv("TW_FUZZ_SET", FUZZ_SET_VALUE, 1) != 0 || setenv("TW_FUZZ_EMPTY", "", 1) != 0 ||
        unsetenv("TW_FUZZ_UNSET") != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t selector = data[0];
    const uint8_t *bytes = data + 1;
    size_t len = size - 1;
    const uint8_t *nul = memchr(bytes, '\0', len);
    if (nul)
        len = (size_t)(nul - bytes);
    char *value = malloc(len + 1);
    if (!value)
        return 0;
    memcpy(value, bytes, len);
    value[len] = '\0';
    switch (selector % 5) {
    case 0:
        fuzz_interval(value);
        break;
    case 1:
        fuzz_tags(value);
        break;
    case 2:
        fuzz_kv_list(value, true);
        break;
    case 3:
        fuzz_kv_list(value, false);
        break;
    default:
        fuzz_interval(value);
        fuzz_tags(value);
        fuzz_kv_list(value, true);
        break;
    }
    free(value);
    return 0;
}
