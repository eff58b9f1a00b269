/*
 * svg_over_time.c - the over-time chart (an_svg_over_time), drawn from an
 * an_over_time (report.h).
 *
 * Layout: the title, a summary line, the verdicts written out in a box
 * (the sentences of the text report); then the plot: x is the time since
 * the first frame (each bin a point at its middle), the left axis ms (the
 * frame median per bin in black, all CPU work summed per frame in black
 * long dashes, each top scope's median self time per frame in its colour,
 * waits dashed), the right axis the counters' means
 * per bin (grey, dotted, square marks). Every line is named at its right
 * end with its growth, labels moved apart where they would collide.
 */
#include "svg.h"
#include "svg_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

#define W 1200
#define PL 70
#define PR 860                 /* plot right; the right axis beyond it */
#define LABEL_X (PR + 80)      /* line labels */
#define PLOT_H 300
#define MAX_VERDICT_LINES 6
#define MAX_COUNTERS 6

/* Okabe-Ito colours for the scope lines (the yellow is too light for a
 * line on white); scopes past the sixth reuse them, dash-dotted. */
static const char *const LINE_COLOURS[6] = {
    AN__SVG_BLUE, AN__SVG_VERMILLION, AN__SVG_GREEN, AN__SVG_ORANGE,
    AN__SVG_PURPLE, AN__SVG_SKY};

static const char OT_CSS[] =
    ".ln { fill: none; stroke-width: 2; stroke-linejoin: round; }\n"
    ".verdict { fill: #F3F3F3; stroke: #CCCCCC; }\n"
    ".lab { font-size: 12px; }\n";

typedef struct ot_plot {
    FILE *f;
    int top, bottom;
    double t0, t1;   /* x range, s */
    double lmax;     /* left axis top, ms */
    double rmax;     /* right axis top */
} ot_plot;

static double ox(const ot_plot *p, double t)
{
    return PL + (t - p->t0) / (p->t1 - p->t0) * (PR - PL);
}

static double oy(const ot_plot *p, double v, double max)
{
    double y = p->bottom - v / max * (p->bottom - p->top);
    return y < p->top ? p->top : y > p->bottom ? p->bottom : y;
}

static double bin_mid(const an_over_time *ot, int b)
{
    return (ot->bins[b].start_s + ot->bins[b].end_s) / 2;
}

/* One series: a path through the bins that have a value (a gap where
 * one has none) and a mark at each. Returns the y of the last value, or
 * NAN when the series has none. */
static double series(const ot_plot *p, const an_over_time *ot,
                     const double *v, double max, const char *colour,
                     const char *dash, int square, double width,
                     const char *id, const char *tip)
{
    FILE *f = p->f;
    double last = NAN;
    fprintf(f, "<g id=\"%s\"><title>", id);
    an__svg_text(f, tip, (size_t)-1);
    fprintf(f, "</title>\n<path class=\"ln\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s d=\"",
            colour, width, *dash ? " stroke-dasharray=\"" : "", dash,
            *dash ? "\"" : "");
    int pen = 0;
    for (int b = 0; b < ot->nbins; b++) {
        if (isnan(v[b])) {
            pen = 0;
            continue;
        }
        fprintf(f, "%s%.1f,%.1f", pen ? " L" : (b ? " M" : "M"),
                ox(p, bin_mid(ot, b)), oy(p, v[b], max));
        pen = 1;
    }
    fputs("\"/>\n", f);
    for (int b = 0; b < ot->nbins; b++) {
        if (isnan(v[b]))
            continue;
        double x = ox(p, bin_mid(ot, b)), y = oy(p, v[b], max);
        if (square)
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"5\" height=\"5\" "
                       "fill=\"%s\"/>\n", x - 2.5, y - 2.5, colour);
        else
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
                    x, y, colour);
        last = y;
    }
    fputs("</g>\n", f);
    return last;
}

static void ratio_text(char *buf, size_t n, an_ratio r)
{
    switch (r.state) {
    case AN_RATIO_VALUE: snprintf(buf, n, "%.2fx", r.value); break;
    case AN_RATIO_NO_DATA: snprintf(buf, n, "empty"); break;
    case AN_RATIO_FROM_ZERO: snprintf(buf, n, "from 0"); break;
    case AN_RATIO_INFINITE: snprintf(buf, n, "infinite"); break;
    default: snprintf(buf, n, "at 0"); break;
    }
}

static void axis_y(const ot_plot *p, double max, int right, const char *label)
{
    FILE *f = p->f;
    char lab[32];
    double step = an__svg_tick_step(max, 6);
    fprintf(f, "<g id=\"%s\">\n", right ? "yaxis-right" : "yaxis");
    for (int i = 0;; i++) {
        double v = step * i;
        if (v > max * (1 + 1e-9))
            break;
        double y = oy(p, v, max);
        if (!right && i)
            fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                       "y2=\"%.1f\"/>\n", PL, y, PR, y);
        an__svg_tick_label(lab, sizeof lab, v, step);
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"%s\">",
                right ? PR + 6 : PL - 6, y + 4, right ? "start" : "end");
        an__svg_text(f, lab, 8);
        fputs("</text>\n", f);
    }
    int mid = (p->top + p->bottom) / 2;
    if (right) /* above its axis: the line labels own the space beside it */
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", PR,
                p->top - 12);
    else
        fprintf(f, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 18 %d)\">",
                mid, mid);
    an__svg_text(f, label, right ? 14 : an__svg_fit(p->bottom - p->top, 12));
    fputs("</text>\n</g>\n", f);
}

typedef struct label {
    double y0, y;      /* the line's end, the label's place */
    const char *colour;
    const char *dash;
    char text[96];
    const char *name;  /* the full name, for the tooltip */
} label;

/* The label of a line drawn (series' y: NAN when it drew nothing, then
 * NULL), appended to labs; the caller writes its text. */
static label *add_label(label *labs, size_t *nl, double y, const char *colour,
                        const char *dash, const char *name)
{
    if (isnan(y))
        return NULL;
    label *L = &labs[(*nl)++];
    L->y0 = L->y = y;
    L->colour = colour;
    L->dash = dash;
    L->name = name;
    return L;
}

/* The verdicts' sentences, one line each (malloc'd), or NULL when out of
 * memory. */
static char *verdict_text(const an_over_time *ot)
{
    char *vtext = NULL;
    size_t vlen = 0;
    FILE *vf = open_memstream(&vtext, &vlen);
    if (!vf)
        return NULL;
    for (size_t i = 0; i < ot->verdicts.n; i++)
        an_text_verdict(vf, &ot->verdicts.v[i], &ot->evidence);
    if (fclose(vf) != 0) {
        free(vtext);
        return NULL;
    }
    return vtext;
}

/* Writes vtext's lines (each verdict wrapped on its own, `vcols` a line)
 * at (x, y) lines `step` apart, at most `max` lines, to f; returns the
 * lines written. vtext is cut at each newline and mended after. */
static int verdict_paras(FILE *f, char *vtext, int x, int y, int step,
                         size_t vcols, int max)
{
    int lines = 0;
    char *s = vtext;
    while (*s && lines < max) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        lines += an__svg_para(f, x, y + step * lines, step, vcols,
                              max - lines, "", s);
        if (!nl)
            break;
        *nl = '\n';
        s = nl + 1;
    }
    return lines;
}

/* The summary line under the title. */
static void subtitle(FILE *out, const an_over_time *ot)
{
    char sub[400];
    if (ot->groups == 2) /* the light and heavy medians, by the mix */
        snprintf(sub, sizeof sub,
                 "%zu frames in %d bins of %.3f s \xC2\xB7 left: ms per "
                 "bin, light (%.3f ms%s) and heavy (%.3f ms) frames' "
                 "medians mixed %.0f/%.0f%s",
                 ot->nframes, ot->nbins, ot->width_s, ot->group_ms[0],
                 ot->group_by_work ? " of work" : "",
                 ot->group_ms[1], ot->group_share[0] * 100,
                 ot->group_share[1] * 100,
                 ot->ncounters ? " \xC2\xB7 right: counters" : "");
    else
        snprintf(sub, sizeof sub,
                 "%zu frames in %d bins of %.3f s \xC2\xB7 left: median "
                 "ms per bin (the frame; per frame, all CPU work summed "
                 "and each top scope's self time)%s",
                 ot->nframes, ot->nbins, ot->width_s,
                 ot->ncounters ? " \xC2\xB7 right: counters' means" : "");
    fputs("<text class=\"sub\" x=\"10\" y=\"46\">", out);
    an__svg_text(out, sub, an__svg_fit(W - 20, 12));
    fputs("</text>\n", out);
}

/* The verdicts, written on the picture in a box of vlines lines. */
static void verdict_box(FILE *out, char *vtext, int vlines, int vbox_top,
                        int vbox_h, size_t vcols)
{
    if (!vlines)
        return;
    fprintf(out, "<g id=\"verdicts\">\n<rect class=\"verdict\" x=\"10\" "
                 "y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\"/>\n",
            vbox_top, W - 20, vbox_h);
    verdict_paras(out, vtext, 20, vbox_top + 18, 16, vcols, vlines);
    fputs("</g>\n", out);
}

/* The axes' ranges: the bins' span, the left axis over the frame,
 * scopes and work, the right over the counters shown. frame_med: each
 * bin's frame level (NaN in a bin without frames). */
static void ranges(ot_plot *p, const an_over_time *ot, double *frame_med,
                   size_t shown_counters)
{
    p->t0 = ot->bins[0].start_s;
    p->t1 = ot->bins[ot->nbins - 1].end_s;
    if (!(p->t1 > p->t0))
        p->t1 = p->t0 + 1;
    double lmax = 0, rmax = 0;
    for (int b = 0; b < ot->nbins; b++) {
        frame_med[b] = ot->bins[b].frames ? ot->bins[b].level : NAN;
        if (frame_med[b] > lmax)
            lmax = frame_med[b];
        for (size_t j = 0; j < ot->nscopes; j++)
            if (ot->scopes[j].median[b] > lmax)
                lmax = ot->scopes[j].median[b];
        if (ot->work.median && ot->work.median[b] > lmax)
            lmax = ot->work.median[b];
        for (size_t c = 0; c < shown_counters; c++)
            if (ot->counters[c].mean[b] > rmax)
                rmax = ot->counters[c].mean[b];
    }
    p->lmax = an__svg_axis_top(lmax);
    p->rmax = an__svg_axis_top(rmax);
}

/* The time axis, and the plot's frame (a right edge with counters). */
static void axis_x(const ot_plot *p, size_t shown_counters)
{
    FILE *out = p->f;
    char lab[32];
    double span = p->t1 - p->t0, step = an__svg_tick_step(span, 10);
    fputs("<g id=\"xaxis\">\n", out);
    /* counted, not accumulated: far from 0 a small step may not move a
     * double at all */
    double first = ceil(p->t0 / step - 1e-9) * step;
    for (int i = 0; i <= 20; i++) {
        double v = first + step * i;
        if (!(v <= p->t1 + step * 1e-9))
            break;
        double x = ox(p, v);
        fprintf(out, "<line class=\"ax\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                     "y2=\"%d\"/>\n", x, p->bottom, x, p->bottom + 5);
        an__svg_tick_label(lab, sizeof lab, v, step);
        fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
                     "text-anchor=\"middle\">%s</text>\n",
                x, p->bottom + 18, lab);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds "
                 "since the first frame (each point: the middle of its "
                 "bin)</text>\n</g>\n",
            (PL + PR) / 2, p->bottom + 38);
    fprintf(out, "<path class=\"ax\" d=\"M%d,%d V%d H%d%s\"/>\n", PL, p->top,
            p->bottom, PR, shown_counters ? " V" : "");
    if (shown_counters)
        fprintf(out, "<path class=\"ax\" d=\"M%d,%d V%d\"/>\n", PR, p->top,
                p->bottom);
}

/* The lines being drawn and their labels. */
typedef struct ot_lines {
    const ot_plot *p;
    const an_over_time *ot;
    label *labs;
    size_t nl;
    const char *med; /* "median", or "mixed median" with two groups */
} ot_lines;

/* The counters' lines (right axis), under the others. */
static void counter_lines(ot_lines *d, size_t shown_counters)
{
    char tip[200], gr[16], id[32];
    for (size_t c = 0; c < shown_counters; c++) {
        const an_ot_counter *C = &d->ot->counters[c];
        snprintf(id, sizeof id, "counter%zu", c);
        ratio_text(gr, sizeof gr, C->growth);
        snprintf(tip, sizeof tip, "counter %s%s: mean per bin (right axis), "
                 "growth %s", C->name, C->profiler ? " (the profiler's own)" : "",
                 gr);
        double y = series(d->p, d->ot, C->mean, d->p->rmax, "#777777", "2 3",
                          1, 1.5, id, tip);
        label *L = add_label(d->labs, &d->nl, y, "#777777", "2 3", C->name);
        if (L)
            snprintf(L->text, sizeof L->text, "%s %s (right)", C->name, gr);
    }
}

/* The top scopes' lines: waits dashed; the seventh and eighth scope
 * reuse the first colours, dash-dotted. */
static void scope_lines(ot_lines *d)
{
    const an_over_time *ot = d->ot;
    char tip[200], gr[16], id[32];
    for (size_t j = 0; j < ot->nscopes; j++) {
        const an_ot_scope *S = &ot->scopes[j];
        snprintf(id, sizeof id, "scope%zu", j);
        const char *colour = LINE_COLOURS[j % 6];
        const char *dash = S->scope->is_wait ? "7 4" : j >= 6 ? "10 3 2 3" : "";
        ratio_text(gr, sizeof gr, S->growth);
        snprintf(tip, sizeof tip, "%s %s%s: %s self ms per frame, growth %s",
                 S->scope->kind == AN_GPU ? "GPU" : "CPU", S->scope->name,
                 S->scope->is_wait ? " (a wait)" : "",
                 ot->groups == 2 ? "mixed median" : "median", gr);
        double y = series(d->p, ot, S->median, d->p->lmax, colour, dash, 0, 2,
                          id, tip);
        label *L = add_label(d->labs, &d->nl, y, colour, dash, S->scope->name);
        if (L)
            snprintf(L->text, sizeof L->text, "%s%s %s", S->scope->name,
                     S->scope->is_wait ? " (wait)" : "", gr);
    }
}

/* The CPU work the frame holds, summed, then the frame time on top. */
static void work_and_frame_lines(ot_lines *d, const double *frame_med)
{
    const an_over_time *ot = d->ot;
    char tip[200], gr[16];
    if (ot->work.median) {
        ratio_text(gr, sizeof gr, ot->work.growth);
        snprintf(tip, sizeof tip, "all CPU work (every CPU scope that is not "
                 "a wait, summed per frame): %s per bin, growth %s", d->med,
                 gr);
        double y = series(d->p, ot, ot->work.median, d->p->lmax, AN__SVG_INK,
                          "12 4", 0, 2.5, "work", tip);
        label *L = add_label(d->labs, &d->nl, y, AN__SVG_INK, "12 4",
                             "(all CPU work)");
        if (L)
            snprintf(L->text, sizeof L->text, "all CPU work %s", gr);
    }
    ratio_text(gr, sizeof gr, ot->bins[ot->last >= 0 ? ot->last : 0].growth);
    snprintf(tip, sizeof tip, "frame time: %s per bin, growth %s", d->med, gr);
    double y = series(d->p, ot, frame_med, d->p->lmax, AN__SVG_INK, "", 0, 3,
                      "frame", tip);
    label *L = add_label(d->labs, &d->nl, y, AN__SVG_INK, "", "frame");
    if (L)
        snprintf(L->text, sizeof L->text, "frame time (%s) %s", d->med, gr);
}

/* The labels at the right, apart, each tied to its line's end. */
static void labels_write(const ot_lines *d, size_t shown_counters)
{
    FILE *out = d->p->f;
    double ys[64];
    size_t nlab = d->nl < 64 ? d->nl : 64;
    for (size_t i = 0; i < nlab; i++)
        ys[i] = d->labs[i].y0;
    an__svg_spread(ys, nlab, 14, d->p->top - 6, d->p->bottom + 24);
    fputs("<g id=\"labels\">\n", out);
    for (size_t i = 0; i < nlab; i++) {
        const label *L = &d->labs[i];
        fprintf(out, "<g><title>");
        an__svg_text(out, L->name, (size_t)-1);
        fprintf(out, "</title><polyline class=\"ax\" stroke-dasharray=\"1 2\" "
                     "points=\"%d,%.1f %d,%.1f\"/>"
                     "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                     "stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>"
                     "<text class=\"lab\" x=\"%d\" y=\"%.1f\">",
                shown_counters ? PR + 40 : PR + 2, L->y0, LABEL_X - 20, ys[i],
                LABEL_X - 18, ys[i],
                LABEL_X - 4, ys[i], L->colour,
                *L->dash ? " stroke-dasharray=\"" : "", L->dash,
                *L->dash ? "\"" : "", LABEL_X, ys[i] + 4);
        an__svg_text(out, L->text, an__svg_fit(W - 10 - LABEL_X, 12));
        fputs("</text></g>\n", out);
    }
    fputs("</g>\n</svg>\n", out);
}

/* The plot below the verdicts: ranges, axes, lines, labels. */
static cap_result plot(ot_plot *p, const an_over_time *ot)
{
    size_t shown_counters = ot->ncounters < MAX_COUNTERS ? ot->ncounters
                                                          : MAX_COUNTERS;
    double *frame_med = malloc((size_t)ot->nbins * sizeof *frame_med);
    label *labs = calloc(2 + ot->nscopes + shown_counters, sizeof *labs);
    if (!frame_med || !labs) {
        free(frame_med);
        free(labs);
        return CAP_E_NOMEM;
    }
    ranges(p, ot, frame_med, shown_counters);
    /* two groups of frames: each group's median weighted by the mix */
    ot_lines d = {p, ot, labs, 0,
                  ot->groups == 2 ? "mixed median" : "median"};
    char ax[48];
    snprintf(ax, sizeof ax, "%s ms per frame", d.med);
    axis_y(p, p->lmax, 0, ax);
    if (shown_counters)
        axis_y(p, p->rmax, 1, "counters");
    axis_x(p, shown_counters);
    counter_lines(&d, shown_counters);
    scope_lines(&d);
    work_and_frame_lines(&d, frame_med);
    labels_write(&d, shown_counters);
    free(frame_med);
    free(labs);
    return CAP_OK;
}

cap_result an_svg_over_time(FILE *out, const an_capture *m,
                            const an_over_time *ot, const char *title)
{
    if (!title)
        title = m->path ? m->path : "capture";
    char *vtext = verdict_text(ot);
    if (!vtext)
        return CAP_E_NOMEM;
    size_t vcols = an__svg_fit(W - 40, 12);
    /* lines needed: a dry count (each verdict wrapped on its own) */
    FILE *nul = fopen("/dev/null", "w");
    if (!nul) {
        free(vtext);
        return CAP_E_NOMEM;
    }
    int vlines = verdict_paras(nul, vtext, 0, 0, 0, vcols, MAX_VERDICT_LINES);
    fclose(nul);
    int vbox_top = 58, vbox_h = vlines ? vlines * 16 + 12 : 0;
    ot_plot p = {out, 0, 0, 0, 1, 1, 1};
    p.top = vbox_top + vbox_h + 34;
    p.bottom = p.top + PLOT_H;
    an__svg_begin(out, W, p.bottom + 50, "Over time", title, OT_CSS, W - 20);
    cap_result rc = CAP_OK;
    if (!ot->nframes || ot->nbins < 1) {
        fprintf(out, "<text id=\"nodata\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">The "
                     "capture holds no frames.</text>\n</svg>\n",
                W / 2, p.top + 40);
    } else {
        subtitle(out, ot);
        verdict_box(out, vtext, vlines, vbox_top, vbox_h, vcols);
        rc = plot(&p, ot);
    }
    free(vtext);
    return rc;
}
