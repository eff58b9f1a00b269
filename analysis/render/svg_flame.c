/*
 * svg_flame.c - the flame graph of the merged call tree (an_svg_flame).
 *
 * Layout: one section per root of the an_tree (CPU threads first, then
 * GPU tracks), drawn top-down: the root's box spans the width, each row
 * sits under its parent, as wide as its total time, in the tree's order
 * (children by decreasing total, then by name). The layout is computed
 * once (positions in px) and then written; the inline script only
 * rescales what is written.
 */
#include "svg.h"
#include "svg_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define W 1200
#define PAD 10
#define ROW 17      /* row pitch; a box is ROW - 1 px high */
#define TOP 62      /* below the title and subtitle */
#define GAP 12      /* between sections */
#define MIN_W 0.1   /* boxes narrower than this are left out */
#define LABEL_PX 12

typedef struct box {
    const an_tree_row *row;
    uint32_t level;    /* 0: the root */
    double x, w;       /* px */
} box;

typedef struct flame {
    box *boxes;        /* in t's order, every section */
    size_t nboxes;
    size_t *sec_first; /* section s: boxes[sec_first[s] .. sec_first[s+1]) */
    uint32_t *sec_rows;
    size_t nsec;
} flame;

/* Lay out t: each root starts a section spanning the width; a row goes
 * under its parent (the nearest earlier row one level up), after its
 * earlier siblings, as wide as its total time (clipped to what is left of
 * its parent). Rows narrower than MIN_W are left out with their
 * descendants. Returns 0 or -1 (memory). */
static int layout(flame *fl, const an_tree *t)
{
    size_t levels = 2; /* the roots and their children, at least */
    for (size_t i = 0; i < t->n; i++)
        if ((size_t)(t->rows[i].depth + 2) > levels)
            levels = (size_t)(t->rows[i].depth + 2);
    double *next = malloc(levels * sizeof *next); /* where a child goes */
    double *end = malloc(levels * sizeof *end);   /* its parent's end */
    unsigned char *open = calloc(levels, 1);      /* its parent is drawn */
    fl->boxes = malloc((t->n ? t->n : 1) * sizeof *fl->boxes);
    fl->sec_first = malloc((t->n + 1) * sizeof *fl->sec_first);
    fl->sec_rows = calloc(t->n + 1, sizeof *fl->sec_rows);
    int rc = -1;
    if (!next || !end || !open || !fl->boxes || !fl->sec_first || !fl->sec_rows)
        goto done;
    double iw = W - 2 * PAD, scale = 0;
    for (size_t i = 0; i < t->n; i++) {
        const an_tree_row *r = &t->rows[i];
        if (r->depth < 0) { /* a root: a new section */
            fl->sec_first[fl->nsec++] = fl->nboxes;
            fl->boxes[fl->nboxes++] = (box){r, 0, PAD, iw};
            fl->sec_rows[fl->nsec - 1] = 1;
            scale = r->total_ns > 0 ? iw / (double)r->total_ns : 0;
            memset(open, 0, levels);
            open[1] = scale > 0;
            next[1] = PAD;
            end[1] = PAD + iw;
            continue;
        }
        size_t lv = (size_t)r->depth + 1;
        if (!fl->nsec || !open[lv])
            continue; /* its parent was left out */
        double w = (double)(r->total_ns > 0 ? r->total_ns : 0) * scale;
        if (w > end[lv] - next[lv])
            w = end[lv] - next[lv];
        double x = next[lv];
        next[lv] += w > 0 ? w : 0;
        if (lv + 1 < levels)
            open[lv + 1] = 0;
        if (!(w >= MIN_W))
            continue;
        fl->boxes[fl->nboxes++] = (box){r, (uint32_t)lv, x, w};
        if (lv + 1 > fl->sec_rows[fl->nsec - 1])
            fl->sec_rows[fl->nsec - 1] = (uint32_t)(lv + 1);
        if (lv + 1 < levels) {
            open[lv + 1] = 1;
            next[lv + 1] = x;
            end[lv + 1] = x + w;
        }
    }
    fl->sec_first[fl->nsec] = fl->nboxes;
    rc = 0;
done:
    free(next);
    free(end);
    free(open);
    return rc;
}

static const char FLAME_CSS[] =
    ".fg rect { stroke: #FFFFFF; stroke-width: 0.5; }\n"
    ".fg text { font-family: " AN__SVG_MONO "; font-size: 12px; "
    "pointer-events: none; }\n"
    ".fg { cursor: pointer; }\n"
    ".btn { cursor: pointer; fill: " AN__SVG_BLUE "; text-decoration: underline; }\n";

/* Shade of a box: a hue between two Okabe-Ito colours picked by a hash of
 * the name (so the same name has the same colour everywhere), lightened
 * so that dark text stays readable. CPU: orange to yellow; GPU: sky blue
 * to bluish green; waits: grey; roots: light grey. */
static void box_fill(char *buf, size_t n, const an_node *nd)
{
    if (nd->is_root) {
        snprintf(buf, n, "#E3E3E3");
        return;
    }
    if (nd->is_wait) {
        snprintf(buf, n, "#C4C4C4");
        return;
    }
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)nd->name; *p; p++)
        h = (h ^ *p) * 16777619u;
    double t = (double)(h % 8) / 7.0;
    static const int cpu[2][3] = {{230, 140, 0}, {240, 228, 66}};
    static const int gpu[2][3] = {{86, 180, 233}, {0, 158, 115}};
    const int(*c)[3] = nd->kind == AN_GPU ? gpu : cpu;
    double mix = nd->kind == AN_GPU ? 0.45 : 0.25; /* towards white */
    int rgb[3];
    for (int i = 0; i < 3; i++) {
        double v = c[0][i] + (c[1][i] - c[0][i]) * t;
        v = v + (255 - v) * mix;
        rgb[i] = (int)(v + 0.5);
    }
    snprintf(buf, n, "#%02X%02X%02X", rgb[0], rgb[1], rgb[2]);
}

/* The inline script: zoom on click, Escape or "Reset zoom" to undo,
 * "Search" to highlight names matching a regular expression. It reads
 * the geometry the SVG already has and changes only attributes. */
static const char FLAME_JS[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var W = %d, PAD = %d, CW = %g, HL = '" AN__SVG_PURPLE "';\n"
    "  var boxes = [], zoomed = null, query = null;\n"
    "  var reset = document.getElementById('reset');\n"
    "  var search = document.getElementById('search');\n"
    "  var matched = document.getElementById('matched');\n"
    "  function label(b, w) {\n"
    "    var n = Math.floor((w - 6) / CW);\n"
    "    if (n < 3) return '';\n"
    "    return b.name.length <= n ? b.name : b.name.slice(0, n - 1) + '\\u2026';\n"
    "  }\n"
    "  function place(b, x, w) {\n"
    "    b.r.setAttribute('x', x.toFixed(1));\n"
    "    b.r.setAttribute('width', w.toFixed(1));\n"
    "    var s = label(b, w);\n"
    "    if (s && !b.t) {\n"
    "      b.t = document.createElementNS('http://www.w3.org/2000/svg', 'text');\n"
    "      b.t.setAttribute('y', (b.y + 12).toString());\n"
    "      b.g.appendChild(b.t);\n"
    "    }\n"
    "    if (b.t) { b.t.setAttribute('x', (x + 3).toFixed(1)); b.t.textContent = s; }\n"
    "  }\n"
    "  function zoom(t) {\n"
    "    var iw = W - 2 * PAD, e = 0.01;\n"
    "    boxes.forEach(function (b) {\n"
    "      if (b.sec !== t.sec) return;\n"
    "      var inside = b.y >= t.y && b.x >= t.x - e && b.x + b.w <= t.x + t.w + e;\n"
    "      var above = b.y < t.y && b.x <= t.x + e && b.x + b.w >= t.x + t.w - e;\n"
    "      b.g.style.display = inside || above ? '' : 'none';\n"
    "      b.g.style.opacity = above ? '0.6' : '';\n"
    "      if (inside) place(b, PAD + (b.x - t.x) * iw / t.w, b.w * iw / t.w);\n"
    "      else if (above) place(b, PAD, iw);\n"
    "    });\n"
    "    zoomed = t;\n"
    "    reset.style.display = '';\n"
    "  }\n"
    "  function unzoom() {\n"
    "    boxes.forEach(function (b) {\n"
    "      b.g.style.display = ''; b.g.style.opacity = '';\n"
    "      place(b, b.x, b.w);\n"
    "    });\n"
    "    zoomed = null;\n"
    "    reset.style.display = 'none';\n"
    "  }\n"
    "  function find(q) {\n"
    "    var re = null, n = 0;\n"
    "    if (q) { try { re = new RegExp(q); } catch (err) { re = null; } }\n"
    "    boxes.forEach(function (b) {\n"
    "      var hit = q ? (re ? re.test(b.name) : b.name.indexOf(q) >= 0) : false;\n"
    "      b.r.setAttribute('fill', hit ? HL : b.fill);\n"
    "      b.r.style.strokeWidth = hit ? '1.5' : '';\n"
    "      b.r.style.stroke = hit ? '#000000' : '';\n"
    "      if (hit) n++;\n"
    "    });\n"
    "    query = q || null;\n"
    "    matched.textContent = q ? n + ' match' + (n === 1 ? '' : 'es') + ' for \\u201c' + q + '\\u201d' : '';\n"
    "    search.textContent = q ? 'Clear search' : 'Search';\n"
    "  }\n"
    "  Array.prototype.forEach.call(document.querySelectorAll('g.fg'), function (g) {\n"
    "    var r = g.querySelector('rect'), tt = g.querySelector('title');\n"
    "    var b = { g: g, r: r, t: g.querySelector('text'), sec: g.parentNode,\n"
    "      x: +r.getAttribute('x'), w: +r.getAttribute('width'),\n"
    "      y: +r.getAttribute('y'), fill: r.getAttribute('fill'),\n"
    "      name: tt.textContent.split('\\n')[0] };\n"
    "    boxes.push(b);\n"
    "    g.addEventListener('click', function () { zoom(b); });\n"
    "  });\n"
    "  reset.addEventListener('click', unzoom);\n"
    "  search.addEventListener('click', function () {\n"
    "    if (query) { find(null); return; }\n"
    "    var q = window.prompt('Highlight names matching (regular expression):', '');\n"
    "    if (q) find(q);\n"
    "  });\n"
    "  document.addEventListener('keydown', function (ev) {\n"
    "    if (ev.key === 'Escape') { if (zoomed) unzoom(); else if (query) find(null); }\n"
    "  });\n"
    "  search.style.display = '';\n"
    "})();\n"
    "]]></script>\n";

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void write_box(FILE *out, const an_tree *t, const box *b, int y,
                      const an_tree_row *root, const an__flame_paint *paint)
{
    const an_node *nd = b->row->node;
    const char *where = nd->kind == AN_CPU ? "thread" : "GPU track";
    const char *path = t->paths ? t->paths + b->row->path_off : nd->name;
    char fill[16];
    if (paint && b->row->depth >= 0)
        paint->fill(paint->ctx, b->row, path, fill, sizeof fill);
    else
        box_fill(fill, sizeof fill, nd);
    fputs("<g class=\"fg\"><title>", out);
    if (b->row->depth < 0) {
        fprintf(out, "%s ", where);
        an__svg_text(out, nd->name, (size_t)-1);
        fprintf(out, "\ntotal %.3f ms (the sum of its top-level scopes)",
                ms(b->row->total_ns));
    } else {
        an__svg_text(out, nd->name, (size_t)-1);
        fprintf(out, "\n%llu call%s \xC2\xB7 total %.3f ms \xC2\xB7 self %.3f ms\n",
                (unsigned long long)nd->calls, nd->calls == 1 ? "" : "s",
                ms(nd->total_ns), ms(nd->self_ns));
        if (!isnan(b->row->share_pct))
            fprintf(out, "%.1f%% of the time recorded on %s \xC2\xB7 ",
                    b->row->share_pct,
                    nd->kind == AN_CPU ? "CPU threads" : "GPU tracks");
        fprintf(out, "%.1f%% of %s ",
                root->total_ns > 0
                    ? 100.0 * (double)nd->total_ns / (double)root->total_ns
                    : 0.0,
                where);
        an__svg_text(out, root->node->name, (size_t)-1);
        if (nd->is_wait)
            fputs("\nwaiting (tagged as a wait by the producer)", out);
        if (paint)
            paint->tip(paint->ctx, out, b->row, path);
    }
    fprintf(out, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                 "height=\"%d\" fill=\"%s\"/>",
            b->x, y, b->w, ROW - 1, fill);
    size_t fit = an__svg_fit(b->w - 6, LABEL_PX);
    if (fit >= 3) {
        fprintf(out, "<text x=\"%.1f\" y=\"%d\">", b->x + 3, y + 12);
        if (b->row->depth < 0) {
            char tail[48];
            snprintf(tail, sizeof tail, " (%.3f ms)", ms(b->row->total_ns));
            size_t need = strlen(where) + 1 + an__svg_cols(nd->name) + strlen(tail);
            if (need <= fit) {
                fprintf(out, "%s ", where);
                an__svg_text(out, nd->name, (size_t)-1);
                fputs(tail, out);
            } else {
                an__svg_text(out, nd->name, fit);
            }
        } else {
            an__svg_text(out, nd->name, fit);
        }
        fputs("</text>", out);
    }
    fputs("</g>\n", out);
}

cap_result an__svg_flame_doc(FILE *out, const an_capture *m, const an_tree *t,
                             const char *title, const an__flame_paint *paint)
{
    flame fl = {0};
    cap_result rc = CAP_E_NOMEM;
    const char *what = paint ? paint->what : "Flame graph";
    int top = TOP + (paint ? paint->legend_h : 0);
    if (layout(&fl, t) != 0)
        goto done;
    int height = top;
    for (size_t s = 0; s < fl.nsec; s++)
        height += (int)fl.sec_rows[s] * ROW + GAP;
    if (!fl.nsec)
        height += 30;
    height += 4;

    if (!title)
        title = m->path ? m->path : "capture";
    /* title row: the title on the left, the controls on the right */
    an__svg_begin(out, W, height, what, title, FLAME_CSS, W - 2 * PAD - 260);
    fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" "
                 "text-anchor=\"end\" style=\"display:none\">Search</text>\n"
                 "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"24\" "
                 "text-anchor=\"end\" style=\"display:none\">Reset zoom</text>\n",
            W - PAD, W - PAD - 110);
    /* subtitle: what the picture shows */
    {
        char sub[400];
        const char *prog = an_meta(m, "program");
        const char *build = an_meta(m, "build");
        if (paint)
            snprintf(sub, sizeof sub, "%s", paint->subtitle);
        else
            snprintf(sub, sizeof sub,
                 "%s%s%s%s%zu frames \xC2\xB7 call tree merged by call path, "
                 "top-down; width: total time \xC2\xB7 click a box to zoom",
                 prog ? prog : "", prog && build ? " " : "",
                 build ? build : "", prog || build ? " \xC2\xB7 " : "",
                 m->nframes);
        fprintf(out, "<text class=\"sub\" x=\"%d\" y=\"46\">", PAD);
        an__svg_text(out, sub, an__svg_fit(W - 2 * PAD - 260, 12));
        fputs("</text>\n", out);
        fprintf(out, "<text id=\"matched\" class=\"sub\" x=\"%d\" y=\"46\" "
                     "text-anchor=\"end\"></text>\n", W - PAD);
    }
    if (paint && paint->legend)
        paint->legend(paint->ctx, out, TOP);
    if (!fl.nsec)
        fprintf(out, "<text id=\"nodata\" x=\"%d\" y=\"%d\">The capture holds no scopes.</text>\n",
                PAD, top + 16);
    int y0 = top;
    for (size_t s = 0; s < fl.nsec; s++) {
        const an_tree_row *root = fl.boxes[fl.sec_first[s]].row;
        fputs("<g class=\"sec\">\n", out);
        for (size_t bi = fl.sec_first[s]; bi < fl.sec_first[s + 1]; bi++)
            write_box(out, t, &fl.boxes[bi], y0 + (int)fl.boxes[bi].level * ROW,
                      root, paint);
        fputs("</g>\n", out);
        y0 += (int)fl.sec_rows[s] * ROW + GAP;
    }
    fprintf(out, FLAME_JS, W, PAD, LABEL_PX * AN__SVG_CHAR_EM);
    fputs("</svg>\n", out);
    rc = CAP_OK;
done:
    free(fl.boxes);
    free(fl.sec_first);
    free(fl.sec_rows);
    return rc;
}

cap_result an_svg_flame(FILE *out, const an_capture *m, const an_tree *t,
                        const char *title)
{
    return an__svg_flame_doc(out, m, t, title, NULL);
}
