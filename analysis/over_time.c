/* over_time.c - frames binned by elapsed time: per-bin frame time, top
 * scopes' medians, counters' means, growth, and the verdicts (verdict.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"
#include "stats.h"

#define MS(ns) ((double)(ns) / 1e6)

_Static_assert(AN_OT_MAX_BINS <= UINT16_MAX, "a frame's bin in 16 bits");

static int starts_with_ci(const char *s, const char *p)
{
    return strncasecmp(s, p, strlen(p)) == 0;
}

/* Counters the profiler records about itself: its buffers warming up are
 * not the program's memory (docs/VERDICTS.md). */
static int is_profiler_counter(const char *name)
{
    return starts_with_ci(name, "cap.") || starts_with_ci(name, "libcapture.");
}

static int is_memory_counter(const char *name)
{
    static const char *keys[] = {"rss", "mem", "vram", "heap", "alloc"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcasestr(name, keys[i]))
            return 1;
    return 0;
}

void an_over_time_free(an_over_time *ot)
{
    if (!ot)
        return;
    for (size_t j = 0; j < ot->nscopes; j++) {
        free(ot->scopes[j].median);
        free(ot->scopes[j].p95);
    }
    for (size_t c = 0; c < ot->ncounters; c++) {
        free(ot->counters[c].mean);
        free(ot->counters[c].samples);
    }
    free(ot->bins);
    free(ot->scopes);
    free(ot->work.median);
    free(ot->wait.median);
    free(ot->counters);
    memset(ot, 0, sizeof *ot);
}

/* Bin count and width (ns) for the options, over a span of `span` ns. */
/* A time in ns computed in double, clamped to int64 (crafted files put
 * times anywhere). */
static int64_t to_ns(double t)
{
    if (!(t > -9.2e18))
        return INT64_MIN;
    return t < 9.2e18 ? (int64_t)t : INT64_MAX;
}

/* The top `max` scopes by self time (self time > 0) among those whose
 * is_wait equals `waits`, CPU and GPU together, appended to top[*n]. */
static void top_scopes(const an_capture *m, int waits, size_t max,
                       size_t *top, size_t *n)
{
    size_t start = *n;
    for (size_t k = 0; k < max; k++) {
        long best = -1;
        for (size_t s = 0; s < m->nscopes; s++) {
            int taken = 0;
            for (size_t j = start; j < *n; j++)
                taken |= top[j] == s;
            if (!taken && m->scopes[s].self_ns > 0 &&
                !!m->scopes[s].is_wait == waits &&
                (best < 0 || m->scopes[s].self_ns > m->scopes[best].self_ns))
                best = (long)s;
        }
        if (best < 0)
            break;
        top[(*n)++] = (size_t)best;
    }
}

/* ---- two groups of frames (report.h, AN_OT_GROUP_*) -------------------- */

/* 1.4826 MAD of sorted x[0..n) about its median, at least 0.005 (the
 * spread of a group of equal frames is not zero: 0.5 % in log time). */
static double robust_spread(const double *x, size_t n, double *dev)
{
    double m = cap_stats_median_sorted(x, n);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(x[i] - m);
    double s = 1.4826 * cap_stats_median_select(dev, n);
    return s > 0.005 ? s : 0.005;
}

/* The log of a time in ms (0, or a crafted negative, counts as 1 ns). */
static double log_ms(double ms)
{
    return log(ms > 1e-6 ? ms : 1e-6);
}

/* Where sorted log frame times x[0..k) split cleanly in two: the index of
 * the first heavy frame, or 0 when they do not (report.h's rule); *gap
 * gets the log of the heavy median over the light one. */
static size_t clean_split(const double *x, size_t k, double *dev,
                          double *gap)
{
    if (k < AN_OT_GROUP_MIN_BIN)
        return 0;
    size_t min_side = (size_t)ceil(AN_OT_GROUP_MIN_SHARE * (double)k);
    if (min_side < 2)
        min_side = 2;
    double total = 0;
    for (size_t i = 0; i < k; i++)
        total += x[i];
    /* Otsu: the split with the most between-group variance */
    double left = 0, best = -1;
    size_t at = 0;
    for (size_t s = 1; s < k; s++) {
        left += x[s - 1];
        if (s < min_side || k - s < min_side || !(x[s] > x[s - 1]))
            continue;
        double ml = left / (double)s, mr = (total - left) / (double)(k - s);
        double v = (double)s * (double)(k - s) * (mr - ml) * (mr - ml);
        if (v > best) {
            best = v;
            at = s;
        }
    }
    if (!at)
        return 0;
    double ml = cap_stats_median_sorted(x, at);
    double mh = cap_stats_median_sorted(x + at, k - at);
    double sl = robust_spread(x, at, dev), sh = robust_spread(x + at, k - at,
                                                              dev);
    if (mh - ml < log(AN_OT_GROWTH) ||
        mh - ml < AN_OT_GROUP_SEPARATION * sqrt((sl * sl + sh * sh) / 2))
        return 0;
    *gap = mh - ml;
    return at;
}

int an_frame_split(const double *v, size_t n, uint8_t *heavy,
                   double group_ms[2], double share[2])
{
    size_t chunks = (n + AN_OT_GROUP_CHUNK - 1) / AN_OT_GROUP_CHUNK;
    size_t wmax = (2 * AN_OT_GROUP_REACH + 1) * AN_OT_GROUP_CHUNK;
    if (wmax > n)
        wmax = n;
    if (n < AN_OT_GROUP_MIN_BIN)
        return 0;
    double *x = malloc(wmax * sizeof *x), *dev = malloc(wmax * sizeof *dev);
    double *cut = malloc(chunks * sizeof *cut);
    double *gap = malloc(chunks * sizeof *gap);
    double *slope = malloc(chunks * sizeof *slope);
    double *mid = malloc(chunks * sizeof *mid);
    double *lv = malloc(n * sizeof *lv);
    int rc = -1;
    if (!x || !dev || !cut || !gap || !slope || !mid || !lv)
        goto out;
    rc = 0;
    for (size_t i = 0; i < n; i++)
        lv[i] = log_ms(v[i]);
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c > AN_OT_GROUP_REACH ? c - AN_OT_GROUP_REACH : 0;
        size_t hi = (c + AN_OT_GROUP_REACH + 1) * AN_OT_GROUP_CHUNK;
        lo *= AN_OT_GROUP_CHUNK;
        hi = hi < n ? hi : n;
        if (hi - lo < wmax) { /* the ends: a window as wide as the rest */
            lo = hi >= wmax ? hi - wmax : 0;
            hi = lo + wmax;
        }
        /* less the window's trend (least squares of log v on the frame
           index): a device that slows through the window spreads each
           group, not the gap between them */
        double im = (double)(lo + hi - 1) / 2, ym = 0, sxy = 0, sxx = 0;
        for (size_t i = lo; i < hi; i++)
            ym += lv[i];
        ym /= (double)(hi - lo);
        for (size_t i = lo; i < hi; i++) {
            double d = (double)i - im;
            sxy += d * (lv[i] - ym);
            sxx += d * d;
        }
        slope[c] = sxx > 0 ? sxy / sxx : 0;
        mid[c] = im;
        size_t k = 0;
        for (size_t i = lo; i < hi; i++)
            x[k++] = lv[i] - slope[c] * ((double)i - im);
        qsort(x, k, sizeof *x, an_cmp_double);
        size_t at = clean_split(x, k, dev, &gap[c]);
        if (!at)
            goto out;
        cut[c] = x[at]; /* heavy: detrended log v at or above the cut */
    }
    /* the same two groups all along: a window whose heavy frames stand
       apart from its light ones by another factor split something else
       (a few slow frames at the start) */
    qsort(gap, chunks, sizeof *gap, an_cmp_double);
    double typical = cap_stats_median_sorted(gap, chunks);
    if (fabs(gap[0] - typical) > AN_OT_GROUP_SAME * typical ||
        fabs(gap[chunks - 1] - typical) > AN_OT_GROUP_SAME * typical)
        goto out;
    size_t count[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        size_t c = i / AN_OT_GROUP_CHUNK;
        double y = lv[i] - slope[c] * ((double)i - mid[c]);
        count[heavy[i] = y >= cut[c]]++;
    }
    for (int g = 0; g < 2; g++) { /* lv no longer needed: the group's v */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (heavy[i] == g)
                lv[k++] = v[i];
        group_ms[g] = an_summarize(lv, k).median;
        share[g] = (double)count[g] / (double)n;
    }
    rc = 1;
out:
    free(x);
    free(dev);
    free(cut);
    free(gap);
    free(slope);
    free(mid);
    free(lv);
    return rc;
}

/* Do the frames fall in two groups by v[frame] (ms: the frame time, or
 * the CPU work; an_frame_split), and do the groups matter to these bins
 * (report.h)? Then mark each frame's group in heavy[0..n) (1: heavy),
 * order each bin's frames light first (light[b]: how many), fill
 * ot->groups, group_share, group_ms (medians of v) and each bin's
 * group_frames and group_median (of v; NAN for a group the bin lacks); 1
 * when they do, 0 (heavy written, nothing else changed) when not, -1 out
 * of memory. order[first[b]..first[b+1]) are bin b's frames, n in all. */
static int find_groups(an_over_time *ot, const double *v, size_t n,
                       const size_t *first, uint32_t *order, size_t nb,
                       size_t *light, uint8_t *heavy)
{
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    double *all = malloc((n ? n : 1) * sizeof *all);
    double group_ms[2], share[2];
    int rc = -1;
    if (!tmp || !all)
        goto out;
    rc = 0;
    /* two bins at least hold frames: else nothing is compared */
    size_t filled = 0;
    for (size_t b = 0; b < nb; b++)
        filled += first[b + 1] > first[b];
    if (filled < 2 || (rc = an_frame_split(v, n, heavy, group_ms, share)) != 1)
        goto out;
    rc = 0;
    /* the groups matter: one bin holds as many heavy frames as light ones
       or more, another as many light ones or more; else every bin's
       median lies in one group, where the mix moves it little */
    int more[2] = {0, 0};
    for (size_t b = 0; b < nb; b++) {
        size_t h = 0, f = first[b + 1] - first[b];
        for (size_t i = first[b]; i < first[b + 1]; i++)
            h += heavy[order[i]];
        more[1] |= f && 2 * h >= f;
        more[0] |= f && 2 * h <= f;
    }
    if (!more[0] || !more[1])
        goto out;
    for (int g = 0; g < 2; g++) {
        ot->group_ms[g] = group_ms[g];
        ot->group_share[g] = share[g];
    }
    for (size_t b = 0; b < nb; b++) {
        size_t k[2] = {0, 0}, w = first[b];
        for (size_t i = first[b]; i < first[b + 1]; i++) {
            if (heavy[order[i]])
                tmp[k[1]++] = order[i];
            else
                order[w++] = order[i], k[0]++;
        }
        memcpy(order + w, tmp, k[1] * sizeof *tmp);
        light[b] = k[0];
        ot->bins[b].group_frames[0] = k[0];
        ot->bins[b].group_frames[1] = k[1];
        for (int g = 0; g < 2; g++) {
            size_t j = 0, lo = first[b] + (g ? k[0] : 0);
            for (size_t i = lo; i < lo + k[g]; i++)
                all[j++] = v[order[i]];
            ot->bins[b].group_median[g] = an_summarize(all, j).median;
        }
    }
    ot->groups = 2;
    rc = 1;
out:
    free(all);
    free(tmp);
    return rc;
}

/* Two groups: each bin's figure from its light and heavy medians
 * med[g * nb + b] (NAN where the bin has no frame of the group), weighted
 * by the capture's mix; a group a bin lacks takes its median from the
 * nearest bins that have it (between two, on the line through them).
 * Empty bins get NAN. */
/* Counter values are summed times OT_SCALE (a power of two: exact), so
 * that a sum of finite values never overflows (two samples of 1e308
 * summed to inf, and a finite counter showed an infinite mean); the
 * means are scaled back once made. */
#define OT_SCALE 0x1p-64

static void mix_levels(const an_over_time *ot, const double *med,
                       size_t nb, double *out)
{
    for (size_t b = 0; b < nb; b++) {
        out[b] = NAN;
        if (!ot->bins[b].frames)
            continue;
        double level = 0;
        for (size_t g = 0; g < 2; g++) {
            const double *m = med + g * nb;
            double x = m[b];
            if (isnan(x)) {
                long lo = (long)b - 1, hi = (long)b + 1;
                while (lo >= 0 && isnan(m[lo]))
                    lo--;
                while (hi < (long)nb && isnan(m[hi]))
                    hi++;
                if (lo >= 0 && hi < (long)nb)
                    x = m[lo] + (m[hi] - m[lo]) * (double)((long)b - lo) /
                                    (double)(hi - lo);
                else
                    x = lo >= 0 ? m[lo] : hi < (long)nb ? m[hi] : NAN;
            }
            level += ot->group_share[g] * x;
        }
        out[b] = level;
    }
}

/* Per-bin figures of v[frame] (ms) into out[bin]: the median of the
 * bin's frames, or with two groups (light[b] light frames first in each
 * bin) the mix of each group's median (mix_levels). tmp holds a bin,
 * med 2 x nb values. NAN for an empty bin. */
static void bin_medians(const an_over_time *ot, const double *v,
                        const size_t *first, const size_t *light,
                        const uint32_t *order, size_t nb, double *tmp,
                        double *med, double *out)
{
    size_t G = ot->groups == 2 ? 2 : 1;
    for (size_t b = 0; b < nb; b++) {
        size_t lo = first[b], hi = first[b + 1];
        size_t cut = G == 2 ? lo + light[b] : hi;
        for (size_t g = 0; g < G; g++) {
            size_t k = 0;
            for (size_t i = g ? cut : lo; i < (g ? hi : cut); i++)
                tmp[k++] = v[order[i]];
            double x = an_summarize(tmp, k).median;
            if (G == 2)
                med[g * nb + b] = x;
            else
                out[b] = x;
        }
    }
    if (G == 2)
        mix_levels(ot, med, nb, out);
}

/* A summarised model (m->approx): the top scopes' per-bin summaries
 * from histograms, and the per-frame sums of work and waits, in one more
 * read of the file. */
typedef struct ot_sum_ctx {
    const an_capture *m;
    const uint16_t *cell_of;        /* frame -> bin x groups + group */
    const size_t *slot_of; /* row -> top index or -1 */
    size_t nc;                      /* cells: bins x groups */
    an_hist *h;                     /* top x cells */
    double *sum[2];
    int failed;
} ot_sum_ctx;

static void ot_sum_visit(void *p, size_t row, size_t frame, int64_t v)
{
    ot_sum_ctx *c = p;
    const an_scope *sc = &c->m->scopes[row];
    double *to = c->sum[sc->is_wait != 0];
    if (sc->kind == AN_CPU && to) /* whole ns: ms once scanned */
        to[frame] += (double)v;
    size_t k = c->slot_of[row];
    if (k != SIZE_MAX &&
        an_hist_add(&c->h[k * c->nc + c->cell_of[frame]], v) != 0)
        c->failed = 1;
}

/* Median and p95 (ms) of k frames' values, of which h holds the non-zero
 * ones (NULL: none). */
static an_summary hist_summary(const an_hist *h, size_t k)
{
    static const an_hist none;
    an_summary s = {k, NAN, NAN, NAN};
    if (!h)
        h = &none;
    if (k) {
        s.mean = MS(h->sum / (double)k);
        s.median = MS(an_hist_quantile(h, k, 0.5));
        s.p95 = MS(an_hist_quantile(h, k, 0.95));
    }
    return s;
}

/* A bin's summary from its cells' histograms h[0..groups) of k[g] frames
 * each: p95 and mean over the bin's frames; with two groups each group's
 * median into gmed[g * nb] (NAN: none of its frames here) and the median
 * left NAN for mix_levels. */
static an_summary cells_summary(const an_over_time *ot, const an_hist *h,
                                const size_t *k, double *gmed, size_t nb,
                                int *failed)
{
    if (ot->groups != 2)
        return hist_summary(h, k[0]);
    an_hist both = {0};
    if (an_hist_merge(&both, &h[0]) != 0 || an_hist_merge(&both, &h[1]) != 0)
        *failed = 1;
    an_summary s = hist_summary(&both, k[0] + k[1]);
    an_hist_free(&both);
    s.median = NAN;
    for (size_t g = 0; g < 2; g++)
        gmed[g * nb] = hist_summary(&h[g], k[g]).median;
    return s;
}

/* The load summarised the rows over these very bins
 * (an_options.over_time_hint): 1 when m->ot_bin matches bin_of. */
static int hint_matches(const an_capture *m, const uint16_t *bin_of,
                        size_t nb)
{
    if (!m->approx || !m->ot_bin || m->ot_nbins != nb)
        return 0;
    for (size_t i = 0; i < m->nframes; i++)
        if (m->ot_bin[i] != bin_of[i])
            return 0;
    return 1;
}

/* The top scopes' per-bin summaries into out (top_n x nb; with two
 * groups, the medians of each scope's groups by bin into
 * gmed[(j x 2 + g) x nb + b]) and the work and wait sums per frame into
 * sum[2] (NULL ones not summed), in one read of the file. */
static cap_result ot_approx(const an_over_time *ot, const an_capture *m,
                            const uint16_t *cell_of, const size_t *cfirst,
                            size_t nb, const size_t *top, size_t top_n,
                            double *sum[2], an_summary **out, double *gmed)
{
    size_t G = ot->groups == 2 ? 2 : 1, nc = nb * G, nh = top_n * nc;
    size_t *slot_of = malloc((m->nscopes ? m->nscopes : 1) * sizeof *slot_of);
    an_hist *h = calloc(nh ? nh : 1, sizeof *h);
    *out = malloc((nh ? nh : 1) * sizeof **out);
    cap_result rc = CAP_E_NOMEM;
    if (slot_of && h && *out) {
        for (size_t r = 0; r < m->nscopes; r++)
            slot_of[r] = SIZE_MAX;
        for (size_t j = 0; j < top_n; j++)
            slot_of[top[j]] = j;
        ot_sum_ctx c = {m, cell_of, slot_of, nc, h, {sum[0], sum[1]}, 0};
        rc = an_series_scan(m, ot_sum_visit, &c);
        an_frame_sums_ms(sum, m->nframes);
        for (size_t j = 0; rc == CAP_OK && j < top_n; j++)
            for (size_t b = 0; b < nb; b++) {
                size_t k[2];
                for (size_t g = 0; g < G; g++)
                    k[g] = cfirst[b * G + g + 1] - cfirst[b * G + g];
                (*out)[j * nb + b] =
                    cells_summary(ot, &h[j * nc + b * G], k,
                                  G == 2 ? &gmed[j * 2 * nb + b] : NULL, nb,
                                  &c.failed);
            }
        if (rc == CAP_OK && c.failed)
            rc = CAP_E_NOMEM;
    }
    for (size_t i = 0; h && i < nh; i++)
        an_hist_free(&h[i]);
    free(h);
    free(slot_of);
    if (rc != CAP_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* A summarised model's top-scope summaries (out) and work and wait sums:
 * from the load's per-bin histograms when it was given these bins
 * (hinted; the work and wait sums then come from m->ot_cpu_ms and
 * ot_wait_ms unless the load could not sum them (!m->ot_sums: a row's
 * wait flag changed after its values were summed), and only then is the
 * file read again), else from one more read of the file (ot_approx). */
static cap_result ot_summaries(const an_over_time *ot, const an_capture *m,
                               int hinted, int waits, const uint16_t *cell_of,
                               const size_t *first, size_t nb,
                               const size_t *top, size_t top_n,
                               double *sum[2], an_summary **out)
{
    if (!hinted)
        return ot_approx(ot, m, cell_of, first, nb, top, top_n, sum, out,
                         NULL);
    cap_result rc;
    if (waits && (rc = ot_approx(ot, m, cell_of, first, nb, top, 0, sum,
                                 out, NULL)) != CAP_OK)
        return rc;
    free(*out);
    *out = malloc((top_n * nb > 0 ? top_n * nb : 1) * sizeof **out);
    if (!*out)
        return CAP_E_NOMEM;
    for (size_t j = 0; j < top_n; j++) {
        const an_hist *h = m->scopes[top[j]].pf_bin;
        for (size_t b = 0; b < nb; b++)
            (*out)[j * nb + b] =
                hist_summary(h ? &h[b] : NULL, first[b + 1] - first[b]);
    }
    return CAP_OK;
}

/* A computation under way: the model, the bins, and the per-frame and
 * per-bin buffers an_over_time_compute's steps share (ot_ctx_free frees
 * them). */
typedef struct ot_ctx {
    an_over_time *ot;
    const an_capture *m;
    size_t n, nb;          /* frames, bins */
    int bins;
    double width;          /* of a bin, ns */
    int64_t t0, t1;        /* the first frame's start, the last's end */
    /* 2 + 4 bytes a frame, and tmp as long as the largest bin (300 M
       scopes of bench_gen.h: 768,197 frames) */
    uint16_t *bin_of;      /* AN_OT_MAX_BINS fits */
    uint16_t *cell_of;     /* two groups: bin x 2 + group */
    uint32_t *order;       /* frames grouped by bin: first[b]..first[b+1] */
    uint8_t *heavy;        /* two groups: each frame's (1: heavy) */
    size_t *first, *light, *cfirst;
    double *tmp, *dense, *fms, *sum[2];
    double *med, *gmed;    /* two groups: medians by group, bin */
    const double *work, *wait; /* CPU work and waits per frame */
    an_summary *approx;
    size_t top[AN_OT_TOP + AN_OT_TOP_WAITS], top_n;
    size_t G;              /* groups */
} ot_ctx;

static void ot_ctx_free(ot_ctx *c)
{
    free(c->approx);
    free(c->heavy);
    free(c->med);
    free(c->gmed);
    free(c->sum[0]);
    free(c->sum[1]);
    free(c->bin_of);
    free(c->cell_of);
    free(c->light);
    free(c->cfirst);
    free(c->fms);
    free(c->first);
    free(c->order);
    free(c->tmp);
    free(c->dense);
}

/* The bins chosen and the buffers of every frame and bin allocated. */
static cap_result ot_alloc(ot_ctx *c, int bins, double bin_seconds)
{
    an_over_time *ot = c->ot;
    const an_capture *m = c->m;
    size_t n = c->n;
    c->t0 = m->frames[0].begin_ns;
    c->t1 = m->frames[n - 1].end_ns;
    c->bins = an_bins_choose(an_elapsed_ns(c->t0, c->t1), bins, bin_seconds,
                             &c->width);
    ot->nbins = c->bins;
    ot->width_s = c->width / 1e9;
    size_t nb = c->nb = (size_t)c->bins;
    c->bin_of = malloc(n * sizeof *c->bin_of);
    c->first = calloc(nb + 1, sizeof *c->first);
    c->order = malloc(n * sizeof *c->order);
    c->dense = malloc((m->approx ? 1 : n) * sizeof *c->dense); /* exact */
    c->fms = malloc(n * sizeof *c->fms);
    c->light = calloc(nb, sizeof *c->light);
    c->med = malloc(2 * nb * sizeof *c->med);
    c->heavy = malloc(n);
    c->cfirst = malloc((2 * nb + 1) * sizeof *c->cfirst);
    ot->bins = calloc(nb, sizeof *ot->bins);
    if (!c->bin_of || !c->first || !c->order || !c->dense || !c->fms ||
        !c->light || !c->med || !c->heavy || !c->cfirst || !ot->bins ||
        n > UINT32_MAX)
        return CAP_E_NOMEM;
    return CAP_OK;
}

/* Each frame's bin, the frames grouped by bin (a stable counting sort),
 * the first and last bins with frames, and the frame times (ms). */
static cap_result frames_binned(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    size_t n = c->n, nb = c->nb;
    _Static_assert(2 * AN_OT_MAX_BINS <= UINT16_MAX, "a frame's cell");
    for (size_t i = 0; i < n; i++) {
        c->bin_of[i] = (uint16_t)an_bins_index(
            an_elapsed_ns(c->t0, c->m->frames[i].begin_ns) / c->width,
            c->bins);
        ot->bins[c->bin_of[i]].frames++;
    }
    size_t most = 1;
    for (size_t b = 0; b < nb; b++) {
        c->first[b + 1] = c->first[b] + ot->bins[b].frames;
        most = ot->bins[b].frames > most ? ot->bins[b].frames : most;
    }
    c->tmp = malloc(most * sizeof *c->tmp);
    size_t *next = calloc(nb, sizeof *next);
    if (!c->tmp || !next) {
        free(next);
        return CAP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        c->order[c->first[c->bin_of[i]] + next[c->bin_of[i]]++] = (uint32_t)i;
    free(next);
    ot->ref = 0;
    while (ot->ref < c->bins && ot->bins[ot->ref].frames == 0)
        ot->ref++;
    ot->last = c->bins - 1;
    while (ot->last > ot->ref && ot->bins[ot->last].frames == 0)
        ot->last--;
    for (size_t i = 0; i < n; i++)
        c->fms[i] = MS(an_frame_ns(&c->m->frames[i]));
    return CAP_OK;
}

/* The top scopes (median and p95 of their self time per frame, by bin,
 * are wanted), and all CPU work and all CPU waits summed per frame: the
 * load's sums (borrowed), or summed here (exact), or by the scan that
 * also summarises the top scopes by bin (summarised model; waits = 1: the
 * load summarised them but could not sum, so one more read). */
static cap_result work_summed(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    const an_capture *m = c->m;
    top_scopes(m, 0, AN_OT_TOP, c->top, &c->top_n);
    top_scopes(m, 1, AN_OT_TOP_WAITS, c->top, &c->top_n);
    ot->scopes = calloc(c->top_n ? c->top_n : 1, sizeof *ot->scopes);
    if (!ot->scopes)
        return CAP_E_NOMEM;
    ot->groups = 1;
    int hinted = hint_matches(m, c->bin_of, c->nb);
    int waits = hinted && !m->ot_sums;
    const double *cpu = hinted && m->ot_sums ? m->ot_cpu_ms : NULL;
    const double *wcpu = hinted && m->ot_sums ? m->ot_wait_ms : NULL;
    if ((!cpu && !(c->sum[0] = calloc(c->n, sizeof(double)))) ||
        (!wcpu && !(c->sum[1] = calloc(c->n, sizeof(double)))))
        return CAP_E_NOMEM;
    if (m->approx) {
        cap_result rc = ot_summaries(ot, m, hinted, waits, c->bin_of,
                                     c->first, c->nb, c->top, c->top_n,
                                     c->sum, &c->approx);
        if (rc != CAP_OK)
            return rc;
    } else {
        an_cpu_frame_sums(m, c->dense, c->sum);
    }
    c->work = cpu ? cpu : c->sum[0];
    c->wait = wcpu ? wcpu : c->sum[1];
    return CAP_OK;
}

/* A light and a heavy group of frames all along, by frame time or, where
 * the frame times do not split (a cap holds them), by the CPU work: each
 * bin's frames ordered light first, its cells (bin x group) in cfirst;
 * on a summarised model, the scopes' summaries again by bin and group. */
static cap_result groups_found(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    size_t n = c->n, nb = c->nb;
    int g = find_groups(ot, c->fms, n, c->first, c->order, nb, c->light,
                        c->heavy);
    if (g == 0) {
        g = find_groups(ot, c->work, n, c->first, c->order, nb, c->light,
                        c->heavy);
        ot->group_by_work = g == 1;
    }
    if (g < 0)
        return CAP_E_NOMEM;
    size_t G = c->G = (size_t)ot->groups;
    for (size_t b = 0; b < nb; b++) {
        c->cfirst[b * G] = c->first[b];
        if (G == 2)
            c->cfirst[b * G + 1] = c->first[b] + c->light[b];
    }
    c->cfirst[nb * G] = c->first[nb];
    if (!(G == 2 && c->m->approx))
        return CAP_OK;
    if (!(c->cell_of = malloc(n * sizeof *c->cell_of)))
        return CAP_E_NOMEM;
    for (size_t k = 0; k < nb * G; k++)
        for (size_t i = c->cfirst[k]; i < c->cfirst[k + 1]; i++)
            c->cell_of[c->order[i]] = (uint16_t)k;
    double *none[2] = {NULL, NULL};
    free(c->approx);
    c->approx = NULL;
    size_t tn = c->top_n ? c->top_n : 1;
    if (!(c->gmed = malloc(tn * 2 * nb * sizeof *c->gmed)))
        return CAP_E_NOMEM;
    return ot_approx(ot, c->m, c->cell_of, c->cfirst, nb, c->top, c->top_n,
                     none, &c->approx, c->gmed);
}

/* Each bin's span, frame-time summary, level and growth. */
static cap_result frame_levels(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    size_t nb = c->nb;
    for (size_t b = 0; b < nb; b++) {
        an_ot_bin *B = &ot->bins[b];
        B->start_s = (double)b * c->width / 1e9;
        B->end_s = (double)(b + 1) * c->width / 1e9;
        size_t k = 0;
        for (size_t j = c->first[b]; j < c->first[b + 1]; j++)
            c->tmp[k++] = c->fms[c->order[j]];
        B->frame = an_summarize(c->tmp, k);
    }
    double *level = malloc(nb * sizeof *level);
    if (!level)
        return CAP_E_NOMEM;
    bin_medians(ot, c->fms, c->first, c->light, c->order, nb, c->tmp, c->med,
                level);
    for (size_t b = 0; b < nb; b++)
        ot->bins[b].level = level[b];
    free(level);
    for (size_t b = 0; b < nb; b++)
        ot->bins[b].growth =
            an_ratio_of(ot->bins[b].level, ot->bins[ot->ref].level, 0);
    return CAP_OK;
}

/* Top scope j's median and p95 by bin: from the summaries (summarised
 * model) or from its self time per frame. */
static void scope_series(ot_ctx *c, an_ot_scope *S, size_t j)
{
    an_over_time *ot = c->ot;
    size_t nb = c->nb;
    if (c->approx) {
        for (size_t b = 0; b < nb; b++) {
            S->median[b] = c->approx[j * nb + b].median;
            S->p95[b] = c->approx[j * nb + b].p95;
        }
        if (c->G == 2)
            mix_levels(ot, &c->gmed[j * 2 * nb], nb, S->median);
        return;
    }
    an_scope_dense(c->m, S->scope, c->dense);
    for (size_t i = 0; i < c->n; i++)
        c->dense[i] = MS(c->dense[i]);
    for (size_t b = 0; b < nb; b++) {
        size_t k = 0;
        for (size_t i = c->first[b]; i < c->first[b + 1]; i++)
            c->tmp[k++] = c->dense[c->order[i]];
        S->p95[b] = an_summarize(c->tmp, k).p95;
    }
    bin_medians(ot, c->dense, c->first, c->light, c->order, nb, c->tmp,
                c->med, S->median);
}

/* The top scopes' shares, series and growth. */
static cap_result scopes_levels(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    int64_t ft = an_total_frame_ns(c->m);
    for (size_t j = 0; j < c->top_n; j++) {
        an_ot_scope *S = &ot->scopes[ot->nscopes++];
        S->scope = &c->m->scopes[c->top[j]];
        S->share = ft > 0 ? (double)S->scope->self_ns / (double)ft : 0;
        S->median = malloc(c->nb * sizeof *S->median);
        S->p95 = malloc(c->nb * sizeof *S->p95);
        if (!S->median || !S->p95)
            return CAP_E_NOMEM;
        scope_series(c, S, j);
        S->growth = an_ratio_of(S->median[ot->last], S->median[ot->ref],
                                AN_OT_ZERO_MS);
    }
    return CAP_OK;
}

/* The work and wait levels by bin and their growth. */
static cap_result work_levels(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    size_t nb = c->nb;
    ot->work.median = malloc(nb * sizeof(double));
    ot->wait.median = malloc(nb * sizeof(double));
    if (!ot->work.median || !ot->wait.median)
        return CAP_E_NOMEM;
    for (size_t s = 0; s < c->m->nscopes; s++)
        ot->has_waits |= c->m->scopes[s].kind == AN_CPU &&
                         c->m->scopes[s].is_wait != 0;
    bin_medians(ot, c->work, c->first, c->light, c->order, nb, c->tmp,
                c->med, ot->work.median);
    bin_medians(ot, c->wait, c->first, c->light, c->order, nb, c->tmp,
                c->med, ot->wait.median);
    ot->work.growth = an_ratio_of(ot->work.median[ot->last],
                                  ot->work.median[ot->ref], AN_OT_ZERO_MS);
    ot->wait.growth = an_ratio_of(ot->wait.median[ot->last],
                                  ot->wait.median[ot->ref], AN_OT_ZERO_MS);
    return CAP_OK;
}

/* Two groups: the counter's means by bin and group (c->med holds the
 * sums, then the means) mixed as the medians are, into C->mean where a
 * bin has samples; a bin whose samples all fell where no frame began
 * keeps its plain mean. Each sample goes to its frame's group (the last
 * frame begun by its time, the first if none). */
static cap_result counter_grouped(ot_ctx *c, an_ot_counter *C,
                                  const an_counter *src)
{
    size_t nb = c->nb;
    size_t *gn = calloc(2 * nb, sizeof *gn);
    double *mixed = malloc(nb * sizeof *mixed);
    if (!gn || !mixed) {
        free(gn);
        free(mixed);
        return CAP_E_NOMEM;
    }
    for (size_t k = 0; k < 2 * nb; k++)
        c->med[k] = 0;
    for (size_t i = 0; i < src->n; i++) {
        const an_sample *s = &src->s[i];
        if (s->time_ns < c->t0 || s->time_ns > c->t1)
            continue;
        size_t b = an_bins_index(an_elapsed_ns(c->t0, s->time_ns) / c->width,
                                 c->bins);
        size_t fi = an_frame_after(c->m, s->time_ns);
        fi = fi ? fi - 1 : 0;
        c->med[c->heavy[fi] * nb + b] += s->value * OT_SCALE;
        gn[c->heavy[fi] * nb + b]++;
    }
    for (size_t k = 0; k < 2 * nb; k++)
        c->med[k] = gn[k] ? c->med[k] / (double)gn[k] : NAN;
    mix_levels(c->ot, c->med, nb, mixed);
    for (size_t b = 0; b < nb; b++)
        if (C->samples[b] && !isnan(mixed[b]))
            C->mean[b] = mixed[b];
    free(mixed);
    free(gn);
    return CAP_OK;
}

/* Counter src's mean per bin, by sample time, and its growth. */
static cap_result counter_levels(ot_ctx *c, an_ot_counter *C,
                                 const an_counter *src)
{
    an_over_time *ot = c->ot;
    size_t nb = c->nb;
    C->name = src->name;
    C->memory = is_memory_counter(C->name);
    C->profiler = is_profiler_counter(C->name);
    C->mean = calloc(nb, sizeof *C->mean);
    C->samples = calloc(nb, sizeof *C->samples);
    if (!C->mean || !C->samples)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < src->n; i++) {
        const an_sample *s = &src->s[i];
        if (s->time_ns < c->t0 || s->time_ns > c->t1)
            continue;
        size_t b = an_bins_index(an_elapsed_ns(c->t0, s->time_ns) / c->width,
                                 c->bins);
        C->mean[b] += s->value * OT_SCALE;
        C->samples[b]++;
    }
    for (size_t b = 0; b < nb; b++)
        C->mean[b] = C->samples[b] ? C->mean[b] / (double)C->samples[b] : NAN;
    if (c->G == 2 && counter_grouped(c, C, src) != CAP_OK)
        return CAP_E_NOMEM;
    for (size_t b = 0; b < nb; b++)
        C->mean[b] /= OT_SCALE;
    C->growth = an_ratio_of(C->mean[ot->last], C->mean[ot->ref], 0);
    return CAP_OK;
}

/* Every counter's levels. */
static cap_result counters_levels(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    const an_capture *m = c->m;
    ot->counters = calloc(m->ncounters ? m->ncounters : 1,
                          sizeof *ot->counters);
    if (!ot->counters)
        return CAP_E_NOMEM;
    for (size_t k = 0; k < m->ncounters; k++)
        if (counter_levels(c, &ot->counters[ot->ncounters++],
                           &m->counters[k]) != CAP_OK)
            return CAP_E_NOMEM;
    return CAP_OK;
}

/* The device's own account (the first non-empty bin against the last:
 * the verdicts cite it), then the verdicts. */
static void ot_decide(ot_ctx *c)
{
    an_over_time *ot = c->ot;
    double d0 = (double)c->t0, width = c->width;
    an_ratio g = ot->work.growth;
    an_evidence_compute(c->m->counters, c->m->ncounters,
                        to_ns(d0 + (double)ot->ref * width),
                        to_ns(d0 + (double)(ot->ref + 1) * width),
                        to_ns(d0 + (double)ot->last * width), c->t1,
                        g.state == AN_RATIO_VALUE ? g.value : NAN,
                        &ot->evidence);
    an_verdicts_decide(&ot->verdicts, ot);
}

/* The steps in turn, each with its own job. */
typedef cap_result (*ot_step)(ot_ctx *c);

cap_result an_over_time_compute(an_over_time *ot, const an_capture *m,
                                int bins, double bin_seconds)
{
    static const ot_step steps[] = {frames_binned, work_summed, groups_found,
                                    frame_levels,  scopes_levels, work_levels,
                                    counters_levels};
    memset(ot, 0, sizeof *ot);
    ot->nframes = m->nframes;
    if (!m->nframes) {
        an_verdicts_add(&ot->verdicts, (an_verdict){.kind = AN_V_TOO_SHORT});
        return CAP_OK;
    }
    ot_ctx c;
    memset(&c, 0, sizeof c);
    c.ot = ot;
    c.m = m;
    c.n = m->nframes;
    cap_result rc = ot_alloc(&c, bins, bin_seconds);
    for (size_t i = 0; rc == CAP_OK && i < sizeof steps / sizeof *steps; i++)
        rc = steps[i](&c);
    if (rc == CAP_OK)
        ot_decide(&c);
    ot_ctx_free(&c);
    if (rc != CAP_OK)
        an_over_time_free(ot);
    return rc;
}
