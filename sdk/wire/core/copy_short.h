/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk/wire/core/copy_short.h: tw__copy_short, the one short-copy helper of
 * the decoders that store tag keys and values (span_data.c, the Jaeger Thrift
 * decoder): most are under 32 bytes, where a libc memcpy call costs more than
 * the copy.
 */
#ifndef TW_WIRE_CORE_COPY_SHORT_H
#define TW_WIRE_CORE_COPY_SHORT_H

#include <stdint.h>
#include <string.h>

/* memcpy of @n bytes without a libc call for short copies: whole words, the
 * last one overlapping, no load or store outside [src, src + n) and
 * [dst, dst + n). Longer copies go to memcpy, which is faster there. */
static inline void tw__copy_short(void *dstv, const void *srcv, size_t n)
{
    char *dst = dstv;
    const char *src = srcv;
    if (n > 32) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t x;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, src + i, 8);
            memcpy(dst + i, &x, 8);
        }
        memcpy(&x, src + n - 8, 8);
        memcpy(dst + n - 8, &x, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, src, 4);
        memcpy(&y, src + n - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + n - 4, &y, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n >> 1] = src[n >> 1];
        dst[n - 1] = src[n - 1];
    }
}

#endif
