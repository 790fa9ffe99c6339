/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/install/cmake/consumer.c: the program of the CMake consumer test. It checks that
 * the header it was compiled with and the library it runs with agree on the version, makes
 * one span through a memory reporter (no network), reads it back, and with TW_WITH_MHD
 * links a libtracewire-microhttpd call and a libmicrohttpd one (a server calls both: the
 * tracewire::microhttpd target must bring libmicrohttpd). Exit 0 when all is well; prints
 * what it saw.
 */
#include <stdio.h>
#include <string.h>

#include <tracewire/tracewire.h>
#ifdef TW_WITH_MHD
#include <tracewire/microhttpd.h>
#endif

int main(void)
{
    if (strcmp(tw_version(), TW_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", TW_VERSION_STRING, tw_version());
        return 1;
    }
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "cmake-consumer");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_reporter *memory = tw_reporter_memory_new(16);
    tw_tracer_options_set_reporter(opts, memory);
    tw_error *err = NULL;
    tw_tracer *tracer = tw_tracer_new(opts, &err);
    tw_tracer_options_free(opts);
    if (!tracer) {
        fprintf(stderr, "consumer: %s\n", tw_error_message(err));
        tw_error_free(err);
        return 1;
    }
    tw_span *span = tw_span_start(tracer, "consume", NULL);
    tw_span_set_tag_str(span, "built.with", "cmake");
    tw_span_finish(span);
    tw_tracer_flush(tracer, 1000);
    size_t n = tw_memory_reporter_count(memory);
#ifdef TW_WITH_MHD
    tw_mhd_finish_span(tw_mhd_start_span(NULL, NULL, "GET", "/"), 200); /* links, refuses NULL */
    printf("consumer: libmicrohttpd %s\n", MHD_get_version());
#endif
    tw_tracer_free(tracer);
    printf("consumer: tracewire %s, %zu span(s) reported\n", tw_version(), n);
    return n >= 1 ? 0 : 1;
}
