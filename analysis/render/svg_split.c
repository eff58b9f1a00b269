/*
 * svg_split.c - the split picture (an_svg_split), drawn from an an_split
 * (report.h): the fastest and the slowest quarter of frames side by side.
 *
 * Layout: the title, what the frames were ordered by, a legend (fast in
 * blue, slow in vermillion); then three panels: the frame time of every
 * frame of each quarter as a strip of ticks with its median marked (and,
 * ordered by CPU work, that work's median and mean under them); the
 * histograms of the frame/GPU ratio of both quarters (an_split.hist); and
 * the scopes whose mean self time per frame differs most, as pairs of
 * bars with their values.
 */
#include "svg.h"
#include "svg_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 1200
#define TOPP 104             /* top of the upper panels */
#define A_L 110              /* strip panel */
#define A_R 560
#define B_L 660              /* ratio histogram */
#define B_R 1150
#define B_H 150
#define ROWH 26              /* scope rows */
#define C_NAME 250           /* scope bars start here */
#define C_R 1000             /* and end here; values beyond */
#define MAX_ROWS 10

static const char *const POP_COLOUR[2] = {AN__SVG_BLUE, AN__SVG_VERMILLION};
static const char *const POP_NAME[2] = {"fast", "slow"};

static const char SPLIT_CSS[] =
    ".h2 { font-size: 13px; font-weight: bold; }\n"
    ".tk { stroke-width: 1.5; stroke-opacity: 0.55; }\n"
    ".med { stroke: " AN__SVG_INK "; stroke-width: 3; }\n";

/* Ticks along [x0, x1] for values [0, max], labels below y. */
static void x_ticks(FILE *f, double x0, double x1, double y, double max,
                    int max_ticks, int grid_top)
{
    char lab[32];
    double step = an__svg_tick_step(max, max_ticks);
    for (int i = 0;; i++) {
        double v = step * i;
        if (v > max * (1 + 1e-9))
            break;
        double x = x0 + v / max * (x1 - x0);
        if (grid_top >= 0 && i)
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                       "y2=\"%.1f\"/>\n", x, grid_top, x, y);
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                   "y2=\"%.1f\"/>\n", x, y, x, y + 4);
        an__svg_tick_label(lab, sizeof lab, v, step);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                   "text-anchor=\"middle\">%s</text>\n", x, y + 16, lab);
    }
}

/* Panel A: every frame of each quarter as a tick on a ms axis. */
static void strips(FILE *f, const an_capture *m, const an_split *s)
{
    double max = 0;
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < s->quarter; i++) {
            double v = (double)an_frame_ns(&m->frames[s->pop_frames[p][i]]) / 1e6;
            if (v > max)
                max = v;
        }
    max = an__svg_axis_top(max);
    int axis_y = TOPP + 150;
    fprintf(f, "<g id=\"strips\">\n<text class=\"h2\" x=\"%d\" y=\"%d\">"
               "Frame time of each frame (ms)</text>\n", A_L, TOPP - 14);
    for (int p = 0; p < 2; p++) {
        int y = TOPP + 22 + p * 64; /* tick row: y .. y + 26 */
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
                A_L - 10, y + 17, POP_NAME[p]);
        fprintf(f, "<path class=\"tk\" stroke=\"%s\" d=\"", POP_COLOUR[p]);
        for (size_t i = 0; i < s->quarter; i++) {
            double v = (double)an_frame_ns(&m->frames[s->pop_frames[p][i]]) / 1e6;
            double x = A_L + (v > 0 ? v : 0) / max * (A_R - A_L);
            fprintf(f, "%sM%.1f,%d v26", i ? " " : "", x, y);
        }
        fputs("\"/>\n", f);
        double med = s->frame[p].median;
        if (!isnan(med)) {
            double x = A_L + med / max * (A_R - A_L);
            fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                       "y2=\"%d\"><title>%s quarter: median %.3f ms</title></line>\n",
                    x, y - 5, x, y + 31, POP_NAME[p], med);
            /* the value beside the median, on the side with more room */
            int right = x < (A_L + A_R) / 2.0;
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">median "
                       "%.3f ms \xC2\xB7 p95 %.3f</text>\n",
                    right ? x + 6 : x - 6, y - 6, right ? "start" : "end", med,
                    s->frame[p].p95);
        }
    }
    fprintf(f, "<path class=\"ax\" d=\"M%d,%d H%d\"/>\n", A_L, axis_y, A_R);
    x_ticks(f, A_L, A_R, axis_y, max, 6, -1);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">frame time "
               "(ms); a tick per frame, the black bar the median</text>\n",
            (A_L + A_R) / 2, axis_y + 34);
    if (s->held)
        fprintf(f, "<text x=\"%d\" y=\"%d\">Held: the slow quarter's median "
                   "frame is only %.2f %% longer (a frame cap,</text>\n"
                   "<text x=\"%d\" y=\"%d\">vsync or a pacing thread): "
                   "ordering by frame time says little about the work</text>\n",
                A_L - 60, axis_y + 54, s->held_pct, A_L - 60, axis_y + 70);
    if (s->by_work) /* what orders the frames, under their frame times */
        fprintf(f, "<text x=\"%d\" y=\"%d\">CPU work per frame (the "
                   "order), ms:</text>\n<text x=\"%d\" y=\"%d\">median "
                   "fast %.3f, slow %.3f \xC2\xB7 mean fast %.3f, slow "
                   "%.3f</text>\n",
                A_L - 60, axis_y + 54, A_L - 60, axis_y + 70,
                s->work[0].median, s->work[1].median, s->work[0].mean,
                s->work[1].mean);
    fputs("</g>\n", f);
}

/* Panel B: the frame/GPU ratio histograms, bars side by side per bin. */
static void ratio_hist(FILE *f, const an_split *s)
{
    int base = TOPP + B_H;
    fprintf(f, "<g id=\"ratio\">\n<text class=\"h2\" x=\"%d\" y=\"%d\">"
               "Frame/GPU ratio: frame time over the GPU time it recorded</text>\n",
            B_L, TOPP - 14);
    if (!s->ratio[0].n && !s->ratio[1].n) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">No GPU spans in this capture: "
                   "no ratio to show.</text>\n</g>\n", B_L, TOPP + 40);
        return;
    }
    size_t hmax = 1;
    for (int p = 0; p < 2; p++)
        for (size_t b = 0; b < AN_SPLIT_HIST_BINS; b++)
            if (s->hist[p][b] > hmax)
                hmax = s->hist[p][b];
    double ymax = an__svg_axis_top((double)hmax);
    double gw = (double)(B_R - B_L) / AN_SPLIT_HIST_BINS; /* a bin's group */
    double bw = (gw - 8) / 2;
    char lab[32];
    /* y: frames */
    double step = an__svg_tick_step(ymax, 4);
    if (step < 1)
        step = 1;
    for (double v = 0; v <= ymax * (1 + 1e-9); v += step) {
        double y = base - v / ymax * (B_H - 20);
        if (v > 0)
            fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                       "y2=\"%.1f\"/>\n", B_L, y, B_R, y);
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" "
                   "text-anchor=\"end\">%.0f</text>\n", B_L - 6, y + 4, v);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 %d %d)\">frames</text>\n",
            B_L - 34, base - B_H / 2, B_L - 34, base - B_H / 2);
    for (size_t b = 0; b < AN_SPLIT_HIST_BINS; b++) {
        double gx = B_L + gw * (double)b;
        for (int p = 0; p < 2; p++) {
            size_t n = s->hist[p][b];
            double h = (double)n / ymax * (B_H - 20);
            double x = gx + 4 + bw * p;
            if (b + 1 < AN_SPLIT_HIST_BINS)
                snprintf(lab, sizeof lab, "%.2f to %.2f", an_split_hist_edges[b],
                         an_split_hist_edges[b + 1]);
            else
                snprintf(lab, sizeof lab, "%.2f or more", an_split_hist_edges[b]);
            if (n)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                           "height=\"%.1f\" fill=\"%s\"><title>%s quarter: %zu "
                           "frame%s with a ratio of %s</title></rect>\n",
                        x, base - h, bw, h, POP_COLOUR[p], POP_NAME[p], n,
                        n == 1 ? "" : "s", lab);
            if (n && bw >= 14)
                fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"middle\">%zu</text>\n",
                        x + bw / 2, base - h - 4, n);
        }
        /* the lower edge of the bin under its left side */
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                   "y2=\"%d\"/>\n", gx, base, gx, base + 4);
        snprintf(lab, sizeof lab, "%s%.2f", b + 1 < AN_SPLIT_HIST_BINS ? "" : "\xE2\x89\xA5",
                 an_split_hist_edges[b]);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"%s\">%s</text>\n",
                b ? gx : gx + 1, base + 16, b ? "middle" : "start", lab);
    }
    fprintf(f, "<path class=\"ax\" d=\"M%d,%d V%d H%d\"/>\n", B_L, TOPP, base,
            B_R);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ratio "
               "(1.0: the GPU is the wall; 2.0: the frame took twice its GPU "
               "time)</text>\n",
            (B_L + B_R) / 2, base + 34);
    fprintf(f, "<text x=\"%d\" y=\"%d\">median ratio: fast ", B_L, base + 52);
    if (isnan(s->ratio[0].median))
        fputs("-", f);
    else
        fprintf(f, "%.3f", s->ratio[0].median);
    fputs(", slow ", f);
    if (isnan(s->ratio[1].median))
        fputs("-", f);
    else
        fprintf(f, "%.3f", s->ratio[1].median);
    fprintf(f, " (%zu and %zu frames with GPU time)</text>\n</g>\n",
            s->ratio[0].n, s->ratio[1].n);
}

/* Panel C: mean self time per frame, fast vs slow, of the scopes that
 * differ most (s->scopes is in that order). Returns its height. */
static int scope_bars(FILE *f, const an_split *s, int top, size_t rows)
{
    double max = 0;
    for (size_t k = 0; k < rows; k++)
        for (int p = 0; p < 2; p++)
            if (s->scopes[k].pop[p].mean > max)
                max = s->scopes[k].pop[p].mean;
    max = an__svg_axis_top(max);
    fprintf(f, "<g id=\"scopes\">\n<text class=\"h2\" x=\"10\" y=\"%d\">Self "
               "time per frame, mean (ms): the %zu scope%s that differ most</text>\n",
            top - 12, rows, rows == 1 ? "" : "s");
    int bottom = top + (int)rows * ROWH;
    x_ticks(f, C_NAME, C_R, bottom, max, 8, top); /* the grid under the bars */
    for (size_t k = 0; k < rows; k++) {
        const an_split_scope *x = &s->scopes[k];
        int y = top + (int)k * ROWH;
        char name[300];
        snprintf(name, sizeof name, "%s %s%s", x->scope->kind == AN_GPU ? "GPU" : "CPU",
                 x->scope->name, x->scope->is_wait ? " (wait)" : "");
        fprintf(f, "<g><title>");
        an__svg_text(f, name, (size_t)-1);
        fprintf(f, ": fast %.3f ms, slow %.3f ms per frame (mean)</title>"
                   "<text x=\"10\" y=\"%d\">",
                x->pop[0].mean, x->pop[1].mean, y + 16);
        an__svg_text(f, name, an__svg_fit(C_NAME - 20, 12));
        fputs("</text>", f);
        for (int p = 0; p < 2; p++) {
            double v = x->pop[p].mean;
            double w = isnan(v) || v < 0 ? 0 : v / max * (C_R - C_NAME);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" "
                       "fill=\"%s\"/>",
                    C_NAME, y + 4 + p * 10, w, POP_COLOUR[p]);
        }
        double d = x->pop[1].mean - x->pop[0].mean;
        if (fabs(d) < 0.0005)
            d = 0; /* "+0.000", never "-0.000" */
        double end = fmax(x->pop[0].mean, x->pop[1].mean);
        double vx = C_NAME + (isnan(end) ? 0 : end / max * (C_R - C_NAME)) + 6;
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\">%.3f \xE2\x86\x92 "
                   "%.3f (%+.3f)</text></g>\n",
                vx, y + 17, x->pop[0].mean, x->pop[1].mean, d);
    }
    fprintf(f, "<path class=\"ax\" d=\"M%d,%d V%d\"/>\n", C_NAME, top, bottom);
    fprintf(f, "<path class=\"ax\" d=\"M%d,%d H%d\"/>\n", C_NAME, bottom, C_R);
    fputs("</g>\n", f);
    return bottom + 30 - top;
}

cap_result an_svg_split(FILE *out, const an_capture *m, const an_split *s,
                        const char *title)
{
    if (!title)
        title = m->path ? m->path : "capture";
    size_t rows = s->nscopes < MAX_ROWS ? s->nscopes : MAX_ROWS;
    int c_top = TOPP + B_H + 110;
    int height = s->quarter ? c_top + (rows ? (int)rows * ROWH + 40 : 0) + 10
                            : 120;
    an__svg_begin(out, W, height, "Split", title, SPLIT_CSS, W - 20);
    if (!s->quarter) {
        fprintf(out, "<text id=\"nodata\" x=\"10\" y=\"60\">Needs at least 4 frames (a "
                     "quarter each side); the capture has %zu.</text>\n</svg>\n",
                s->nframes);
        return CAP_OK;
    }
    fputs("<text class=\"sub\" x=\"10\" y=\"46\">", out);
    {
        char sub[400];
        snprintf(sub, sizeof sub, "%zu frames ordered by %s%s: the fastest "
                 "quarter vs the slowest quarter (%zu frames each)",
                 s->nframes,
                 s->by        ? "the self time of "
                 : s->by_work ? "their CPU work (every CPU scope that is not "
                                "a wait, summed)"
                              : "frame time",
                 s->by ? s->by->name : "", s->quarter);
        an__svg_text(out, sub, an__svg_fit(W - 20, 12));
    }
    fputs("</text>\n", out);
    fprintf(out, "<g id=\"legend\">\n");
    for (int p = 0; p < 2; p++)
        fprintf(out, "<rect x=\"%d\" y=\"56\" width=\"14\" height=\"10\" "
                     "fill=\"%s\"/><text x=\"%d\" y=\"65\">%s quarter</text>\n",
                10 + p * 130, POP_COLOUR[p], 29 + p * 130, POP_NAME[p]);
    fputs("</g>\n", out);
    strips(out, m, s);
    ratio_hist(out, s);
    if (rows)
        scope_bars(out, s, c_top, rows);
    fputs("</svg>\n", out);
    return CAP_OK;
}
