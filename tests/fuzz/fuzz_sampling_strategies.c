/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_sampling_strategies.c: libFuzzer target for the parser of
 * Jaeger's sampling strategies file (sdk/wire/jaeger/sampling_strategies.h),
 * which `tracewire agent --sampling-strategies` reads from a file users
 * write: it must never crash, leak or hang, must fail exactly when it sets
 * an error (one naming the strategies file), and every answer of a table it
 * accepts, in both dialects, must be a strategy the SDK's remote sampler
 * accepts. Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/sampling_strategies/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/jaeger/sampling_strategies.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_answer(const tw__strategies *s, const char *service, bool numeric)
{
    size_t len = 0;
    char *text = tw__strategies_answer(s, service, numeric, &len);
    if (!text)
        return; /* out of memory */
    if (strlen(text) != len || !tw__strategy_answer_check(text, len, NULL))
        abort();
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_error *err = NULL;
    tw__strategies *s = tw__strategies_parse((const char *)data, size, &err);
    if ((s == NULL) != (err != NULL))
        abort(); /* an error exactly on failure */
    if (!s) {
        if (!strstr(tw_error_message(err), "strategies file"))
            abort();
        tw_error_free(err);
        return 0;
    }
    /* The default, a name the file may hold, and one it does not. */
    static const char *const services[] = {NULL, "foo", "a", "no such service"};
    for (size_t i = 0; i < sizeof services / sizeof services[0]; i++) {
        check_answer(s, services[i], false);
        check_answer(s, services[i], true);
    }
    (void)tw__strategies_count(s);
    tw__strategies_free(s);
    return 0;
}
