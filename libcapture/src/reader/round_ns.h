/*
 * round_ns.h - llround without the library call, for the reader's tick to
 * ns conversions (internal to the reader; tests/test_round_ns.c checks it
 * against llround).
 */
#ifndef CAP_READER_ROUND_NS_H
#define CAP_READER_ROUND_NS_H

#include <math.h>
#include <stdint.h>

#include "capture/cap_reader.h"

/* llround(x) without the library call, for the conversions done per event:
 * the same result for every x (halves round away from zero); round_pos for
 * x known to be in the usual case, 0 <= x < 2^52 (the reader knows it from
 * the tick count: fast_lim in reader.c). There x is n + f (n integral, f
 * a multiple of x's ulp u <= 1/2), and round_pos adds h = 1/2 - 2^-54, the
 * largest double below a half, and truncates. For f >= 1/2 the exact sum
 * is in [n + 1 - 2^-54, n + 1.5): it rounds to n + 1 or past it (for n = 0
 * 1 - 2^-54 is a tie between 1 - 2^-53 and 1, and goes to 1, the even
 * one). For f < 1/2, f <= 1/2 - u and the sum is at least u + 2^-54 below
 * n + 1, more than half the spacing of the doubles just below n + 1 (u
 * when n >= 1, 2^-53 when n = 0): it rounds below n + 1. (Adding 0.5
 * would take 1/2 - 2^-54 to 1.) tests/test_round_ns.c checks it. */
static inline int64_t round_pos(double x) /* 0 <= x < 2^52 */
{
    return cap__round_pos(x); /* the public header's, one for both */
}

/* Any x: the rounding the public header's tick conversions use
 * (cap_ticks_ns), so the reader and a program converting cap_scope_rec's
 * ticks get the same nanosecond. */
static inline int64_t round_ns(double x)
{
    return cap__round_ns(x);
}

#endif
