/*
 * test_round_ns.c - the reader's round_ns (tick to ns, per event) against
 * llround: every half-integer edge near 0, 2^k and the limits, each with
 * its neighbours; tick counts times the periods the reader meets, up to
 * its limit for round_pos; and random doubles of every exponent below
 * 2^62. round_pos, where its range holds, the same.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reader/round_ns.h"

static unsigned long checked, failed;

static void check(double x)
{
    if (!isfinite(x) || !(fabs(x) < 0x1p62))
        return;
    long long want = llround(x);
    int64_t got = round_ns(x);
    checked++;
    if (got != want && failed++ < 10)
        fprintf(stderr, "round_ns(%a) = %lld, llround %lld\n", x,
                (long long)got, want);
    if (x >= 0 && x < 0x1p52 && (got = round_pos(x)) != want &&
        failed++ < 10)
        fprintf(stderr, "round_pos(%a) = %lld, llround %lld\n", x,
                (long long)got, want);
}

/* x and its neighbours, both signs */
static void around(double x)
{
    double lo = x, hi = x;
    for (int i = 0; i < 4; i++) {
        check(lo);
        check(-lo);
        check(hi);
        check(-hi);
        lo = nextafter(lo, -INFINITY);
        hi = nextafter(hi, INFINITY);
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(void)
{
    around(0.0);
    around(0.5);
    around(1.0);
    around(1.5);
    for (int e = 0; e <= 62; e++) {
        double p = ldexp(1.0, e);
        around(p);
        around(p + 0.5);
        around(p - 0.5);
        around(p + 1.5);
    }
    for (int64_t k = 0; k < 100000; k++)
        around((double)k + 0.5);
    static const double periods[] = {0.4, 1.0 / 3.0, 0.1, 41.666666666666664,
                                     100.0, 0.4000000123, 2.5, 1e-3, 0.7};
    for (size_t i = 0; i < sizeof periods / sizeof *periods; i++) {
        for (int64_t d = -100000; d <= 100000; d++)
            check((double)d * periods[i]);
        for (int j = 0; j < 1000000; j++) {
            int64_t d = (int64_t)(next() >> (next() % 64));
            check((double)d * periods[i]);
            check((double)(uint64_t)d * periods[i]);
        }
        /* the reader's limit for round_pos (fast_lim): 2^51 / period */
        uint64_t lim = (uint64_t)(0x1p51 / periods[i]);
        for (uint64_t d = lim - 100000; d < lim; d++) {
            double x = (double)d * periods[i];
            if (!(x >= 0 && x < 0x1p52) && failed++ < 10)
                fprintf(stderr, "%llu * %a = %a\n", (unsigned long long)d,
                        periods[i], x);
            check(x);
        }
    }
    for (int j = 0; j < 4000000; j++) { /* random bits: every exponent */
        uint64_t b = next();
        double x;
        memcpy(&x, &b, sizeof x);
        check(x);
        /* a random half-integer below 2^52, and its neighbours */
        around((double)(next() >> (12 + next() % 52)) + 0.5);
    }
    printf("%lu values, %lu differ from llround\n", checked, failed);
    return failed != 0 || checked < 10000000;
}
