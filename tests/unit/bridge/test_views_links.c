/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_views_links.c: suite "bridge/views/links": service
 * dependency links by Zipkin's dependency linker rules (bridge/views/links.c).
 * Each rule has a hand-built trace (raw Zipkin shapes: shared halves,
 * kind-less spans, remote service names) that goes through the real
 * assembler with Jaeger ids, and the links the rule gives, worked out by hand.
 * Then the real Zipkin fixtures of tests/fixtures/real, read and assembled
 * as `tracewire deps` reads them, against the links worked out by hand from
 * the same rules for each file (the comments show the reasoning).
 */
#include <CUnit/CUnit.h>
#include <string.h>

#include "harness.h"
#include "view_fixture.h"

#define N(rows) (sizeof(rows) / sizeof((rows)[0]))
#define R TW_REAL_FIXTURES "/openzipkin__zipkin/"

typedef struct want_link {
    const char *parent, *child;
    uint64_t calls, errors;
} want_link;

static void check_links(const twv_links *l, const want_link *want, size_t n_want)
{
    CU_ASSERT_EQUAL(l->n_rows, n_want);
    for (size_t i = 0; i < n_want; i++) {
        const twv_link *got = NULL;
        for (size_t k = 0; k < l->n_rows; k++) {
            if (strcmp(l->rows[k].parent, want[i].parent) == 0 &&
                strcmp(l->rows[k].child, want[i].child) == 0)
                got = &l->rows[k];
        }
        CU_ASSERT_PTR_NOT_NULL(got);
        if (!got) {
            fprintf(stderr, "missing link %s -> %s\n", want[i].parent, want[i].child);
            continue;
        }
        CU_ASSERT_EQUAL(got->calls, want[i].calls);
        CU_ASSERT_EQUAL(got->errors, want[i].errors);
    }
    if (l->n_rows != n_want) {
        for (size_t k = 0; k < l->n_rows; k++)
            fprintf(stderr, "got %s -> %s %llu/%llu\n", l->rows[k].parent, l->rows[k].child,
                    (unsigned long long)l->rows[k].calls, (unsigned long long)l->rows[k].errors);
    }
}

/* Links of one hand-built trace. */
static void check_rows(const vt_span *rows, size_t n, const want_link *want, size_t n_want)
{
    vt_ctx c;
    vt_init(&c);
    vt_assemble(&c, rows, n);
    twv_links l;
    twv_links_init(&l, 0);
    twv_trace t;
    twv_trace_init(&t);
    for (size_t g = 0; g < c.g.n_groups; g++) {
        CU_ASSERT_TRUE_FATAL(vt_trace(&c, g, &t));
        CU_ASSERT_TRUE(twv_links_add_trace(&l, &t));
    }
    check_links(&l, want, n_want);
    twv_trace_free(&t);
    twv_links_free(&l);
    vt_free(&c);
}

static void test_rpc_chain_with_shared_ids_links_each_hop(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "web", .kind = "server"},
        {.id = 0x2, .parent = 0x1, .service = "web", .kind = "client"},
        {.id = 0x2, .parent = 0x1, .service = "app", .kind = "server", .flags = VT_SHARED},
        {.id = 0x3,
         .parent = 0x2,
         .service = "app",
         .kind = "client",
         .remote = "db",
         .flags = VT_ERROR},
    };
    /* the root server has no known caller; web's client defers to app's server;
     * app's client to the uninstrumented db carries its own error */
    const want_link want[] = {{"web", "app", 1, 0}, {"app", "db", 1, 1}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_client_error_counts_for_a_split_rpc_not_a_shared_one(void)
{
    const vt_span split[] = {
        {.id = 0xa, .service = "web", .kind = "client", .flags = VT_ERROR},
        {.id = 0xb, .parent = 0xa, .service = "app", .kind = "server"},
    };
    const want_link want_split[] = {{"web", "app", 1, 1}};
    check_rows(split, N(split), want_split, N(want_split));
    /* A shared server's parent id is its client's parent, not the client: */
    const vt_span shared[] = {
        {.id = 0x1, .service = "edge", .kind = "server"},
        {.id = 0xa, .parent = 0x1, .service = "web", .kind = "client", .flags = VT_ERROR},
        {.id = 0xa, .parent = 0x1, .service = "app", .kind = "server", .flags = VT_SHARED},
    };
    const want_link want_shared[] = {{"web", "app", 1, 0}};
    check_rows(shared, N(shared), want_shared, N(want_shared));
}

static void test_a_shared_server_without_parent_id_still_links(void)
{
    const vt_span rows[] = {
        {.id = 0xa, .service = "arn", .kind = "client"},
        {.id = 0xa, .service = "link", .kind = "server", .flags = VT_SHARED},
    };
    const want_link want[] = {{"arn", "link", 1, 0}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_messaging_links_through_the_broker_only(void)
{
    const vt_span with_broker[] = {
        {.id = 0x1, .service = "producer", .kind = "producer", .remote = "kafka"},
        {.id = 0x2, .parent = 0x1, .service = "consumer", .kind = "consumer", .remote = "kafka"},
    };
    const want_link want1[] = {{"producer", "kafka", 1, 0}, {"kafka", "consumer", 1, 0}};
    check_rows(with_broker, N(with_broker), want1, N(want1));
    const vt_span one_broker[] = {
        {.id = 0x1, .service = "producer", .kind = "producer"},
        {.id = 0x2, .parent = 0x1, .service = "consumer", .kind = "consumer", .remote = "kafka"},
    };
    const want_link want2[] = {{"kafka", "consumer", 1, 0}};
    check_rows(one_broker, N(one_broker), want2, N(want2));
    const vt_span no_broker[] = {
        {.id = 0x1, .service = "producer", .kind = "producer"},
        {.id = 0x2, .parent = 0x1, .service = "consumer", .kind = "consumer"},
    };
    check_rows(no_broker, N(no_broker), NULL, 0);
}

static void test_a_producer_links_to_a_server_child(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "producer", .kind = "producer"},
        {.id = 0x2, .parent = 0x1, .service = "server", .kind = "server"},
    };
    const want_link want[] = {{"producer", "server", 1, 0}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_a_client_does_not_link_to_a_consumer_child(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "client", .kind = "client"},
        {.id = 0x2, .parent = 0x1, .service = "consumer", .kind = "consumer"},
    };
    check_rows(rows, N(rows), NULL, 0);
}

static void test_uninstrumented_peers_and_loopback_are_linked(void)
{
    const vt_span peer[] = {
        {.id = 0x1, .service = "app", .kind = "server"},
        {.id = 0x2, .parent = 0x1, .service = "app", .kind = "client", .remote = "mysql"},
        {.id = 0x3, .parent = 0x1, .service = "app", .kind = "client", .remote = "mysql"},
    };
    const want_link want1[] = {{"app", "mysql", 2, 0}};
    check_rows(peer, N(peer), want1, N(want1));
    const vt_span loop_server[] = {
        {.id = 0x1, .service = "service", .kind = "server", .remote = "service"}};
    const want_link want2[] = {{"service", "service", 1, 0}};
    check_rows(loop_server, N(loop_server), want2, N(want2));
    const vt_span loop_client[] = {
        {.id = 0x1, .service = "service", .kind = "client", .remote = "service"}};
    check_rows(loop_client, N(loop_client), want2, N(want2));
}

static void test_kindless_spans_with_both_names_count_as_clients(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "some-client", .remote = "web"},
        {.id = 0x2, .parent = 0x1, .service = "web", .remote = "app", .flags = VT_ERROR},
        {.id = 0x3, .parent = 0x2, .service = "app", .remote = "db"},
        {.id = 0x4, .parent = 0x3, .service = "app"}, /* local: no link */
    };
    const want_link want[] = {
        {"some-client", "web", 1, 0}, {"web", "app", 1, 1}, {"app", "db", 1, 0}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_local_spans_between_link_to_the_nearest_server(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "client", .kind = "server"},
        {.id = 0x2, .parent = 0x1, .service = "client"}, /* a local fan-out span */
        {.id = 0x3, .parent = 0x2, .service = "server", .kind = "client", .flags = VT_ERROR},
        {.id = 0x4, .parent = 0x2, .service = "server", .kind = "client", .flags = VT_ERROR},
    };
    /* each client names a service other than its remote ancestor's: a link from
     * that ancestor is backfilled, without an error (there is no remote here) */
    const want_link want[] = {{"client", "server", 2, 0}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_single_spans_need_both_service_names(void)
{
    const char *kinds[] = {"server", "client"};
    for (int k = 0; k < 2; k++) {
        const vt_span a[] = {{.id = 0x1, .kind = kinds[k]}};
        check_rows(a, 1, NULL, 0);
        const vt_span b[] = {{.id = 0x1, .service = "x", .kind = kinds[k]}};
        check_rows(b, 1, NULL, 0);
        const vt_span c[] = {{.id = 0x1, .kind = kinds[k], .remote = "y"}};
        check_rows(c, 1, NULL, 0);
    }
}

static void test_headless_traces_link_only_related_spans(void)
{
    const vt_span unrelated[] = {
        {.id = 0xb, .parent = 0xa, .service = "service1", .kind = "server"},
        {.id = 0xc, .parent = 0xa, .service = "service2", .kind = "server"},
    };
    check_rows(unrelated, N(unrelated), NULL, 0);
    const vt_span related[] = {
        {.id = 0xb, .parent = 0xa, .service = "service1", .kind = "server"},
        {.id = 0xc, .parent = 0xb, .service = "service2", .kind = "server"},
    };
    const want_link want[] = {{"service1", "service2", 1, 0}};
    check_rows(related, N(related), want, N(want));
}

static void test_orphans_hang_under_the_root(void)
{
    /* Zipkin attaches a span whose parent is missing to the root, which makes
     * the root its remote ancestor. */
    const vt_span rows[] = {
        {.id = 0x1, .service = "gateway", .kind = "server"},
        {.id = 0x5, .parent = 0x99, .service = "worker", .kind = "server"},
    };
    const want_link want[] = {{"gateway", "worker", 1, 0}};
    check_rows(rows, N(rows), want, N(want));
}

static void test_service_names_are_compared_in_lower_case(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "Web", .kind = "client", .remote = "APP"},
        {.id = 0x2, .service = "web", .kind = "client", .remote = "app"},
    };
    vt_ctx c;
    vt_init(&c);
    twv_links l;
    twv_links_init(&l, 0);
    twv_trace t;
    twv_trace_init(&t);
    for (size_t i = 0; i < 2; i++) { /* two traces: one span each */
        vt_span one = rows[i];
        vt_reset(&c);
        vt_assemble(&c, &one, 1);
        CU_ASSERT_TRUE_FATAL(vt_trace(&c, 0, &t));
        CU_ASSERT_TRUE(twv_links_add_trace(&l, &t));
    }
    const want_link want[] = {{"web", "app", 2, 0}};
    check_links(&l, want, N(want));
    twv_trace_free(&t);
    twv_links_free(&l);
    vt_free(&c);
}

static void test_links_beyond_the_cap_are_counted_as_dropped(void)
{
    vt_ctx c;
    vt_init(&c);
    twv_links l;
    twv_links_init(&l, 2);
    twv_trace t;
    twv_trace_init(&t);
    const char *peers[] = {"a", "b", "c", "c"};
    for (size_t i = 0; i < 4; i++) {
        vt_span one = {.id = 0x1, .service = "x", .kind = "client", .remote = peers[i]};
        vt_reset(&c);
        vt_assemble(&c, &one, 1);
        CU_ASSERT_TRUE_FATAL(vt_trace(&c, 0, &t));
        CU_ASSERT_TRUE(twv_links_add_trace(&l, &t));
    }
    CU_ASSERT_EQUAL(l.n_rows, 2);
    CU_ASSERT_EQUAL(l.dropped, 2);
    twv_trace_free(&t);
    twv_links_free(&l);
    vt_free(&c);
}

/* ---- real fixtures ------------------------------------------------------------------------- */

static void check_file(const char *path, const want_link *want, size_t n_want)
{
    vt_ctx c;
    vt_init(&c);
    CU_ASSERT_EQUAL(vt_read_file(&c, &twb_reader_zipkin_v2_json, path), 0);
    twv_links l;
    twv_links_init(&l, 0);
    twv_trace t;
    twv_trace_init(&t);
    for (size_t g = 0; g < c.g.n_groups; g++) {
        CU_ASSERT_TRUE_FATAL(vt_trace(&c, g, &t));
        CU_ASSERT_TRUE(twv_links_add_trace(&l, &t));
    }
    check_links(&l, want, n_want);
    twv_trace_free(&t);
    twv_links_free(&l);
    vt_free(&c);
}

static void test_real_fixtures_give_the_links_of_zipkins_rules(void)
{
    /* ascend: the mobile-gateway root server has no known caller; both of its
     * clients have a shared server child, which gives the link; the
     * content-service client has no remote name; local spans do not link. */
    const want_link ascend[] = {{"mobile-gateway", "auth-service", 1, 0},
                                {"mobile-gateway", "content-service", 1, 0}};
    check_file(R "zipkin-lens__testdata__ascend.json", ascend, N(ascend));
    /* skew: servicea's client -> serviceb's shared server; the async span is local */
    const want_link skew[] = {{"servicea", "serviceb", 1, 0}};
    check_file(R "zipkin-lens__testdata__skew.json", skew, N(skew));
    /* messaging: frontend's producer -> rabbitmq, rabbitmq -> backend's consumer */
    const want_link messaging[] = {{"frontend", "rabbitmq", 1, 0}, {"rabbitmq", "backend", 1, 0}};
    check_file(R "zipkin-lens__testdata__messaging.json", messaging, N(messaging));
    /* simple-db-p6: four childless clients to the uninstrumented app_db */
    const want_link db[] = {{"bootifulmeters", "app_db", 4, 0}};
    check_file(R "zipkin-lens__testdata__simple-db-p6.json", db, N(db));
    /* netflix: a client and a server per RPC (the server is backfilled as
     * shared, the kind-less fragments merge into the client); evcache_g is
     * an uninstrumented peer of a childless client */
    const want_link netflix[] = {
        {"apip", "evcache_g", 1, 0}, {"apip", "api", 1, 0}, {"api", "session_logs", 1, 0}};
    check_file(R "zipkin-ui__testdata__netflix.json", netflix, N(netflix));
    /* messaging-kafka: the root is servicea's consumer (kafka -> servicea); 9
     * producers of servicea to kafka; 6 more consumers, 3 per service; the
     * error tags are on local on-message spans, which do not link */
    const want_link kafka[] = {
        {"kafka", "servicea", 4, 0}, {"kafka", "serviceb", 3, 0}, {"servicea", "kafka", 9, 0}};
    check_file(R "zipkin-lens__testdata__messaging-kafka.json", kafka, N(kafka));
    /* zipkin2-chinese: one client whose parent is not in the file (no root:
     * Zipkin's synthetic root), remote service known, error tag set */
    const want_link chinese[] = {{"\xe8\xae\xa2\xe5\x8d\x95\xe7\xbb\xb4\xe6\x8a\xa4\xe6\x9c\x8d"
                                  "\xe5\x8a\xa1",
                                  "\xe4\xb8\xaa\xe4\xba\xba\xe4\xbf\xa1\xe6\x81\xaf\xe6\x9c\x8d"
                                  "\xe5\x8a\xa1",
                                  1, 1}};
    check_file(TW_REAL_FIXTURES "/openzipkin__zipkin/benchmarks__src__test__resources__zipkin2-"
                                "chinese.json",
               chinese, N(chinese));
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("bridge/views/links", NULL, NULL);
    CU_add_test(s, "an RPC chain with shared ids links each hop",
                test_rpc_chain_with_shared_ids_links_each_hop);
    CU_add_test(s, "a client's error counts for a split RPC, not a shared one",
                test_client_error_counts_for_a_split_rpc_not_a_shared_one);
    CU_add_test(s, "a shared server without parent id still links",
                test_a_shared_server_without_parent_id_still_links);
    CU_add_test(s, "messaging links through the broker only",
                test_messaging_links_through_the_broker_only);
    CU_add_test(s, "a producer links to a server child", test_a_producer_links_to_a_server_child);
    CU_add_test(s, "a client does not link to a consumer child",
                test_a_client_does_not_link_to_a_consumer_child);
    CU_add_test(s, "uninstrumented peers and loopback are linked",
                test_uninstrumented_peers_and_loopback_are_linked);
    CU_add_test(s, "kind-less spans with both names count as clients",
                test_kindless_spans_with_both_names_count_as_clients);
    CU_add_test(s, "local spans between link to the nearest server",
                test_local_spans_between_link_to_the_nearest_server);
    CU_add_test(s, "single spans need both service names",
                test_single_spans_need_both_service_names);
    CU_add_test(s, "headless traces link only related spans",
                test_headless_traces_link_only_related_spans);
    CU_add_test(s, "orphans hang under the root", test_orphans_hang_under_the_root);
    CU_add_test(s, "service names are compared in lower case",
                test_service_names_are_compared_in_lower_case);
    CU_add_test(s, "links beyond the cap are counted as dropped",
                test_links_beyond_the_cap_are_counted_as_dropped);
    CU_add_test(s, "real fixtures give the links of Zipkin's rules",
                test_real_fixtures_give_the_links_of_zipkins_rules);
}
