/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/agent/sampler_driver.c: tracewire's own remote sampler
 * (public API, tracewire/sampler.h) against `tracewire agent --sampling`:
 * polls URL for SERVICE once, then prints one JSON line with the updates it
 * applied, its type and the share of 20,000 trace ids it samples for each
 * operation named on the command line. test_agent_interop.py checks the
 * shares against the strategies file it served.
 *
 * Usage: sampler_driver URL SERVICE OPERATION...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracewire/tracewire.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: sampler_driver URL SERVICE OPERATION...\n");
        return 2;
    }
    tw_remote_sampler_options *o = tw_remote_sampler_options_new(argv[2]);
    if (!o || tw_remote_sampler_options_set_endpoint(o, argv[1]) != TW_OK ||
        tw_remote_sampler_options_set_first_poll_timeout_ms(o, 5000) != TW_OK) {
        fprintf(stderr, "sampler_driver: bad options\n");
        return 1;
    }
    tw_error *err = NULL;
    tw_sampler *s = tw_sampler_remote_new(o, &err);
    tw_remote_sampler_options_free(o);
    if (!s) {
        fprintf(stderr, "sampler_driver: %s\n", tw_error_message(err));
        tw_error_free(err);
        return 1;
    }
    printf("{\"updates_ok\": %" PRIu64 ", \"queries_failed\": %" PRIu64 ", \"shares\": {",
           tw_sampler_remote_counter(s, TW_REMOTE_UPDATES_OK),
           tw_sampler_remote_counter(s, TW_REMOTE_QUERIES_FAILED));
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 3; k < argc; k++) {
        unsigned int yes = 0;
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            yes += tw_sampler_is_sampled(s, 0, x, argv[k]) ? 1u : 0u;
        }
        printf("%s\"%s\": %.4f", k > 3 ? ", " : "", argv[k], yes / 20000.0);
    }
    printf("}}\n");
    tw_sampler_free(s);
    return 0;
}
