/*
 * hist.h - a log-bucketed histogram of positive integers (self times in
 * ns), the bounded-memory stand-in for a scope's exact per-frame series
 * (model.h: an_options.series_budget). Internal to the analysis library.
 *
 * A bucket holds the values whose double has the same exponent and the
 * same top AN_HIST_BITS bits of mantissa: [a, a (1 + 2^-7)) at most, read
 * back as its middle, so any value read back (a quantile) is within
 * 2^-8 = 0.39 % (AN_HIST_REL_ERR, stated as 0.5 %) of a value that was
 * added (or, between two order statistics, of the interpolation of two
 * such values); values below 256 ns are nearly exact. Only the range of
 * buckets a histogram has seen is held (4 bytes a bucket; a name whose
 * per-frame time varies by a factor of 2 spans 128 buckets). Zeros are
 * not stored: a quantile is asked over n values, and the n - count values
 * not added are zeros (frames where the scope did not run).
 */
#ifndef AN_HIST_H
#define AN_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AN_HIST_BITS 7         /* mantissa bits per bucket */
#define AN_HIST_REL_ERR 0.005  /* stated bound; 2^-(AN_HIST_BITS + 1) =
                                  0.39 % is the exact one */

typedef struct an_hist_side {
    int32_t lo;      /* bucket index of c[0] */
    uint32_t n;      /* buckets held */
    uint32_t *c;     /* counts, owned */
    uint64_t count;  /* values held */
} an_hist_side;

typedef struct an_hist {
    /* first, beside pos: what an_hist_add of a positive value touches
       (40 bytes in a row; the neg side, rarely used, after them) */
    uint64_t count;  /* values added */
    double sum;      /* their sum (ns): exact below 2^53 ns (104 days),
                        never saturating (the exact series' means are
                        sums of doubles too) */
    an_hist_side pos;  /* v > 0 */
    an_hist_side *neg; /* |v| of v < 0, owned, NULL until the first (a
                          crafted file's GPU spans can hold negative self
                          times): 48 bytes a histogram, of which a row
                          holds one (issue 46: memory a distinct name) */
} an_hist;

/* The bucket of magnitude v: the exponent and the top AN_HIST_BITS bits
 * of the mantissa of v as a double (no logarithm to compute). */
static inline int32_t an_hist_bucket_of(uint64_t v)
{
    double d = (double)v; /* exact below 2^53, within 2^-53 above */
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return (int32_t)(b >> (52 - AN_HIST_BITS));
}

/* The buckets h holds (4 bytes each), both sides. */
static inline size_t an_hist_nbuckets(const an_hist *h)
{
    return (size_t)h->pos.n + (h->neg ? h->neg->n : 0);
}

/* an_hist_add's every case (out of line). */
int an_hist_add_any(an_hist *h, int64_t v);

/* Add v (ns). v == 0 is not stored (a zero). Returns 0, or -1 when out of
 * memory (h unchanged). Inline for the usual case (a positive value in a
 * bucket held: the ranking adds one a row and a frame). */
static inline int an_hist_add(an_hist *h, int64_t v)
{
    if (v > 0) {
        uint32_t k = (uint32_t)(an_hist_bucket_of((uint64_t)v) - h->pos.lo);
        if (k < h->pos.n) {
            h->pos.c[k]++;
            h->pos.count++;
            h->count++;
            h->sum += (double)v;
            return 0;
        }
    }
    return an_hist_add_any(h, v);
}

/* The p-quantile (0..1) of n values: the `count` added and n - count
 * zeros (when count > n, the count values alone), by the rule of cap_stats_quantile_sorted ((n - 1) p, linear
 * between neighbours). NAN when n == 0. In ns. */
double an_hist_quantile(const an_hist *h, uint64_t n, double p);

/* Add every value of `from` to `to` (the same buckets as adding them one
 * by one; the sum the same while every partial sum stays below 2^53).
 * Returns 0, or -1 when out of memory (to then holds part of them: free
 * it). */
int an_hist_merge(an_hist *to, const an_hist *from);

/* The values h holds, ascending, one entry a bucket that holds any:
 * the bucket's middle (what a quantile reads back; negated for the
 * negative side, which comes first) into mid[i] and its count into
 * count[i], for the first `cap` of them. Zeros are not held. Returns how
 * many buckets hold values (a call with cap 0 sizes the arrays). */
size_t an_hist_buckets(const an_hist *h, double *mid, uint64_t *count,
                       size_t cap);

/* Release h's buckets and zero it. */
void an_hist_free(an_hist *h);

#endif
