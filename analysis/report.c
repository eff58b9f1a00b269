/* report.c - read_capture's reports, text and CSV. */
#include "report.h"

#include <csv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "stats.h"

#define MS(ns) ((double)(ns) / 1e6)
#define REP_MAX_BINS 1000 /* --over-time never makes more bins than this */

/* ---- output helpers ---------------------------------------------------- */

void rep_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") || (s[0] == ' ') ||
        (s[0] && s[strlen(s) - 1] == ' '))
        csv_fwrite(f, s, strlen(s));
    else
        fputs(s, f);
}

static void csv_num(FILE *f, double v)
{
    if (isnan(v))
        return; /* empty field */
    fprintf(f, "%.6f", v);
}

static const char *bold(rep_style st)
{
    return st.colour ? "\033[1m" : "";
}
static const char *reset(rep_style st)
{
    return st.colour ? "\033[0m" : "";
}

static const char *kind_name(an_kind k)
{
    return k == AN_CPU ? "cpu" : "gpu";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct summary {
    size_t n;
    double mean, median, p95;
} summary;

/* Summary of v[0..n) (sorted in place). */
static summary summarize(double *v, size_t n)
{
    summary s = {n, NAN, NAN, NAN};
    if (!n)
        return s;
    cap_stats_sort(v, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / (double)n;
    s.median = cap_stats_quantile_sorted(v, n, 0.5);
    s.p95 = cap_stats_quantile_sorted(v, n, 0.95);
    return s;
}

/* ---- warnings ---------------------------------------------------------- */

int rep_warnings(FILE *err, const an_capture *m, const char *report,
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
        if (k > m->unnamed_n)
            fprintf(err, ", ...");
        fprintf(err, "): the file lost its name table (damaged, cut before "
                     "its names were written, or converted by a tool that "
                     "stores names once, as puffin does); they are shown as "
                     "<unnamed #id>, not as real scope names\n");
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
    return n;
}

/* ---- frame statistics -------------------------------------------------- */

void rep_compute_frame_stats(const an_capture *m, rep_frame_stats *fs)
{
    memset(fs, 0, sizeof *fs);
    size_t n = m->nframes;
    fs->n = n;
    if (!n)
        return;
    double *v = malloc(n * sizeof *v);
    double *w = malloc(31 * sizeof *w);
    if (!v || !w) {
        free(v);
        free(w);
        return;
    }
    /* stutters: longer than 2.5x the median of the 31 frames centred on
     * the frame (fewer at the ends) */
    for (size_t i = 0; i < n; i++) {
        size_t lo = i >= 15 ? i - 15 : 0;
        size_t hi = i + 16 < n ? i + 16 : n;
        size_t k = 0;
        for (size_t j = lo; j < hi; j++)
            w[k++] = MS(an_frame_ns(&m->frames[j]));
        qsort(w, k, sizeof *w, cmp_double);
        double med = cap_stats_quantile_sorted(w, k, 0.5);
        if (MS(an_frame_ns(&m->frames[i])) > 2.5 * med)
            fs->stutters++;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = MS(an_frame_ns(&m->frames[i]));
    cap_stats_sort(v, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    fs->mean = sum / (double)n;
    fs->median = cap_stats_quantile_sorted(v, n, 0.5);
    fs->p95 = cap_stats_quantile_sorted(v, n, 0.95);
    fs->p99 = cap_stats_quantile_sorted(v, n, 0.99);
    fs->p999 = cap_stats_quantile_sorted(v, n, 0.999);
    fs->max = v[n - 1];
    size_t k = (n + 99) / 100; /* the slowest 1 %, at least one frame */
    double s = 0;
    for (size_t i = n - k; i < n; i++)
        s += v[i];
    fs->low1 = s / (double)k;
    fs->low1_frames = k;
    free(v);
    free(w);
}

/* ---- header ------------------------------------------------------------ */

static void join_names(FILE *out, char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", names[i]);
}

int rep_header(FILE *out, const an_capture *m, rep_style st)
{
    if (st.csv)
        return 0;
    const char *v;
    fprintf(out, "%scapture%s   %s (format %u.%u)\n", bold(st), reset(st),
            m->path, m->major, m->minor);
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
            m->last_ns > m->first_ns ? an_elapsed_ns(m->first_ns, m->last_ns) / 1e9
                                     : 0.0);
    fprintf(out, "frames    %zu\n", m->nframes);
    fprintf(out, "threads   %zu", m->nthreads);
    if (m->nthreads) {
        fputs(" (", out);
        join_names(out, m->threads, m->nthreads);
        fputc(')', out);
    }
    fputc('\n', out);
    fprintf(out, "GPU       %zu track%s", m->ntracks, m->ntracks == 1 ? "" : "s");
    if (m->ntracks) {
        fputs(" (", out);
        join_names(out, m->tracks, m->ntracks);
        fputc(')', out);
    }
    fputc('\n', out);
    rep_frame_stats fs;
    rep_compute_frame_stats(m, &fs);
    if (fs.n) {
        fprintf(out, "\n%sFrame time%s (ms, %zu frames)\n", bold(st), reset(st),
                fs.n);
        fprintf(out, "  mean %.3f   median %.3f   p95 %.3f   p99 %.3f   "
                     "p99.9 %.3f   max %.3f\n",
                fs.mean, fs.median, fs.p95, fs.p99, fs.p999, fs.max);
        fprintf(out, "  1%% low %.3f ms (%.1f fps): the mean of the slowest "
                     "1%% of frames (%zu frame%s)\n",
                fs.low1, fs.low1 > 0 ? 1000.0 / fs.low1 : 0.0, fs.low1_frames,
                fs.low1_frames == 1 ? "" : "s");
        fprintf(out, "  stutters %zu: frames over 2.5x the median of the 31 "
                     "frames around them\n",
                fs.stutters);
    }
    return 0;
}

/* ---- ranking ----------------------------------------------------------- */

typedef struct rank_row {
    const an_scope *s;
    double pf_mean, pf_p95; /* ms */
} rank_row;

static int rank_cmp(const void *a, const void *b)
{
    const rank_row *x = a, *y = b;
    if (x->s->self_ns != y->s->self_ns)
        return x->s->self_ns > y->s->self_ns ? -1 : 1;
    return strcmp(x->s->name, y->s->name);
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

int rep_ranking(FILE *out, const an_capture *m, rep_style st)
{
    size_t n = m->nscopes;
    rank_row *rows = calloc(n ? n : 1, sizeof *rows);
    double *dense = malloc((m->nframes ? m->nframes : 1) * sizeof *dense);
    if (!rows || !dense) {
        free(rows);
        free(dense);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        rows[i].s = &m->scopes[i];
        rows[i].pf_mean = rows[i].pf_p95 = NAN;
        if (m->nframes) {
            an_scope_dense(m, &m->scopes[i], dense);
            summary s = summarize(dense, m->nframes);
            rows[i].pf_mean = MS(s.mean);
            rows[i].pf_p95 = MS(cap_stats_quantile_sorted(dense, m->nframes,
                                                          0.95));
        }
    }
    qsort(rows, n, sizeof *rows, rank_cmp);
    int64_t frame_total = an_total_frame_ns(m);
    if (st.csv) {
        fputs("track,name,calls,total_ms,self_ms,self_ms_per_frame_mean,"
              "self_ms_per_frame_p95,share_pct\n",
              out);
        for (int k = AN_CPU; k <= AN_GPU; k++)
            for (size_t i = 0; i < n; i++) {
                const an_scope *s = rows[i].s;
                if ((int)s->kind != k)
                    continue;
                fprintf(out, "%s,", kind_name(s->kind));
                rep_csv_field(out, s->name);
                fprintf(out, ",%llu,", (unsigned long long)s->calls);
                csv_num(out, MS(s->total_ns));
                fputc(',', out);
                csv_num(out, MS(s->self_ns));
                fputc(',', out);
                csv_num(out, rows[i].pf_mean);
                fputc(',', out);
                csv_num(out, rows[i].pf_p95);
                fputc(',', out);
                csv_num(out, frame_total ? 100.0 * (double)s->self_ns /
                                               (double)frame_total
                                         : NAN);
                fputc('\n', out);
            }
    } else {
        int w = (int)name_width(m, 10, 48);
        for (int k = AN_CPU; k <= AN_GPU; k++) {
            size_t count = 0;
            for (size_t i = 0; i < n; i++)
                count += (int)rows[i].s->kind == k;
            if (!count)
                continue;
            fprintf(out, "\n%s%s scopes by self time%s\n", bold(st),
                    k == AN_CPU ? "CPU" : "GPU", reset(st));
            fprintf(out, "  %-*s %9s %12s %12s %14s %12s %7s\n", w, "name",
                    "calls", "total ms", "self ms", "self/frame ms",
                    "p95/frame ms", "share");
            for (size_t i = 0; i < n; i++) {
                const an_scope *s = rows[i].s;
                if ((int)s->kind != k)
                    continue;
                fprintf(out, "  %-*.*s %9llu %12.3f %12.3f ", w, w, s->name,
                        (unsigned long long)s->calls, MS(s->total_ns),
                        MS(s->self_ns));
                if (m->nframes)
                    fprintf(out, "%14.3f %12.3f ", rows[i].pf_mean,
                            rows[i].pf_p95);
                else
                    fprintf(out, "%14s %12s ", "-", "-");
                if (frame_total)
                    fprintf(out, "%6.1f%%\n",
                            100.0 * (double)s->self_ns / (double)frame_total);
                else
                    fprintf(out, "%7s\n", "-");
            }
        }
        if (!n)
            fprintf(out, "\n(no scopes)\n");
        else if (frame_total)
            fprintf(out, "\nshare: self time over the total frame time "
                         "(%.3f ms); recursion is not double-counted in "
                         "total\n",
                    MS(frame_total));
    }
    free(rows);
    free(dense);
    return 0;
}

/* ---- tree -------------------------------------------------------------- */

typedef struct tree_ctx {
    FILE *out;
    const an_capture *m;
    rep_style st;
    int max_depth;
    double min_share;
    double denom; /* ns */
    uint32_t *kids;
    char *path;
    size_t path_cap;
} tree_ctx;

static int64_t node_total(const an_capture *m, uint32_t i)
{
    const an_node *n = &m->nodes[i];
    if (!n->is_root)
        return n->total_ns;
    int64_t t = 0;
    for (uint32_t c = n->first_child; c != UINT32_MAX; c = m->nodes[c].next_sibling)
        t += m->nodes[c].total_ns;
    return t;
}

static int node_cmp(const void *a, const void *b, void *ctx)
{
    const an_capture *m = ctx;
    int64_t x = node_total(m, *(const uint32_t *)a);
    int64_t y = node_total(m, *(const uint32_t *)b);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(m->nodes[*(const uint32_t *)a].name,
                  m->nodes[*(const uint32_t *)b].name);
}

static int tree_walk(tree_ctx *c, uint32_t node, size_t path_len)
{
    const an_capture *m = c->m;
    const an_node *n = &m->nodes[node];
    int64_t total = node_total(m, node);
    double share = c->denom > 0 ? 100.0 * (double)total / c->denom : 0;
    int scope_depth = (int)n->depth - 1; /* roots -1, top scopes 0 */
    if (!n->is_root) {
        if (c->max_depth >= 0 && scope_depth > c->max_depth)
            return 0;
        if (share < c->min_share)
            return 0;
    }
    size_t nl = strlen(n->name);
    if (path_len + nl + 2 > c->path_cap) {
        size_t cap = (path_len + nl + 2) * 2;
        char *p = realloc(c->path, cap);
        if (!p)
            return -1;
        c->path = p;
        c->path_cap = cap;
    }
    if (path_len)
        c->path[path_len++] = ';';
    memcpy(c->path + path_len, n->name, nl + 1);
    path_len += nl;
    if (c->st.csv) {
        if (!n->is_root) {
            rep_csv_field(c->out, c->path);
            fprintf(c->out, ",%d,%s,%llu,", scope_depth, kind_name(n->kind),
                    (unsigned long long)n->calls);
            csv_num(c->out, MS(n->total_ns));
            fputc(',', c->out);
            csv_num(c->out, MS(n->self_ns));
            fputc(',', c->out);
            csv_num(c->out, c->denom > 0 ? share : NAN);
            fputc('\n', c->out);
        }
    } else if (n->is_root) {
        fprintf(c->out, "\n%s%s %s%s  (%.3f ms)\n", bold(c->st),
                n->kind == AN_CPU ? "thread" : "GPU track", n->name,
                reset(c->st), MS(total));
    } else {
        fprintf(c->out, "  %9llu %12.3f %12.3f %6.1f%%  %*s%s\n",
                (unsigned long long)n->calls, MS(n->total_ns), MS(n->self_ns),
                share, 2 * scope_depth, "", n->name);
    }
    /* children sorted by total */
    size_t k = 0;
    for (uint32_t ch = n->first_child; ch != UINT32_MAX;
         ch = m->nodes[ch].next_sibling)
        k++;
    if (!k)
        return 0;
    uint32_t *kids = malloc(k * sizeof *kids);
    if (!kids)
        return -1;
    k = 0;
    for (uint32_t ch = n->first_child; ch != UINT32_MAX;
         ch = m->nodes[ch].next_sibling)
        kids[k++] = ch;
    qsort_r(kids, k, sizeof *kids, node_cmp, (void *)m);
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = tree_walk(c, kids[i], path_len);
    free(kids);
    return rc;
}

int rep_tree(FILE *out, const an_capture *m, rep_style st, int max_depth,
             double min_share_pct)
{
    tree_ctx c = {out, m, st, max_depth, min_share_pct, 0, NULL, NULL, 0};
    c.denom = (double)an_total_frame_ns(m);
    if (c.denom <= 0)
        for (size_t i = 0; i < m->nnodes; i++)
            if (m->nodes[i].is_root && m->nodes[i].kind == AN_CPU)
                c.denom += (double)node_total(m, (uint32_t)i);
    if (st.csv)
        fputs("path,depth,track,calls,total_ms,self_ms,share_pct\n", out);
    else
        fprintf(out, "\n%sCall tree%s (merged by call path; share of %s)\n"
                     "  %9s %12s %12s %7s  name\n",
                bold(st), reset(st),
                m->nframes ? "total frame time" : "all root scopes' time",
                "calls", "total ms", "self ms", "share");
    int rc = 0;
    /* roots: CPU threads first, then GPU tracks, in order of appearance */
    for (int k = AN_CPU; k <= AN_GPU && rc == 0; k++)
        for (size_t i = 0; i < m->nnodes && rc == 0; i++)
            if (m->nodes[i].is_root && (int)m->nodes[i].kind == k)
                rc = tree_walk(&c, (uint32_t)i, 0);
    free(c.path);
    return rc;
}

/* ---- split ------------------------------------------------------------- */

typedef struct ord {
    size_t pos;
    double key;
} ord;

static int ord_cmp(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static const double hist_edges[] = {0, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0};
#define HIST_BINS (sizeof hist_edges / sizeof hist_edges[0])

static size_t hist_bin(double r)
{
    size_t b = 0;
    while (b + 1 < HIST_BINS && r >= hist_edges[b + 1])
        b++;
    return b;
}

int rep_split(FILE *out, const an_capture *m, rep_style st,
              const char *split_by)
{
    size_t n = m->nframes;
    long by = -1;
    if (split_by) {
        by = an_find_scope(m, AN_CPU, split_by);
        if (by < 0)
            by = an_find_scope(m, AN_GPU, split_by);
        if (by < 0)
            return -2;
    }
    size_t q = n / 4;
    if (q == 0) {
        if (st.csv)
            fputs("population,kind,track,name,frames,mean_ms,median_ms,"
                  "p95_ms\n",
                  out);
        else
            fprintf(out, "\nSplit: needs at least 4 frames (a quarter each "
                         "side); the capture has %zu\n",
                    n);
        return 0;
    }
    ord *o = malloc((n ? n : 1) * sizeof *o);
    double *dense = malloc((n ? n : 1) * sizeof *dense);
    double *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!o || !dense || !tmp) {
        free(o);
        free(dense);
        free(tmp);
        return -1;
    }
    if (by >= 0)
        an_scope_dense(m, &m->scopes[by], dense);
    for (size_t i = 0; i < n; i++) {
        o[i].pos = i;
        o[i].key = by >= 0 ? dense[i] : (double)an_frame_ns(&m->frames[i]);
    }
    qsort(o, n, sizeof *o, ord_cmp);
    const ord *pop[2] = {o, o + (n - q)};
    const char *pop_name[2] = {"fast", "slow"};
    summary fr[2], ra[2];
    size_t hist[2][HIST_BINS] = {{0}};
    for (int p = 0; p < 2; p++) {
        for (size_t i = 0; i < q; i++)
            tmp[i] = MS(an_frame_ns(&m->frames[pop[p][i].pos]));
        fr[p] = summarize(tmp, q);
        size_t k = 0;
        for (size_t i = 0; i < q; i++) {
            const an_frame *f = &m->frames[pop[p][i].pos];
            if (f->has_gpu && f->gpu_ns > 0) {
                double r = (double)an_frame_ns(f) / (double)f->gpu_ns;
                tmp[k++] = r;
                hist[p][hist_bin(r)]++;
            }
        }
        ra[p] = summarize(tmp, k);
    }
    /* per-scope self time per frame in each population */
    size_t ns = m->nscopes;
    summary(*sc)[2] = calloc(ns ? ns : 1, sizeof *sc);
    if (!sc) {
        free(o);
        free(dense);
        free(tmp);
        return -1;
    }
    for (size_t s = 0; s < ns; s++) {
        an_scope_dense(m, &m->scopes[s], dense);
        for (int p = 0; p < 2; p++) {
            for (size_t i = 0; i < q; i++)
                tmp[i] = MS(dense[pop[p][i].pos]);
            sc[s][p] = summarize(tmp, q);
        }
    }
    /* scopes ordered by |delta of the mean| */
    ord *so = malloc((ns ? ns : 1) * sizeof *so);
    if (!so) {
        free(o);
        free(dense);
        free(tmp);
        free(sc);
        return -1;
    }
    for (size_t s = 0; s < ns; s++) {
        so[s].pos = s;
        so[s].key = q ? -fabs(sc[s][1].mean - sc[s][0].mean) : 0;
    }
    qsort(so, ns, sizeof *so, ord_cmp);

    if (st.csv) {
        fputs("population,kind,track,name,frames,mean_ms,median_ms,p95_ms\n",
              out);
        for (int p = 0; p < 2; p++) {
            fprintf(out, "%s,frame,,(frame),%zu,", pop_name[p], q);
            csv_num(out, fr[p].mean);
            fputc(',', out);
            csv_num(out, fr[p].median);
            fputc(',', out);
            csv_num(out, fr[p].p95);
            fputc('\n', out);
            fprintf(out, "%s,frame_gpu_ratio,gpu,(frame/gpu),%zu,", pop_name[p],
                    ra[p].n);
            csv_num(out, ra[p].mean);
            fputc(',', out);
            csv_num(out, ra[p].median);
            fputc(',', out);
            csv_num(out, ra[p].p95);
            fputc('\n', out);
            for (size_t k = 0; k < ns; k++) {
                const an_scope *s = &m->scopes[so[k].pos];
                fprintf(out, "%s,scope,%s,", pop_name[p], kind_name(s->kind));
                rep_csv_field(out, s->name);
                fprintf(out, ",%zu,", q);
                csv_num(out, sc[so[k].pos][p].mean);
                fputc(',', out);
                csv_num(out, sc[so[k].pos][p].median);
                fputc(',', out);
                csv_num(out, sc[so[k].pos][p].p95);
                fputc('\n', out);
            }
        }
    } else {
        fprintf(out, "\n%sSplit%s: %zu frames ordered by %s%s; the fastest "
                     "quarter vs the slowest quarter (%zu frames each)\n",
                bold(st), reset(st), n,
                by >= 0 ? "the self time of " : "frame time",
                by >= 0 ? m->scopes[by].name : "", q);
        fprintf(out, "  %-24s %12s %12s %12s\n", "", "fast", "slow", "delta");
        fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, mean",
                fr[0].mean, fr[1].mean, fr[1].mean - fr[0].mean);
        fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, median",
                fr[0].median, fr[1].median, fr[1].median - fr[0].median);
        fprintf(out, "  %-24s %12.3f %12.3f %+12.3f\n", "frame ms, p95",
                fr[0].p95, fr[1].p95, fr[1].p95 - fr[0].p95);
        if (ra[0].n || ra[1].n) {
            fprintf(out, "\n  %sframe/GPU ratio%s: frame time over the GPU "
                         "work it recorded (1.0: the GPU is the wall; 2.0: "
                         "the frame waited for the GPU twice)\n",
                    bold(st), reset(st));
            fprintf(out, "  %-24s %12zu %12zu\n", "frames with GPU time",
                    ra[0].n, ra[1].n);
            fprintf(out, "  %-24s %12.3f %12.3f\n", "ratio, mean", ra[0].mean,
                    ra[1].mean);
            fprintf(out, "  %-24s %12.3f %12.3f\n", "ratio, median",
                    ra[0].median, ra[1].median);
            fprintf(out, "  %-24s %12.3f %12.3f\n", "ratio, p95", ra[0].p95,
                    ra[1].p95);
            size_t hmax = 1;
            for (int p = 0; p < 2; p++)
                for (size_t b = 0; b < HIST_BINS; b++)
                    if (hist[p][b] > hmax)
                        hmax = hist[p][b];
            fprintf(out, "\n  %-12s %-27s %-27s\n", "ratio", "fast", "slow");
            for (size_t b = 0; b < HIST_BINS; b++) {
                char label[32];
                if (b + 1 < HIST_BINS)
                    snprintf(label, sizeof label, "%.2f-%.2f", hist_edges[b],
                             hist_edges[b + 1]);
                else
                    snprintf(label, sizeof label, ">=%.2f", hist_edges[b]);
                fprintf(out, "  %-12s", label);
                for (int p = 0; p < 2; p++) {
                    size_t bar = (hist[p][b] * 20 + hmax - 1) / hmax;
                    char bars[21];
                    memset(bars, '#', bar);
                    bars[bar] = 0;
                    fprintf(out, " %-20s %5zu ", bars, hist[p][b]);
                }
                fputc('\n', out);
            }
        } else {
            fprintf(out, "\n  frame/GPU ratio: no GPU spans in this capture\n");
        }
        int w = (int)name_width(m, 10, 40);
        fprintf(out, "\n  %sself ms per frame, mean%s\n", bold(st), reset(st));
        fprintf(out, "  %-5s %-*s %12s %12s %12s\n", "track", w, "name", "fast",
                "slow", "delta");
        for (size_t k = 0; k < ns; k++) {
            const an_scope *s = &m->scopes[so[k].pos];
            const summary *x = sc[so[k].pos];
            fprintf(out, "  %-5s %-*.*s %12.3f %12.3f %+12.3f\n",
                    kind_name(s->kind), w, w, s->name, x[0].mean, x[1].mean,
                    x[1].mean - x[0].mean);
        }
    }
    free(o);
    free(dense);
    free(tmp);
    free(sc);
    free(so);
    return 0;
}

/* ---- over time --------------------------------------------------------- */

static int is_memory_counter(const char *name)
{
    static const char *keys[] = {"rss", "mem", "vram", "heap", "alloc"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcasestr(name, keys[i]))
            return 1;
    return 0;
}

int rep_over_time(FILE *out, const an_capture *m, rep_style st, int bins,
                  double bin_seconds)
{
    size_t n = m->nframes;
    if (!n) {
        if (!st.csv)
            fprintf(out, "\nOver time: no frames\n");
        else
            fputs("bin,start_s,end_s,kind,track,name,frames,median_ms,p95_ms,"
                  "mean,growth\n",
                  out);
        return 0;
    }
    int64_t t0 = m->frames[0].begin_ns;
    int64_t t1 = m->frames[n - 1].end_ns;
    double span = an_elapsed_ns(t0, t1);
    double width;
    if (bin_seconds > 0) {
        width = bin_seconds * 1e9;
        double want = ceil(span / width);
        if (want > REP_MAX_BINS) { /* a long capture, or a crafted one */
            want = REP_MAX_BINS;
            width = span / want;
        }
        bins = want < 1 ? 1 : (int)want;
    } else {
        if (bins > REP_MAX_BINS)
            bins = REP_MAX_BINS;
        if (bins < 1)
            bins = 10;
        width = span / bins;
        if (width <= 0)
            width = 1;
    }
    size_t *bin_of = malloc(n * sizeof *bin_of);
    size_t *count = calloc((size_t)bins, sizeof *count);
    double *tmp = malloc(n * sizeof *tmp);
    double *dense = malloc(n * sizeof *dense);
    summary *fb = calloc((size_t)bins, sizeof *fb);
    if (!bin_of || !count || !tmp || !dense || !fb) {
        free(bin_of);
        free(count);
        free(tmp);
        free(dense);
        free(fb);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        double x = an_elapsed_ns(t0, m->frames[i].begin_ns) / width;
        size_t b = x >= (double)bins || !(x >= 0) ? (size_t)bins - 1 : (size_t)x;
        bin_of[i] = b;
        count[b]++;
    }
    /* frames grouped by bin (counting sort): first[b] .. first[b+1] */
    size_t *first = calloc((size_t)bins + 1, sizeof *first);
    size_t *order = malloc(n * sizeof *order);
    if (!first || !order) {
        free(first);
        free(order);
        free(bin_of);
        free(count);
        free(tmp);
        free(dense);
        free(fb);
        return -1;
    }
    for (int b = 0; b < bins; b++)
        first[b + 1] = first[b] + count[b];
    /* a stable placement: within a bin, frames keep their order */
    for (size_t i = n; i-- > 0;)
        order[--count[bin_of[i]] + first[bin_of[i]]] = i;
    for (int b = 0; b < bins; b++)
        count[b] = first[b + 1] - first[b];
    for (int b = 0; b < bins; b++) {
        size_t k = 0;
        for (size_t j = first[b]; j < first[b + 1]; j++)
            tmp[k++] = MS(an_frame_ns(&m->frames[order[j]]));
        fb[b] = summarize(tmp, k);
    }
    /* top scopes: up to 8 by self time, CPU and GPU together */
    size_t ns = m->nscopes, top_n = 0;
    size_t top[8];
    for (size_t k = 0; k < 8; k++) {
        long best = -1;
        for (size_t s = 0; s < ns; s++) {
            int taken = 0;
            for (size_t j = 0; j < top_n; j++)
                taken |= top[j] == s;
            if (!taken && m->scopes[s].self_ns > 0 &&
                (best < 0 || m->scopes[s].self_ns > m->scopes[best].self_ns))
                best = (long)s;
        }
        if (best < 0)
            break;
        top[top_n++] = (size_t)best;
    }
    double(*sm)[2] = calloc(top_n * (size_t)bins + 1, sizeof *sm); /* median, p95 */
    if (!sm) {
        free(bin_of);
        free(first);
        free(order);
        free(count);
        free(tmp);
        free(dense);
        free(fb);
        return -1;
    }
    for (size_t j = 0; j < top_n; j++) {
        an_scope_dense(m, &m->scopes[top[j]], dense);
        for (int b = 0; b < bins; b++) {
            size_t k = 0;
            for (size_t j = first[b]; j < first[b + 1]; j++)
                tmp[k++] = MS(dense[order[j]]);
            summary s = summarize(tmp, k);
            sm[j * (size_t)bins + (size_t)b][0] = s.median;
            sm[j * (size_t)bins + (size_t)b][1] = s.p95;
        }
    }
    /* counters: mean per bin, by sample time */
    size_t nc = m->ncounters;
    double *cm = calloc(nc * (size_t)bins + 1, sizeof *cm);
    size_t *cn = calloc(nc * (size_t)bins + 1, sizeof *cn);
    if (!cm || !cn) {
        free(bin_of);
        free(first);
        free(order);
        free(count);
        free(tmp);
        free(dense);
        free(fb);
        free(sm);
        free(cm);
        free(cn);
        return -1;
    }
    for (size_t c = 0; c < nc; c++)
        for (size_t i = 0; i < m->counters[c].n; i++) {
            const an_sample *s = &m->counters[c].s[i];
            if (s->time_ns < t0 || s->time_ns > t1)
                continue;
            double x = an_elapsed_ns(t0, s->time_ns) / width;
            size_t b = x >= (double)bins || !(x >= 0) ? (size_t)bins - 1 : (size_t)x;
            if (b >= (size_t)bins)
                b = (size_t)bins - 1;
            cm[c * (size_t)bins + b] += s->value;
            cn[c * (size_t)bins + b]++;
        }
    for (size_t i = 0; i < nc * (size_t)bins; i++)
        cm[i] = cn[i] ? cm[i] / (double)cn[i] : NAN;

    /* first non-empty bin is the reference */
    int ref = 0;
    while (ref < bins && count[ref] == 0)
        ref++;
#define GROWTH(v, r) ((r) > 0 && !isnan(v) ? (v) / (r) : NAN)
    if (st.csv) {
        fputs("bin,start_s,end_s,kind,track,name,frames,median_ms,p95_ms,mean,"
              "growth\n",
              out);
        for (int b = 0; b < bins; b++) {
            double s0 = (double)b * width / 1e9, s1 = (double)(b + 1) * width / 1e9;
            fprintf(out, "%d,%.6f,%.6f,frame,,(frame),%zu,", b, s0, s1, count[b]);
            csv_num(out, fb[b].median);
            fputc(',', out);
            csv_num(out, fb[b].p95);
            fputc(',', out);
            csv_num(out, fb[b].mean);
            fputc(',', out);
            csv_num(out, GROWTH(fb[b].median, fb[ref].median));
            fputc('\n', out);
            for (size_t j = 0; j < top_n; j++) {
                const an_scope *s = &m->scopes[top[j]];
                double *v = sm[j * (size_t)bins + (size_t)b];
                double r = ref < bins ? sm[j * (size_t)bins + (size_t)ref][0] : NAN;
                fprintf(out, "%d,%.6f,%.6f,scope,%s,", b, s0, s1,
                        kind_name(s->kind));
                rep_csv_field(out, s->name);
                fprintf(out, ",%zu,", count[b]);
                csv_num(out, v[0]);
                fputc(',', out);
                csv_num(out, v[1]);
                fputs(",,", out);
                csv_num(out, GROWTH(v[0], r));
                fputc('\n', out);
            }
            for (size_t c = 0; c < nc; c++) {
                double v = cm[c * (size_t)bins + (size_t)b];
                double r = ref < bins ? cm[c * (size_t)bins + (size_t)ref] : NAN;
                fprintf(out, "%d,%.6f,%.6f,counter,,", b, s0, s1);
                rep_csv_field(out, m->counters[c].name);
                fprintf(out, ",%zu,,,", cn[c * (size_t)bins + (size_t)b]);
                csv_num(out, v);
                fputc(',', out);
                csv_num(out, GROWTH(v, r));
                fputc('\n', out);
            }
        }
    } else {
        fprintf(out, "\n%sOver time%s: %zu frames in %d bins of %.3f s (by "
                     "each frame's start since the first frame)\n",
                bold(st), reset(st), n, bins, width / 1e9);
        fprintf(out, "  %4s %9s %9s %7s %11s %11s %8s\n", "bin", "start s",
                "end s", "frames", "median ms", "p95 ms", "growth");
        for (int b = 0; b < bins; b++)
            fprintf(out, "  %4d %9.3f %9.3f %7zu %11.3f %11.3f %7.2fx\n", b,
                    (double)b * width / 1e9, (double)(b + 1) * width / 1e9,
                    count[b], fb[b].median, fb[b].p95,
                    GROWTH(fb[b].median, fb[ref].median));
        if (top_n) {
            fprintf(out, "\n  %stop scopes: median self ms per frame by bin, "
                         "growth of the last bin over the first%s\n",
                    bold(st), reset(st));
            fprintf(out, "  %-28s", "scope");
            for (int b = 0; b < bins; b++)
                fprintf(out, " %8d", b);
            fprintf(out, " %8s\n", "growth");
            for (size_t j = 0; j < top_n; j++) {
                const an_scope *s = &m->scopes[top[j]];
                char label[64];
                snprintf(label, sizeof label, "%s %s", kind_name(s->kind),
                         s->name);
                fprintf(out, "  %-28.28s", label);
                for (int b = 0; b < bins; b++)
                    fprintf(out, " %8.3f", sm[j * (size_t)bins + (size_t)b][0]);
                fprintf(out, " %7.2fx\n",
                        GROWTH(sm[j * (size_t)bins + (size_t)bins - 1][0],
                               sm[j * (size_t)bins + (size_t)ref][0]));
            }
        }
        if (nc) {
            fprintf(out, "\n  %scounters: mean by bin%s\n", bold(st), reset(st));
            fprintf(out, "  %-28s", "counter");
            for (int b = 0; b < bins; b++)
                fprintf(out, " %8d", b);
            fprintf(out, " %8s\n", "growth");
            for (size_t c = 0; c < nc; c++) {
                fprintf(out, "  %-28.28s", m->counters[c].name);
                for (int b = 0; b < bins; b++) {
                    double v = cm[c * (size_t)bins + (size_t)b];
                    fprintf(out, fabs(v) < 1e6 ? " %8.1f" : " %8.3g", v);
                }
                fprintf(out, " %7.2fx\n",
                        GROWTH(cm[c * (size_t)bins + (size_t)bins - 1],
                               cm[c * (size_t)bins + (size_t)ref]));
            }
        }
        /* what it means */
        fputc('\n', out);
        int said = 0;
        int last = bins - 1;
        while (last > ref && count[last] == 0)
            last--;
        double fg = GROWTH(fb[last].median, fb[ref].median);
        if (last > ref && top_n >= 2 && fg >= 1.10) {
            double lo = INFINITY, hi = 0, sum = 0;
            size_t k = 0;
            int64_t ft = an_total_frame_ns(m);
            for (size_t j = 0; j < top_n; j++) {
                double g = GROWTH(sm[j * (size_t)bins + (size_t)last][0],
                                  sm[j * (size_t)bins + (size_t)ref][0]);
                /* scopes under 2 % of the frame time are noise here */
                if (isnan(g) || (double)m->scopes[top[j]].self_ns < 0.02 * (double)ft)
                    continue;
                lo = g < lo ? g : lo;
                hi = g > hi ? g : hi;
                sum += g;
                k++;
            }
            int mem_counters = 0, mem_flat = 1;
            for (size_t c = 0; c < nc; c++) {
                if (!is_memory_counter(m->counters[c].name))
                    continue;
                mem_counters++;
                double g = GROWTH(cm[c * (size_t)bins + (size_t)last],
                                  cm[c * (size_t)bins + (size_t)ref]);
                if (isnan(g) || fabs(g - 1.0) > 0.05)
                    mem_flat = 0;
            }
            if (k >= 2 && (hi - lo) / (sum / (double)k) <= 0.20) {
                fprintf(out, "  Every top scope grew by about %.2fx from the "
                             "first bin to the last (%.2fx to %.2fx)",
                        sum / (double)k, lo, hi);
                if (mem_counters && mem_flat)
                    fprintf(out, " while memory stayed flat: the throttling "
                                 "signature. The device slowed down; the "
                                 "work did not grow.\n");
                else if (mem_counters)
                    fprintf(out, ", but memory counters moved too: look for "
                                 "growing work or a leak before blaming "
                                 "the clock.\n");
                else
                    fprintf(out, ": uniform growth is the throttling "
                                 "signature (no memory counter recorded to "
                                 "rule out growing work).\n");
                said = 1;
            } else {
                fprintf(out, "  Frame time grew %.2fx from the first bin to "
                             "the last, unevenly across scopes: the scopes "
                             "with the largest growth did more work.\n",
                        fg);
                said = 1;
            }
        }
        if (last >= ref + 2) {
            size_t k = 0;
            for (int b = ref + (last - ref + 1) / 2; b <= last; b++)
                if (count[b])
                    tmp[k++] = fb[b].median;
            summary settled = summarize(tmp, k);
            if (k && fb[ref].median < 0.9 * settled.median) {
                fprintf(out, "  The first bin is faster than the settled ones "
                             "(median %.3f ms vs %.3f ms): the device was not "
                             "warm when the capture started. Warm it before "
                             "capturing, or leave the start out "
                             "(--skip-seconds).\n",
                        fb[ref].median, settled.median);
                said = 1;
            }
        }
        if (!said)
            fprintf(out, "  Frame time is steady across the bins.\n");
    }
#undef GROWTH
    free(bin_of);
    free(first);
    free(order);
    free(count);
    free(tmp);
    free(dense);
    free(fb);
    free(sm);
    free(cm);
    free(cn);
    return 0;
}

/* ---- frames ------------------------------------------------------------ */

int rep_frames(FILE *out, const an_capture *m, rep_style st, const char *scope)
{
    size_t n = m->nframes, ns = m->nscopes;
    long only = -1;
    if (scope) {
        only = an_find_scope(m, AN_CPU, scope);
        if (only < 0)
            only = an_find_scope(m, AN_GPU, scope);
        if (only < 0)
            return -2;
    }
    /* columns: the selected scope, or the top 6 by self time */
    size_t cols[6], ncol = 0;
    if (only >= 0) {
        cols[ncol++] = (size_t)only;
    } else {
        for (size_t k = 0; k < 6; k++) {
            long best = -1;
            for (size_t s = 0; s < ns; s++) {
                int taken = 0;
                for (size_t j = 0; j < ncol; j++)
                    taken |= cols[j] == s;
                if (!taken &&
                    (best < 0 || m->scopes[s].self_ns > m->scopes[best].self_ns))
                    best = (long)s;
            }
            if (best < 0)
                break;
            cols[ncol++] = (size_t)best;
        }
    }
    int64_t t0 = n ? m->frames[0].begin_ns : 0;
    if (st.csv) {
        fputs("frame,start_s,frame_ms,gpu_ms,track,name,self_ms\n", out);
        /* walk every scope's sparse per-frame list in frame order */
        size_t *cur = calloc(ns ? ns : 1, sizeof *cur);
        if (!cur)
            return -1;
        for (size_t f = 0; f < n; f++) {
            const an_frame *fr = &m->frames[f];
            for (size_t s = 0; s < ns; s++) {
                if (only >= 0 && (long)s != only)
                    continue;
                const an_scope *sc = &m->scopes[s];
                int64_t v = 0;
                int present = 0;
                while (cur[s] < sc->pf_n && sc->pf_frame[cur[s]] < f)
                    cur[s]++;
                if (cur[s] < sc->pf_n && sc->pf_frame[cur[s]] == f) {
                    v = sc->pf_self[cur[s]];
                    present = 1;
                }
                if (!present && only < 0)
                    continue;
                fprintf(out, "%llu,%.6f,", (unsigned long long)fr->index,
                        an_elapsed_ns(t0, fr->begin_ns) / 1e9);
                csv_num(out, MS(an_frame_ns(fr)));
                fputc(',', out);
                csv_num(out, fr->has_gpu ? MS(fr->gpu_ns) : NAN);
                fprintf(out, ",%s,", kind_name(sc->kind));
                rep_csv_field(out, sc->name);
                fputc(',', out);
                csv_num(out, MS(v));
                fputc('\n', out);
            }
        }
        free(cur);
        return 0;
    }
    double *dense = malloc((n ? n : 1) * ncol * sizeof *dense + 1);
    if (!dense)
        return -1;
    for (size_t j = 0; j < ncol; j++)
        an_scope_dense(m, &m->scopes[cols[j]], dense + j * n);
    fprintf(out, "\n%sFrames%s (self ms per frame of %s)\n", bold(st), reset(st),
            only >= 0 ? "one scope" : "the top scopes");
    fprintf(out, "  %7s %9s %9s %9s", "frame", "start s", "frame ms", "gpu ms");
    for (size_t j = 0; j < ncol; j++)
        fprintf(out, " %14.14s", m->scopes[cols[j]].name);
    fputc('\n', out);
    for (size_t f = 0; f < n; f++) {
        const an_frame *fr = &m->frames[f];
        fprintf(out, "  %7llu %9.3f %9.3f ", (unsigned long long)fr->index,
                an_elapsed_ns(t0, fr->begin_ns) / 1e9, MS(an_frame_ns(fr)));
        if (fr->has_gpu)
            fprintf(out, "%9.3f", MS(fr->gpu_ns));
        else
            fprintf(out, "%9s", "-");
        for (size_t j = 0; j < ncol; j++)
            fprintf(out, " %14.3f", MS(dense[j * n + f]));
        fputc('\n', out);
    }
    free(dense);
    return 0;
}
