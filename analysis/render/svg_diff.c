/*
 * svg_diff.c - the differential flame graph (an_svg_diff): the new run's
 * flame graph painted by an an_diff (diff.h).
 *
 * Geometry is the new run's call tree (widths: its total time). A box is
 * coloured only when its diff row is significant: regressed in orange to
 * vermillion, improved in light to deep sky blue, the shade by the
 * relative change of the median self time per frame (full at 50 %); added
 * scopes (only in the new run) in yellow; every other box (unchanged,
 * inconclusive, too few frames, no row) light grey. Blue against orange
 * stays apart with every common colour-vision deficiency, and the tooltip
 * says the verdict in words.
 */
#include "svg.h"
#include "svg_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FULL_PCT 50.0 /* the change that gets the deepest shade */

typedef struct diff_paint {
    const an_diff *d;
    int by_path;
    size_t *order;  /* row indices sorted by (kind, name) */
    size_t n;
} diff_paint;

static int row_cmp(const an_diff_row *a, an_kind kind, const char *name)
{
    if (a->kind != kind)
        return a->kind < kind ? -1 : 1;
    return strcmp(a->name, name);
}

static int order_cmp(const void *x, const void *y, void *ctx)
{
    const an_diff *d = ctx;
    const an_diff_row *a = &d->rows[*(const size_t *)x];
    const an_diff_row *b = &d->rows[*(const size_t *)y];
    return row_cmp(a, b->kind, b->name);
}

/* The diff row of a tree row, or NULL. */
static const an_diff_row *find(const diff_paint *p, const an_tree_row *r,
                               const char *path)
{
    const char *key = p->by_path ? path : r->node->name;
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = row_cmp(&p->d->rows[p->order[mid]], r->node->kind, key);
        if (c == 0)
            return &p->d->rows[p->order[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* white mixed with (r, g, b) by t in [0, 1] */
static void mix(char *buf, size_t n, const int rgb[3], double t)
{
    int c[3];
    for (int i = 0; i < 3; i++)
        c[i] = (int)(255 + (rgb[i] - 255) * t + 0.5);
    snprintf(buf, n, "#%02X%02X%02X", c[0], c[1], c[2]);
}

static const int REGRESSED_RGB[3] = {213, 94, 0};   /* vermillion */
static const int IMPROVED_RGB[3] = {40, 150, 220};  /* a deeper sky blue */
#define ADDED_FILL "#F0E442"                          /* yellow */
#define NEUTRAL_FILL "#DDDDDD"

static double shade(double pct)
{
    double a = fabs(pct);
    if (isnan(a))
        a = 0;
    /* at least 0.45: a significant box must stand out from the grey */
    return 0.45 + 0.45 * (a >= FULL_PCT ? 1 : a / FULL_PCT);
}

static void fill(void *ctx, const an_tree_row *r, const char *path, char *buf,
                 size_t n)
{
    const an_diff_row *x = find(ctx, r, path);
    if (!x) {
        snprintf(buf, n, NEUTRAL_FILL);
        return;
    }
    switch (x->d.verdict) {
    case CAP_VERDICT_REGRESSED:
        mix(buf, n, REGRESSED_RGB, shade(x->d.delta_pct));
        break;
    case CAP_VERDICT_IMPROVED:
        mix(buf, n, IMPROVED_RGB, shade(x->d.delta_pct));
        break;
    case CAP_VERDICT_ADDED:
        snprintf(buf, n, ADDED_FILL);
        break;
    default:
        snprintf(buf, n, NEUTRAL_FILL);
        break;
    }
}

static void tip(void *ctx, FILE *f, const an_tree_row *r, const char *path)
{
    const diff_paint *p = ctx;
    const an_diff_row *x = find(p, r, path);
    if (!x) {
        fputs("\nnot compared (no row in the diff)", f);
        return;
    }
    const cap_diffstat *s = &x->d;
    if (p->d->level_of_means) /* frames in two groups: medians jump */
        fprintf(f, "\nself ms per frame, mean: base %.3f \xE2\x86\x92 new "
                   "%.3f",
                x->base_mean_ms, x->new_mean_ms);
    else
        fprintf(f, "\nself ms per frame, median: base %.3f \xE2\x86\x92 new "
                   "%.3f",
                s->base_median, s->new_median);
    if (isfinite(s->delta_pct))
        fprintf(f, " (%+.1f%%, interval %+.1f%% to %+.1f%%)", s->delta_pct,
                s->ci_low_pct, s->ci_high_pct);
    if (!isnan(s->p_adjusted))
        fprintf(f, "\np (Holm) %.3g", s->p_adjusted);
    fprintf(f, "\n%s: %s%s", cap_verdict_name(s->verdict),
            cap_verdict_message(s->verdict),
            p->by_path ? "" : " (compared by name, over every path)");
}

static void legend(void *ctx, FILE *f, int y)
{
    (void)ctx;
    char c[16];
    int x = 10;
    fprintf(f, "<g id=\"legend\">\n");
    for (int k = 0; k < 3; k++) { /* improved, from deep to light */
        mix(c, sizeof c, IMPROVED_RGB, shade(FULL_PCT * (1 - k / 2.0)));
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>",
                x + 18 * k, y, c);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\">improved (-%.0f%% or more \xE2\x80\xA6 "
               "0%%)</text>\n", x + 60, y + 10, FULL_PCT);
    x += 300;
    for (int k = 0; k < 3; k++) {
        mix(c, sizeof c, REGRESSED_RGB, shade(FULL_PCT * k / 2.0));
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>",
                x + 18 * k, y, c);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\">regressed (0%% \xE2\x80\xA6 +%.0f%% "
               "or more)</text>\n", x + 60, y + 10, FULL_PCT);
    x += 300;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>"
               "<text x=\"%d\" y=\"%d\">added</text>\n", x, y, ADDED_FILL,
            x + 24, y + 10);
    x += 90;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>"
               "<text x=\"%d\" y=\"%d\">no significant change</text>\n</g>\n",
            x, y, NEUTRAL_FILL, x + 24, y + 10);
}

cap_result an_svg_diff(FILE *out, const an_capture *base, const an_capture *new_,
                       const an_tree *t, const an_diff *d, int by_path,
                       const char *title)
{
    diff_paint p = {d, by_path, NULL, 0};
    p.order = malloc((d->n ? d->n : 1) * sizeof *p.order);
    if (!p.order)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < d->n; i++)
        if (!d->rows[i].is_frame)
            p.order[p.n++] = i;
    qsort_r(p.order, p.n, sizeof *p.order, order_cmp, (void *)d);
    size_t removed = 0;
    for (size_t i = 0; i < d->n; i++)
        removed += d->rows[i].d.verdict == CAP_VERDICT_REMOVED;
    char sub[400], gone[64] = "", mix[120] = "";
    if (removed)
        snprintf(gone, sizeof gone, ", %zu removed", removed);
    if (d->mix.found) /* the (heavy frames) row: no scope of the graph */
        snprintf(mix, sizeof mix,
                 "heavy frames %.1f%% \xE2\x86\x92 %.1f%%: %s \xC2\xB7 ",
                 d->mix.d.base_median, d->mix.d.new_median,
                 cap_verdict_name(d->mix.d.verdict));
    snprintf(sub, sizeof sub,
             "%swidth: total time in NEW \xC2\xB7 colour: significant change "
             "in median self ms/frame \xC2\xB7 %zu regressed, %zu improved%s "
             "\xC2\xB7 by %s",
             mix, d->regressed, d->improved, gone, by_path ? "path" : "name");
    (void)base;
    an__flame_paint paint = {&p,  "Differential flame graph", sub, fill, tip,
                             legend, 24};
    cap_result rc = an__svg_flame_doc(out, new_, t, title, &paint);
    free(p.order);
    return rc;
}
