/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_sampling_strategy.c: libFuzzer target for the parser of
 * Jaeger sampling strategies (sdk/src/sampling/strategy.h): the remote
 * sampler feeds it whatever the sampling endpoint answers, so it must never
 * crash, leak or hang, must fail exactly when it sets an error, and a
 * strategy it accepts must be within range and build a working sampler.
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/sampling_strategy/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sampling/sampling.h"
#include "sampling/strategy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw__strategy s;
    tw_error *err = NULL;
    bool ok = tw__strategy_parse((const char *)data, size, &s, &err);
    if (ok != (err == NULL))
        abort(); /* an error exactly on failure */
    if (!ok) {
        if (!strstr(tw_error_message(err), "sampling strategy"))
            abort();
        tw_error_free(err);
        return 0;
    }
    if (s.probability < 0 || s.probability > 1 || s.default_probability < 0 ||
        s.default_probability > 1 || s.max_traces_per_second < 0 || s.default_lower_bound < 0)
        abort();
    for (size_t i = 0; i < s.n_operations; i++) {
        if (!s.operations[i].operation || s.operations[i].probability < 0 ||
            s.operations[i].probability > 1)
            abort();
    }
    tw__strategy again;
    if (!tw__strategy_parse((const char *)data, size, &again, NULL) ||
        !tw__strategy_equal(&s, &again))
        abort(); /* deterministic */
    tw__strategy_clear(&again);
    tw_sampler *sampler = tw__strategy_sampler(&s, 8, NULL);
    if (!sampler)
        abort();
    tw_sampler_is_sampled(sampler, 0, 0x1234, s.n_operations ? s.operations[0].operation : "op");
    tw_sampler_free(sampler);
    tw__strategy_clear(&s);
    return 0;
}
