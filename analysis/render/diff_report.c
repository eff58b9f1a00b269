/* diff_report.c - capture_diff's report of an an_diff: text or CSV. It
 * renders what analysis/diff.c computed and computes nothing of its own. */
#include <math.h>
#include <stdio.h>

#include "diff.h"
#include "render.h"
#include "report.h"

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

/* One CSV row of the comparison. */
static void csv_row(FILE *out, const char *track, const char *name,
                    const cap_diffstat *s, double base_mean, double new_mean,
                    int is_wait, int gates, size_t block, int multi)
{
    fprintf(out, "%s,", track);
    rep_csv_field(out, name);
    fprintf(out, ",%zu,%zu,", s->base_n, s->new_n);
    double v[] = {s->base_median, s->new_median, base_mean, new_mean,
                  s->base_p95, s->new_p95, s->delta_pct, s->ci_low_pct,
                  s->ci_high_pct};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        num(out, v[k], "%.6f");
        fputc(',', out);
    }
    num(out, s->p_value, "%.6g");
    fputc(',', out);
    num(out, s->p_adjusted, "%.6g");
    fprintf(out, ",%s,", cap_verdict_name(s->verdict));
    double w[] = {s->band_pct, s->delta_ms, s->ci_low_ms, s->ci_high_ms,
                  s->band_ms};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        num(out, w[k], "%.6f");
        fputc(',', out);
    }
    fprintf(out, "%d,%d,%zu", is_wait, gates, block);
    if (multi) {
        fprintf(out, ",%zu,%zu", s->base_runs, s->new_runs);
        double u[] = {s->base_run_sd, s->new_run_sd, s->run_sd_ms,
                      s->run_delta_ms, s->run_ci_low_ms, s->run_ci_high_ms};
        for (size_t k = 0; k < sizeof u / sizeof u[0]; k++) {
            fputc(',', out);
            num(out, u[k], "%.6f");
        }
        fputc(',', out);
        num(out, s->run_p_value, "%.6g");
        fputc(',', out);
        num(out, s->frame_ci_low_ms, "%.6f");
        fputc(',', out);
        num(out, s->frame_ci_high_ms, "%.6f");
        fputc(',', out);
        num(out, s->frame_p_value, "%.6g");
        fprintf(out, ",%d", s->within_spread);
    }
    fputc('\n', out);
}

/* One text row of the comparison; level: the base and new values of the
 * level columns when they are not the medians (the means, when the frames
 * fall in two groups); share: its medians are heavy shares in percent
 * (the "(heavy frames)" row). */
static void text_row(FILE *out, const char *track, const char *name,
                     const cap_diffstat *s, const double *level,
                     int frame_like, int share, int is_wait, int gates,
                     int multi, int colour)
{
    const char *vc = "", *ve = "";
    if (colour && s->verdict == CAP_VERDICT_REGRESSED && gates)
        vc = "\033[1;31m", ve = "\033[0m";
    else if (colour && s->verdict == CAP_VERDICT_IMPROVED)
        vc = "\033[1;32m", ve = "\033[0m";
    char ci[64] = "-", med_b[24] = "-", med_n[24] = "-", dl[24] = "-",
         pv[24] = "-", band[24] = "-", lo[24], hi[24];
    const char *unit = share ? "%.1f%% heavy" : "%.3f ms";
    double lb = level ? level[0] : s->base_median;
    double ln = level ? level[1] : s->new_median;
    if (!isnan(lb))
        snprintf(med_b, sizeof med_b, unit, lb);
    if (!isnan(ln))
        snprintf(med_n, sizeof med_n, unit, ln);
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
    fprintf(out, "%-5s %-32.32s %7zu %7zu %11s %11s %8s %19s %7s",
            track, name, s->base_n, s->new_n, med_b, med_n, dl, ci, band);
    if (multi) {
        char sd[24] = "-";
        if (isinf(s->run_sd_pct))
            snprintf(sd, sizeof sd, "inf");
        else if (!isnan(s->run_sd_pct))
            snprintf(sd, sizeof sd, "%.1f%%", s->run_sd_pct);
        fprintf(out, " %7s", sd);
    }
    const char *note = frame_like ? (gates ? "" : "not gating")
                       : !is_wait ? ""
                       : gates    ? "wait"
                                  : "wait, not gating";
    fprintf(out, " %9s  %s%s%s", pv, vc, cap_verdict_name(s->verdict), ve);
    if (s->within_spread)
        fprintf(out, " (within run-to-run spread%s%s)", *note ? "; " : "",
                note);
    else if (*note)
        fprintf(out, " (%s)", note);
    fputc('\n', out);
}

/* What the "(heavy frames)" row compared, under the summary. */
static void mix_text(FILE *out, const an_diff *d)
{
    const an_diff_mix *m = &d->mix;
    if (m->crowded) {
        size_t k = m->base.split + m->new_.split;
        size_t runs = d->base_runs + d->new_runs;
        fprintf(out, "Frames: the %s of %zu of %zu runs fall in two groups "
                     "(light around\n%.3f ms, heavy around %.3f ms); %s lie at "
                     "neither group or crowd\nthe cut between "
                     "them: the mix of the groups is not compared.\n",
                m->by_work ? "CPU work per frame" : "frame times", k, runs,
                m->light_ms, m->heavy_ms,
                runs - k == 1 ? "the other's" : "the others'");
        return;
    }
    if (!m->found)
        return;
    const an_diff_side_groups *b = &m->base, *n = &m->new_;
    char lb[24] = "-", ln[24] = "-", hb[24] = "-", hn[24] = "-";
    if (!isnan(b->light_ms))
        snprintf(lb, sizeof lb, "%.3f", b->light_ms);
    if (!isnan(n->light_ms))
        snprintf(ln, sizeof ln, "%.3f", n->light_ms);
    if (!isnan(b->heavy_ms))
        snprintf(hb, sizeof hb, "%.3f", b->heavy_ms);
    if (!isnan(n->heavy_ms))
        snprintf(hn, sizeof hn, "%.3f", n->heavy_ms);
    char cut[80] = "";
    if (b->split < d->base_runs || n->split < d->new_runs)
        snprintf(cut, sizeof cut, ";\nthe others' frames cut at %.3f ms",
                 m->cut_ms);
    if (m->by_work)
        fprintf(out, "%s: the CPU work per frame falls in two groups (the "
                     "frame\ntimes do not split), light around %.3f ms and "
                     "heavy around %.3f ms\n",
                AN_DIFF_MIX_ROW, m->light_ms, m->heavy_ms);
    else
        fprintf(out, "%s: the frame times fall in two groups, light around "
                     "%.3f ms\nand heavy around %.3f ms ",
                AN_DIFF_MIX_ROW, m->light_ms, m->heavy_ms);
    fprintf(out,
            "(split in %zu of %zu base and %zu of %zu new runs%s).\n"
            "Heavy: base %.1f %% of %zu frames, new %.1f %% of %zu; light %s "
            "-> %s ms,\nheavy %s -> %s ms. delta: what the change of the "
            "heavy share alone does\nto the mean %s, (new - base share) x "
            "(heavy - light), over\nthe base's mixed %.3f ms; interval: t, "
            "from the shares of batches of %zu\nframes (%zu base, %zu new). "
            "The other rows' shift compares the bulk of\neach distribution "
            "and does not see a change of the mix\n(docs/STATISTICS.md "
            "section 17).\n",
            b->split, d->base_runs, n->split, d->new_runs, cut,
            100.0 * b->share, b->frames, 100.0 * n->share, n->frames, lb, ln,
            hb, hn, m->by_work ? "CPU work per frame" : "frame",
            m->base_level_ms, m->batch, b->batches, n->batches);
}

/* The CSV table: a header, a row each (the mix after the frame row), the
 * geometric mean's row. */
static void diff_csv(FILE *out, const an_diff *d, int multi)
{
    fputs("track,name,base_n,new_n,base_median_ms,new_median_ms,"
          "base_mean_ms,new_mean_ms,base_p95_ms,new_p95_ms,delta_pct,"
          "ci_low_pct,ci_high_pct,p_value,p_adjusted,verdict,"
          "band_pct,delta_ms,ci_low_ms,ci_high_ms,band_ms,wait,gates,block",
          out);
    if (multi)
        fputs(",base_runs,new_runs,base_run_sd_ms,new_run_sd_ms,"
              "run_sd_ms,run_delta_ms,run_ci_low_ms,run_ci_high_ms,"
              "run_p_value,frame_ci_low_ms,frame_ci_high_ms,"
              "frame_p_value,within_spread",
              out);
    fputc('\n', out);
    for (size_t i = 0; i < d->n; i++) {
        const an_diff_row *r = &d->rows[i];
        csv_row(out, r->is_frame ? "" : r->kind == AN_CPU ? "cpu" : "gpu",
                r->name, &r->d, r->base_mean_ms, r->new_mean_ms,
                r->is_wait, r->gates, r->block, multi);
        if (r->is_frame && d->mix.found)
            csv_row(out, "", AN_DIFF_MIX_ROW, &d->mix.d, NAN, NAN, 0,
                    d->mix.gates, d->mix.batch, multi);
    }
    fprintf(out, ",(geomean),%zu,%zu,,,,,,,", d->geomean_used,
            d->geomean_used);
    num(out, d->geomean_pct, "%.6f");
    fputs(",,,,,,,,,,,,,", out);
    if (multi)
        fprintf(out, ",%zu,%zu,,,,,,,,,,,", d->base_runs, d->new_runs);
    fputc('\n', out);
}

/* The lines above the table (summarised, runs) and its header. */
static void text_head(FILE *out, const an_diff *d, int multi)
{
    if (d->approx) {
        fprintf(out, "Summarised: %s", AN_DIFF_APPROX_NOTE);
        if (d->late_values)
            fprintf(out, "; %llu values reached a frame already summarised "
                         "and count as samples of their own",
                    (unsigned long long)d->late_values);
        fputs(".\n", out);
    }
    if (multi)
        fprintf(out, "Runs: %zu base, %zu new (samples pooled over each "
                     "side's runs).\n",
                d->base_runs, d->new_runs);
    int means = d->level_of_means;
    fprintf(out, "%-5s %-32s %7s %7s %11s %11s %8s %19s %7s", "track",
            "name", "base n", "new n", means ? "base mean" : "base med",
            means ? "new mean" : "new med", "delta", "interval", "band");
    if (multi)
        fprintf(out, " %7s", "run sd");
    fprintf(out, " %9s  %s\n", "p (Holm)", "verdict");
}

/* The rows, the frame row and the mix's always, the top others. */
static void text_rows(FILE *out, const an_diff *d, int multi, int colour,
                      size_t top)
{
    int means = d->level_of_means;
    size_t shown = 0;
    for (size_t i = 0; i < d->n; i++) {
        const an_diff_row *r = &d->rows[i];
        if (top && !r->is_frame && shown >= top)
            continue;
        if (!r->is_frame)
            shown++;
        double level[2] = {r->base_mean_ms, r->new_mean_ms};
        text_row(out, r->is_frame ? "" : r->kind == AN_CPU ? "cpu" : "gpu",
                 r->name, &r->d, means ? level : NULL, r->is_frame, 0,
                 r->is_wait, r->gates, multi, colour);
        if (r->is_frame && d->mix.found)
            text_row(out, "", AN_DIFF_MIX_ROW, &d->mix.d, NULL, 1, 1, 0,
                     d->mix.gates, multi, colour);
    }
    if (top && shown < d->n - 1)
        fprintf(out, "(%zu more rows; --top 0 shows all)\n", d->n - 1 - shown);
}

/* The geometric mean of the changes, and the counts of verdicts. */
static void text_summary(FILE *out, const an_diff *d)
{
    if (!isnan(d->geomean_pct) && d->geomean_of_means)
        fprintf(out, "\ngeometric mean of the changes of the mean self time "
                     "per frame over %zu scopes\n(those that gate, both means "
                     "at least the floor; means, as the frames fall in\ntwo "
                     "groups, between which a median can jump): %+.2f%%\n",
                d->geomean_used, d->geomean_pct);
    else if (!isnan(d->geomean_pct))
        fprintf(out, "\ngeometric mean of the median changes over %zu scopes "
                     "(those that gate, both medians at least the floor): "
                     "%+.2f%%\n",
                d->geomean_used, d->geomean_pct);
    fprintf(out, "\n%zu regressed (%zu gating), %zu improved.\n",
            d->regressed, d->gating, d->improved);
}

/* What to weigh before acting on a regression of one run a side: the
 * runs' spread, how busy the CPUs were. */
static void one_run_notes(FILE *out, const an_diff *d, int multi)
{
    if (multi || !d->gating)
        return;
    fprintf(out, "One run a side: how runs of the same code differ (where "
                 "the threads were\nscheduled, the machine's other load) "
                 "is not in the test; before acting on a\nregression, "
                 "compare several runs a side (capture_diff B1 B2 B3 -- N1 "
                 "N2 N3;\ndocs/STATISTICS.md sections 11 and 15).\n");
    if (isfinite(d->base_busy) && isfinite(d->new_busy))
        fprintf(out, "Busy: scopes that are not waits held %.0f %% (base) "
                     "and %.0f %% (new) of the %u CPUs'\ntime in frames (a "
                     "wait not marked as one, by the program or --wait, "
                     "counts as\nbusy); near or over 100 %% a thread waits "
                     "for a core inside its scopes, which\nthen stretch "
                     "with where the scheduler put it.\n",
                100.0 * d->base_busy, 100.0 * d->new_busy, d->cpus);
}

/* The rows that do not gate (waits, the frame), the mix, the excluded. */
static void gating_notes(FILE *out, const an_diff *d)
{
    if (d->waits)
        fprintf(out, "Waits (time blocked, which grows when other work "
                     "slows): %zu %s,\n%s.\n",
                d->waits, d->waits == 1 ? "row" : "rows",
                d->waits_gate ? "gating the exit status (--gate-waits)"
                              : "judged but not gating the exit status");
    if (d->n > 0 && d->rows[0].is_frame && !d->rows[0].gates)
        fprintf(out, "(frame) is wall time, holding every wait and the "
                     "machine's other load: judged,\nnot gating the exit "
                     "status (--gate-frame).\n");
    mix_text(out, d);
    if (d->excluded)
        fprintf(out, "Excluded by --exclude: %zu %s.\n", d->excluded,
                d->excluded == 1 ? "row" : "rows");
}

/* The legend: the band, the verdicts, the samples and statistics. */
static void legend(FILE *out, const an_diff *d, const cap_diff_options *o)
{
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
            "the frames of a run; %sHodges-Lehmann "
            "shift over the base median; interval: %.0f%%,"
            "\ndistribution-free (order statistics of the pairwise "
            "differences); p: one-sided\nMann-Whitney U tests against the "
            "band.\n",
            o->threshold_pct, d->floor_ms, floor_from, o->alpha, d->tested,
            d->block,
            d->level_of_means
                ? "mean: self\ntime (frame time) per frame over all "
                  "frames, shown for the median, which\nlands on either "
                  "group of frames and can jump between them; delta:\n"
                : "med: their\nmedian; delta: ",
            100.0 * (1.0 - 2.0 * o->alpha));
}

/* Several runs a side: how the runs enter the test. */
static void runs_legend(FILE *out, const an_diff *d)
{
    fprintf(out,
            "Runs: the samples of each side's runs are pooled, and each "
            "run's median is\nkept; run sd: the pooled SD of the run "
            "medians about their side's mean\n(between runs, df %zu), "
            "over the base median. interval: the hull of the\nframes' "
            "interval and a t interval of the change of the mean run "
            "median; p:\nthe larger of the U tests' and the t tests' "
            "(docs/STATISTICS.md section 15).\n",
            d->base_runs + d->new_runs - 2);
    fprintf(out,
            "Within run-to-run spread: %zu %s (the frames alone put "
            "the change past the\nband, the runs do not).\n",
            d->within_spread, d->within_spread == 1 ? "row" : "rows");
}

int an_diff_report(FILE *out, const an_diff *d, const cap_diff_options *opt,
                   int csv, int colour, size_t top)
{
    cap_diff_options o;
    if (cap_diff_options_resolve(&o, opt) != CAP_OK)
        return -1;
    /* several runs on a side: the run columns and lines */
    int multi = d->base_runs > 1 || d->new_runs > 1;
    if (csv) {
        diff_csv(out, d, multi);
        return 0;
    }
    text_head(out, d, multi);
    text_rows(out, d, multi, colour, top);
    text_summary(out, d);
    one_run_notes(out, d, multi);
    gating_notes(out, d);
    legend(out, d, &o);
    if (multi)
        runs_legend(out, d);
    return 0;
}
