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

cap_result an_frame_chart_compute(an_frame_chart *c, const an_capture *m,
                                  size_t max_cols)
{
    memset(c, 0, sizeof *c);
    size_t n = m->nframes;
    if (an_frame_stats_compute(&c->fs, m) != CAP_OK)
        return CAP_E_NOMEM;
    if (!n || !max_cols)
        return CAP_OK;
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
            if (an_frame_has_gpu(m, i)) {
                double g = (double)an_frame_gpu_ns(m, i) / 1e6;
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
    return CAP_OK;
fail:
    free(w);
    an_frame_chart_free(c);
    return CAP_E_NOMEM;
}

static void chart_counters_free(an_frame_chart *c)
{
    for (size_t k = 0; k < c->ncounters; k++)
        free(c->counters[k].col);
    free(c->counters);
    c->counters = NULL;
    c->ncounters = 0;
}

cap_result an_frame_chart_counters(an_frame_chart *c,
                                   const an_frame_counters *fc, size_t max)
{
    chart_counters_free(c);
    size_t n = fc->ntext < max ? fc->ntext : max;
    if (!n || !c->ncols)
        return CAP_OK;
    c->counters = calloc(n, sizeof *c->counters);
    if (!c->counters)
        return CAP_E_NOMEM;
    c->ncounters = n;
    for (size_t k = 0; k < n; k++) {
        const an_frame_counter *f = &fc->c[k];
        an_chart_counter *o = &c->counters[k];
        o->name = f->name;
        o->min = o->max = NAN;
        o->col = malloc(c->ncols * sizeof *o->col);
        if (!o->col) {
            chart_counters_free(c);
            return CAP_E_NOMEM;
        }
        for (size_t j = 0; j < c->ncols; j++) {
            const an_frame_col *col = &c->cols[j];
            double sum = 0;
            size_t cnt = 0;
            for (size_t i = col->first;
                 i < col->first + col->count && i < fc->nframes; i++)
                if (f->state[i] != AN_FC_NONE) {
                    sum += f->value[i];
                    cnt++;
                }
            double v = cnt ? sum / (double)cnt : NAN;
            o->col[j] = v;
            if (cnt) {
                o->min = isnan(o->min) ? v : fmin(o->min, v);
                o->max = isnan(o->max) ? v : fmax(o->max, v);
            }
        }
    }
    return CAP_OK;
}

void an_frame_chart_free(an_frame_chart *c)
{
    chart_counters_free(c);
    free(c->cols);
    free(c->stutters);
    memset(c, 0, sizeof *c);
}
