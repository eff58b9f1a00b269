/*
 * frame_chart.c - the numbers behind the frame-time picture (see
 * frame_chart.h).
 */
#include "frame_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static double frame_ms(const an_frame *f) { return (double)an_frame_ns(f) / 1e6; }

int an_frame_chart_compute(an_frame_chart *c, const an_capture *m,
                           size_t max_cols)
{
    memset(c, 0, sizeof *c);
    size_t n = m->nframes;
    if (an_frame_stats_compute(&c->fs, m) != CAP_OK)
        return -1;
    if (!n || !max_cols)
        return 0;
    size_t ncols = n < max_cols ? n : max_cols;
    double *w = malloc(AN_STUTTER_WINDOW * sizeof *w);
    c->cols = calloc(ncols, sizeof *c->cols);
    if (!w || !c->cols)
        goto fail;
    c->ncols = ncols;
    for (size_t k = 0; k < ncols; k++) {
        an_frame_col *col = &c->cols[k];
        /* k < max_cols, so k * n does not overflow for any frame count
         * a capture can hold */
        col->first = k * n / ncols;
        col->count = (k + 1) * n / ncols - col->first;
        col->min_ms = INFINITY;
        col->max_ms = -INFINITY;
        col->gpu_min_ms = col->gpu_max_ms = NAN;
        for (size_t i = col->first; i < col->first + col->count; i++) {
            const an_frame *f = &m->frames[i];
            double v = frame_ms(f);
            col->min_ms = fmin(col->min_ms, v);
            col->max_ms = fmax(col->max_ms, v);
            c->max_ms = fmax(c->max_ms, v);
            if (f->has_gpu) {
                double g = (double)f->gpu_ns / 1e6;
                col->gpu_min_ms = isnan(col->gpu_min_ms) ? g : fmin(col->gpu_min_ms, g);
                col->gpu_max_ms = isnan(col->gpu_max_ms) ? g : fmax(col->gpu_max_ms, g);
                c->max_ms = fmax(c->max_ms, g);
                c->has_gpu = 1;
            }
        }
    }
    /* the stutters */
    size_t half = AN_STUTTER_WINDOW / 2, cap = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = i >= half ? i - half : 0;
        size_t hi = i + half + 1 < n ? i + half + 1 : n;
        size_t k = 0;
        for (size_t j = lo; j < hi; j++)
            w[k++] = frame_ms(&m->frames[j]);
        cap_stats_sort(w, k);
        double med = cap_stats_quantile_sorted(w, k, 0.5);
        double v = frame_ms(&m->frames[i]);
        if (!(v > AN_STUTTER_FACTOR * med))
            continue;
        if (c->nstutters == cap) {
            cap = cap ? cap * 2 : 16;
            an_stutter *s = realloc(c->stutters, cap * sizeof *s);
            if (!s)
                goto fail;
            c->stutters = s;
        }
        c->stutters[c->nstutters++] = (an_stutter){i, v, med};
    }
    free(w);
    return 0;
fail:
    free(w);
    an_frame_chart_free(c);
    return -1;
}

void an_frame_chart_free(an_frame_chart *c)
{
    free(c->cols);
    free(c->stutters);
    memset(c, 0, sizeof *c);
}
