/*
 * bins.h - elapsed time cut into bins (--over-time, and the load's
 * over-time hint): how many bins and how wide, and a time's bin. Pure
 * functions of numbers: no model, no report.
 */
#ifndef AN_BINS_H
#define AN_BINS_H

#include <stddef.h>

#define AN_OT_MAX_BINS 1000 /* never more bins than this */

/* The bins over `span` ns: bin_seconds > 0 asks bins of that width
 * (fewer than AN_OT_MAX_BINS: the width grows to keep it so), else
 * `bins` of them (clamped to 1..AN_OT_MAX_BINS; < 1 means 10). Returns
 * how many and sets *width (ns, at least 1 when span is 0). */
int an_bins_choose(double span, int bins, double bin_seconds, double *width);

/* The bin of x (a time from the first bin's start, in bin widths): the
 * last bin for x past the end or not a number. */
size_t an_bins_index(double x, int bins);

#endif
