/* diff_mix.c - capture_diff's "(heavy frames)" row: when the frames fall
 * in a light and a heavy group, how often each side is heavy, and what the
 * change of that mix alone does to the mean frame (docs/STATISTICS.md
 * section 17). The Hodges-Lehmann shift of the other rows cannot see it:
 * most pairs of frames are of one group on both sides, so the median of
 * the pairwise differences stays near zero when only the mix moves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report.h"
#include "stats.h"

#define MS(ns) ((double)(ns) / 1e6)

/* Median of x[0..n) (reordered), NaN when n is 0. */
static double median_of(double *x, size_t n)
{
    return n ? cap_stats_median_select(x, n) : NAN;
}

/* Run m's value per frame (ms) into v[0..nframes): its frame time, or
 * (by_work) the self time of its CPU rows that are not waits (a
 * summarised run's as its load summed it, frame_work_ms); row_ns:
 * scratch of nframes doubles. */
static void run_values(const an_capture *m, int by_work, double *v,
                       double *row_ns)
{
    if (!by_work) {
        for (size_t i = 0; i < m->nframes; i++)
            v[i] = MS(an_frame_ns(&m->frames[i]));
        return;
    }
    if (m->approx) {
        for (size_t i = 0; i < m->nframes; i++)
            v[i] = m->frame_work_ms[i];
        return;
    }
    double *sum[2] = {v, NULL};
    memset(v, 0, m->nframes * sizeof *v);
    an_cpu_frame_sums(m, row_ns, sum);
}

/* Lengths of the stretches of one label in heavy[0..n): how many there
 * are. */
static size_t stretches(const uint8_t *heavy, size_t n)
{
    size_t s = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        s += heavy[i] != heavy[i - 1];
    return s;
}

/* The spread of a side's batch shares b[0..nb): the standard error of
 * their mean (NaN under 2). */
static double batch_se(const double *b, size_t nb)
{
    if (nb < 2)
        return NAN;
    double m = cap_stats_mean(b, nb), ss = 0;
    for (size_t i = 0; i < nb; i++)
        ss += (b[i] - m) * (b[i] - m);
    return sqrt(ss / (double)(nb - 1) / (double)nb);
}

/* The one-sided p of "the change is past the band upward" (sign +1) or
 * downward (-1), with a t law of df degrees; se 0: 0 or 1. */
static double p_past(double delta, double band, double se, double df,
                     int sign)
{
    double t = sign > 0 ? delta - band : -band - delta;
    if (!(se > 0))
        return t > 0 ? 0.0 : 1.0;
    return cap_stats_pt_upper(t / se, df);
}

/* A comparison of the mix under way: the runs and the buffers the steps
 * of an_diff_mix_compute share (mix_ctx_free frees them). Memory: a label
 * a frame of every run, three doubles a frame of the longest run or side
 * (values, scratch, a side's values by group), a batch's share each
 * AN_DIFF_MIX_MIN_BATCH frames of a side. */
typedef struct mix_ctx {
    an_diff_mix *mix;
    const an_capture *const *run;
    size_t nbase, nnew, nruns;
    size_t side_frames[2], widest;
    double *v, *row_ns;  /* a run's values, scratch */
    double *gv, *bshare; /* a side's values by group, its batches' shares */
    uint8_t *lab;        /* each frame's group (1: heavy), run after run */
    int *how;            /* each run's an_frame_split */
    double *lvl[2];      /* the groups' levels of the runs that split */
    size_t nsplit;
} mix_ctx;

static void mix_ctx_free(mix_ctx *c)
{
    free(c->v);
    free(c->row_ns);
    free(c->gv);
    free(c->bshare);
    free(c->lab);
    free(c->how);
    free(c->lvl[0]);
    free(c->lvl[1]);
}

static cap_result mix_alloc(mix_ctx *c)
{
    size_t most = 0, total = 0;
    for (size_t q = 0; q < c->nruns; q++) {
        size_t f = c->run[q]->nframes;
        total += f;
        most = f > most ? f : most;
        c->side_frames[q >= c->nbase] += f;
    }
    c->widest = c->side_frames[0] > c->side_frames[1] ? c->side_frames[0]
                                                      : c->side_frames[1];
    c->v = malloc((most ? most : 1) * sizeof *c->v);
    c->row_ns = malloc((most ? most : 1) * sizeof *c->row_ns);
    c->lab = malloc(total ? total : 1);
    c->how = calloc(c->nruns, sizeof *c->how);
    c->lvl[0] = malloc(c->nruns * sizeof(double));
    c->lvl[1] = malloc(c->nruns * sizeof(double));
    return c->v && c->row_ns && c->lab && c->how && c->lvl[0] && c->lvl[1]
               ? CAP_OK
               : CAP_E_NOMEM;
}

/* Each run's own split of its frame times; where none splits (a frame cap
 * holds them), of its CPU work per frame, if every run has it (a
 * summarised run from its load: frame_work_ms); the groups' levels from
 * the runs that split (c->nsplit of them). */
static cap_result runs_split(mix_ctx *c)
{
    int no_work = 0; /* some summarised run kept no work per frame */
    for (size_t q = 0; q < c->nruns; q++)
        no_work |= c->run[q]->approx && !c->run[q]->frame_work_ms;
    double gms[2], share[2];
    for (int by_work = 0; by_work < 2 && !c->nsplit; by_work++) {
        if (by_work && no_work)
            break;
        c->mix->by_work = by_work;
        for (size_t q = 0, off = 0; q < c->nruns;
             off += c->run[q]->nframes, q++) {
            const an_capture *m = c->run[q];
            run_values(m, by_work, c->v, c->row_ns);
            c->how[q] = an_frame_split(c->v, m->nframes, c->lab + off, gms,
                                       share);
            if (c->how[q] < 0)
                return CAP_E_NOMEM;
            if (c->how[q] == 1) {
                c->lvl[0][c->nsplit] = gms[0];
                c->lvl[1][c->nsplit] = gms[1];
                c->nsplit++;
            }
        }
    }
    return CAP_OK;
}

/* Run q (its labels at lab[off]) that did not split, labelled by the cut.
 * Returns 1 when its frames crowd the cut or sit away from both groups'
 * levels: a run whose frames all moved (7.9 ms against groups at 10.5 and
 * 20.8) holds neither group; one that alternates as the others do but did
 * not split cleanly itself (a window blurred by the machine's load) holds
 * both. */
static int run_crowds(mix_ctx *c, size_t q, size_t off)
{
    const an_diff_mix *mix = c->mix;
    const an_capture *m = c->run[q];
    double *v = c->v, *row_ns = c->row_ns;
    uint8_t *lab = c->lab + off;
    run_values(m, mix->by_work, v, row_ns);
    double ratio = mix->heavy_ms / mix->light_ms;
    double near = pow(ratio, 0.25);
    size_t crowd = 0;
    for (size_t i = 0; i < m->nframes; i++) {
        lab[i] = v[i] >= mix->cut_ms;
        crowd += v[i] > mix->cut_ms / near && v[i] < mix->cut_ms * near;
    }
    size_t k = 0;
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < m->nframes; i++)
            if (lab[i] == g)
                row_ns[k++] = v[i];
    size_t nh = 0;
    for (size_t i = 0; i < m->nframes; i++)
        nh += lab[i];
    double reach = 0.25 * log(ratio);
    double ml = median_of(row_ns, m->nframes - nh);
    double mh = median_of(row_ns + (m->nframes - nh), nh);
    int away = (m->nframes - nh && fabs(log(ml / mix->light_ms)) > reach) ||
               (nh && fabs(log(mh / mix->heavy_ms)) > reach);
    return crowd * AN_DIFF_MIX_CROWD_DIV > m->nframes || away;
}

/* The groups' levels and cut, and the runs that did not split labelled
 * by the cut. Returns 0, or 1 when some run crowds it (then the two
 * sides' groups are not the same groups, and nothing is compared). */
static int runs_labelled(mix_ctx *c)
{
    an_diff_mix *mix = c->mix;
    for (size_t q = 0; q < c->nruns; q++)
        *(q < c->nbase ? &mix->base.split : &mix->new_.split) +=
            c->how[q] == 1;
    mix->light_ms = median_of(c->lvl[0], c->nsplit);
    mix->heavy_ms = median_of(c->lvl[1], c->nsplit);
    mix->cut_ms = sqrt(mix->light_ms * mix->heavy_ms);
    for (size_t q = 0, off = 0; q < c->nruns;
         off += c->run[q]->nframes, q++)
        if (c->how[q] != 1 && run_crowds(c, q, off)) {
            mix->crowded = 1;
            return 1;
        }
    return 0;
}

/* Batches twice the mean stretch long, so that a batch holds a light and
 * a heavy stretch or more: the longer of the two sides' means, each over
 * the runs that hold both groups (a run of one group is one stretch as
 * long as the run, which says nothing of how long the other side's
 * stretches are). */
static void batch_choose(mix_ctx *c)
{
    double longest = 0;
    for (size_t s = 0; s < 2; s++) {
        size_t fr = 0, st = 0;
        for (size_t q = 0, off = 0; q < c->nruns;
             off += c->run[q]->nframes, q++) {
            if ((q >= c->nbase) != s)
                continue;
            size_t k = stretches(c->lab + off, c->run[q]->nframes);
            if (k > 1)
                fr += c->run[q]->nframes, st += k;
        }
        if (st && (double)fr / (double)st > longest)
            longest = (double)fr / (double)st;
    }
    c->mix->batch = (size_t)ceil(2 * longest);
    if (c->mix->batch < AN_DIFF_MIX_MIN_BATCH)
        c->mix->batch = AN_DIFF_MIX_MIN_BATCH;
}

/* Side sd's frames' values by group (light from the front, heavy from the
 * back of gv), its heavy share, its batches' shares. */
static void side_grouped(mix_ctx *c, size_t sd)
{
    an_diff_mix *mix = c->mix;
    an_diff_side_groups *g = sd ? &mix->new_ : &mix->base;
    double *gv = c->gv;
    size_t lo = 0, hi = c->side_frames[sd], nb = 0;
    for (size_t q = 0, off = 0; q < c->nruns;
         off += c->run[q]->nframes, q++) {
        if ((q >= c->nbase) != sd)
            continue;
        const an_capture *m = c->run[q];
        size_t h = 0;
        run_values(m, mix->by_work, c->v, c->row_ns);
        for (size_t i = 0; i < m->nframes; i++) {
            int hv = c->lab[off + i];
            if (hv)
                gv[--hi] = c->v[i];
            else
                gv[lo++] = c->v[i];
            h += (size_t)hv;
            if ((i + 1) % mix->batch == 0) {
                c->bshare[nb++] = (double)h / (double)mix->batch;
                h = 0;
            }
        }
    }
    g->frames = c->side_frames[sd];
    g->heavy = c->side_frames[sd] - hi;
    g->share = g->frames ? (double)g->heavy / (double)g->frames : NAN;
    g->light_ms = median_of(gv, lo);
    g->heavy_ms = median_of(gv + hi, c->side_frames[sd] - hi);
    g->batches = nb;
    g->share_se = batch_se(c->bshare, nb);
}

/* The statistic's plain fields: the shares as medians, what a mix has
 * none of (NaN), the runs and their fewest frames. */
static void mix_fields(cap_diffstat *d, const mix_ctx *c)
{
    const an_diff_mix *mix = c->mix;
    d->base_n = mix->base.frames;
    d->new_n = mix->new_.frames;
    d->base_median = 100.0 * mix->base.share;
    d->new_median = 100.0 * mix->new_.share;
    d->base_mean = d->new_mean = d->base_p95 = d->new_p95 = NAN;
    d->base_runs = c->nbase;
    d->new_runs = c->nnew;
    d->min_run_n = c->run[0]->nframes; /* the fewest frames of a run */
    for (size_t q = 1; q < c->nruns; q++)
        if (c->run[q]->nframes < d->min_run_n)
            d->min_run_n = c->run[q]->nframes;
    d->base_run_sd = d->new_run_sd = d->run_sd_ms = d->run_sd_pct = NAN;
    d->run_delta_ms = d->run_ci_low_ms = d->run_ci_high_ms = NAN;
    d->run_p_value = NAN;
}

/* The interval and p of the change delta_ms (t law on the batches'
 * shares, Welch-Satterthwaite degrees of freedom; the smaller side's
 * when both variances are 0). */
static void mix_interval(cap_diffstat *d, const an_diff_mix *mix,
                         double gap, const cap_diff_options *o)
{
    size_t bb = mix->base.batches, bn = mix->new_.batches;
    double vb = mix->base.share_se * mix->base.share_se;
    double vn = mix->new_.share_se * mix->new_.share_se;
    double se = sqrt(vb + vn) * gap;
    double df = (double)(bb < bn ? bb : bn) - 1;
    if (vb + vn > 0)
        df = (vb + vn) * (vb + vn) /
             (vb * vb / (double)(bb - 1) + vn * vn / (double)(bn - 1));
    double t = se > 0 ? cap_stats_qt(1.0 - o->alpha, df) : 0;
    d->ci_low_ms = d->delta_ms - t * se;
    d->ci_high_ms = d->delta_ms + t * se;
    double pu = p_past(d->delta_ms, d->band_ms, se, df, +1);
    double pd = p_past(d->delta_ms, d->band_ms, se, df, -1);
    d->p_value = 2 * (pu < pd ? pu : pd);
    if (d->p_value > 1)
        d->p_value = 1;
    d->p_adjusted = d->p_value;
}

/* The change of the mean frame that the mix alone makes, in ms and
 * relative to the base side's mixed level, with the rows' verdict rule
 * (diffstat.h). */
static void mix_change(mix_ctx *c, double floor_ms, const cap_diff_options *o)
{
    an_diff_mix *mix = c->mix;
    cap_diffstat *d = &mix->d;
    double gap = mix->heavy_ms - mix->light_ms;
    double sb = mix->base.share, sn = mix->new_.share;
    double level = mix->light_ms + sb * gap;
    mix_fields(d, c);
    d->delta_ms = (sn - sb) * gap;
    d->band_ms = o->threshold_pct / 100.0 * level;
    if (floor_ms > d->band_ms)
        d->band_ms = floor_ms;
    mix_interval(d, mix, gap, o);
    if (cap_diff_verdict(&d->verdict, d, o) != CAP_OK)
        d->verdict = CAP_VERDICT_INCONCLUSIVE;
    double pct = level > 0 ? 100.0 / level : NAN;
    d->delta_pct = d->delta_ms * pct;
    d->ci_low_pct = d->ci_low_ms * pct;
    d->ci_high_pct = d->ci_high_ms * pct;
    d->band_pct = d->band_ms * pct;
    d->frame_ci_low_ms = d->ci_low_ms;
    d->frame_ci_high_ms = d->ci_high_ms;
    d->frame_p_value = d->p_value;
    mix->base_level_ms = level;
}

/* The steps once the memory is there: CAP_OK whether or not a mix is
 * found (mix->found says), CAP_E_NOMEM. */
static cap_result mix_steps(mix_ctx *c, double floor_ms,
                            const cap_diff_options *o)
{
    an_diff_mix *mix = c->mix;
    if (runs_split(c) != CAP_OK)
        return CAP_E_NOMEM;
    if (!c->nsplit || runs_labelled(c))
        return CAP_OK;
    batch_choose(c);
    if (!(c->gv = malloc((c->widest ? c->widest : 1) * sizeof *c->gv)) ||
        !(c->bshare =
              malloc((c->widest / mix->batch + 1) * sizeof *c->bshare)))
        return CAP_E_NOMEM;
    side_grouped(c, 0);
    side_grouped(c, 1);
    /* too few batches on a side: the stretches are too long, or too
       few, for the capture to say how often frames are heavy */
    if (mix->base.batches < AN_DIFF_MIX_MIN_BATCHES ||
        mix->new_.batches < AN_DIFF_MIX_MIN_BATCHES)
        return CAP_OK;
    mix->found = 1;
    mix_change(c, floor_ms, o);
    return CAP_OK;
}

cap_result an_diff_mix_compute(an_diff_mix *mix,
                               const an_capture *const *run,
                               size_t nbase,
                               size_t nnew, double floor_ms,
                               const cap_diff_options *opt)
{
    if (!mix || !run || !nbase || !nnew)
        return CAP_E_MISUSE;
    cap_diff_options o;
    if (cap_diff_options_resolve(&o, opt) != CAP_OK)
        return CAP_E_MISUSE;
    memset(mix, 0, sizeof *mix);
    mix_ctx c;
    memset(&c, 0, sizeof c);
    c.mix = mix;
    c.run = run;
    c.nbase = nbase;
    c.nnew = nnew;
    c.nruns = nbase + nnew;
    cap_result rc = mix_alloc(&c);
    if (rc == CAP_OK)
        rc = mix_steps(&c, floor_ms, &o);
    mix_ctx_free(&c);
    return rc;
}
