/*
 * round_ns.h - llround without the library call, for the reader's tick to
 * ns conversions (internal to the reader; tests/test_round_ns.c checks it
 * against llround).
 */
#ifndef CAP_READER_ROUND_NS_H
#define CAP_READER_ROUND_NS_H

#include <math.h>
#include <stdint.h>

/* llround(x) without the library call, for the conversions done per event:
 * the same result for every x (halves round away from zero); round_pos for
 * x known to be in the usual case, 0 <= x < 2^52 (the reader knows it from
 * the tick count: fast_lim in reader.c). There t = (int64_t)x is floor(x),
 * and x - t is exact (x itself when t is 0; otherwise t <= x < t + 1 <= 2t,
 * Sterbenz), so comparing it with 0.5 rounds as llround does. */
static inline int64_t round_pos(double x) /* 0 <= x < 2^52 */
{
    int64_t t = (int64_t)x;
    return t + (x - (double)t >= 0.5);
}

static inline int64_t round_ns(double x)
{
    if (x >= 0 && x < 0x1p52) /* the usual case: x - t is exact */
        return round_pos(x);
    double a = x < 0 ? -x : x;
    if (!(a < 0x1p52)) /* integral already (or NaN): rare */
        return (int64_t)llround(x);
    if (a < 0.5)
        return 0;
    int64_t k = (int64_t)(a + 0.5);
    if ((double)k - a > 0.5) /* a + 0.5 was rounded up to the next integer;
                                exact subtraction (Sterbenz) */
        k--;
    return x < 0 ? -k : k;
}

#endif
