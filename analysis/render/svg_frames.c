/*
 * svg_frames.c - the frame-time chart (an_svg_frames), drawn from
 * an_frame_chart (frame_chart.h).
 *
 * Layout: the title and a one-line summary; the plot (x: frame number,
 * y: ms from 0) with the frame time in blue and the GPU time in orange,
 * each a band from the minimum to the maximum of every pixel column;
 * the median, p95 and p99 as lines labelled in the right margin;
 * stutters as vermillion triangles above the plot.
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
    uint64_t first = m->frames[0].index;
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
                x, PT - 3, (unsigned long long)m->frames[st->frame].index,
                st->ms, st->local_ms > 0 ? st->ms / st->local_ms : 0.0,
                st->local_ms);
        if (cnt > 1)
            fprintf(f, "; %zu stutters in this column", cnt);
        fputs("</title></path>\n", f);
    }
    fputs("</g>\n", f);
}

int an_svg_frames(FILE *out, const an_capture *m, const char *title)
{
    an_frame_chart c;
    if (an_frame_chart_compute(&c, m, (size_t)(PR - PL)) != 0)
        return -1;
    if (!title)
        title = m->path ? m->path : "capture";
    size_t tl = strlen(title) + 16;
    char *t = malloc(tl);
    if (!t) {
        an_frame_chart_free(&c);
        return -1;
    }
    snprintf(t, tl, "Frame time: %s", title);
    an__svg_head(out, W, H, t, FRAMES_CSS);
    free(t);
    fputs("<text class=\"h1\" x=\"10\" y=\"24\">Frame time: ", out);
    an__svg_text(out, title, an__svg_fit(W - 20, 17) - 12);
    fputs("</text>\n", out);
    if (!m->nframes) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">The "
                     "capture holds no frames.</text>\n</svg>\n",
                W / 2, H / 2);
        an_frame_chart_free(&c);
        return 0;
    }
    fprintf(out, "<text class=\"sub\" x=\"10\" y=\"46\">%zu frames \xC2\xB7 "
                 "mean %.3f ms \xC2\xB7 median %.3f \xC2\xB7 p95 %.3f \xC2\xB7 "
                 "p99 %.3f \xC2\xB7 max %.3f \xC2\xB7 1%% low %.3f ms "
                 "(%.1f fps) \xC2\xB7 %zu stutter%s</text>\n",
            c.fs.n, c.fs.mean, c.fs.median, c.fs.p95, c.fs.p99, c.fs.max,
            c.fs.low1, c.fs.low1 > 0 ? 1000.0 / c.fs.low1 : 0.0, c.nstutters,
            c.nstutters == 1 ? "" : "s");
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
    double step = an__svg_tick_step(c.max_ms, 6);
    p.ymax = c.max_ms > 0 ? ceil(c.max_ms / step * (1 - 1e-12)) * step : 1;
    if (p.ymax < c.max_ms)
        p.ymax += step;
    axes(&p, m, &c);
    if (c.has_gpu)
        band(&p, &c, 1, AN__SVG_ORANGE);
    band(&p, &c, 0, AN__SVG_BLUE);
    ref_lines(&p, &c);
    stutters(&p, m, &c);
    fputs("</svg>\n", out);
    an_frame_chart_free(&c);
    return 0;
}
