/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/tls.h: the thread-local storage class of the hot path (internal).
 */
#ifndef TW_TLS_H
#define TW_TLS_H

/* Thread-local state of the hot path (span handle pool, id generator, record
 * pool, scope stacks). The initial-exec model turns each access into one
 * instruction instead of a __tls_get_addr call from a shared library (~50
 * instructions per span, callgrind). It takes static TLS space, which glibc
 * reserves for libraries loaded with dlopen too (nginx-style modules):
 * tracewire uses 168 bytes of it (readelf -l libtracewire.so: the TLS
 * segment), 32 of them for the scope stacks. */
#if defined(__GNUC__)
#define TW__TLS _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define TW__TLS _Thread_local
#endif

#endif /* TW_TLS_H */
