/* hist.c - log-bucketed histogram (hist.h). */
#include "hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The middle of bucket i. */
static double bucket_value(int32_t i)
{
    uint64_t lo = (uint64_t)i << (52 - AN_HIST_BITS),
             hi = (uint64_t)(i + 1) << (52 - AN_HIST_BITS);
    double a, b;
    memcpy(&a, &lo, sizeof a);
    memcpy(&b, &hi, sizeof b);
    return a + (b - a) / 2;
}

/* Make h's buckets span [lo, hi), which holds the range it has. */
static int side_span(an_hist_side *h, int32_t lo, int32_t hi)
{
    uint32_t n = (uint32_t)(hi - lo);
    uint32_t *c = calloc(n, sizeof *c);
    if (!c)
        return -1;
    if (h->n)
        memcpy(c + (h->lo - lo), h->c, h->n * sizeof *c);
    free(h->c);
    h->c = c;
    h->lo = lo;
    h->n = n;
    return 0;
}

static int side_add(an_hist_side *h, uint64_t v)
{
    int32_t b = an_hist_bucket_of(v);
    if (h->n == 0 || b < h->lo || b >= h->lo + (int32_t)h->n) {
        int32_t lo = b, hi = b + 1;
        if (h->n) {
            /* grow by a margin, so that a drifting value does not
             * reallocate on every new bucket */
            int32_t end = h->lo + (int32_t)h->n;
            int32_t margin = (int32_t)(h->n / 4) + 8;
            lo = b < h->lo ? b - margin : h->lo;
            hi = b >= end ? b + 1 + margin : end;
        }
        if (side_span(h, lo, hi) != 0)
            return -1;
    }
    h->c[b - h->lo]++;
    h->count++;
    return 0;
}

/* h's negative side, made when missing; NULL when out of memory. */
static an_hist_side *neg_side(an_hist *h)
{
    if (!h->neg)
        h->neg = calloc(1, sizeof *h->neg);
    return h->neg;
}

int an_hist_add_any(an_hist *h, int64_t v)
{
    if (v == 0)
        return 0;
    uint64_t mag = v > 0 ? (uint64_t)v : (uint64_t)0 - (uint64_t)v;
    an_hist_side *side = v > 0 ? &h->pos : neg_side(h);
    if (!side || side_add(side, mag) != 0)
        return -1;
    h->count++;
    h->sum += (double)v;
    return 0;
}

/* The r-th smallest (0-based) value of a side, by magnitude. */
static double side_stat(const an_hist_side *h, uint64_t r)
{
    uint64_t seen = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        seen += h->c[i];
        if (r < seen)
            return bucket_value(h->lo + (int32_t)i);
    }
    return 0.0; /* not reached: r < h->count */
}

/* The k-th smallest (0-based) of n values: negatives, zeros, positives. */
static double order_stat(const an_hist *h, uint64_t n, uint64_t k)
{
    uint64_t zeros = n > h->count ? n - h->count : 0;
    uint64_t negs = h->neg ? h->neg->count : 0;
    if (k < negs)
        return -side_stat(h->neg, negs - 1 - k);
    k -= negs;
    if (k < zeros)
        return 0.0;
    k -= zeros;
    if (k >= h->pos.count) /* n < count: the largest */
        k = h->pos.count ? h->pos.count - 1 : 0;
    return h->pos.count ? side_stat(&h->pos, k) : 0.0;
}

double an_hist_quantile(const an_hist *h, uint64_t n, double p)
{
    if (n == 0 || !(p >= 0.0 && p <= 1.0))
        return NAN;
    double pos = (double)(n - 1) * p;
    double fl = floor(pos);
    uint64_t j = (uint64_t)fl;
    double f = pos - fl;
    if (j >= n - 1) {
        j = n - 1;
        f = 0.0;
    }
    double a = order_stat(h, n, j);
    if (f == 0.0)
        return a;
    double b = order_stat(h, n, j + 1);
    return a == b ? a : a + f * (b - a);
}

static int side_merge(an_hist_side *to, const an_hist_side *from)
{
    if (from->n == 0)
        return 0;
    if (to->n == 0 || from->lo < to->lo ||
        from->lo + (int32_t)from->n > to->lo + (int32_t)to->n) {
        int32_t lo = from->lo, hi = from->lo + (int32_t)from->n;
        if (to->n) {
            lo = to->lo < lo ? to->lo : lo;
            hi = to->lo + (int32_t)to->n > hi ? to->lo + (int32_t)to->n : hi;
        }
        if (side_span(to, lo, hi) != 0)
            return -1;
    }
    for (uint32_t i = 0; i < from->n; i++)
        to->c[from->lo - to->lo + (int32_t)i] += from->c[i];
    to->count += from->count;
    return 0;
}

int an_hist_merge(an_hist *to, const an_hist *from)
{
    if (side_merge(&to->pos, &from->pos) != 0)
        return -1;
    if (from->neg && from->neg->n &&
        (!neg_side(to) || side_merge(to->neg, from->neg) != 0))
        return -1;
    to->count += from->count;
    to->sum += from->sum;
    return 0;
}

size_t an_hist_buckets(const an_hist *h, double *mid, uint64_t *count,
                       size_t cap)
{
    size_t k = 0;
    for (uint32_t i = h->neg ? h->neg->n : 0; i-- > 0;)
        if (h->neg->c[i]) {
            if (k < cap) {
                mid[k] = -bucket_value(h->neg->lo + (int32_t)i);
                count[k] = h->neg->c[i];
            }
            k++;
        }
    for (uint32_t i = 0; i < h->pos.n; i++)
        if (h->pos.c[i]) {
            if (k < cap) {
                mid[k] = bucket_value(h->pos.lo + (int32_t)i);
                count[k] = h->pos.c[i];
            }
            k++;
        }
    return k;
}

void an_hist_free(an_hist *h)
{
    free(h->pos.c);
    if (h->neg)
        free(h->neg->c);
    free(h->neg);
    memset(h, 0, sizeof *h);
}
