/*
 * bench_columnar.c - a probe of a coding that is not the format (issue 12).
 *
 * Issue 12 asks read_capture to rank 50 M scopes/s on one core. Format
 * 3.0's decoder alone reads about 41 M/s on the machine it was measured
 * on, so the target needs a different coding (docs/PERFORMANCE.md, "A
 * cheaper coding would not reach 50 M/s either" named the one this probe
 * measures: events that share a repeated structure decoded as a unit).
 * This program reads a capture's CPU scopes, codes them that way in
 * memory, decodes them with a model as small as a ranking's, and prints
 * the size and the rate beside format 3.0's reader on the same file, in
 * the same run. Nothing here is written to a file or read by a tool.
 *
 * The coding, per thread section of at least SECTION_SCOPES scopes (cut
 * before a top-level scope):
 *   - a node is a call path: (parent node, name);
 *   - scopes in depth-first order; each gives, in one LSB-first bit
 *     stream: [a top-level scope: its node, a Huffman symbol in the
 *     context of the previous top-level node] [lead: its begin minus the
 *     previous event's tick, Rice-coded in the column (node, lead)] [the
 *     sequence of its children's nodes: a Huffman symbol among the
 *     sequences the node had in the section, no bits when it had one]
 *     [its children] [tail: its end minus its last child's end, or its
 *     begin, Rice-coded in the column (node, tail)];
 *   - a column codes zigzag(x - its median) with its own Rice parameter
 *     k; a quotient of 24 or more is an escape (24 zero bits, then the
 *     value in 48 bits);
 *   - a section's tables (each column's median and k, each node's
 *     children and sequences, Huffman lengths) are counted in the size as
 *     the bytes a block would spend on them (varints, 2-byte names,
 *     4-bit lengths).
 * A scope's self time is then its tail plus its children's leads. Two
 * models are timed: the baseline's (self ticks summed, here by call path:
 * each tail to its node, each lead to its parent's), and a ranking's
 * per-scope work: that, plus calls by path and each frame's sums (a
 * touched list) folded at the frame's end into its names' log histograms
 * (2,048 bins) -- without the call tree's lookups (the stream gives each
 * scope's node) and without the reports.
 *
 * Usage: bench_columnar [FILE] [--reps N]   (N: 5 by default; the baseline
 * and the two decodings alternate, rep by rep)
 * Without FILE it generates columnar-10M.cap (bench_gen.h's realistic
 * generator, 10 M scopes, format 3.1, zstd level 1) in the working
 * directory once. Prints name=value lines:
 *   col_bytes_per_scope       the coding's stream and tables
 *   col_tables_bytes_per_scope  of which tables
 *   col_escapes               values coded as escapes
 *   file_bytes_per_scope      the file as written (3.0/3.1: every section)
 *   format3_scopes_per_s      cap_reader_next_scopes, each scope's self
 *                             ticks summed by name (the baseline: 3.0's
 *                             decoder with zstd, CRC and I/O, the
 *                             smallest model), best of the reps, CPU time
 *   col_scopes_per_s          the coding decoded with the same model (self
 *                             ticks by call path), best of the reps, CPU
 *                             time (no zstd: the stream is bits; no CRC,
 *                             no I/O: the sections are in memory)
 *   col_ratio                 col_scopes_per_s / format3_scopes_per_s
 *   col_frames_scopes_per_s   the coding decoded with the ranking-like model
 *                             above (per-frame sums folded into histograms)
 *   col_self_exact            1 when every name's self ticks, from both
 *                             decodings of every rep, equal the reader's
 * Exit status 1 when they differ.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capture/cap_reader.h>

#include "bench_common.h"
#include "bench_gen.h"

#ifndef SECTION_SCOPES /* -D to probe other block sizes */
#define SECTION_SCOPES 65536
#endif
#define MAX_DEPTH 64
#define HUFF_MAX 12      /* longest Huffman code, bits */
#define RICE_ESC 24      /* quotient at which a value escapes */
#define HIST_BINS 2048

#define DIE(...) BENCH_DIE(__VA_ARGS__)

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        DIE("out of memory");
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        DIE("out of memory");
    return p;
}

/* ---- the scopes as read ------------------------------------------------ */

typedef struct {
    int64_t b, e;
    uint32_t name, depth, idx;
} scope;

typedef struct {
    uint32_t tid;
    scope *v;
    size_t n, cap;
} thread_scopes;

typedef struct {
    int64_t b, e;
} frame;

/* ---- the coding ---------------------------------------------------------- */

typedef struct {
    uint16_t sym;
    uint8_t len;
} hent;

typedef struct {
    int nsym, maxlen;
    uint8_t *len;
    uint32_t *code; /* bit-reversed: the stream is LSB first */
    hent *tab;      /* 2^maxlen entries */
} huff;

typedef struct { /* a node, as a section's decoder sees it */
    int64_t base_lead, base_tail;
    uint8_t k_lead, k_tail;
    uint32_t mask; /* Huffman table's: 2^maxlen - 1 */
    const hent *tab; /* NULL: one sequence */
    uint32_t *seqoff, *seqlen;
} dnode;

typedef struct {
    uint8_t *bits;
    size_t nbytes;   /* the stream, without the 8 bytes of padding */
    size_t table_bytes;
    dnode *dn;       /* per node (every node known when it was coded) */
    uint32_t ndn;
    huff *h;         /* each node's sequence code, for freeing */
    uint32_t *seqpool;
    huff *root;      /* per previous top-level node, + one for none */
    uint32_t nroot;
    uint32_t *root_node; /* symbol -> node */
    uint32_t ntop;
    int64_t t0;
    uint64_t scopes;
    uint32_t thread; /* index into the threads */
} section;

typedef struct {
    uint32_t parent, name;
} node;

typedef struct {
    thread_scopes th[256];
    int nth;
    frame *fr;
    size_t nfr, cfr;
    uint64_t scopes;
    node *nodes;
    uint32_t nnodes, cnodes;
    uint32_t *nhash;
    uint32_t nhcap;
    section *sec;
    size_t nsec, csec;
    uint64_t esc;
    int64_t *ref_self; /* per name id: self ticks from the reader */
    uint32_t max_name;
} probe;

/* ---- bit writer ---------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
    uint64_t bb;
    int bn;
} bitw;

static void put(bitw *w, uint64_t v, int nb)
{
    if (nb > 32) {
        put(w, v & 0xffffffffu, 32);
        put(w, v >> 32, nb - 32);
        return;
    }
    if (nb == 0)
        return;
    w->bb |= (v & ((1ull << nb) - 1)) << w->bn;
    w->bn += nb;
    while (w->bn >= 8) {
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 1u << 16;
            w->p = xrealloc(w->p, w->cap);
        }
        w->p[w->n++] = (uint8_t)w->bb;
        w->bb >>= 8;
        w->bn -= 8;
    }
}

static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzz(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint64_t rice_bits(uint64_t z, int k)
{
    uint64_t q = z >> k;
    return q >= RICE_ESC ? RICE_ESC + 48 : q + 1 + (uint64_t)k;
}

static void rice_put(probe *pr, bitw *w, uint64_t z, int k)
{
    uint64_t q = z >> k;
    if (q >= RICE_ESC) {
        put(w, 0, RICE_ESC);
        put(w, z, 48);
        pr->esc++;
        return;
    }
    put(w, 1ull << q, (int)q + 1);
    put(w, z, k);
}

/* ---- Huffman, lengths at most HUFF_MAX ------------------------------------ */

static int by_count(const void *a, const void *b, void *counts)
{
    const uint64_t *c = counts;
    uint64_t x = c[*(const int *)a], y = c[*(const int *)b];
    return x < y ? -1 : x > y;
}

static void huff_build(huff *h, const uint64_t *cnt, int n)
{
    memset(h, 0, sizeof *h);
    h->nsym = n;
    h->len = xcalloc((size_t)n, 1);
    h->code = xcalloc((size_t)n, 4);
    if (n < 2)
        return;
    int *ord = xcalloc((size_t)n, sizeof *ord);
    for (int i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, (size_t)n, sizeof *ord, by_count, (void *)cnt);
    /* two queues: leaves by count, then the merged nodes in order made */
    int m = 2 * n - 1;
    uint64_t *w = xcalloc((size_t)m, 8);
    int *par = xcalloc((size_t)m, sizeof *par);
    for (int i = 0; i < n; i++)
        w[i] = cnt[ord[i]] ? cnt[ord[i]] : 1;
    int q1 = 0, q2 = n;
    for (int k = n; k < m; k++) {
        int a = (q1 < n && (q2 >= k || w[q1] <= w[q2])) ? q1++ : q2++;
        int b = (q1 < n && (q2 >= k || w[q1] <= w[q2])) ? q1++ : q2++;
        w[k] = w[a] + w[b];
        par[a] = par[b] = k;
    }
    int *dep = xcalloc((size_t)m, sizeof *dep);
    for (int k = m - 2; k >= 0; k--)
        dep[k] = dep[par[k]] + 1;
    for (int i = 0; i < n; i++)
        h->len[ord[i]] = (uint8_t)(dep[i] > HUFF_MAX ? HUFF_MAX : dep[i]);
    for (;;) { /* clamped: lengthen the rarest short codes until Kraft */
        uint64_t kr = 0;
        for (int i = 0; i < n; i++)
            kr += 1ull << (HUFF_MAX - h->len[i]);
        if (kr <= 1ull << HUFF_MAX)
            break;
        for (int i = 0; i < n; i++)
            if (h->len[ord[i]] < HUFF_MAX) {
                h->len[ord[i]]++;
                break;
            }
    }
    for (int i = 0; i < n; i++)
        if (h->len[i] > h->maxlen)
            h->maxlen = h->len[i];
    uint32_t code = 0;
    for (int l = 1; l <= h->maxlen; l++) {
        for (int i = 0; i < n; i++)
            if (h->len[i] == l) {
                uint32_t r = 0, c = code;
                for (int j = 0; j < l; j++, c >>= 1)
                    r = r << 1 | (c & 1);
                h->code[i] = r;
                code++;
            }
        code <<= 1;
    }
    h->tab = xcalloc((size_t)1 << h->maxlen, sizeof *h->tab);
    for (int i = 0; i < n; i++)
        for (uint32_t x = h->code[i]; x < 1u << h->maxlen; x += 1u << h->len[i])
            h->tab[x] = (hent){(uint16_t)i, h->len[i]};
    free(ord);
    free(w);
    free(par);
    free(dep);
}

/* ---- reading the capture -------------------------------------------------- */

static void add_scope(probe *pr, uint32_t tid, int64_t b, int64_t e,
                      uint32_t name, uint32_t depth)
{
    thread_scopes *t = NULL;
    for (int i = 0; i < pr->nth; i++)
        if (pr->th[i].tid == tid)
            t = &pr->th[i];
    if (!t) {
        if (pr->nth == 256)
            DIE("more than 256 threads");
        t = &pr->th[pr->nth++];
        t->tid = tid;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n] = (scope){b, e, name, depth, (uint32_t)t->n};
    t->n++;
    pr->scopes++;
    if (name > pr->max_name)
        pr->max_name = name;
}

/* One pass of the reader over path's CPU scopes, in ticks. collect: each
 * scope and frame into pr (the coding's input); otherwise each scope's
 * self ticks added to self[name] (the baseline). Returns the scopes. */
static inline __attribute__((always_inline)) uint64_t
walk(probe *pr, const char *path, int64_t *self, const int collect)
{
    cap_reader *r;
    char det[256];
    if (cap_reader_open(&r, path, det, sizeof det) != CAP_OK)
        DIE("%s", det);
    cap_reader_set_ticks(r, 1);
    static cap_scope_rec rec[4096];
    static uint32_t stk[1u << 16];
    uint64_t n_all = 0;
    for (;;) {
        size_t n = 0;
        cap_scope_run run;
        cap_reader_next_scopes(r, rec, 4096, &n, stk, 1u << 16, &run);
        for (size_t i = 0; i < n; i++) {
            if (collect)
                add_scope(pr, run.tid, rec[i].begin, rec[i].end, rec[i].name,
                          rec[i].depth);
            else
                self[rec[i].name] += rec[i].end - rec[i].begin -
                                     (int64_t)rec[i].children;
        }
        n_all += n;
        if (n)
            continue;
        cap_event ev;
        cap_result res = cap_reader_next(r, &ev);
        if (res == CAP_DONE)
            break;
        if (res != CAP_OK)
            DIE("%s: %s", path, cap_reader_detail(r));
        if (ev.kind == CAP_EV_SCOPE) {
            const cap_ev_scope *sc = &ev.u.scope;
            if (collect)
                add_scope(pr, sc->tid, sc->begin_ns, sc->end_ns, sc->name,
                          sc->depth);
            else
                self[sc->name] += sc->end_ns - sc->begin_ns - sc->children_ns;
            n_all++;
        } else if (collect && ev.kind == CAP_EV_FRAME) {
            if (pr->nfr == pr->cfr) {
                pr->cfr = pr->cfr ? 2 * pr->cfr : 4096;
                pr->fr = xrealloc(pr->fr, pr->cfr * sizeof *pr->fr);
            }
            pr->fr[pr->nfr++] = (frame){ev.u.frame.begin_ns, ev.u.frame.end_ns};
        }
    }
    cap_reader_close(r);
    return n_all;
}

static void load(probe *pr, const char *path)
{
    walk(pr, path, NULL, 1);
}

/* The baseline: 3.0's reader, each scope's self ticks summed by name. */
static uint64_t baseline(const char *path, int64_t *self, uint64_t *ns)
{
    uint64_t t0 = bench_thread_cpu_ns();
    uint64_t n = walk(NULL, path, self, 0);
    *ns = bench_thread_cpu_ns() - t0;
    return n;
}

/* ---- coding a section ------------------------------------------------------- */

static uint32_t node_of(probe *pr, uint32_t parent, uint32_t name)
{
    uint32_t mask = pr->nhcap - 1;
    uint32_t h = (parent * 0x9e3779b1u ^ name * 0x85ebca6bu) & mask;
    for (;; h = (h + 1) & mask) {
        uint32_t k = pr->nhash[h];
        if (!k)
            break;
        if (pr->nodes[k - 1].parent == parent && pr->nodes[k - 1].name == name)
            return k - 1;
    }
    if (pr->nnodes == pr->cnodes) {
        pr->cnodes = pr->cnodes ? 2 * pr->cnodes : 1024;
        pr->nodes = xrealloc(pr->nodes, pr->cnodes * sizeof *pr->nodes);
    }
    pr->nodes[pr->nnodes] = (node){parent, name};
    pr->nhash[h] = ++pr->nnodes;
    if (pr->nnodes * 2 > pr->nhcap)
        DIE("more than %u call paths", pr->nhcap / 2);
    return pr->nnodes - 1;
}

typedef struct { /* a scope of a section, in depth-first order */
    uint32_t node, nch, chpos, seq;
    int64_t lead, tail;
    int top;
} ent;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void code_section(probe *pr, ent *e, size_t ne, const uint32_t *chl,
                         int64_t t0, uint32_t thread)
{
    section s = {0};
    s.t0 = t0;
    s.scopes = ne;
    s.thread = thread;
    uint32_t nn = pr->nnodes;
    /* each column's values, by node */
    size_t *cnt = xcalloc(nn, sizeof *cnt), *off = xcalloc(nn + 1, sizeof *off);
    for (size_t i = 0; i < ne; i++)
        cnt[e[i].node]++;
    for (uint32_t i = 0; i < nn; i++)
        off[i + 1] = off[i] + cnt[i];
    int64_t *val = xcalloc(ne, 8), *tmp = xcalloc(ne, 8);
    s.dn = xcalloc(nn, sizeof *s.dn);
    s.ndn = nn;
    for (int kind = 0; kind < 2; kind++) {
        size_t *fill = xcalloc(nn, sizeof *fill);
        for (size_t i = 0; i < ne; i++) {
            uint32_t n = e[i].node;
            val[off[n] + fill[n]++] = kind ? e[i].tail : e[i].lead;
        }
        free(fill);
        for (uint32_t n = 0; n < nn; n++) {
            if (!cnt[n])
                continue;
            memcpy(tmp, val + off[n], cnt[n] * 8);
            qsort(tmp, cnt[n], 8, cmp_i64);
            int64_t base = tmp[cnt[n] / 2];
            uint64_t best = UINT64_MAX;
            int bk = 0;
            for (int k = 0; k <= 40; k++) {
                uint64_t bits = 0;
                for (size_t i = 0; i < cnt[n]; i++)
                    bits += rice_bits(zz(val[off[n] + i] - base), k);
                if (bits < best) {
                    best = bits;
                    bk = k;
                }
            }
            if (kind) {
                s.dn[n].base_tail = base;
                s.dn[n].k_tail = (uint8_t)bk;
            } else {
                s.dn[n].base_lead = base;
                s.dn[n].k_lead = (uint8_t)bk;
            }
            s.table_bytes += varint_len(zz(base)) + 1;
        }
    }
    free(val);
    free(tmp);
    /* each node's distinct children sequences (linear search by node: a
     * node has few) */
    uint32_t *nseq = xcalloc(nn, 4), *cseq = xcalloc(nn, 4);
    uint32_t **rep = xcalloc(nn, sizeof *rep); /* first entry of each */
    uint64_t **scnt = xcalloc(nn, sizeof *scnt);
    for (size_t i = 0; i < ne; i++) {
        uint32_t n = e[i].node, q;
        for (q = 0; q < nseq[n]; q++) {
            const ent *x = &e[rep[n][q]];
            if (x->nch == e[i].nch &&
                memcmp(chl + x->chpos, chl + e[i].chpos, 4 * (size_t)x->nch) == 0)
                break;
        }
        if (q == nseq[n]) {
            if (nseq[n] == cseq[n]) {
                cseq[n] = cseq[n] ? 2 * cseq[n] : 4;
                rep[n] = xrealloc(rep[n], cseq[n] * sizeof **rep);
                scnt[n] = xrealloc(scnt[n], cseq[n] * sizeof **scnt);
            }
            rep[n][q] = (uint32_t)i;
            scnt[n][q] = 0;
            nseq[n]++;
        }
        scnt[n][q]++;
        e[i].seq = q;
    }
    size_t pool = 0;
    for (uint32_t n = 0; n < nn; n++)
        for (uint32_t q = 0; q < nseq[n]; q++)
            pool += e[rep[n][q]].nch;
    s.seqpool = xcalloc(pool + 1, 4);
    s.h = xcalloc(nn, sizeof *s.h);
    size_t used = 0;
    for (uint32_t n = 0; n < nn; n++) {
        dnode *d = &s.dn[n];
        if (!cnt[n])
            continue;
        d->seqoff = xcalloc(nseq[n], 4);
        d->seqlen = xcalloc(nseq[n], 4);
        uint32_t distinct[256], nd = 0;
        for (uint32_t q = 0; q < nseq[n]; q++) {
            const ent *x = &e[rep[n][q]];
            d->seqoff[q] = (uint32_t)used;
            d->seqlen[q] = x->nch;
            memcpy(s.seqpool + used, chl + x->chpos, 4 * (size_t)x->nch);
            used += x->nch;
            for (uint32_t j = 0; j < x->nch; j++) {
                uint32_t c = chl[x->chpos + j], t;
                for (t = 0; t < nd && distinct[t] != c; t++)
                    ;
                if (t == nd && nd < 256)
                    distinct[nd++] = c;
            }
        }
        /* the node's children once (a 2-byte name each), then each
         * sequence: its length and each child as an index among them */
        int ib = 0;
        while ((1u << ib) < nd)
            ib++;
        s.table_bytes += 1 + 2 * (size_t)nd;
        for (uint32_t q = 0; q < nseq[n]; q++)
            s.table_bytes += varint_len(d->seqlen[q]) +
                             ((size_t)d->seqlen[q] * (size_t)ib + 7) / 8;
        if (nseq[n] > 1) {
            huff_build(&s.h[n], scnt[n], (int)nseq[n]);
            d->tab = s.h[n].tab;
            d->mask = (1u << s.h[n].maxlen) - 1;
            s.table_bytes += (nseq[n] + 1) / 2; /* 4-bit lengths */
        }
    }
    /* top-level scopes: their node in the context of the previous one's */
    uint32_t *top_of = xcalloc(nn, 4), ntn = 0;
    for (uint32_t n = 0; n < nn; n++)
        top_of[n] = UINT32_MAX;
    s.root_node = xcalloc(nn, 4);
    for (size_t i = 0; i < ne; i++)
        if (e[i].top && top_of[e[i].node] == UINT32_MAX) {
            top_of[e[i].node] = ntn;
            s.root_node[ntn++] = e[i].node;
        }
    uint64_t *tc = xcalloc((size_t)(ntn + 1) * ntn, 8);
    uint32_t prev = ntn;
    for (size_t i = 0; i < ne; i++)
        if (e[i].top) {
            tc[(size_t)prev * ntn + top_of[e[i].node]]++;
            prev = top_of[e[i].node];
            s.ntop++;
        }
    s.nroot = ntn + 1;
    s.root = xcalloc(s.nroot, sizeof *s.root);
    for (uint32_t c = 0; c <= ntn; c++)
        huff_build(&s.root[c], tc + (size_t)c * ntn, (int)ntn);
    s.table_bytes += 2 * (size_t)ntn + (size_t)(ntn + 1) * ((ntn + 1) / 2);
    /* the stream, in the order the decoder reads it */
    bitw w = {0};
    struct {
        uint32_t ent, pos;
    } st[MAX_DEPTH];
    int d = -1;
    size_t i = 0;
    prev = ntn;
    while (i < ne || d >= 0) {
        if (d >= 0 && st[d].pos == e[st[d].ent].nch) {
            const ent *x = &e[st[d].ent];
            rice_put(pr, &w, zz(x->tail - s.dn[x->node].base_tail),
                     s.dn[x->node].k_tail);
            d--;
            continue;
        }
        const ent *x = &e[i];
        if (d >= 0)
            st[d].pos++;
        if (x->top) {
            const huff *h = &s.root[prev];
            uint32_t sy = top_of[x->node];
            put(&w, h->code[sy], h->len[sy]);
            prev = sy;
        }
        rice_put(pr, &w, zz(x->lead - s.dn[x->node].base_lead),
                 s.dn[x->node].k_lead);
        if (s.dn[x->node].tab)
            put(&w, s.h[x->node].code[x->seq], s.h[x->node].len[x->seq]);
        if (d + 1 >= MAX_DEPTH)
            DIE("deeper than %d", MAX_DEPTH);
        st[++d].ent = (uint32_t)i++;
        st[d].pos = 0;
    }
    if (w.bn)
        put(&w, 0, 8 - w.bn);
    s.nbytes = w.n;
    put(&w, 0, 32); /* padding: the decoder reads 8 bytes at a time */
    put(&w, 0, 32);
    s.bits = w.p;
    for (uint32_t n = 0; n < nn; n++) {
        free(rep[n]);
        free(scnt[n]);
    }
    free(rep);
    free(scnt);
    free(nseq);
    free(cseq);
    free(top_of);
    free(tc);
    free(cnt);
    free(off);
    if (pr->nsec == pr->csec) {
        pr->csec = pr->csec ? 2 * pr->csec : 64;
        pr->sec = xrealloc(pr->sec, pr->csec * sizeof *pr->sec);
    }
    pr->sec[pr->nsec++] = s;
}

static int cmp_scope(const void *a, const void *b)
{
    const scope *x = a, *y = b;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A thread's scopes (post-order as read) in depth-first order, cut into
 * sections. A scope whose parent is not in the capture (depth > 0 at a
 * section's start) cannot be placed: the probe stops. */
static void code_thread(probe *pr, uint32_t ti)
{
    thread_scopes *t = &pr->th[ti];
    qsort(t->v, t->n, sizeof *t->v, cmp_scope);
    ent *e = xcalloc(t->n, sizeof *e);
    uint32_t *chl = xcalloc(t->n, 4);
    size_t *par = xcalloc(t->n, sizeof *par);
    size_t i0 = 0;
    while (i0 < t->n) {
        if (t->v[i0].depth != 0)
            DIE("thread %u: a scope of depth %u with no parent", t->tid,
                t->v[i0].depth);
        size_t i1 = i0 + 1;
        while (i1 < t->n && (t->v[i1].depth != 0 || i1 - i0 < SECTION_SCOPES))
            i1++;
        size_t ne = i1 - i0, ps[MAX_DEPTH];
        for (size_t j = 0; j < ne; j++) {
            uint32_t dp = t->v[i0 + j].depth;
            if (dp >= MAX_DEPTH)
                DIE("deeper than %d", MAX_DEPTH);
            par[j] = dp ? ps[dp - 1] : SIZE_MAX;
            ps[dp] = j;
            e[j] = (ent){0};
            e[j].top = dp == 0;
            if (dp)
                e[par[j]].nch++;
        }
        uint32_t pos = 0;
        for (size_t j = 0; j < ne; j++) {
            e[j].chpos = pos;
            pos += e[j].nch;
            e[j].nch = 0;
        }
        for (size_t j = 0; j < ne; j++) {
            const scope *x = &t->v[i0 + j];
            uint32_t pn = par[j] == SIZE_MAX ? UINT32_MAX : e[par[j]].node;
            e[j].node = node_of(pr, pn, x->name);
            if (par[j] != SIZE_MAX)
                chl[e[par[j]].chpos + e[par[j]].nch++] = e[j].node;
            pr->ref_self[x->name] += x->e - x->b;
            if (par[j] != SIZE_MAX)
                pr->ref_self[t->v[i0 + par[j]].name] -= x->e - x->b;
        }
        /* leads and tails, walking the section in time */
        size_t se[MAX_DEPTH];
        int64_t last[MAX_DEPTH + 1], prev_ev = t->v[i0].b;
        int d = -1;
        for (size_t j = 0; j <= ne; j++) {
            uint32_t dp = j < ne ? t->v[i0 + j].depth : 0;
            while (d >= 0 && (j == ne || (int)dp <= d)) {
                const scope *c = &t->v[i0 + se[d]];
                e[se[d]].tail = c->e - last[d + 1];
                prev_ev = c->e;
                last[d] = c->e;
                d--;
            }
            if (j == ne)
                break;
            const scope *x = &t->v[i0 + j];
            e[j].lead = x->b - prev_ev;
            prev_ev = x->b;
            se[++d] = j;
            last[d + 1] = x->b;
        }
        code_section(pr, e, ne, chl, t->v[i0].b, ti);
        i0 = i1;
    }
    free(e);
    free(chl);
    free(par);
    free(t->v);
    t->v = NULL;
}

/* ---- decoding, with the model --------------------------------------------- */

typedef struct {
    int64_t *self;    /* per node */
    uint64_t *calls;  /* per node */
    int64_t *acc;     /* per node, this frame */
    uint8_t *mark;
    uint32_t *touched, nt;
    int64_t *nacc;    /* per name, this frame */
    uint8_t *nmark;
    uint32_t *ntouch, nnt;
    uint32_t *hist;   /* per name x HIST_BINS */
    size_t fi;        /* the next frame to begin */
} model;

static __attribute__((noinline)) void fold_frame(const probe *pr, model *m)
{
    for (uint32_t i = 0; i < m->nt; i++) {
        uint32_t n = m->touched[i], nm = pr->nodes[n].name;
        if (!m->nmark[nm]) {
            m->nmark[nm] = 1;
            m->ntouch[m->nnt++] = nm;
            m->nacc[nm] = 0;
        }
        m->nacc[nm] += m->acc[n];
        m->acc[n] = 0;
        m->mark[n] = 0;
    }
    m->nt = 0;
    for (uint32_t i = 0; i < m->nnt; i++) {
        uint32_t nm = m->ntouch[i];
        m->nmark[nm] = 0;
        /* log bins: the float's exponent and its 6 top mantissa bits */
        float f = (float)(m->nacc[nm] + 1);
        uint32_t b;
        memcpy(&b, &f, 4);
        uint32_t idx = (b >> 17) - (127u << 6);
        m->hist[(size_t)nm * HIST_BINS + (idx < HIST_BINS ? idx : HIST_BINS - 1)]++;
    }
    m->nnt = 0;
}

static inline uint64_t peek(const uint8_t *p, uint64_t pos)
{
    uint64_t w;
    memcpy(&w, p + (pos >> 3), 8);
    return w >> (pos & 7);
}

static inline int64_t rice_get(const uint8_t *p, uint64_t *posp, unsigned k)
{
    uint64_t pos = *posp, w = peek(p, pos), z;
    unsigned q = (unsigned)__builtin_ctzll(w | 1ull << RICE_ESC);
    if (__builtin_expect(q < RICE_ESC, 1)) {
        z = (uint64_t)q << k | ((w >> (q + 1)) & ((1ull << k) - 1));
        pos += q + 1 + k;
    } else {
        pos += RICE_ESC;
        z = peek(p, pos) & 0xffffff;
        pos += 24;
        z |= (peek(p, pos) & 0xffffff) << 24;
        pos += 24;
    }
    *posp = pos;
    return unzz(z);
}

/* frames: 1 for the model with each frame's sums folded into histograms,
 * 0 for self time by node alone (the baseline's model) */
static inline __attribute__((always_inline)) void
decode_as(const probe *pr, const section *s, model *m, const int frames)
{
    const uint8_t *p = s->bits;
    uint64_t pos = 0;
    const dnode *dn = s->dn;
    int64_t t = s->t0;
    struct {
        uint32_t node, pos, len;
        const uint32_t *ch;
    } st[MAX_DEPTH];
    int d = -1;
    uint32_t prev = s->nroot - 1, left = s->ntop;
    int64_t fbound = m->fi < pr->nfr ? pr->fr[m->fi].b : INT64_MAX;
    int first = 1;
    for (;;) {
        uint32_t n;
        if (d < 0) {
            if (!left)
                break;
            left--;
            const huff *h = &s->root[prev];
            uint32_t sy = 0;
            if (h->maxlen) {
                hent he = h->tab[peek(p, pos) & ((1u << h->maxlen) - 1)];
                sy = he.sym;
                pos += he.len;
            }
            prev = sy;
            n = s->root_node[sy];
        } else if (st[d].pos < st[d].len) {
            n = st[d].ch[st[d].pos++];
        } else { /* st[d] ends */
            n = st[d].node;
            int64_t tail = dn[n].base_tail + rice_get(p, &pos, dn[n].k_tail);
            t += tail;
            m->self[n] += tail;
            if (frames) {
                if (!m->mark[n]) {
                    m->mark[n] = 1;
                    m->touched[m->nt++] = n;
                }
                m->acc[n] += tail;
            }
            d--;
            continue;
        }
        const dnode *x = &dn[n];
        int64_t lead = x->base_lead + rice_get(p, &pos, x->k_lead);
        if (first) { /* the section's first scope is at t0 */
            lead = 0;
            first = 0;
        }
        t += lead;
        if (d >= 0) {
            uint32_t pn = st[d].node;
            m->self[pn] += lead;
            if (frames)
                m->acc[pn] += lead;
        } else if (frames && t >= fbound) {
            while (m->fi < pr->nfr && pr->fr[m->fi].b <= t)
                m->fi++;
            fbound = m->fi < pr->nfr ? pr->fr[m->fi].b : INT64_MAX;
            fold_frame(pr, m);
        }
        if (frames)
            m->calls[n]++;
        uint32_t q = 0;
        if (x->tab) {
            hent he = x->tab[peek(p, pos) & x->mask];
            q = he.sym;
            pos += he.len;
        }
        d++;
        st[d].node = n;
        st[d].pos = 0;
        st[d].len = x->seqlen[q];
        st[d].ch = s->seqpool + x->seqoff[q];
    }
}

/* not inlined: each shows on its own in a profile */
static __attribute__((noinline)) void decode_bare(const probe *pr, const section *s, model *m)
{
    decode_as(pr, s, m, 0);
}

static __attribute__((noinline)) void decode_frames(const probe *pr, const section *s, model *m)
{
    decode_as(pr, s, m, 1);
}

/* One pass over every section; returns its CPU time, ns. */
static uint64_t decode_all(const probe *pr, model *m, int frames)
{
    memset(m->self, 0, (size_t)pr->nnodes * 8);
    memset(m->calls, 0, (size_t)pr->nnodes * 8);
    memset(m->hist, 0, ((size_t)pr->max_name + 1) * HIST_BINS * 4);
    m->fi = 0;
    uint64_t t0 = bench_thread_cpu_ns();
    for (size_t i = 0; i < pr->nsec; i++) {
        if (i && pr->sec[i].thread != pr->sec[i - 1].thread)
            m->fi = 0; /* each thread's frames from the first */
        if (frames)
            decode_frames(pr, &pr->sec[i], m);
        else
            decode_bare(pr, &pr->sec[i], m);
    }
    if (frames)
        fold_frame(pr, m);
    return bench_thread_cpu_ns() - t0;
}

/* 1 when every name's self ticks from m equal want's and the reader's */
static int same_self(const probe *pr, const model *m, const int64_t *want)
{
    uint32_t nm = pr->max_name + 1;
    int64_t *got = xcalloc(nm, 8);
    for (uint32_t n = 0; n < pr->nnodes; n++)
        got[pr->nodes[n].name] += m->self[n];
    int ok = 1;
    for (uint32_t i = 0; i < nm; i++)
        if (got[i] != want[i] || got[i] != pr->ref_self[i])
            ok = 0;
    free(got);
    return ok;
}

static int cmp_sec(const void *a, const void *b)
{
    const section *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            DIE("usage: bench_columnar [FILE] [--reps N]");
    }
    if (reps < 1)
        reps = 1;
    if (!path) {
        path = "columnar-10M.cap";
        struct stat sb;
        if (stat(path, &sb) != 0) {
            fprintf(stderr, "bench_columnar: generating %s (realistic, "
                            "10 M scopes, once)\n", path);
            static gen g;
            if (gen_write_file(&g, path, 10000000, (cap_writer_options){0}))
                DIE("cannot write %s", path);
        }
    }
    struct stat sb;
    if (stat(path, &sb) != 0)
        DIE("%s: %s", path, strerror(errno));

    static probe pr;
    pr.nhcap = 1u << 20;
    pr.nhash = xcalloc(pr.nhcap, 4);
    pr.ref_self = xcalloc((size_t)1 << 24, 8);
    load(&pr, path);
    if (!pr.scopes)
        DIE("%s: no CPU scope", path);
    if (pr.max_name >= 1u << 24)
        DIE("%s: name ids past 2^24", path);
    for (int i = 0; i < pr.nth; i++)
        code_thread(&pr, (uint32_t)i);
    qsort(pr.sec, pr.nsec, sizeof *pr.sec, cmp_sec);
    size_t bytes = 0, tables = 0;
    for (size_t i = 0; i < pr.nsec; i++) {
        bytes += pr.sec[i].nbytes;
        tables += pr.sec[i].table_bytes;
    }

    /* the baseline, and the coding, alternately */
    int64_t *self3 = xcalloc((size_t)pr.max_name + 1, 8);
    uint64_t best3 = UINT64_MAX, bestc = UINT64_MAX, n3 = 0;
    uint32_t nn = pr.nnodes, nm = pr.max_name + 1;
    model m = {0};
    m.self = xcalloc(nn, 8);
    m.calls = xcalloc(nn, 8);
    m.acc = xcalloc(nn, 8);
    m.mark = xcalloc(nn, 1);
    m.touched = xcalloc(nn, 4);
    m.nacc = xcalloc(nm, 8);
    m.nmark = xcalloc(nm, 1);
    m.ntouch = xcalloc(nm, 4);
    m.hist = xcalloc((size_t)nm * HIST_BINS, 4);
    int exact = 1;
    uint64_t bestf = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t ns;
        memset(self3, 0, (size_t)nm * 8);
        n3 = baseline(path, self3, &ns);
        if (ns < best3)
            best3 = ns;
        ns = decode_all(&pr, &m, 0);
        if (ns < bestc)
            bestc = ns;
        exact &= same_self(&pr, &m, self3);
        ns = decode_all(&pr, &m, 1);
        if (ns < bestf)
            bestf = ns;
        exact &= same_self(&pr, &m, self3);
    }
    double s3 = (double)n3 / ((double)best3 / 1e9);
    double sc = (double)pr.scopes / ((double)bestc / 1e9);
    printf("capture=%s\n", path);
    printf("scopes=%llu\n", (unsigned long long)pr.scopes);
    printf("threads=%d\n", pr.nth);
    printf("call_paths=%u\n", pr.nnodes);
    printf("sections=%zu\n", pr.nsec);
    printf("col_bytes_per_scope=%.4f\n", (double)(bytes + tables) / (double)pr.scopes);
    printf("col_tables_bytes_per_scope=%.4f\n", (double)tables / (double)pr.scopes);
    printf("col_escapes=%llu\n", (unsigned long long)pr.esc);
    printf("file_bytes_per_scope=%.4f\n", (double)sb.st_size / (double)pr.scopes);
    printf("format3_scopes_per_s=%.1fM\n", s3 / 1e6);
    printf("col_scopes_per_s=%.1fM\n", sc / 1e6);
    printf("col_ratio=%.2f\n", sc / s3);
    printf("col_frames_scopes_per_s=%.1fM\n",
           (double)pr.scopes / ((double)bestf / 1e9) / 1e6);
    printf("col_self_exact=%d\n", exact && n3 == pr.scopes);
    return exact && n3 == pr.scopes ? 0 : 1;
}
