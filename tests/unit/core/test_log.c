/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_log.c: suite "core/log": the default logger (warnings
 * and errors on stderr, one line per cause per minute, never blocking), the
 * level from TRACEWIRE_LOG_LEVEL and tw_set_log_level(), and what every
 * message goes through (control bytes escaped, URL credentials masked),
 * including the baggage keys that inject quotes.
 *
 * stderr is redirected to a pipe for the tests that read it; the first test
 * runs before the library reads its level from the environment (once per
 * process), so it is registered first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h"
#include "tracewire/tracewire.h"

/* ---- stderr into a pipe ------------------------------------------------------------------- */

static int saved_stderr = -1;
static int pipe_fds[2] = {-1, -1};

static void capture_stderr(void)
{
    fflush(stderr);
    CU_ASSERT_FATAL(pipe(pipe_fds) == 0);
    saved_stderr = dup(STDERR_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    /* Reading must never wait: the tests read what is there. */
    fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
}

/* Restores stderr and returns what was written (static buffer). */
static const char *release_stderr(void)
{
    static char text[65536];
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    close(pipe_fds[1]);
    ssize_t n, total = 0;
    while ((n = read(pipe_fds[0], text + total, sizeof text - 1 - (size_t)total)) > 0)
        total += n;
    text[total] = '\0';
    close(pipe_fds[0]);
    return text;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_environment_sets_the_level_at_first_use(void)
{
    /* The first log call of the process reads TRACEWIRE_LOG_LEVEL. */
    setenv("TRACEWIRE_LOG_LEVEL", "error", 1);
    capture_stderr();
    tw__log_msg(TW_LOG_WARN, "a warning below the level");
    tw__log_msg(TW_LOG_ERROR, "an error at the level");
    const char *out = release_stderr();
    unsetenv("TRACEWIRE_LOG_LEVEL");
    CU_ASSERT_PTR_NULL(strstr(out, "a warning below the level"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "tracewire: error: an error at the level\n"));
    tw_set_log_level(TW_LOG_WARN);
}

static void test_default_logger_writes_warnings_to_stderr(void)
{
    tw__log_rate_reset();
    capture_stderr();
    tw__log_msg(TW_LOG_WARN, "agent unreachable: %d spans dropped", 3);
    tw__log_msg(TW_LOG_INFO, "below the default level");
    const char *out = release_stderr();
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "tracewire: warning: agent unreachable: 3 spans dropped\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "below the default level"));
}

static void test_one_line_per_cause_per_minute(void)
{
    tw__log_rate_reset();
    capture_stderr();
    for (int i = 0; i < 100; i++)
        tw__log_msg(TW_LOG_WARN, "queue full: %d", i); /* one cause: one call site */
    tw__log_msg(TW_LOG_WARN, "another cause");
    const char *out = release_stderr();
    CU_ASSERT_EQUAL(count(out, "queue full:"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "queue full: 0"));
    CU_ASSERT_EQUAL(count(out, "another cause"), 1);
    /* A logger the application installs gets every line. */
    tw__log_rate_reset();
}

/* tw__log_for: one call site is one cause per name, so two transports
 * failing at once are both heard, each still limited. */
static void test_one_line_per_cause_and_name_per_minute(void)
{
    tw__log_rate_reset();
    capture_stderr();
    for (int i = 0; i < 50; i++) {
        tw__log_for(TW_LOG_WARN, "first", "send failed: %s %d", "first", i);
        tw__log_for(TW_LOG_WARN, "second", "send failed: %s %d", "second", i);
    }
    const char *out = release_stderr();
    CU_ASSERT_EQUAL(count(out, "send failed: first"), 1);
    CU_ASSERT_EQUAL(count(out, "send failed: second"), 1);
    tw__log_rate_reset();
}

/* An argument error is one cause per function: the first one of a process
 * does not hide every other function's for a minute (they share a format). */
static void test_argument_errors_of_two_functions_are_both_heard(void)
{
    tw__log_rate_reset();
    capture_stderr();
    for (int i = 0; i < 3; i++) {
        tw_tracer_options_set_service(NULL, "x");
        tw_reporter_options_set_agent(NULL, "h", 1);
    }
    const char *out = release_stderr();
    CU_ASSERT_EQUAL(count(out, "tw_tracer_options_set_service: invalid argument"), 1);
    CU_ASSERT_EQUAL(count(out, "tw_reporter_options_set_agent: invalid argument"), 1);
    tw__log_rate_reset();
}

static char got[8192];
static void keep(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    size_t len = strlen(got);
    snprintf(got + len, sizeof got - len, "%s\n", message);
}

static void test_installed_logger_gets_every_line_and_level_changes(void)
{
    got[0] = '\0';
    tw_set_logger(keep, NULL, TW_LOG_WARN);
    for (int i = 0; i < 5; i++)
        tw__log_msg(TW_LOG_WARN, "repeated %d", i);
    CU_ASSERT_EQUAL(count(got, "repeated"), 5);
    tw__log_msg(TW_LOG_DEBUG, "debug line");
    CU_ASSERT_PTR_NULL(strstr(got, "debug line"));
    tw_set_log_level(TW_LOG_DEBUG);
    tw__log_msg(TW_LOG_DEBUG, "debug line");
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "debug line"));
    tw_set_log_level(TW_LOG_OFF);
    tw__log_msg(TW_LOG_ERROR, "silenced error");
    CU_ASSERT_PTR_NULL(strstr(got, "silenced error"));
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
}

static void test_messages_escape_control_bytes_and_mask_credentials(void)
{
    got[0] = '\0';
    tw_set_logger(keep, NULL, TW_LOG_DEBUG);
    tw__log_msg(TW_LOG_WARN, "key \"%s\" refused", "evil\r\ntracewire: error: forged");
    tw__log_msg(TW_LOG_WARN, "POST %s failed", "https://user:hunter2@collector:443/api/traces");
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "key \"evil\\x0d\\x0atracewire: error: forged\" refused"));
    CU_ASSERT_EQUAL(count(got, "\n"), 2); /* one line each */
    CU_ASSERT_PTR_NULL(strstr(got, "hunter2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "https://***@collector:443/api/traces"));
    char out[64];
    tw__redact_url("htp:/user:pw@host/x", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "***@host/x");
    /* An '@' in the query is no credential of the authority: the value
     * goes as every query value does. */
    tw__redact_url("http://host/x?a=b@c", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "http://***");
}

/* A string known to be one URL (a label, a --send value, an endpoint):
 * the user-info runs to the last '@' whatever it holds, query values to
 * '&', '#' or the end; nothing of either is shown. */
static void test_whole_url_mode(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"http://u:pa\"ssSECRET@127.0.0.1:1/v1/traces", "http://***@127.0.0.1:1/v1/traces"},
        {"http://u:pa'ssSECRET@h/v1/traces", "http://***@h/v1/traces"},
        {"http://u:pa<s>sSECRET@h/v1/traces", "http://***@h/v1/traces"},
        {"http://u:PW SECRET@host:4318/v1/traces", "http://***@host:4318/v1/traces"},
        {"http://u:pa/ssSECRET@127.0.0.1:1/v1/traces", "http://***@127.0.0.1:1/v1/traces"},
        {"http://u:p@ss@SECRET@h:1/x", "http://***@h:1/x"},
        {"http://u:pa#ssSECRET@127.0.0.1:1/v1/traces", "http://***"},
        {"http://u:pa?ssSECRET@h/x", "http://***"},
        {"http://127.0.0.1:1/v1/traces?api_key=a b SECRET",
         "http://127.0.0.1:1/v1/traces?api_key=***"},
        {"http://h/x?t=a\"SECRET>&k=a: SECRET#f g", "http://h/x?t=***&k=***#***"},
        {"http://h/x?service=a b&t=SECRET", "http://h/x?service=a b&t=***"},
        {"http://h/a b/c\td", "http://h/a b/c\\x09d"},
        {"u:PW SECRET@x://h/p", "***@x://h/p"},
        {"not a url", "not a url"},
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw__redact_url(cases[i].in, out, sizeof out);
        CU_ASSERT_STRING_EQUAL(out, cases[i].want);
        CU_ASSERT_PTR_NULL(strstr(out, "SECRET"));
    }
    /* In free text, ": " after a masked value stays (a URL as a label). */
    tw__redact_text("http://h/v1/traces?api_key=SECRET: accepted: 3", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "http://h/v1/traces?api_key=***: accepted: 3");
    tw__redact_text("destination http://h/?t=SECRET#SECRET: enqueued 0", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "destination http://h/?t=***#***: enqueued 0");
}

/* Query values can be credentials (a backend may take its key as
 * ?api_key=, ?token=, ?sig=): every value in a URL is masked, in messages
 * and in URLs shown, and never shown in part when the text is cut. */
static void test_query_values_are_masked(void)
{
    static const struct {
        bool is_url; /* tw__redact_url, else tw__redact_text */
        const char *in, *want;
    } cases[] = {
        {false, "POST http://h:9/v1/traces?token=abc123&x=1 failed",
         "POST http://h:9/v1/traces?token=***&x=*** failed"},
        {false, "to \"https://u:pw@h/x?api_key=zz&flag&e=#frag?k=v\" now",
         "to \"https://***@h/x?api_key=***&***&e=#***\" now"},
        /* A component without '=' is all value; so is the fragment; a path
         * parameter's value goes as a query value does. */
        {true, "http://h/p?S3CRET", "http://h/p?***"},
        {true, "http://h/p?a=1&S3CRET&&b", "http://h/p?a=***&***&&***"},
        {true, "http://h/p#S3CRET", "http://h/p#***"},
        {true, "http://h/p?k=v#S3CRET&x=1", "http://h/p?k=***#***"},
        {true, "http://h/p;jsessionid=S3CRET", "http://h/p;jsessionid=***"},
        {true, "http://h/a;S3CRET/b;x=S3CRET;y=S3CRET?q", "http://h/a;***/b;x=***;y=***?***"},
        {true, "http://h/a&b=c", "http://h/a&b=c"},
        {true, "h:1/p;jsessionid=S3CRET#S3CRET", "h:1/p;jsessionid=***#***"},
        {false, "GET http://h/p?S3CRET failed; http://h/;k=S3CRET#S3CRET, then",
         "GET http://h/p?*** failed; http://h/;k=***#*** then"},
        {false, "http://h/p?service=a&S3CRET", "http://h/p?service=a&***"},
        {false, "http://h/p?S3\tCRET x", "http://h/p?*** x"},
        /* A control byte ends a URL, but not a secret: it is masked with it. */
        {false, "a question? a=b, and http://h/p?k=v\r\nnext=1",
         "a question? a=b, and http://h/p?k=***"},
        {false, "http://u:p\tw@h/a\tb?c", "http://***@h/a\\x09b?c"},
        /* The sampler's own ?service=NAME is shown: it names the service. */
        {false, "GET http://h:5778/sampling?service=checkout&token=t failed",
         "GET http://h:5778/sampling?service=checkout&token=*** failed"},
        {false, "http://h/?token=a&Service=b&xservice=c",
         "http://h/?token=***&Service=b&xservice=***"},
        {true, "collector:4318/v1/traces?sig=s3cr3t", "collector:4318/v1/traces?sig=***"},
        {true, "https://h/x?redirect=http://u:p@i/?t=1&k=2", "https://***"},
        {false, "https://h/x?redirect=http://u:p@i/?t=1&k=2", "https://h/x?redirect=***&k=***"},
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].is_url)
            tw__redact_url(cases[i].in, out, sizeof out);
        else
            tw__redact_text(cases[i].in, out, sizeof out);
        CU_ASSERT_STRING_EQUAL(out, cases[i].want);
    }
    /* Cut: what does not fit is left out whole. */
    char small[16];
    tw__redact_text("http://h/?t=secret", small, sizeof small);
    CU_ASSERT_STRING_EQUAL(small, "http://h/?t=***");
    tw__redact_text("http://h/?t=secret", small, 14);
    CU_ASSERT_STRING_EQUAL(small, "http://h/?t=");
    CU_ASSERT_EQUAL(tw__redact_text("x", small, 0), 0);
    /* Through the logger, as every SDK message goes. */
    got[0] = '\0';
    tw_set_logger(keep, NULL, TW_LOG_DEBUG);
    tw__log_msg(TW_LOG_WARN, "POST %s failed", "https://collector/v1/traces?api-key=hunter2");
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    CU_ASSERT_PTR_NULL(strstr(got, "hunter2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "https://collector/v1/traces?api-key=***"));
}

static void test_inject_cannot_forge_log_lines_with_baggage_keys(void)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "svc");
    tw_tracer_options_set_reporter(o, tw_reporter_memory_new(0));
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_span *s = tw_span_start(t, "x", NULL);
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "k\r\nINJECTED: yes", "v"), TW_OK);
    got[0] = '\0';
    tw_set_logger(keep, NULL, TW_LOG_DEBUG);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    tw_tracer_inject(t, tw_span_get_context(s), TW_FORMAT_HTTP_HEADERS, &w);
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "k\\x0d\\x0aINJECTED: yes"));
    CU_ASSERT_PTR_NULL(strstr(got, "\nINJECTED"));
    tw_headers_free(h);
    tw_span_finish(s);
    tw_tracer_free(t);
}

static void test_default_logger_never_blocks_on_a_full_stderr(void)
{
    tw__log_rate_reset();
    capture_stderr();
    /* Fill the pipe: nobody reads it until the end. */
    int flags = fcntl(pipe_fds[1], F_GETFL);
    fcntl(pipe_fds[1], F_SETFL, flags | O_NONBLOCK);
    char block[4096];
    memset(block, 'x', sizeof block);
    while (write(pipe_fds[1], block, sizeof block) > 0)
        ;
    CU_ASSERT_EQUAL(errno, EAGAIN);
    fcntl(pipe_fds[1], F_SETFL, flags); /* blocking again: a write now would wait */
    uint64_t dropped = tw__log_default_dropped();
    tw__log_msg(TW_LOG_ERROR, "stderr is full"); /* returns: dropped, not waited for */
    CU_ASSERT_EQUAL(tw__log_default_dropped(), dropped + 1);
    release_stderr();
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/log", NULL, NULL);
    CU_add_test(suite, "environment_sets_the_level_at_first_use",
                test_environment_sets_the_level_at_first_use);
    CU_add_test(suite, "default_logger_writes_warnings_to_stderr",
                test_default_logger_writes_warnings_to_stderr);
    CU_add_test(suite, "one_line_per_cause_per_minute", test_one_line_per_cause_per_minute);
    CU_add_test(suite, "argument_errors_of_two_functions_are_both_heard",
                test_argument_errors_of_two_functions_are_both_heard);
    CU_add_test(suite, "one_line_per_cause_and_name_per_minute",
                test_one_line_per_cause_and_name_per_minute);
    CU_add_test(suite, "installed_logger_gets_every_line_and_level_changes",
                test_installed_logger_gets_every_line_and_level_changes);
    CU_add_test(suite, "messages_escape_control_bytes_and_mask_credentials",
                test_messages_escape_control_bytes_and_mask_credentials);
    CU_add_test(suite, "query_values_are_masked", test_query_values_are_masked);
    CU_add_test(suite, "whole_url_mode", test_whole_url_mode);
    CU_add_test(suite, "inject_cannot_forge_log_lines_with_baggage_keys",
                test_inject_cannot_forge_log_lines_with_baggage_keys);
    CU_add_test(suite, "default_logger_never_blocks_on_a_full_stderr",
                test_default_logger_never_blocks_on_a_full_stderr);
}
