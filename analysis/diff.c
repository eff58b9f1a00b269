/* diff.c - match scopes across two captures and compare their samples. */
#include "diff.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"

/* Mean of dense[0..n) over `nb` blocks of consecutive values that cover
 * them all (block k is [k n / nb, (k + 1) n / nb)), scaled by `unit`, into
 * out[0..nb). */
static void block_means(double *out, const double *dense, size_t n, size_t nb,
                        double unit)
{
    for (size_t k = 0; k < nb; k++) {
        size_t a = k * n / nb, b = (k + 1) * n / nb;
        double sum = 0;
        for (size_t i = a; i < b; i++)
            sum += dense[i];
        out[k] = sum / (double)(b - a) * unit;
    }
}

/* Frames where scope s ran (its sparse per-frame entries inside m's
 * frames). */
static size_t frames_ran(const an_capture *m, const an_scope *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->pf_n; i++)
        k += s->pf_frame[i] < m->nframes;
    return k;
}

/* Samples (ms): scope s's self time per frame (zeros where it did not
 * run), or the frame durations when s is NULL, averaged over blocks of
 * `block` frames. NULL when out of memory. */
static double *block_samples(const an_capture *m, const an_scope *s,
                             size_t block, size_t *n)
{
    size_t nb = m->nframes / block;
    double *dense = malloc((m->nframes ? m->nframes : 1) * sizeof *dense);
    double *v = malloc((nb ? nb : 1) * sizeof *v);
    if (!dense || !v) {
        free(dense);
        free(v);
        return NULL;
    }
    if (s)
        an_scope_dense(m, s, dense);
    else
        for (size_t i = 0; i < m->nframes; i++)
            dense[i] = (double)an_frame_ns(&m->frames[i]);
    block_means(v, dense, m->nframes, nb, 1e-6);
    free(dense);
    *n = nb;
    return v;
}

/* Samples (ms) of scope s: its self time per frame, zeros where it did not
 * run, averaged over blocks of `block` frames. A scope that ran in fewer
 * than min_frames frames gets its per-frame values where it ran instead:
 * too few samples, judged insufficient. NULL when out of memory. */
static double *scope_samples(const an_capture *m, const an_scope *s,
                             size_t block, size_t min_frames, size_t *n)
{
    size_t ran = frames_ran(m, s);
    if (ran < min_frames) {
        double *v = malloc((ran ? ran : 1) * sizeof *v);
        if (!v)
            return NULL;
        size_t k = 0;
        for (size_t i = 0; i < s->pf_n; i++)
            if (s->pf_frame[i] < m->nframes)
                v[k++] = (double)s->pf_self[i] / 1e6;
        *n = k;
        return v;
    }
    return block_samples(m, s, block, n);
}

/* The frame durations (ms), per frame. */
static double *frame_samples(const an_capture *m, size_t *n)
{
    return block_samples(m, NULL, 1, n);
}

/* Self time (ms) of s inside m's frames. */
static double scope_frame_total_ms(const an_capture *m, const an_scope *s)
{
    double t = 0;
    for (size_t i = 0; i < s->pf_n; i++)
        if (s->pf_frame[i] < m->nframes)
            t += (double)s->pf_self[i];
    return t / 1e6;
}

static const char *key_of(const an_scope *s)
{
    return s->path ? s->path : s->name;
}

static long find_match(const an_capture *m, const an_scope *s)
{
    for (size_t i = 0; i < m->nscopes; i++)
        if (m->scopes[i].kind == s->kind &&
            strcmp(key_of(&m->scopes[i]), key_of(s)) == 0)
            return (long)i;
    return -1;
}

/* Display order: the frame row, regressions that gate, other decided
 * changes, then the rest; each group by sort_key. */
static int row_group(const an_diff_row *r)
{
    if (r->is_frame)
        return 0;
    if (r->d.verdict == CAP_VERDICT_REGRESSED && r->gates)
        return 1;
    if (r->d.verdict == CAP_VERDICT_REGRESSED ||
        r->d.verdict == CAP_VERDICT_IMPROVED)
        return 2;
    return 3;
}

static int row_cmp(const void *a, const void *b)
{
    const an_diff_row *x = a, *y = b;
    int gx = row_group(x), gy = row_group(y);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    if (x->sort_key != y->sort_key)
        return x->sort_key > y->sort_key ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int matches_any(const char *name, const char *const *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pat[i] && fnmatch(pat[i], name, 0) == 0)
            return 1;
    return 0;
}

static double median_frame_ms(const an_capture *m)
{
    if (m->nframes == 0)
        return 0.0;
    double *v = malloc(m->nframes * sizeof *v);
    if (!v)
        return NAN;
    for (size_t i = 0; i < m->nframes; i++)
        v[i] = (double)an_frame_ns(&m->frames[i]) / 1e6;
    double med = cap_stats_median_select(v, m->nframes);
    free(v);
    return med;
}

cap_result an_diff_run_opts(an_diff *out, const an_capture *base,
                            const an_capture *new_, const an_diff_options *opt)
{
    an_diff_options ao;
    if (opt)
        ao = *opt;
    else
        memset(&ao, 0, sizeof ao);
    if (ao.floor_share_pct == 0.0)
        ao.floor_share_pct = AN_DIFF_DEFAULT_FLOOR_SHARE_PCT;
    cap_diff_options so;
    if (cap_diff_options_resolve(&so, &ao.stat) != CAP_OK ||
        !(ao.floor_us >= 0.0 && ao.floor_us < INFINITY) ||
        !(ao.floor_share_pct > 0.0 && ao.floor_share_pct < INFINITY))
        return CAP_E_MISUSE;
    memset(out, 0, sizeof *out);
    out->geomean_pct = NAN;
    double frame_med = median_frame_ms(base);
    if (isnan(frame_med))
        return CAP_E_NOMEM;
    double floor_ms = ao.floor_us / 1000.0;
    if (ao.floor_share_pct / 100.0 * frame_med > floor_ms)
        floor_ms = ao.floor_share_pct / 100.0 * frame_med;
    out->floor_ms = floor_ms;
    /* Blocks of `block` frames, fewer when the shorter run would not give
     * min_frames of them; the same size on both sides. */
    size_t block = ao.block ? ao.block : AN_DIFF_DEFAULT_BLOCK;
    size_t shorter = base->nframes < new_->nframes ? base->nframes
                                                   : new_->nframes;
    if (block > 1 && shorter / block < so.min_frames)
        block = shorter / so.min_frames > 1 ? shorter / so.min_frames : 1;
    out->block = block;
    out->frame_ms = frame_med;
    out->floor_share_pct = floor_ms > ao.floor_us / 1000.0 ? ao.floor_share_pct
                                                           : 0.0;
    size_t cap = 1 + base->nscopes + new_->nscopes;
    an_diff_row *rows = calloc(cap, sizeof *rows);
    cap_diff_input *in = calloc(cap, sizeof *in);
    double **owned = calloc(2 * cap, sizeof *owned);
    cap_diffstat *res = calloc(cap, sizeof *res);
    size_t n = 0, nowned = 0;
    cap_result r = CAP_OK;
    if (!rows || !in || !owned || !res) {
        r = CAP_E_NOMEM;
        goto done;
    }
    /* the frame row */
    rows[0].is_frame = 1;
    rows[0].name = "(frame)";
    rows[0].block = 1;
    in[0].base_ms = owned[nowned++] = frame_samples(base, &in[0].base_n);
    in[0].new_ms = owned[nowned++] = frame_samples(new_, &in[0].new_n);
    if (!in[0].base_ms || !in[0].new_ms) {
        r = CAP_E_NOMEM;
        goto done;
    }
    in[0].floor_ms = floor_ms;
    rows[0].base_total_ms = (double)an_total_frame_ns(base) / 1e6;
    rows[0].new_total_ms = (double)an_total_frame_ns(new_) / 1e6;
    n = 1;
    /* scopes of base (matched or removed), then new-only ones (added) */
    for (int side = 0; side < 2; side++) {
        const an_capture *a = side == 0 ? base : new_;
        const an_capture *b = side == 0 ? new_ : base;
        for (size_t i = 0; i < a->nscopes; i++) {
            const an_scope *s = &a->scopes[i];
            if (ao.only_scope && strcmp(s->name, ao.only_scope) != 0)
                continue;
            long j = find_match(b, s);
            if (side == 1 && j >= 0)
                continue; /* already paired from the base side */
            if (matches_any(key_of(s), ao.exclude, ao.nexclude) ||
                (s->path && matches_any(s->name, ao.exclude, ao.nexclude))) {
                out->excluded++;
                continue;
            }
            an_diff_row *row = &rows[n];
            const an_scope *sb = side == 0 ? s : j >= 0 ? &b->scopes[j] : NULL;
            const an_scope *sn = side == 0 ? (j >= 0 ? &b->scopes[j] : NULL) : s;
            row->base_total_ms = sb ? scope_frame_total_ms(base, sb) : 0;
            row->new_total_ms = sn ? scope_frame_total_ms(new_, sn) : 0;
            row->kind = s->kind;
            row->name = key_of(s);
            row->is_wait = s->is_wait || (j >= 0 && b->scopes[j].is_wait) ||
                           matches_any(key_of(s), ao.wait, ao.nwait) ||
                           (s->path && matches_any(s->name, ao.wait, ao.nwait));
            size_t na = 0, nb = 0;
            /* frame by frame when the scope ran in nearly every frame of
             * both runs; over blocks otherwise */
            size_t rb = j >= 0 ? block : 1;
            if (j >= 0 &&
                frames_ran(a, s) * 10 >= a->nframes * 9 &&
                frames_ran(b, &b->scopes[j]) * 10 >= b->nframes * 9)
                rb = 1;
            row->block = rb;
            double *va = scope_samples(a, s, rb, so.min_frames, &na);
            double *vb = j >= 0 ? scope_samples(b, &b->scopes[j], rb,
                                                so.min_frames, &nb)
                                : calloc(1, sizeof(double));
            owned[nowned++] = va;
            owned[nowned++] = vb;
            if (!va || !vb) {
                r = CAP_E_NOMEM;
                goto done;
            }
            if (side == 0) {
                in[n] = (cap_diff_input){.base_ms = va, .base_n = na,
                                         .new_ms = vb, .new_n = nb};
            } else {
                in[n] = (cap_diff_input){.base_ms = vb, .base_n = nb,
                                         .new_ms = va, .new_n = na};
            }
            in[n].floor_ms = floor_ms; /* samples are time per frame */
            n++;
        }
    }
    r = cap_diff_compare_all(res, in, n, &so);
    if (r != CAP_OK)
        goto done;
    for (size_t i = 0; i < n; i++) {
        rows[i].d = res[i];
        /* mean self time per frame over all frames of each run */
        double bm = rows[i].base_total_ms /
                    (double)(base->nframes ? base->nframes : 1);
        double nm = rows[i].new_total_ms /
                    (double)(new_->nframes ? new_->nframes : 1);
        rows[i].base_mean_ms = bm;
        rows[i].new_mean_ms = nm;
        rows[i].sort_key = fabs(nm - bm);
        if (isnan(rows[i].sort_key))
            rows[i].sort_key = 0;
        rows[i].gates = rows[i].is_frame  ? ao.gate_frame
                        : rows[i].is_wait ? ao.gate_waits
                                          : 1;
        out->waits += (size_t)rows[i].is_wait;
        if (res[i].verdict == CAP_VERDICT_REGRESSED) {
            out->regressed++;
            out->gating += (size_t)rows[i].gates;
        }
        if (res[i].verdict == CAP_VERDICT_IMPROVED)
            out->improved++;
    }
    if (n > 1)
        (void)cap_diff_geomean_pct(&out->geomean_pct, &out->geomean_used,
                                   res + 1, n - 1, &so);
    qsort(rows, n, sizeof *rows, row_cmp);
    out->rows = rows;
    out->n = n;
    rows = NULL;
done:
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    free(in);
    free(res);
    free(rows);
    return r;
}

cap_result an_diff_run(an_diff *out, const an_capture *base,
                       const an_capture *new_, const cap_diff_options *opt,
                       const char *only_scope)
{
    an_diff_options ao;
    memset(&ao, 0, sizeof ao);
    if (opt)
        ao.stat = *opt;
    ao.only_scope = only_scope;
    return an_diff_run_opts(out, base, new_, &ao);
}

void an_diff_free(an_diff *d)
{
    if (d)
        free(d->rows);
}

static void num(FILE *f, double v, const char *fmt)
{
    if (!isnan(v))
        fprintf(f, fmt, v);
}

/* "+1.2%" or "+inf%" (never "nan"): a value relative to a zero median. */
static void pct_text(char *buf, size_t size, double v)
{
    if (isinf(v))
        snprintf(buf, size, "%sinf%%", v > 0 ? "+" : "-");
    else
        snprintf(buf, size, "%+.1f%%", v);
}

int an_diff_report(FILE *out, const an_diff *d, const cap_diff_options *opt,
                   int csv, int colour, size_t top)
{
    cap_diff_options o;
    if (cap_diff_options_resolve(&o, opt) != CAP_OK)
        return -1;
    if (csv) {
        fputs("track,name,base_n,new_n,base_median_ms,new_median_ms,"
              "base_mean_ms,new_mean_ms,base_p95_ms,new_p95_ms,delta_pct,"
              "ci_low_pct,ci_high_pct,p_value,p_adjusted,verdict,"
              "band_pct,delta_ms,ci_low_ms,ci_high_ms,band_ms,wait,gates,block\n",
              out);
        for (size_t i = 0; i < d->n; i++) {
            const an_diff_row *r = &d->rows[i];
            const cap_diffstat *s = &r->d;
            fprintf(out, "%s,", r->is_frame ? "" : r->kind == AN_CPU ? "cpu" : "gpu");
            rep_csv_field(out, r->name);
            fprintf(out, ",%zu,%zu,", s->base_n, s->new_n);
            double v[] = {s->base_median, s->new_median, r->base_mean_ms,
                          r->new_mean_ms, s->base_p95, s->new_p95,
                          s->delta_pct, s->ci_low_pct, s->ci_high_pct};
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
                num(out, v[k], "%.6f");
                fputc(',', out);
            }
            num(out, s->p_value, "%.6g");
            fputc(',', out);
            num(out, s->p_adjusted, "%.6g");
            fprintf(out, ",%s,", cap_verdict_name(s->verdict));
            double w[] = {s->band_pct, s->delta_ms, s->ci_low_ms,
                          s->ci_high_ms, s->band_ms};
            for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
                num(out, w[k], "%.6f");
                fputc(',', out);
            }
            fprintf(out, "%d,%d,%zu\n", r->is_wait, r->gates, r->block);
        }
        fprintf(out, ",(geomean),%zu,%zu,,,,,,,", d->geomean_used,
                d->geomean_used);
        num(out, d->geomean_pct, "%.6f");
        fputs(",,,,,,,,,,,,,\n", out);
        return 0;
    }
    fprintf(out, "%-5s %-32s %7s %7s %11s %11s %8s %19s %7s %9s  %s\n",
            "track", "name", "base n", "new n", "base med", "new med",
            "delta", "interval", "band", "p (Holm)", "verdict");
    size_t shown = 0;
    for (size_t i = 0; i < d->n; i++) {
        const an_diff_row *r = &d->rows[i];
        if (top && !r->is_frame && shown >= top)
            continue;
        if (!r->is_frame)
            shown++;
        const cap_diffstat *s = &r->d;
        const char *vc = "", *ve = "";
        if (colour && s->verdict == CAP_VERDICT_REGRESSED && r->gates)
            vc = "\033[1;31m", ve = "\033[0m";
        else if (colour && s->verdict == CAP_VERDICT_IMPROVED)
            vc = "\033[1;32m", ve = "\033[0m";
        char ci[64] = "-", med_b[24] = "-", med_n[24] = "-", dl[24] = "-",
             pv[24] = "-", band[24] = "-", lo[24], hi[24];
        if (!isnan(s->base_median))
            snprintf(med_b, sizeof med_b, "%.3f ms", s->base_median);
        if (!isnan(s->new_median))
            snprintf(med_n, sizeof med_n, "%.3f ms", s->new_median);
        if (!isnan(s->delta_pct))
            pct_text(dl, sizeof dl, s->delta_pct);
        if (!isnan(s->ci_low_pct) && !isnan(s->ci_high_pct)) {
            pct_text(lo, sizeof lo, s->ci_low_pct);
            pct_text(hi, sizeof hi, s->ci_high_pct);
            snprintf(ci, sizeof ci, "[%s, %s]", lo, hi);
        }
        if (!isnan(s->band_pct)) {
            if (isinf(s->band_pct))
                snprintf(band, sizeof band, "inf");
            else
                snprintf(band, sizeof band, "%.*f%%",
                         s->band_pct < 99.95 ? 1 : 0, s->band_pct);
        }
        if (!isnan(s->p_adjusted))
            snprintf(pv, sizeof pv, "%.3g", s->p_adjusted);
        fprintf(out,
                "%-5s %-32.32s %7zu %7zu %11s %11s %8s %19s %7s %9s  %s%s%s%s\n",
                r->is_frame ? "" : r->kind == AN_CPU ? "cpu" : "gpu", r->name,
                s->base_n, s->new_n, med_b, med_n, dl, ci, band, pv, vc,
                cap_verdict_name(s->verdict), ve,
                r->is_frame ? (r->gates ? "" : " (not gating)")
                : !r->is_wait ? ""
                : r->gates    ? " (wait)"
                              : " (wait, not gating)");
    }
    if (top && shown < d->n - 1)
        fprintf(out, "(%zu more rows; --top 0 shows all)\n", d->n - 1 - shown);
    if (!isnan(d->geomean_pct))
        fprintf(out, "\ngeometric mean of the median changes over %zu scopes: "
                     "%+.2f%%\n",
                d->geomean_used, d->geomean_pct);
    fprintf(out, "\n%zu regressed (%zu gating), %zu improved.\n",
            d->regressed, d->gating, d->improved);
    if (d->waits) {
        int waits_gate = 0;
        for (size_t i = 0; i < d->n; i++)
            waits_gate |= d->rows[i].is_wait && d->rows[i].gates;
        fprintf(out, "Waits (time blocked, which grows when other work "
                     "slows): %zu %s,\n%s.\n",
                d->waits, d->waits == 1 ? "row" : "rows",
                waits_gate ? "gating the exit status (--gate-waits)"
                           : "judged but not gating the exit status");
    }
    if (d->n > 0 && d->rows[0].is_frame && !d->rows[0].gates)
        fprintf(out, "(frame) is wall time, holding every wait and the "
                     "machine's other load: judged,\nnot gating the exit "
                     "status (--gate-frame).\n");
    if (d->excluded)
        fprintf(out, "Excluded by --exclude: %zu %s.\n", d->excluded,
                d->excluded == 1 ? "row" : "rows");
    size_t tested = 0;
    for (size_t i = 0; i < d->n; i++)
        tested += !isnan(d->rows[i].d.p_adjusted);
    char floor_from[80] = "--floor-us";
    if (d->floor_share_pct > 0)
        snprintf(floor_from, sizeof floor_from,
                 "%g%% of the base median frame time", d->floor_share_pct);
    fprintf(out,
            "Band: a change counts only past the larger of %.1f%% of the "
            "base median and a\nfloor of %.3f ms per frame (%s).\n"
            "regressed / improved: p < %g (Holm over the %zu rows tested) "
            "and the whole\ninterval past the band; unchanged: the interval "
            "inside the band.\n"
            "Samples: self time per frame (frame time for (frame)), averaged "
            "over blocks of\n%zu frames for a scope that ran in under 90%% of "
            "the frames of a run; med: their\nmedian; delta: Hodges-Lehmann "
            "shift over the base median; interval: %.0f%%,"
            "\ndistribution-free (order statistics of the pairwise "
            "differences); p: one-sided\nMann-Whitney U tests against the "
            "band.\n",
            o.threshold_pct, d->floor_ms, floor_from, o.alpha, tested,
            d->block, 100.0 * (1.0 - 2.0 * o.alpha));
    return 0;
}
