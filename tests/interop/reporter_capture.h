/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/reporter_capture.h: the reporter mode of jaeger_udp_driver
 * (see reporter_capture.c).
 */
#ifndef TW_TESTS_INTEROP_REPORTER_CAPTURE_H
#define TW_TESTS_INTEROP_REPORTER_CAPTURE_H

/* Sends spans through the real Jaeger UDP reporter to a loopback socket and
 * writes what arrived (DIR/NNN.bin) and DIR/expected.json. Returns the exit
 * status: 0 on success, 1 on failure (with the reason on stderr). */
int reporter_capture(const char *dir);

#endif /* TW_TESTS_INTEROP_REPORTER_CAPTURE_H */
