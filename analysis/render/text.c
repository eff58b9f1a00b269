/* text.c - aligned text for a terminal: renders report.h's results. */
#include <math.h>
#include <string.h>

#include "render/render.h"

#define MS(ns) ((double)(ns) / 1e6)

static const char *bold(int colour)
{
    return colour ? "\033[1m" : "";
}
static const char *reset(int colour)
{
    return colour ? "\033[0m" : "";
}

static const char *kind_name(an_kind k)
{
    return k == AN_CPU ? "cpu" : "gpu";
}

static size_t name_width(const an_capture *m, size_t min, size_t max)
{
    size_t w = min;
    for (size_t i = 0; i < m->nscopes; i++) {
        size_t l = strlen(m->scopes[i].name);
        if (l > w)
            w = l;
    }
    return w > max ? max : w;
}

static void join_names(FILE *out, char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", names[i]);
}

/* ---- warnings ---------------------------------------------------------- */

int an_text_warnings(FILE *err, const an_capture *m, const char *report,
                     size_t min_frames, int colour)
{
    int n = 0;
    const char *w0 = colour ? "\033[1;31mwarning:\033[0m" : "warning:";
    const cap_reader_stats *st = &m->st;
    if (st->unnamed_ids || m->unnamed_n) {
        uint64_t k = st->unnamed_ids > m->unnamed_n ? st->unnamed_ids
                                                    : m->unnamed_n;
        fprintf(err, "%s %s: %llu scope id%s ha%s no name (", w0, m->path,
                (unsigned long long)k, k == 1 ? "" : "s", k == 1 ? "s" : "ve");
        for (size_t i = 0; i < m->unnamed_n; i++)
            fprintf(err, "%s#%u", i ? ", " : "", m->unnamed_ids[i]);
        if (k > m->unnamed_n) /* ids the reader met in no row's scope */
            fprintf(err, "%s...", m->unnamed_n ? ", " : "");
        fprintf(err, "): the file holds no name for them (its name table "
                     "was damaged or cut before the names were written, the "
                     "trace it was imported from had nameless events, or a "
                     "converter lost names stored once, as puffin stores "
                     "them); they are shown as <unnamed #id>, not as real "
                     "scope names\n");
        n++;
    }
    if (st->truncated) {
        fprintf(err, "%s %s: file is truncated (%s): recording stopped "
                     "before close; the report covers the %zu frames "
                     "recovered\n",
                w0, m->path, m->damage_detail[0] ? m->damage_detail : "no footer",
                m->nframes);
        n++;
    }
    if (st->corrupt_chunks) {
        fprintf(err, "%s %s: %llu damaged chunk%s skipped (first: %s): "
                     "events in them are missing from the report\n",
                w0, m->path, (unsigned long long)st->corrupt_chunks,
                st->corrupt_chunks == 1 ? "" : "s", m->damage_detail);
        n++;
    }
    /* counts the producer or the reader recorded: one line each */
    const struct {
        uint64_t count;
        const char *what;
    } counted[] = {
        {st->dropped_scopes,
         "scopes were dropped by the producer (its buffers were full: the "
         "disk or writer thread could not keep up); call counts and times "
         "are low"},
        {st->gpu_invalid,
         "GPU spans were invalid (end not after begin, or longer than 1 s) "
         "and were dropped, not clamped"},
        {st->gpu_untimed_frames,
         "frames have no GPU timing (their query slot was still in flight)"},
        {st->gpu_unmeasured,
         "GPU spans were not measured (their timestamps were never "
         "written); they are left out, not counted as zero"},
        {st->clock_backwards,
         "timestamps went backwards on their thread and were recorded as "
         "no time passing"},
        {st->closed_at_end,
         "scopes were still open when the capture closed and end there: "
         "their times are cut short"},
        {st->stray_ends,
         "scope ends had no scope open on their thread (an end without its "
         "begin, or a scope opened before the capture began) and were "
         "ignored"},
    };
    for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++) {
        if (!counted[i].count)
            continue;
        fprintf(err, "%s %s: %llu %s\n", w0, m->path,
                (unsigned long long)counted[i].count, counted[i].what);
        n++;
    }
    if (m->nframes == 0 && (m->cpu_events || m->gpu_events)) {
        fprintf(err, "%s %s: the capture has no frames: per-frame columns "
                     "are empty (for an imported trace, choose the frame "
                     "scope with capture_convert --frame-scope NAME)\n",
                w0, m->path);
        n++;
    } else if (min_frames && m->nframes < min_frames) {
        fprintf(err, "%s %s: %s needs at least %zu frames; the capture has "
                     "%zu: the report is not meaningful\n",
                w0, m->path, report, min_frames, m->nframes);
        n++;
    }
    an_totals t;
    an_totals_compute(m, &t);
    if (t.outside_warned) {
        fprintf(err, "%s %s: %.3f ms of CPU time (%.1f%% of all recorded) "
                     "ran outside every frame (before the first frame mark, "
                     "between frames or after the last",
                w0, m->path, MS(t.outside_ns),
                t.cpu_ns > 0 ? 100.0 * (double)t.outside_ns / (double)t.cpu_ns
                             : 100.0);
        if (m->noutside_threads) {
            fprintf(err, "; thread%s only outside frames: ",
                    m->noutside_threads == 1 ? "" : "s");
            join_names(err, m->outside_threads, m->noutside_threads);
        }
        fprintf(err, "): it counts in totals and shares, in no frame's "
                     "figures\n");
        n++;
    }
    return n;
}

/* ---- header ------------------------------------------------------------ */


void an_text_header(FILE *out, const an_capture *m, const an_frame_stats *fs,
                    const an_totals *t, int colour)
{
    const char *v;
    fprintf(out, "%scapture%s   %s (format %u.%u)\n", bold(colour),
            reset(colour), m->path, m->major, m->minor);
    if ((v = an_meta(m, "program")))
        fprintf(out, "program   %s", v);
    if ((v = an_meta(m, "build")))
        fprintf(out, "   build %s", v);
    if (an_meta(m, "program") || an_meta(m, "build"))
        fputc('\n', out);
    if ((v = an_meta(m, "machine")))
        fprintf(out, "machine   %s\n", v);
    if ((v = an_meta(m, "start_time")))
        fprintf(out, "start     %s\n", v);
    fprintf(out, "clock     %s\n", m->clock_source);
    fprintf(out, "duration  %.3f s\n",
            m->last_ns > m->first_ns
                ? an_elapsed_ns(m->first_ns, m->last_ns) / 1e9
                : 0.0);
    fprintf(out, "frames    %zu\n", m->nframes);
    fprintf(out, "threads   %zu", m->nthreads);
    if (m->nthreads) {
        fputs(" (", out);
        join_names(out, m->threads, m->nthreads);
        fputc(')', out);
    }
    fputc('\n', out);
    fprintf(out, "GPU       %zu track%s", m->ntracks,
            m->ntracks == 1 ? "" : "s");
    if (m->ntracks) {
        fputs(" (", out);
        join_names(out, m->tracks, m->ntracks);
        fputc(')', out);
    }
    fputc('\n', out);
    if (m->approx && !m->reread) { /* --frames: exact values */
        fprintf(out, "quantiles %s", AN_APPROX_NOTE);
        if (m->late_values)
            fprintf(out, "; %llu values reached a frame already summarised "
                         "and count as frames of their own",
                    (unsigned long long)m->late_values);
        fputc('\n', out);
    }
    if (fs->n) {
        fprintf(out, "\n%sFrame time%s (ms, %zu frames)\n", bold(colour),
                reset(colour), fs->n);
        fprintf(out, "  mean %.3f   median %.3f   p95 %.3f   p99 %.3f   "
                     "p99.9 %.3f   max %.3f\n",
                fs->mean, fs->median, fs->p95, fs->p99, fs->p999, fs->max);
        fprintf(out, "  1%% low %.3f ms (%.1f fps): the mean of the slowest "
                     "1%% of frames (%zu frame%s)\n",
                fs->low1, fs->low1 > 0 ? 1000.0 / fs->low1 : 0.0,
                fs->low1_frames, fs->low1_frames == 1 ? "" : "s");
        fprintf(out, "  stutters %zu: frames over 2.5x the median of the 31 "
                     "frames around them\n",
                fs->stutters);
        if (fs->groups == 2)
            fprintf(out, "  two groups all along: light frames around %.3f ms "
                         "(%.0f %%), heavy around %.3f ms (%.0f %%) (--split "
                         "sets them side by side, --over-time follows "
                         "each)\n",
                    fs->group_ms[0], fs->group_share[0] * 100,
                    fs->group_ms[1], fs->group_share[1] * 100);
    }
    if (t->outside_shown)
        fprintf(out, "\n%sTime outside frames%s: %.3f ms of CPU self time "
                     "(%.1f%% of the %.3f ms recorded): %.3f ms before the "
                     "first frame, %.3f ms between frames, %.3f ms after "
                     "the last\n",
                bold(colour), reset(colour), MS(t->outside_ns),
                t->cpu_ns > 0 ? 100.0 * (double)t->outside_ns /
                                    (double)t->cpu_ns
                              : 100.0,
                MS(t->cpu_ns), MS(t->before_ns), MS(t->between_ns),
                MS(t->after_ns));
    if (t->outside_shown && m->noutside_threads) {
        fprintf(out, "  thread%s that ran only outside frames: ",
                m->noutside_threads == 1 ? "" : "s");
        join_names(out, m->outside_threads, m->noutside_threads);
        fputc('\n', out);
    }
}

/* ---- ranking ----------------------------------------------------------- */

void an_text_ranking(FILE *out, const an_capture *m, const an_ranking *r,
                     int colour)
{
    int w = (int)name_width(m, 10, 48);
    for (int k = AN_CPU; k <= AN_GPU; k++) {
        size_t lo = k == AN_CPU ? 0 : r->ncpu, hi = k == AN_CPU ? r->ncpu : r->n;
        if (lo == hi)
            continue;
        fprintf(out, "\n%s%s scopes by self time%s\n", bold(colour),
                k == AN_CPU ? "CPU" : "GPU", reset(colour));
        fprintf(out, "  %-*s %9s %12s %12s %14s %12s %7s\n", w, "name",
                "calls", "total ms", "self ms", "self/frame ms",
                "p95/frame ms", "share");
        for (size_t i = lo; i < hi; i++) {
            const an_rank_row *row = &r->rows[i];
            const an_scope *s = row->scope;
            fprintf(out, "  %-*.*s %9llu %12.3f %12.3f ", w, w, s->name,
                    (unsigned long long)s->calls, MS(s->total_ns),
                    MS(s->self_ns));
            if (m->nframes)
                fprintf(out, "%14.3f %12.3f ", row->pf_mean, row->pf_p95);
            else
                fprintf(out, "%14s %12s ", "-", "-");
            if (!isnan(row->share_pct))
                fprintf(out, "%6.1f%%", row->share_pct);
            else
                fprintf(out, "%7s", "-");
            fputs(s->is_wait ? "  wait\n" : "\n", out);
        }
    }
    if (!r->n) {
        fprintf(out, "\n(no scopes)\n");
        return;
    }
    fprintf(out, "\nshare: self time over all the time recorded of its kind "
                 "(CPU %.3f ms on %zu thread%s",
            MS(r->totals.cpu_ns), r->totals.threads,
            r->totals.threads == 1 ? "" : "s");
    if (r->n > r->ncpu)
        fprintf(out, ", GPU %.3f ms", MS(r->totals.gpu_ns));
    fprintf(out, "), inside frames or not; recursion is not double-counted "
                 "in total\n");
    if (r->nwait)
        fprintf(out, "wait: time a thread spent blocked, not working (a "
                     "scope the program tagged as a wait, or matched by "
                     "--wait): %zu scope%s, %.3f ms, %.1f%% of the CPU "
                     "time\n",
                r->nwait, r->nwait == 1 ? "" : "s", MS(r->wait_ns),
                r->totals.cpu_ns > 0
                    ? 100.0 * (double)r->wait_ns / (double)r->totals.cpu_ns
                    : 0.0);
    if (r->busy >= AN_BUSY_NOTE_SHARE)
        fprintf(out, "busy: scopes that are not waits held %.0f%% of the %u "
                     "CPUs' time in frames (a wait not marked as one counts "
                     "as busy): near 100%% threads wait for a core inside "
                     "their scopes, and self times hold that wait\n",
                100.0 * r->busy, r->cpus);
}

/* ---- tree -------------------------------------------------------------- */

void an_text_tree(FILE *out, const an_capture *m, const an_tree *t,
                  int colour)
{
    fprintf(out, "\n%sCall tree%s (merged by call path; share of all the "
                 "time recorded on CPU threads or GPU tracks)\n"
                 "  %9s %12s %12s %7s  name\n",
            bold(colour), reset(colour), "calls", "total ms", "self ms",
            "share");
    (void)m;
    for (size_t i = 0; i < t->n; i++) {
        const an_tree_row *r = &t->rows[i];
        const an_node *n = r->node;
        if (r->depth < 0) {
            fprintf(out, "\n%s%s %s%s  (%.3f ms)\n", bold(colour),
                    n->kind == AN_CPU ? "thread" : "GPU track", n->name,
                    reset(colour), MS(r->total_ns));
            continue;
        }
        fprintf(out, "  %9llu %12.3f %12.3f ", (unsigned long long)n->calls,
                MS(n->total_ns), MS(n->self_ns));
        if (isnan(r->share_pct))
            fprintf(out, "%7s", "-");
        else
            fprintf(out, "%6.1f%%", r->share_pct);
        fprintf(out, "  %*s%s%s\n", 2 * r->depth, "", n->name,
                n->is_wait ? "  (wait)" : "");
    }
}

/* ---- split ------------------------------------------------------------- */

void an_text_split(FILE *out, const an_capture *m, const an_split *s,
                   int colour)
{
    size_t q = s->quarter;
    if (q == 0) {
        fprintf(out, "\nSplit: needs at least 4 frames (a quarter each "
                     "side); the capture has %zu\n",
                s->nframes);
        return;
    }
    fprintf(out, "\n%sSplit%s: %zu frames ordered by %s%s; the fastest "
                 "quarter vs the slowest quarter (%zu frames each)\n",
            bold(colour), reset(colour), s->nframes,
            s->by ? "the self time of "
            : s->by_work ? "their CPU work (every CPU scope that is not a "
                           "wait, summed)"
                         : "frame time",
            s->by ? s->by->name : "", q);
    const an_summary *fr = s->frame, *ra = s->ratio;
    fprintf(out, "  %-24s %12s %12s %12s\n", "", "fast", "slow", "delta");
    fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, mean",
            fr[0].mean, fr[1].mean, fr[1].mean - fr[0].mean);
    fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, median",
            fr[0].median, fr[1].median, fr[1].median - fr[0].median);
    fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, p95",
            fr[0].p95, fr[1].p95, fr[1].p95 - fr[0].p95);
    if (s->by_work) {
        const an_summary *wk = s->work;
        fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "CPU work ms, mean",
                wk[0].mean, wk[1].mean, wk[1].mean - wk[0].mean);
        fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "CPU work ms, median",
                wk[0].median, wk[1].median, wk[1].median - wk[0].median);
    }
    if (s->held)
        fprintf(out, "\n  The slow quarter's median frame is only %.2f %% "
                     "longer than the fast quarter's: most frames are held "
                     "at one frame time (a frame cap, vsync or a thread "
                     "that sets the pace) and the slow quarter is mostly "
                     "such frames, so ordering by frame time says little "
                     "about the work. --split-by-work orders frames by "
                     "their CPU work instead; --over-time shows whether the "
                     "work grows inside the cap.\n",
                s->held_pct);
    if (ra[0].n || ra[1].n) {
        fprintf(out, "\n  %sframe/GPU ratio%s: frame time over the GPU "
                     "work it recorded (1.0: the GPU is the wall; 2.0: "
                     "the frame waited for the GPU twice)\n",
                bold(colour), reset(colour));
        fprintf(out, "  %-24s %12zu %12zu\n", "frames with GPU time",
                ra[0].n, ra[1].n);
        const char *rl[3] = {"ratio, mean", "ratio, median", "ratio, p95"};
        for (int k = 0; k < 3; k++) {
            fprintf(out, "  %-24s", rl[k]);
            for (int p = 0; p < 2; p++) {
                double v = k == 0 ? ra[p].mean : k == 1 ? ra[p].median
                                                        : ra[p].p95;
                if (isnan(v))
                    fprintf(out, " %12s", "-");
                else
                    fprintf(out, " %12.3f", v);
            }
            fputc('\n', out);
        }
        size_t hmax = 1;
        for (int p = 0; p < 2; p++)
            for (size_t b = 0; b < AN_SPLIT_HIST_BINS; b++)
                if (s->hist[p][b] > hmax)
                    hmax = s->hist[p][b];
        fprintf(out, "\n  %-12s %-27s %-27s\n", "ratio", "fast", "slow");
        for (size_t b = 0; b < AN_SPLIT_HIST_BINS; b++) {
            char label[32];
            if (b + 1 < AN_SPLIT_HIST_BINS)
                snprintf(label, sizeof label, "%.2f-%.2f",
                         an_split_hist_edges[b], an_split_hist_edges[b + 1]);
            else
                snprintf(label, sizeof label, ">=%.2f", an_split_hist_edges[b]);
            fprintf(out, "  %-12s", label);
            for (int p = 0; p < 2; p++) {
                size_t bar = (s->hist[p][b] * 20 + hmax - 1) / hmax;
                char bars[21];
                memset(bars, '#', bar);
                bars[bar] = 0;
                fprintf(out, " %-20s %5zu ", bars, s->hist[p][b]);
            }
            fputc('\n', out);
        }
    } else {
        fprintf(out, "\n  frame/GPU ratio: no GPU spans in this capture\n");
    }
    int w = (int)name_width(m, 10, 40);
    fprintf(out, "\n  %sself ms per frame, mean%s\n", bold(colour),
            reset(colour));
    fprintf(out, "  %-5s %-*s %12s %12s %12s\n", "track", w, "name", "fast",
            "slow", "delta");
    for (size_t k = 0; k < s->nscopes; k++) {
        const an_split_scope *x = &s->scopes[k];
        fprintf(out, "  %-5s %-*.*s %12.3f %12.3f %+12.3f\n",
                kind_name(x->scope->kind), w, w, x->scope->name,
                x->pop[0].mean, x->pop[1].mean,
                x->pop[1].mean - x->pop[0].mean);
    }
}

/* ---- over time --------------------------------------------------------- */

void an_text_ratio(FILE *out, an_ratio r, int width)
{
    switch (r.state) {
    case AN_RATIO_VALUE:
        fprintf(out, "%*.2fx", width - 1, r.value);
        break;
    case AN_RATIO_FROM_ZERO:
        fprintf(out, "%*s", width, "from 0");
        break;
    case AN_RATIO_AT_ZERO:
        fprintf(out, "%*s", width, "at 0");
        break;
    case AN_RATIO_INFINITE:
        fprintf(out, "%*s", width, "infinite");
        break;
    default:
        fprintf(out, "%*s", width, "empty");
        break;
    }
}

static void num_or_dash(FILE *out, const char *fmt, int width, double v)
{
    if (isnan(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, fmt, v);
}

/* "Every top scope grew by about 1.22x ... (1.21x to 1.22x[; X stood
 * apart at 0.72x | ; X (0.72x) and Y (4.10x) stood apart])", the opening
 * of the throttling rows. */
static void uniform_growth(FILE *out, const an_verdict *v)
{
    const double *f = v->fig;
    fprintf(out, "Every top scope grew by about %.2fx from the first bin to "
                 "the last (%.2fx to %.2fx",
            f[0], f[1], f[2]);
    if (v->scope && v->scope2)
        fprintf(out, "; %s (%.2fx) and %s (%.2fx) stood apart", v->scope,
                f[4], v->scope2, v->fig2);
    else if (v->scope)
        fprintf(out, "; %s stood apart at %.2fx", v->scope, f[4]);
    fputc(')', out);
}

/* "Frame time held steady (median ...)" or "Frame time grew only 9.8 %
 * (median ...)": the opening of capped-headroom, alone or cited. */
static void headroom_lead(FILE *out, const an_verdict *v)
{
    const double *f = v->fig;
    if (fabs(f[3] - 1.0) < AN_OT_FLAT)
        fprintf(out, "Frame time held steady ");
    else
        fprintf(out, "Frame time grew only %.1f %% ", (f[3] - 1.0) * 100);
    fprintf(out, "(median %.3f ms in the first bin, %.3f ms in the last)",
            f[1], f[2]);
}

/* "Frame time grew 1.30x from the first bin to the last, unevenly across
 * scopes": the opening of work-grew, alone or cited. */
static void uneven_lead(FILE *out, const an_verdict *v)
{
    fprintf(out, "Frame time grew %.2fx from the first bin to the last, "
                 "unevenly across scopes",
            v->fig[0]);
}

/* A device row's lead: what the scopes did, from the row it cites. */
static void device_lead(FILE *out, const an_verdict *v, an_verdict_kind cited)
{
    const double *f = v->fig;
    switch (cited) {
    case AN_V_THROTTLING:
    case AN_V_THROTTLING_UNCHECKED:
        uniform_growth(out, v);
        break;
    case AN_V_UNIFORM_MEMORY_MOVED:
        uniform_growth(out, v);
        fprintf(out, ", and memory moved %.2fx over the second half,", f[3]);
        break;
    case AN_V_WAITS_GREW:
        fprintf(out, "Frame time grew %.2fx from the first bin to the last, "
                     "the waits adding more time than the work (%s the most, "
                     "%.2fx),",
                f[0], v->scope ? v->scope : "?", f[1]);
        break;
    case AN_V_WORK_GREW:
        uneven_lead(out, v);
        if (v->scope)
            fprintf(out, " (%s added the most time, %.2fx)", v->scope, f[1]);
        fputc(',', out);
        break;
    case AN_V_CAPPED_HEADROOM:
        headroom_lead(out, v);
        fprintf(out, " but the work inside the frame grew about %.2fx", f[0]);
        break;
    case AN_V_STEADY:
        fprintf(out, "Frame time is steady across the bins (%.2fx from the "
                     "first to the last)", f[0]);
        break;
    default:
        fprintf(out, "The CPU work per frame changed %.2fx from the first "
                     "bin to the last",
                f[0]);
        break;
    }
}

/* A device row: the scopes' growth and the device's evidence in one
 * sentence, then what it means for the row it cites. */
static void device_verdict(FILE *out, const an_verdict *v,
                           const an_evidence *ev)
{
    double c = v->fig[5];
    an_verdict_kind cited = c >= 0 && c < AN_V_COUNT ? (an_verdict_kind)c
                                                     : AN_V_COUNT;
    char buf[512] = "";
    if (ev)
        an_evidence_text(ev, buf, sizeof buf);
    device_lead(out, v, cited);
    fprintf(out, " while %s.", buf[0] ? buf : "the device's counters moved");
    int uniform = cited == AN_V_THROTTLING ||
                  cited == AN_V_THROTTLING_UNCHECKED;
    switch (v->kind) {
    case AN_V_DEVICE_THERMAL:
    case AN_V_DEVICE_POWER:
        if (cited == AN_V_THROTTLING)
            fputs(" The device slowed down; memory stayed flat, so the work "
                  "did not grow.", out);
        else if (uniform)
            fputs(" The device slowed down (no memory counter recorded to "
                  "rule out growing work).", out);
        else if (cited == AN_V_UNIFORM_MEMORY_MOVED)
            fputs(" The device slowed down, and the moving memory may be "
                  "growing work or a leak as well.", out);
        else if (cited == AN_V_WAITS_GREW || cited == AN_V_WORK_GREW)
            fputs(" The device slowed down; the uneven growth says the work "
                  "changed too.", out);
        else if (cited == AN_V_CAPPED_HEADROOM)
            fputs(" The cap hides the slowdown until the headroom runs "
                  "out.", out);
        break;
    case AN_V_DEVICE_WORK_GREW:
        if (uniform || cited == AN_V_UNIFORM_MEMORY_MOVED)
            fputs(" Growth this even is the throttling signature, but the "
                  "clocks held: not throttling.", out);
        break;
    case AN_V_DEVICE_CONTRADICTS:
        fputs(" The device's evidence contradicts the scopes: the work "
              "waits on something else, the clock had headroom, or the "
              "counter is not the device that ran it.", out);
        break;
    default:
        break;
    }
    fputc('\n', out);
}

void an_text_verdict(FILE *out, const an_verdict *v, const an_evidence *ev)
{
    const double *f = v->fig;
    switch (v->kind) {
    case AN_V_TOO_SHORT:
        fprintf(out, "Only one bin holds frames: nothing to compare over "
                     "time (use more bins, or a longer capture).\n");
        break;
    case AN_V_THROTTLING:
        uniform_growth(out, v);
        fprintf(out, " while memory stayed flat: the throttling signature. "
                     "The device slowed down; the work did not grow.\n");
        break;
    case AN_V_THROTTLING_UNCHECKED:
        uniform_growth(out, v);
        fprintf(out, ": uniform growth is the throttling signature (no "
                     "memory counter recorded to rule out growing work).\n");
        break;
    case AN_V_UNIFORM_MEMORY_MOVED:
        uniform_growth(out, v);
        fprintf(out, ", but memory moved too (%.2fx over the second half of "
                     "the capture): look for growing work or a leak before "
                     "blaming the clock.\n",
                f[3]);
        break;
    case AN_V_WORK_GREW:
        uneven_lead(out, v);
        if (v->scope)
            fprintf(out, ": %s added the most time (%.2fx): it did more "
                         "work.\n",
                    v->scope, f[1]);
        else
            fprintf(out, ": the scopes with the largest growth did more "
                         "work.\n");
        break;
    case AN_V_WAITS_GREW:
        fprintf(out, "Frame time grew %.2fx from the first bin to the last, "
                     "and the waits added more time than the work, %s the "
                     "most (%.2fx): the frame spent "
                     "longer waiting (for the GPU, a lock or a hand-off), "
                     "not doing more work.\n",
                f[0], v->scope, f[1]);
        break;
    case AN_V_CAPPED_HEADROOM:
        headroom_lead(out, v);
        fprintf(out, " while the work inside the frame grew about %.2fx: "
                     "something holds the frame (a frame cap, vsync, or a "
                     "thread that sets the pace) and the growing work is "
                     "eating its headroom.\n",
                f[0]);
        break;
    case AN_V_CAP_ABSORBING:
        fprintf(out, "The wait %s shrank from %.3f ms to %.3f ms per frame "
                     "(%.2fx): the cap's idle time absorbed the growth; "
                     "frames miss the cap once it reaches 0.\n",
                v->scope, f[0], f[1], f[2]);
        break;
    case AN_V_RAMP:
        fprintf(out, "Frame time rose through the whole capture (median "
                     "%.3f ms in the first bin, %.3f ms halfway, %.3f ms in "
                     "the last): a ramp still going at the end, not a cold "
                     "start; capture longer to see where it settles.\n",
                f[0], f[1], f[2]);
        break;
    case AN_V_COLD_START:
        fprintf(out, "The first bin is faster than the settled ones (median "
                     "%.3f ms vs %.3f ms): the device was not warm when the "
                     "capture started. Warm it before capturing, or leave "
                     "the start out (--skip-seconds).\n",
                f[0], f[1]);
        break;
    case AN_V_DEVICE_THERMAL:
    case AN_V_DEVICE_POWER:
    case AN_V_DEVICE_WORK_GREW:
    case AN_V_DEVICE_NO_CLOCK:
    case AN_V_DEVICE_CONTRADICTS:
        device_verdict(out, v, ev);
        break;
    case AN_V_STEADY:
    default:
        fprintf(out, "Frame time is steady across the bins.\n");
        break;
    }
}

void an_text_over_time(FILE *out, const an_capture *m, const an_over_time *ot,
                       int colour)
{
    (void)m;
    if (!ot->nframes) {
        fprintf(out, "\nOver time: no frames\n");
        return;
    }
    int bins = ot->nbins;
    fprintf(out, "\n%sOver time%s: %zu frames in %d bins of %.3f s (by "
                 "each frame's start since the first frame)\n",
            bold(colour), reset(colour), ot->nframes, bins, ot->width_s);
    int two = ot->groups == 2;
    int by_work = two && ot->group_by_work;
    if (two) {
        int lacks = 0; /* a bin with frames of one group only */
        for (int b = 0; b < bins; b++)
            lacks |= ot->bins[b].frames &&
                     (!ot->bins[b].group_frames[0] ||
                      !ot->bins[b].group_frames[1]);
        fprintf(out, "  Frames fall in two groups all along the capture%s: "
                     "light (median %.3f ms%s, %.0f %% of frames) and heavy "
                     "(%.3f ms, %.0f %%). A bin's median would jump between "
                     "them with the share of heavy frames it holds, so each "
                     "figure below is a mixed median: each group's median in "
                     "the bin, weighted by the capture's mix%s.\n",
                by_work ? " by their CPU work (the frame times do not split: "
                          "something holds them)"
                        : "",
                ot->group_ms[0], by_work ? " of work" : "",
                ot->group_share[0] * 100, ot->group_ms[1],
                ot->group_share[1] * 100,
                lacks ? " (a bin without frames of a group takes that "
                        "group's median from the nearest bins with it)"
                      : "");
    }
    fprintf(out, "  %4s %9s %9s %7s", "bin", "start s", "end s", "frames");
    if (two)
        fprintf(out, " %10s %10s %6s", by_work ? "light work" : "light ms",
                by_work ? "heavy work" : "heavy ms", "heavy");
    fprintf(out, " %11s %11s %8s\n", two ? "mixed ms" : "median ms",
            "p95 ms", "growth");
    for (int b = 0; b < bins; b++) {
        const an_ot_bin *B = &ot->bins[b];
        fprintf(out, "  %4d %9.3f %9.3f %7zu", b, B->start_s, B->end_s,
                B->frames);
        if (two) {
            num_or_dash(out, " %10.3f", 10, B->group_median[0]);
            num_or_dash(out, " %10.3f", 10, B->group_median[1]);
            if (B->frames)
                fprintf(out, " %5.0f%%",
                        100.0 * (double)B->group_frames[1] / (double)B->frames);
            else
                fprintf(out, " %6s", "-");
        }
        num_or_dash(out, " %11.3f", 11, B->level);
        num_or_dash(out, " %11.3f", 11, B->frame.p95);
        fputc(' ', out);
        an_text_ratio(out, B->growth, 8);
        fputc('\n', out);
    }
    if (ot->nscopes) {
        fprintf(out, "\n  %stop scopes: %s self ms per frame by bin, "
                     "growth of the last bin over the first (work: every "
                     "CPU scope that is not a wait, summed per frame)%s\n",
                bold(colour), two ? "mixed median" : "median", reset(colour));
        fprintf(out, "  %-28s", "scope");
        for (int b = 0; b < bins; b++)
            fprintf(out, " %8d", b);
        fprintf(out, " %8s\n", "growth");
        const an_ot_total *tot[2] = {&ot->work, &ot->wait};
        const char *tot_label[2] = {"(all CPU work)", "(all CPU waits)"};
        for (int k = 0; k < 1 + ot->has_waits; k++) {
            fprintf(out, "  %-28.28s", tot_label[k]);
            for (int b = 0; b < bins; b++)
                num_or_dash(out, " %8.3f", 8, tot[k]->median[b]);
            fputc(' ', out);
            an_text_ratio(out, tot[k]->growth, 8);
            fputc('\n', out);
        }
        for (size_t j = 0; j < ot->nscopes; j++) {
            const an_ot_scope *S = &ot->scopes[j];
            char label[64];
            snprintf(label, sizeof label, "%s %s%s", kind_name(S->scope->kind),
                     S->scope->name, S->scope->is_wait ? " (wait)" : "");
            fprintf(out, "  %-28.28s", label);
            for (int b = 0; b < bins; b++)
                num_or_dash(out, " %8.3f", 8, S->median[b]);
            fputc(' ', out);
            an_text_ratio(out, S->growth, 8);
            fputc('\n', out);
        }
    }
    if (ot->ncounters) {
        fprintf(out, "\n  %scounters: mean by bin%s\n", bold(colour),
                reset(colour));
        fprintf(out, "  %-28s", "counter");
        for (int b = 0; b < bins; b++)
            fprintf(out, " %8d", b);
        fprintf(out, " %8s\n", "growth");
        for (size_t c = 0; c < ot->ncounters; c++) {
            const an_ot_counter *C = &ot->counters[c];
            char label[64];
            snprintf(label, sizeof label, "%s%s", C->name,
                     C->profiler ? " (profiler)" : "");
            fprintf(out, "  %-28.28s", label);
            for (int b = 0; b < bins; b++) {
                double v = C->mean[b];
                num_or_dash(out, fabs(v) < 1e6 ? " %8.1f" : " %8.3g", 8, v);
            }
            fputc(' ', out);
            an_text_ratio(out, C->growth, 8);
            fputc('\n', out);
        }
    }
    /* what it means */
    fputc('\n', out);
    for (size_t i = 0; i < ot->verdicts.n; i++) {
        fputs("  ", out);
        an_text_verdict(out, &ot->verdicts.v[i], &ot->evidence);
    }
}

/* ---- frames ------------------------------------------------------------ */

/* A counter's column: as wide as its name, within 10..24 */
static int fc_width(const char *name)
{
    size_t l = strlen(name);
    return l < 10 ? 10 : l > 24 ? 24 : (int)l;
}

/* A counter's cell: the value, then '*' when carried; '-' when none (no
 * trailing blank in the last column). */
static void fc_cell(FILE *out, int w, double v, int state, int last)
{
    char b[48];
    if (state == AN_FC_NONE)
        snprintf(b, sizeof b, "-");
    else
        snprintf(b, sizeof b, fabs(v) < 1e6 ? "%.1f" : "%.4g", v);
    fprintf(out, " %*s", w, b);
    if (state == AN_FC_CARRIED)
        fputc('*', out);
    else if (!last)
        fputc(' ', out);
}

/* A text line per frame: the columns' values gathered as the walk hands
 * them, the line written at the frame's end. */
typedef struct text_frames {
    FILE *out;
    const an_capture *m;
    const an_frames *f;
    const an_frame_counters *fc;
    size_t nc;
    int64_t t0;
    double col_ms[AN_FRAMES_MAX_COLS];
} text_frames;

static void tf_value(void *ctx, size_t fi, const an_scope *s, int64_t v)
{
    text_frames *t = ctx;
    (void)fi;
    for (size_t j = 0; j < t->f->ncols; j++)
        if (t->f->cols[j] == s)
            t->col_ms[j] = MS((double)v);
}

static void tf_frame_end(void *ctx, size_t i)
{
    text_frames *t = ctx;
    FILE *out = t->out;
    const an_frame *fr = &t->m->frames[i];
    fprintf(out, "  %7llu %9.3f %9.3f ",
            (unsigned long long)an_frame_index(t->m, i),
            an_elapsed_ns(t->t0, fr->begin_ns) / 1e9, MS(an_frame_ns(fr)));
    if (an_frame_has_gpu(t->m, i))
        fprintf(out, "%9.3f", MS(an_frame_gpu_ns(t->m, i)));
    else
        fprintf(out, "%9s", "-");
    for (size_t j = 0; j < t->f->ncols; j++) {
        fprintf(out, " %14.3f", t->col_ms[j]);
        t->col_ms[j] = 0;
    }
    for (size_t k = 0; k < t->nc; k++)
        fc_cell(out, fc_width(t->fc->c[k].name), t->fc->c[k].value[i],
                t->fc->c[k].state[i], k + 1 == t->nc);
    fputc('\n', out);
}

cap_result an_text_frames(FILE *out, const an_capture *m, const an_frames *f,
                          const an_frame_counters *fc, int colour)
{
    size_t nc = fc ? fc->ntext : 0;
    fprintf(out, "\n%sFrames%s (self ms per frame of %s", bold(colour),
            reset(colour), f->only ? "one scope" : "the top scopes");
    if (nc)
        fprintf(out, "; counters: the mean of their samples inside the "
                     "frame, * the last sample before it when none fell "
                     "inside, - none yet");
    fprintf(out, ")\n");
    if (fc && fc->n > nc)
        fprintf(out, "  %zu of %zu counters shown (--counter GLOB chooses "
                     "them; --csv carries all)\n",
                nc, fc->n);
    fprintf(out, "  %7s %9s %9s %9s", "frame", "start s", "frame ms",
            "gpu ms");
    for (size_t j = 0; j < f->ncols; j++)
        fprintf(out, " %14.14s", f->cols[j]->name);
    for (size_t k = 0; k < nc; k++) {
        int w = fc_width(fc->c[k].name);
        fprintf(out, " %*.*s%s", w, w, fc->c[k].name, k + 1 < nc ? " " : "");
    }
    fputc('\n', out);
    text_frames t = {out, m, f, fc, nc, m->nframes ? m->frames[0].begin_ns : 0,
                     {0}};
    an_frames_sink sink = {tf_value, tf_frame_end, &t};
    return an_frames_walk(m, f, &sink);
}
