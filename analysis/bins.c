/* bins.c - elapsed time cut into bins (bins.h). */
#include "bins.h"

#include <math.h>

int an_bins_choose(double span, int bins, double bin_seconds, double *width)
{
    if (bin_seconds > 0) {
        *width = bin_seconds * 1e9;
        double want = ceil(span / *width);
        if (want > AN_OT_MAX_BINS) { /* a long capture, or a crafted one */
            want = AN_OT_MAX_BINS;
            *width = span / want;
        }
        return want < 1 ? 1 : (int)want;
    }
    if (bins > AN_OT_MAX_BINS)
        bins = AN_OT_MAX_BINS;
    if (bins < 1)
        bins = 10;
    *width = span / bins;
    if (*width <= 0)
        *width = 1;
    return bins;
}

size_t an_bins_index(double x, int bins)
{
    return x >= (double)bins || !(x >= 0) ? (size_t)bins - 1 : (size_t)x;
}
