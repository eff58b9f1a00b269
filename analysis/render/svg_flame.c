/*
 * svg_flame.c - the flame graph of the merged call tree (an_svg_flame).
 *
 * Layout: one section per root (CPU threads first, then GPU tracks, in the
 * model's order), drawn top-down: the root's box spans the width, each
 * child sits under its parent, as wide as its total time, children
 * placed left to right by decreasing total (then by name). The layout is
 * computed once (positions in px) and then written; the inline script
 * only rescales what is written.
 */
#include "svg.h"
#include "svg_util.h"

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
    uint32_t node;
    uint32_t row;   /* 0: the root */
    double x, w;    /* px */
} box;

typedef struct flame {
    const an_capture *m;
    uint32_t *kids;      /* children of node i: kids[off[i] .. off[i+1]) */
    uint32_t *off;
    box *boxes;          /* in drawing order (preorder), all sections */
    size_t nboxes;
    uint32_t *stack;     /* DFS scratch */
    double denom;        /* ns: total frame time, or all CPU roots' time */
} flame;

static int64_t node_total(const an_capture *m, uint32_t i)
{
    const an_node *n = &m->nodes[i];
    if (!n->is_root)
        return n->total_ns;
    int64_t t = 0;
    for (uint32_t c = n->first_child; c != UINT32_MAX; c = m->nodes[c].next_sibling)
        if (__builtin_add_overflow(t, m->nodes[c].total_ns, &t))
            return INT64_MAX;
    return t;
}

static int kid_cmp(const void *a, const void *b, void *ctx)
{
    const an_capture *m = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    int64_t x = node_total(m, i), y = node_total(m, j);
    if (x != y)
        return x > y ? -1 : 1;
    int c = strcmp(m->nodes[i].name, m->nodes[j].name);
    return c ? c : (i < j ? -1 : i > j);
}

/* Children lists, sorted. */
static int build_kids(flame *fl)
{
    const an_capture *m = fl->m;
    size_t n = m->nnodes;
    fl->off = calloc(n + 1, sizeof *fl->off);
    fl->kids = malloc((n ? n : 1) * sizeof *fl->kids);
    fl->stack = malloc((n ? n : 1) * sizeof *fl->stack);
    fl->boxes = malloc((n ? n : 1) * sizeof *fl->boxes);
    if (!fl->off || !fl->kids || !fl->stack || !fl->boxes)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        for (uint32_t c = m->nodes[i].first_child; c != UINT32_MAX && k < n;
             c = m->nodes[c].next_sibling)
            k++;
        fl->off[i + 1] = fl->off[i] + k;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t k = fl->off[i];
        for (uint32_t c = m->nodes[i].first_child;
             c != UINT32_MAX && k < fl->off[i + 1]; c = m->nodes[c].next_sibling)
            fl->kids[k++] = c;
        qsort_r(fl->kids + fl->off[i], fl->off[i + 1] - fl->off[i],
                sizeof *fl->kids, kid_cmp, (void *)m);
    }
    return 0;
}

/* Lay out the section of root r: its boxes are appended. Returns the
 * number of rows. Children are placed inside their parent's interval (a
 * child whose total exceeds what is left is clipped to the parent). */
static uint32_t layout(flame *fl, uint32_t r)
{
    const an_capture *m = fl->m;
    double iw = W - 2 * PAD;
    int64_t rt = node_total(m, r);
    double scale = rt > 0 ? iw / (double)rt : 0;
    fl->boxes[fl->nboxes++] = (box){r, 0, PAD, iw};
    uint32_t rows = 1;
    /* An explicit stack of boxes whose children are still to be placed
     * (no recursion: a crafted tree may be deep). A box's children are
     * placed together, so every box comes after its parent. */
    size_t sp = 0;
    fl->stack[sp++] = (uint32_t)(fl->nboxes - 1);
    while (sp) {
        uint32_t bi = fl->stack[--sp];
        box parent = fl->boxes[bi];
        if (scale <= 0)
            continue;
        double cur = parent.x, end = parent.x + parent.w;
        uint32_t a = fl->off[parent.node], b = fl->off[parent.node + 1];
        size_t placed = fl->nboxes;
        for (uint32_t k = a; k < b; k++) {
            uint32_t c = fl->kids[k];
            double w = (double)(m->nodes[c].total_ns > 0 ? m->nodes[c].total_ns : 0) *
                       scale;
            if (w > end - cur)
                w = end - cur;
            if (w < MIN_W)
                continue;
            fl->boxes[fl->nboxes++] = (box){c, parent.row + 1, cur, w};
            if (parent.row + 2 > rows)
                rows = parent.row + 2;
            cur += w;
        }
        for (size_t k = fl->nboxes; k > placed; k--)
            fl->stack[sp++] = (uint32_t)(k - 1);
    }
    return rows;
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

static double ms(int64_t ns) { return (double)ns / 1e6; }

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

int an_svg_flame(FILE *out, const an_capture *m, const char *title)
{
    flame fl = {.m = m};
    int rc = -1;
    uint32_t *sec_first = NULL, *sec_rows = NULL;
    size_t nsec = 0;
    if (build_kids(&fl) != 0)
        goto done;
    sec_first = malloc((m->nnodes + 1) * sizeof *sec_first);
    sec_rows = malloc((m->nnodes + 1) * sizeof *sec_rows);
    if (!sec_first || !sec_rows)
        goto done;
    fl.denom = (double)an_total_frame_ns(m);
    if (fl.denom <= 0)
        for (size_t i = 0; i < m->nnodes; i++)
            if (m->nodes[i].is_root && m->nodes[i].kind == AN_CPU)
                fl.denom += (double)node_total(m, (uint32_t)i);
    /* roots: CPU threads first, then GPU tracks, in order of appearance */
    for (int k = AN_CPU; k <= AN_GPU; k++)
        for (size_t i = 0; i < m->nnodes; i++)
            if (m->nodes[i].is_root && (int)m->nodes[i].kind == k) {
                sec_first[nsec] = (uint32_t)fl.nboxes;
                sec_rows[nsec] = layout(&fl, (uint32_t)i);
                nsec++;
            }
    sec_first[nsec] = (uint32_t)fl.nboxes;

    int height = TOP;
    for (size_t s = 0; s < nsec; s++)
        height += (int)sec_rows[s] * ROW + GAP;
    if (!nsec)
        height += 30;
    height += 4;

    if (!title)
        title = m->path ? m->path : "capture";
    {
        /* the head's <title>: "Flame graph: TITLE" */
        size_t tl = strlen(title) + 16;
        char *t = malloc(tl);
        if (!t)
            goto done;
        snprintf(t, tl, "Flame graph: %s", title);
        an__svg_head(out, W, height, t, FLAME_CSS);
        free(t);
    }
    /* title row: the title on the left, the controls on the right */
    fprintf(out, "<text class=\"h1\" x=\"%d\" y=\"24\">Flame graph: ", PAD);
    an__svg_text(out, title, an__svg_fit(W - 2 * PAD - 260, 17) - 13);
    fputs("</text>\n", out);
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
    if (!nsec)
        fprintf(out, "<text x=\"%d\" y=\"%d\">The capture holds no scopes.</text>\n",
                PAD, TOP + 16);

    int y0 = TOP;
    for (size_t s = 0; s < nsec; s++) {
        const box *rb = &fl.boxes[sec_first[s]];
        const an_node *root = &m->nodes[rb->node];
        int64_t rt = node_total(m, rb->node);
        fprintf(out, "<g class=\"sec\">\n");
        for (uint32_t bi = sec_first[s]; bi < sec_first[s + 1]; bi++) {
            const box *b = &fl.boxes[bi];
            const an_node *nd = &m->nodes[b->node];
            int y = y0 + (int)b->row * ROW;
            char fill[16];
            box_fill(fill, sizeof fill, nd);
            fputs("<g class=\"fg\"><title>", out);
            int64_t tot = node_total(m, b->node);
            if (nd->is_root) {
                fprintf(out, "%s ", nd->kind == AN_CPU ? "thread" : "GPU track");
                an__svg_text(out, nd->name, (size_t)-1);
                fprintf(out, "\ntotal %.3f ms", ms(tot));
                if (fl.denom > 0)
                    fprintf(out, ", %.1f%% of %s", 100.0 * (double)tot / fl.denom,
                            m->nframes ? "frame time" : "all threads' time");
            } else {
                an__svg_text(out, nd->name, (size_t)-1);
                fprintf(out, "\n%llu call%s \xC2\xB7 total %.3f ms \xC2\xB7 "
                             "self %.3f ms\n",
                        (unsigned long long)nd->calls, nd->calls == 1 ? "" : "s",
                        ms(nd->total_ns), ms(nd->self_ns));
                if (fl.denom > 0)
                    fprintf(out, "%.1f%% of %s \xC2\xB7 ",
                            100.0 * (double)nd->total_ns / fl.denom,
                            m->nframes ? "frame time" : "all threads' time");
                fprintf(out, "%.1f%% of %s ",
                        rt > 0 ? 100.0 * (double)nd->total_ns / (double)rt : 0.0,
                        root->kind == AN_CPU ? "thread" : "GPU track");
                an__svg_text(out, root->name, (size_t)-1);
                if (nd->is_wait)
                    fputs("\nwaiting (tagged as a wait by the producer)", out);
            }
            fprintf(out, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                         "height=\"%d\" fill=\"%s\"/>",
                    b->x, y, b->w, ROW - 1, fill);
            /* the label */
            char lab[64];
            const char *name = nd->name;
            if (nd->is_root) {
                snprintf(lab, sizeof lab, "%s ", nd->kind == AN_CPU ? "thread"
                                                                    : "GPU track");
            } else {
                lab[0] = '\0';
            }
            char tail[48];
            if (nd->is_root)
                snprintf(tail, sizeof tail, " (%.3f ms)", ms(tot));
            else
                tail[0] = '\0';
            size_t fit = an__svg_fit(b->w - 6, LABEL_PX);
            if (fit >= 3) {
                fprintf(out, "<text x=\"%.1f\" y=\"%d\">", b->x + 3, y + 12);
                size_t need = strlen(lab) + an__svg_cols(name) + strlen(tail);
                if (nd->is_root && need <= fit) {
                    fputs(lab, out);
                    an__svg_text(out, name, (size_t)-1);
                    fputs(tail, out);
                } else {
                    an__svg_text(out, name, fit);
                }
                fputs("</text>", out);
            }
            fputs("</g>\n", out);
        }
        fputs("</g>\n", out);
        y0 += (int)sec_rows[s] * ROW + GAP;
    }
    fprintf(out, FLAME_JS, W, PAD, LABEL_PX * AN__SVG_CHAR_EM);
    fputs("</svg>\n", out);
    rc = 0;
done:
    free(fl.off);
    free(fl.kids);
    free(fl.stack);
    free(fl.boxes);
    free(sec_first);
    free(sec_rows);
    return rc;
}
