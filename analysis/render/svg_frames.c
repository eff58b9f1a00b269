/*
 * svg_frames.c - the frame-time chart (an_svg_frames), drawn from
 * an_frame_chart (frame_chart.h).
 *
 * Layout: the title and a one-line summary; the plot (x: frame number,
 * y: ms from 0) with the frame time in blue and the GPU time in orange,
 * each a band from the minimum to the maximum of every pixel column;
 * the median, p95 and p99 as lines labelled in the right margin;
 * stutters as vermillion triangles above the plot. Under it, for
 * --frames, one strip per counter the text report shows (an_frame_chart.
 * counters): the counter's per-frame value (the mean of each column's
 * frames), on its own axis from its minimum to its maximum, both printed.
 */
#include "svg.h"
#include "svg_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frame_chart.h"

#define W 1200
#define H 460
#define PL 70          /* plot left */
#define PR (W - 160)   /* plot right; the line labels go beyond it */
#define PT 92          /* plot top */
#define PB (H - 52)    /* plot bottom */
#define STRIP_H 72     /* a counter's strip under the chart */
#define STRIP_NOTE 18  /* the line above the strips */
#define STRIP_TOP (H + STRIP_NOTE) /* the first strip's top */

_Static_assert(PR - PL == AN_SVG_FRAME_COLUMNS, "one column per pixel");

static const char FRAMES_CSS[] =
    ".band { stroke-width: 1.2; stroke-linejoin: round; stroke-linecap: round; }\n"
    ".ref { stroke: " AN__SVG_INK "; stroke-width: 1; fill: none; }\n"
    ".stutter { fill: " AN__SVG_VERMILLION "; }\n";

typedef struct plot {
    FILE *f;
    double ymax;      /* ms at the top of the plot */
    size_t ncols;
} plot;

static double py(const plot *p, double ms)
{
    double y = PB - ms / p->ymax * (PB - PT);
    return y < PT ? PT : y > PB ? PB : y;
}

static double col_x(const plot *p, size_t k)
{
    return PL + ((double)k + 0.5) * (PR - PL) / (double)p->ncols;
}

/* One series as bands: each run of columns that have values becomes a
 * closed path along the maxima and back along the minima. */
static void band(const plot *p, const an_frame_chart *c, int gpu,
                 const char *colour)
{
    FILE *f = p->f;
    fprintf(f, "<path class=\"band\" id=\"%s\" fill=\"%s\" fill-opacity=\"0.3\" "
               "stroke=\"%s\" d=\"",
            gpu ? "gpu" : "frametime", colour, colour);
    size_t k = 0, runs = 0;
    while (k < c->ncols) {
        const an_frame_col *col = &c->cols[k];
        if (gpu && isnan(col->gpu_max_ms)) {
            k++;
            continue;
        }
        size_t a = k;
        while (k < c->ncols && !(gpu && isnan(c->cols[k].gpu_max_ms)))
            k++;
        fputs(runs++ ? " M" : "M", f);
        for (size_t i = a; i < k; i++)
            fprintf(f, "%s%.1f,%.1f", i > a ? " " : "", col_x(p, i),
                    py(p, gpu ? c->cols[i].gpu_max_ms : c->cols[i].max_ms));
        for (size_t i = k; i-- > a;)
            fprintf(f, " %.1f,%.1f", col_x(p, i),
                    py(p, gpu ? c->cols[i].gpu_min_ms : c->cols[i].min_ms));
        fputs(" Z", f);
    }
    fputs("\"/>\n", f);
}

static void axes(const plot *p, const an_capture *m, const an_frame_chart *c)
{
    FILE *f = p->f;
    char lab[32];
    /* y: ms */
    double step = an__svg_tick_step(p->ymax, 6);
    fputs("<g id=\"yaxis\">\n", f);
    for (int i = 0;; i++) {
        double v = step * i;
        if (v > p->ymax * (1 + 1e-9))
            break;
        double y = py(p, v);
        if (i)
            fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                       "y2=\"%.1f\"/>\n", PL, y, PR, y);
        an__svg_tick_label(lab, sizeof lab, v, step);
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" "
                   "text-anchor=\"end\">%s</text>\n", PL - 6, y + 4, lab);
    }
    fprintf(f, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 18 %d)\">frame time (ms)</text>\n",
            (PT + PB) / 2, (PT + PB) / 2);
    fputs("</g>\n<g id=\"xaxis\">\n", f);
    /* x: frame numbers (the capture's own, which --skip-seconds keeps) */
    size_t n = m->nframes;
    uint64_t first = an_frame_index(m, 0);
    double xs = an__svg_tick_step((double)n, 10);
    if (xs < 1)
        xs = 1;
    uint64_t st = (uint64_t)xs;
    for (uint64_t v = (first + st - 1) / st * st; v < first + n; v += st) {
        double x = PL + ((double)(v - first) + 0.5) * (PR - PL) / (double)n;
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                   "y2=\"%d\"/>\n", x, PB, x, PB + 5);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"middle\">%llu</text>\n",
                x, PB + 18, (unsigned long long)v);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">frame "
               "(%zu frames%s)</text>\n",
            (PL + PR) / 2, PB + 38, n,
            c->ncols < n ? ", each pixel column the minimum and maximum of its "
                           "frames" : "");
    fputs("</g>\n", f);
    fprintf(f, "<path class=\"ax\" d=\"M%d,%d V%d H%d\"/>\n", PL, PT, PB, PR);
}

/* The median, p95 and p99 lines, labelled in the right margin; labels
 * that would overlap are pushed apart (13 px) and joined to their line. */
static void ref_lines(const plot *p, const an_frame_chart *c)
{
    FILE *f = p->f;
    struct {
        const char *name, *dash;
        double v, y, ly;
    } r[3] = {{"median", "", c->fs.median, 0, 0},
              {"p95", "6 3", c->fs.p95, 0, 0},
              {"p99", "2 3", c->fs.p99, 0, 0}};
    for (int i = 0; i < 3; i++)
        r[i].y = r[i].ly = py(p, r[i].v);
    /* values grow with the index, so y falls: push later labels up */
    for (int i = 1; i < 3; i++)
        if (r[i].ly > r[i - 1].ly - 13)
            r[i].ly = r[i - 1].ly - 13;
    if (r[2].ly < PT - 4) { /* out of room at the top: push down instead */
        r[2].ly = PT - 4;
        for (int i = 1; i >= 0; i--)
            if (r[i].ly < r[i + 1].ly + 13)
                r[i].ly = r[i + 1].ly + 13;
    }
    fputs("<g id=\"reflines\">\n", f);
    for (int i = 0; i < 3; i++) {
        fprintf(f, "<line class=\"ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                   "y2=\"%.1f\"%s%s%s/>\n",
                PL, r[i].y, PR, r[i].y, *r[i].dash ? " stroke-dasharray=\"" : "",
                r[i].dash, *r[i].dash ? "\"" : "");
        fprintf(f, "<polyline class=\"ref\" points=\"%d,%.1f %d,%.1f %d,%.1f\"/>\n",
                PR, r[i].y, PR + 6, r[i].ly, PR + 10, r[i].ly);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">%s %.3f ms</text>\n", PR + 13,
                r[i].ly + 4, r[i].name, r[i].v);
    }
    fputs("</g>\n", f);
}

/* Stutters: one triangle per column holding any, with a tooltip naming
 * the longest of them (and how many more the column holds). */
static void stutters(const plot *p, const an_capture *m, const an_frame_chart *c)
{
    FILE *f = p->f;
    fputs("<g id=\"stutters\">\n", f);
    size_t s = 0;
    for (size_t k = 0; k < c->ncols && s < c->nstutters; k++) {
        const an_frame_col *col = &c->cols[k];
        size_t end = col->first + col->count, worst = s, cnt = 0;
        for (; s < c->nstutters && c->stutters[s].frame < end; s++, cnt++)
            if (c->stutters[s].ms > c->stutters[worst].ms)
                worst = s;
        if (!cnt)
            continue;
        const an_stutter *st = &c->stutters[worst];
        double x = col_x(p, k);
        fprintf(f, "<path class=\"stutter\" d=\"M%.1f,%d l-5,-9 h10 Z\">"
                   "<title>stutter: frame %llu, %.3f ms, %.1fx the median of "
                   "the frames around it (%.3f ms)",
                x, PT - 3, (unsigned long long)an_frame_index(m, st->frame),
                st->ms, st->local_ms > 0 ? st->ms / st->local_ms : 0.0,
                st->local_ms);
        if (cnt > 1)
            fprintf(f, "; %zu stutters in this column", cnt);
        fputs("</title></path>\n", f);
    }
    fputs("</g>\n", f);
}

/* The counters' strips under the chart, each a line over the same x
 * columns, scaled from its minimum (bottom) to its maximum (top). */
static void counter_strips(const plot *p, const an_frame_chart *c)
{
    static const char *colours[] = {AN__SVG_GREEN, AN__SVG_PURPLE,
                                    AN__SVG_SKY, AN__SVG_GREY};
    FILE *f = p->f;
    if (!c->ncounters)
        return;
    fprintf(f, "<g id=\"counters\">\n<text class=\"sub\" x=\"%d\" "
               "y=\"%d\">Counters per frame: each pixel column the mean of its "
               "frames' values; a frame without a sample carries the last one "
               "before it</text>\n",
            PL, H + 8);
    for (size_t k = 0; k < c->ncounters; k++) {
        const an_chart_counter *cc = &c->counters[k];
        const char *colour = colours[k % (sizeof colours / sizeof *colours)];
        int top = STRIP_TOP + (int)k * STRIP_H, t = top + 22,
            b = top + STRIP_H - 8;
        fprintf(f, "<text x=\"%d\" y=\"%d\">", PL, top + 14);
        an__svg_text(f, cc->name, 60);
        if (isnan(cc->min))
            fputs(": no value in any frame", f);
        else
            fprintf(f, ": %.4g to %.4g", cc->min, cc->max);
        fputs("</text>\n", f);
        fprintf(f, "<path class=\"ax\" d=\"M%d,%d V%d H%d\"/>\n", PL, t, b,
                PR);
        if (isnan(cc->min))
            continue;
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" "
                   "text-anchor=\"end\">%.4g</text>\n"
                   "<text class=\"tick\" x=\"%d\" y=\"%d\" "
                   "text-anchor=\"end\">%.4g</text>\n",
                PL - 6, t + 4, cc->max, PL - 6, b, cc->min);
        double span = cc->max - cc->min;
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                   "d=\"",
                colour);
        int pen = 0;
        for (size_t j = 0; j < c->ncols; j++) {
            double v = cc->col[j];
            if (isnan(v)) {
                pen = 0;
                continue;
            }
            /* a flat counter sits in the middle of its strip */
            double y = span > 0 ? b - (v - cc->min) / span * (b - t)
                                : (t + b) / 2.0;
            fprintf(f, "%s%.1f,%.1f", pen ? " L" : (j ? " M" : "M"),
                    col_x(p, j), y);
            pen = 1;
        }
        fputs("\"><title>", f);
        an__svg_text(f, cc->name, 200);
        fprintf(f, " per frame: %.6g to %.6g</title></path>\n", cc->min,
                cc->max);
    }
    fputs("</g>\n", f);
}

cap_result an_svg_frames(FILE *out, const an_capture *m,
                         const an_frame_chart *cp, const char *title)
{
    const an_frame_chart c = *cp;
    if (!title)
        title = m->path ? m->path : "capture";
    int height = H + (m->nframes && cp->ncounters
                          ? STRIP_NOTE + (int)cp->ncounters * STRIP_H
                          : 0);
    an__svg_begin(out, W, height, "Frame time", title, FRAMES_CSS, W - 20);
    if (!m->nframes) {
        fprintf(out, "<text id=\"nodata\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">The "
                     "capture holds no frames.</text>\n</svg>\n",
                W / 2, height / 2);
        return CAP_OK;
    }
    fprintf(out, "<text class=\"sub\" x=\"10\" y=\"46\">%zu frames \xC2\xB7 "
                 "mean %.3f ms \xC2\xB7 median %.3f \xC2\xB7 p95 %.3f \xC2\xB7 "
                 "p99 %.3f \xC2\xB7 max %.3f \xC2\xB7 1%% low %.3f ms "
                 "(%.1f fps) \xC2\xB7 %zu stutter%s",
            c.fs.n, c.fs.mean, c.fs.median, c.fs.p95, c.fs.p99, c.fs.max,
            c.fs.low1, c.fs.low1 > 0 ? 1000.0 / c.fs.low1 : 0.0, c.nstutters,
            c.nstutters == 1 ? "" : "s");
    if (c.fs.groups == 2) /* a light and a heavy group all along */
        fprintf(out, " \xC2\xB7 2 groups: %.3f / %.3f ms (%.0f/%.0f %%)",
                c.fs.group_ms[0], c.fs.group_ms[1], c.fs.group_share[0] * 100,
                c.fs.group_share[1] * 100);
    fputs("</text>\n", out);
    /* legend */
    fprintf(out, "<g id=\"legend\">\n"
                 "<rect x=\"%d\" y=\"58\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                 "<text x=\"%d\" y=\"67\">frame time</text>\n",
            PL, AN__SVG_BLUE, PL + 19);
    int lx = PL + 110;
    if (c.has_gpu) {
        fprintf(out, "<rect x=\"%d\" y=\"58\" width=\"14\" height=\"10\" "
                     "fill=\"%s\"/><text x=\"%d\" y=\"67\">GPU time (its GPU "
                     "spans' self times)</text>\n",
                lx, AN__SVG_ORANGE, lx + 19);
        lx += 260;
    }
    fprintf(out, "<path class=\"stutter\" d=\"M%d,68 l-5,-9 h10 Z\"/>"
                 "<text x=\"%d\" y=\"67\">stutter: over %.1fx the median of the "
                 "%d frames around it</text>\n</g>\n",
            lx + 7, lx + 17, AN_STUTTER_FACTOR, AN_STUTTER_WINDOW);
    plot p = {out, 1, c.ncols};
    p.ymax = an__svg_axis_top(c.max_ms);
    axes(&p, m, &c);
    if (c.has_gpu)
        band(&p, &c, 1, AN__SVG_ORANGE);
    band(&p, &c, 0, AN__SVG_BLUE);
    ref_lines(&p, &c);
    stutters(&p, m, &c);
    counter_strips(&p, &c);
    fputs("</svg>\n", out);
    return CAP_OK;
}
