/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_http_tls.c: suite "report/http_tls": the HTTP
 * reporters over HTTPS (libcurl with OpenSSL) against an HTTPS receiver
 * (libmicrohttpd with GnuTLS, test_http_receiver.c): a CA file, a client
 * certificate and key (mutual TLS, verified by the receiver against the
 * CA), and the failures that must not be retried: a server the CA file does
 * not vouch for, a client key that does not match its certificate.
 *
 * The certificates are made here with OpenSSL (an EC P-256 CA, a server
 * certificate for IP 127.0.0.1, a client certificate), valid for one day and
 * written to a temporary directory, so no key material lives in the tree
 * and nothing expires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "harness.h"
#include "test_http_receiver.h"
#include "tracewire/tracewire.h"

/* ---- certificates --------------------------------------------------------------------------- */

typedef struct pem_pair {
    char *cert;
    char *key;
} pem_pair;

static char tmp_dir[64];
static pem_pair ca, server, client, stranger_ca;
static char ca_path[128], client_cert_path[128], client_key_path[128], stranger_key_path[128];

static EVP_PKEY *new_key(void)
{
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    if (ctx && EVP_PKEY_keygen_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) > 0)
        EVP_PKEY_keygen(ctx, &key);
    EVP_PKEY_CTX_free(ctx);
    return key;
}

static char *bio_text(BIO *bio)
{
    char *data;
    long len = BIO_get_mem_data(bio, &data);
    return g_strndup(data, (gsize)len);
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    bool ok = ext && X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/* A certificate for @cn signed by (@issuer, @issuer_key), or self-signed
 * when @issuer is NULL. Returns the PEM pair; the key and X509 through
 * *key_out / *cert_out when asked (caller frees). */
static bool make_cert(const char *cn, bool is_ca, const char *san, const char *usage, X509 *issuer,
                      EVP_PKEY *issuer_key, pem_pair *out, X509 **cert_out, EVP_PKEY **key_out)
{
    static long serial = 1;
    EVP_PKEY *key = new_key();
    X509 *cert = X509_new();
    bool ok = key && cert && X509_set_version(cert, 2) &&
              ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++) &&
              X509_gmtime_adj(X509_getm_notBefore(cert), -3600) &&
              X509_gmtime_adj(X509_getm_notAfter(cert), 86400) && X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    ok = ok &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) &&
         X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
    X509 *signer = issuer ? issuer : cert;
    ok =
        ok && add_ext(cert, signer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (is_ca)
        ok = ok && add_ext(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    else
        ok = ok && add_ext(cert, signer, NID_key_usage, "critical,digitalSignature") &&
             add_ext(cert, signer, NID_ext_key_usage, usage);
    if (san)
        ok = ok && add_ext(cert, signer, NID_subject_alt_name, san);
    ok = ok && X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0;
    if (ok) {
        BIO *cb = BIO_new(BIO_s_mem());
        BIO *kb = BIO_new(BIO_s_mem());
        ok = cb && kb && PEM_write_bio_X509(cb, cert) &&
             PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL);
        if (ok) {
            out->cert = bio_text(cb);
            out->key = bio_text(kb);
        }
        BIO_free(cb);
        BIO_free(kb);
    }
    if (ok && cert_out)
        *cert_out = cert;
    else
        X509_free(cert);
    if (ok && key_out)
        *key_out = key;
    else
        EVP_PKEY_free(key);
    return ok;
}

static bool write_file(char *path, size_t size, const char *name, const char *text)
{
    snprintf(path, size, "%s/%s", tmp_dir, name);
    return g_file_set_contents(path, text, -1, NULL);
}

static int suite_init(void)
{
    if (getenv("TW_TEST_LOG"))
        tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_DEBUG);
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");
    snprintf(tmp_dir, sizeof tmp_dir, "%s", "/tmp/tw-http-tls.XXXXXX");
    if (!mkdtemp(tmp_dir))
        return 1;
    X509 *ca_cert = NULL;
    EVP_PKEY *ca_key = NULL;
    bool ok =
        make_cert("tracewire test CA", true, NULL, NULL, NULL, NULL, &ca, &ca_cert, &ca_key) &&
        make_cert("127.0.0.1", false, "IP:127.0.0.1,DNS:localhost", "serverAuth", ca_cert, ca_key,
                  &server, NULL, NULL) &&
        make_cert("reporter", false, NULL, "clientAuth", ca_cert, ca_key, &client, NULL, NULL) &&
        make_cert("another CA", true, NULL, NULL, NULL, NULL, &stranger_ca, NULL, NULL);
    X509_free(ca_cert);
    EVP_PKEY_free(ca_key);
    ok = ok && write_file(ca_path, sizeof ca_path, "ca.pem", ca.cert) &&
         write_file(client_cert_path, sizeof client_cert_path, "client.pem", client.cert) &&
         write_file(client_key_path, sizeof client_key_path, "client.key", client.key) &&
         write_file(stranger_key_path, sizeof stranger_key_path, "stranger.key", stranger_ca.key);
    return ok ? 0 : 1;
}

static int suite_cleanup(void)
{
    const char *paths[] = {ca_path, client_cert_path, client_key_path, stranger_key_path};
    for (size_t i = 0; i < 4; i++) {
        if (*paths[i])
            unlink(paths[i]);
    }
    rmdir(tmp_dir);
    pem_pair *pairs[] = {&ca, &server, &client, &stranger_ca};
    for (size_t i = 0; i < 4; i++) {
        g_free(pairs[i]->cert);
        g_free(pairs[i]->key);
    }
    return 0;
}

/* ---- tests ------------------------------------------------------------------------------------
 */

typedef struct result {
    uint64_t sent, failed;
    size_t arrived;
    size_t connections;
    bool has_client_cert;
    char authorization[64];
} result;

/* Reports 3 spans to an HTTPS receiver through the OTLP reporter set up by
 * @setup, flushes, and says what happened. */
static result run(void (*setup)(tw_reporter_options *o), bool asks_client_cert)
{
    result res = {0};
    http_receiver rx;
    http_tls tls = {server.cert, server.key, asks_client_cert ? ca.cert : NULL};
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, &tls));
    tw_reporter_options *o = tw_reporter_options_new();
    char url[128];
    snprintf(url, sizeof url, "%s/v1/traces", rx.base_url);
    tw_reporter_options_set_endpoint(o, url);
    tw_reporter_options_set_flush_interval_ms(o, 600000);
    tw_reporter_options_set_retry_backoff_ms(o, 5, 2000);
    /* Generous: a first handshake (and loading the system CA store) under
     * valgrind takes seconds; a normal run takes milliseconds. */
    tw_reporter_options_set_http_timeouts_ms(o, 30000, 30000);
    setup(o);
    tw_error *err = NULL;
    tw_reporter *r = tw_reporter_otlp_http_new(o, &err);
    tw_reporter_options_free(o);
    CU_ASSERT_PTR_NOT_NULL(r);
    if (err) {
        fprintf(stderr, "%s\n", tw_error_message(err));
        tw_error_free(err);
    }
    if (r) {
        tw_tracer_options *to = tw_tracer_options_new();
        tw_tracer_options_set_service(to, "tls-test");
        tw_tracer_options_set_reporter(to, r);
        tw_tracer *t = tw_tracer_new(to, NULL);
        tw_tracer_options_free(to);
        for (int i = 0; i < 3; i++)
            tw_span_finish(tw_span_start(t, "secure", NULL));
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 60000), TW_OK);
        res.sent = tw_reporter_counter(r, TW_COUNTER_SPANS_SENT);
        res.failed = tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT);
        res.arrived = http_receiver_arrived(&rx);
        /* Settled: the server accepts on its own thread, so a connection
         * the client made (and gave up on) may still wait to be counted. */
        res.connections = http_receiver_connections_settled(&rx);
        const http_request *q = http_receiver_request(&rx, 0);
        if (q) {
            res.has_client_cert = q->has_client_cert;
            const char *auth = http_request_header(q, "Authorization");
            snprintf(res.authorization, sizeof res.authorization, "%s", auth ? auth : "");
        }
        tw_tracer_free(t);
    }
    http_receiver_stop(&rx);
    return res;
}

static void setup_mutual_tls(tw_reporter_options *o)
{
    CU_ASSERT_EQUAL(tw_reporter_options_set_ca_file(o, ca_path), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_client_cert(o, client_cert_path, client_key_path),
                    TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_basic_auth(o, "user", "pass"), TW_OK);
}

static void setup_ca_only(tw_reporter_options *o)
{
    CU_ASSERT_EQUAL(tw_reporter_options_set_ca_file(o, ca_path), TW_OK);
}

static void setup_system_store(tw_reporter_options *o)
{
    (void)o; /* the system's CAs do not know the test CA */
}

static void setup_mismatched_key(tw_reporter_options *o)
{
    CU_ASSERT_EQUAL(tw_reporter_options_set_ca_file(o, ca_path), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_client_cert(o, client_cert_path, stranger_key_path),
                    TW_OK);
}

static void test_mutual_tls_with_ca_file_and_client_cert_sends(void)
{
    result res = run(setup_mutual_tls, true);
    CU_ASSERT_EQUAL(res.sent, 3);
    CU_ASSERT_EQUAL(res.failed, 0);
    CU_ASSERT(res.has_client_cert);
    CU_ASSERT_STRING_EQUAL(res.authorization, "Basic dXNlcjpwYXNz");
}

static void test_ca_file_without_client_cert_sends_without_one(void)
{
    result res = run(setup_ca_only, true);
    CU_ASSERT_EQUAL(res.sent, 3);
    CU_ASSERT_FALSE(res.has_client_cert);
}

static void test_unverified_server_fails_without_retry(void)
{
    result res = run(setup_system_store, false);
    CU_ASSERT_EQUAL(res.sent, 0);
    CU_ASSERT_EQUAL(res.failed, 3);
    CU_ASSERT_EQUAL(res.arrived, 0);     /* the handshake never finished */
    CU_ASSERT_EQUAL(res.connections, 1); /* not retried: the verdict would not change */
}

static void test_client_key_not_matching_its_cert_fails(void)
{
    result res = run(setup_mismatched_key, true);
    CU_ASSERT_EQUAL(res.sent, 0);
    CU_ASSERT_EQUAL(res.failed, 3);
    CU_ASSERT_EQUAL(res.arrived, 0);
    CU_ASSERT_EQUAL(res.connections, 1);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/http_tls", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_mutual_tls_with_ca_file_and_client_cert_sends);
    CU_ADD_TEST(suite, test_ca_file_without_client_cert_sends_without_one);
    CU_ADD_TEST(suite, test_unverified_server_fails_without_retry);
    CU_ADD_TEST(suite, test_client_key_not_matching_its_cert_fails);
}
