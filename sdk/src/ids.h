/*
 * ids.h: trace and span ids (internal). A fast per-thread generator
 * (xoshiro256**, never rand()) seeded from OpenSSL's CSPRNG, reseeded in a
 * forked child so parent and child never repeat each other's ids.
 * Never returns 0. Thread safety: any thread (state is thread-local).
 */
#ifndef TW_IDS_H
#define TW_IDS_H

#include <stddef.h>
#include <stdint.h>

uint64_t tw__random_id(void);
/* Fills @buf with @len bytes from the OS/OpenSSL CSPRNG (for client-uuid). */
void tw__random_bytes(void *buf, size_t len);

#endif /* TW_IDS_H */
