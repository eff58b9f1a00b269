/*
 * bench_gen.h - a realistic capture generator that knows its own entropy.
 *
 * The trivial recording loop (bench_common.h: four names, near-constant
 * durations) compresses far better than a real program's captures. This
 * generator writes, through cap_writer, frames of a call tree shaped like a
 * game loop's, with timings drawn from stated distributions, so that the
 * size of its files can be compared with the information they must hold.
 *
 * Shape (fixed seed, so every run writes the same names and tree):
 *   - GEN_SYSTEMS top-level systems; system s has a depth drawn in 4..7
 *     (levels below it). A node above its system's last level has 1 to 3
 *     children (2 or 3 on the two top levels); a node on the last level is
 *     a leaf. Each name is one node of this tree: 200 to 400 names (the
 *     count is printed; generation fails below 200).
 *   - Per frame each system runs once; every non-system scope is present
 *     with probability GEN_P_PRESENT (an `if` in the code), and each leaf
 *     repeats a fixed number of times drawn per frame uniformly in
 *     1..max_repeat (a loop), max_repeat drawn per leaf in 1..6.
 * Timing, in ticks of a 0.4 ns time-stamp counter (2.5 GHz). Every name n
 * has three means, drawn once, log-uniformly:
 *   - lead_n: the gap between the previous event and the scope's begin,
 *     10 ns .. 300 ns;
 *   - for a leaf, its duration: 100 ns .. 10 us;
 *   - for an inner scope, the tail between its last child's end and its
 *     own end: 50 ns .. 2 us.
 * Each occurrence draws each of its quantities x from a normal law around
 * its name's mean mu, with standard deviation
 *   sigma = sqrt((GEN_JITTER * mu)^2 + GEN_NOISE_TICKS^2),
 * rounded to a whole tick and clipped at 0 (5 % relative jitter plus two
 * ticks of timer noise). Between frames the thread idles 40 ns .. 840 ns
 * (uniform).
 *
 * The entropy floor: every draw is independent given the name, so the
 * information the file must hold is the sum, over the draws made, of each
 * draw's entropy: log2(sigma * sqrt(2 pi e)) bits for a rounded normal
 * (computed exactly for small sigma), log2(k) for a uniform choice among k,
 * the binary entropy of GEN_P_PRESENT for each presence test. Names are
 * free (the tree is fixed) and frame boundaries follow from the scopes and
 * the idle gap. gen_floor_bytes_per_scope() is that sum over the scopes
 * written, in bytes: no lossless encoding of these timestamps can be
 * smaller on average.
 */
#ifndef BENCH_GEN_H
#define BENCH_GEN_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <capture/cap_writer.h>

#define GEN_SYSTEMS 8
#define GEN_MAX_NAMES 1024
#define GEN_MAX_CHILDREN 3
#define GEN_PERIOD_NS 0.4
#define GEN_JITTER 0.05
#define GEN_NOISE_TICKS 2.0
#define GEN_P_PRESENT 0.9

typedef struct gen_name {
    uint32_t id;           /* name id: 1 + index */
    int level;             /* 0: a system */
    int leaf;
    uint32_t child[GEN_MAX_CHILDREN];
    uint32_t nchild;
    uint32_t max_repeat;   /* leaves: loop count drawn in 1..max_repeat */
    double lead_mu, lead_sd, lead_h;  /* ticks, ticks, bits */
    double tail_mu, tail_sd, tail_h;  /* leaf: duration; inner: tail */
    char text[40];
} gen_name;

typedef struct gen {
    gen_name n[GEN_MAX_NAMES];
    uint32_t nn;
    uint32_t sys[GEN_SYSTEMS];
    uint64_t rng;
    int have_spare;
    double spare;
    uint64_t tick;
    uint64_t scopes, frames;
    double bits;           /* information drawn so far */
} gen;

static inline uint64_t gen_next(gen *g)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return g->rng;
}

static inline double gen_unit(gen *g) /* uniform in (0, 1) */
{
    return ((double)(gen_next(g) >> 11) + 0.5) / 9007199254740992.0;
}

static inline uint32_t gen_below(gen *g, uint32_t n)
{
    return (uint32_t)(gen_next(g) % n);
}

static inline double gen_normal(gen *g)
{
    if (g->have_spare) {
        g->have_spare = 0;
        return g->spare;
    }
    double u = gen_unit(g), v = gen_unit(g);
    double r = sqrt(-2.0 * log(u));
    g->spare = r * sin(2 * M_PI * v);
    g->have_spare = 1;
    return r * cos(2 * M_PI * v);
}

/* Entropy in bits of round(N(mu, sd^2)) for mu >> sd. */
static inline double gen_normal_bits(double sd)
{
    if (sd > 30)
        return log2(sd * sqrt(2 * M_PI * M_E));
    double h = 0, z = 0;
    int k = (int)(12 * sd) + 2;
    for (int i = -k; i <= k; i++)
        z += exp(-(double)i * i / (2 * sd * sd));
    for (int i = -k; i <= k; i++) {
        double p = exp(-(double)i * i / (2 * sd * sd)) / z;
        if (p > 0)
            h -= p * log2(p);
    }
    return h;
}

static inline double gen_log_uniform(gen *g, double lo_ns, double hi_ns)
{
    return exp(log(lo_ns) + gen_unit(g) * (log(hi_ns) - log(lo_ns))) /
           GEN_PERIOD_NS;
}

static inline void gen_set_sd(gen_name *n)
{
    n->lead_sd = sqrt(pow(GEN_JITTER * n->lead_mu, 2) +
                      GEN_NOISE_TICKS * GEN_NOISE_TICKS);
    n->tail_sd = sqrt(pow(GEN_JITTER * n->tail_mu, 2) +
                      GEN_NOISE_TICKS * GEN_NOISE_TICKS);
    n->lead_h = gen_normal_bits(n->lead_sd);
    n->tail_h = gen_normal_bits(n->tail_sd);
}

static uint32_t gen_node(gen *g, int level, int depth, const char *parent,
                         uint32_t index)
{
    if (g->nn >= GEN_MAX_NAMES)
        return UINT32_MAX;
    uint32_t k = g->nn++;
    gen_name *n = &g->n[k];
    memset(n, 0, sizeof *n);
    n->id = k + 1;
    n->level = level;
    n->leaf = level == depth;
    if (level == 0)
        snprintf(n->text, sizeof n->text, "system_%u", index);
    else
        snprintf(n->text, sizeof n->text, "%.28s.%u", parent, index);
    n->lead_mu = gen_log_uniform(g, 10, 300);
    n->tail_mu = n->leaf ? gen_log_uniform(g, 100, 10000)
                         : gen_log_uniform(g, 50, 2000);
    n->max_repeat = n->leaf ? 1 + gen_below(g, 6) : 1;
    gen_set_sd(n);
    if (!n->leaf) {
        uint32_t c = level == 0 ? 3 : 1 + gen_below(g, level < 3 ? 3 : 2);
        char text[40];
        memcpy(text, n->text, sizeof text);
        for (uint32_t i = 0; i < c; i++) {
            uint32_t ch = gen_node(g, level + 1, depth, text, i);
            if (ch == UINT32_MAX)
                break;
            g->n[k].child[g->n[k].nchild++] = ch;
        }
    }
    return k;
}

/* Build the tree (fixed seed). Returns the number of names. */
static inline uint32_t gen_init(gen *g, uint64_t tick0)
{
    memset(g, 0, sizeof *g);
    g->rng = 0x2545f4914f6cdd1dull;
    for (uint32_t s = 0; s < GEN_SYSTEMS; s++) {
        int depth = 3 + (int)gen_below(g, 4); /* levels 0..depth: 4..7 deep */
        g->sys[s] = gen_node(g, 0, depth, "", s);
    }
    g->tick = tick0;
    return g->nn;
}

static inline uint64_t gen_draw(gen *g, double mu, double sd, double h)
{
    double x = mu + sd * gen_normal(g);
    g->bits += h;
    return x <= 0 ? 0 : (uint64_t)llround(x);
}

static inline double gen_h2(double p)
{
    return -(p * log2(p) + (1 - p) * log2(1 - p));
}

/* One occurrence of name k (and its subtree). */
static cap_result gen_scope(gen *g, cap_writer *w, uint32_t k)
{
    gen_name *n = &g->n[k];
    g->tick += gen_draw(g, n->lead_mu, n->lead_sd, n->lead_h);
    cap_result r = cap_writer_scope_begin(w, 0, n->id, g->tick);
    if (r != CAP_OK)
        return r;
    for (uint32_t i = 0; i < n->nchild; i++) {
        gen_name *c = &g->n[n->child[i]];
        g->bits += gen_h2(GEN_P_PRESENT);
        if (gen_unit(g) >= GEN_P_PRESENT)
            continue;
        uint32_t rep = 1;
        if (c->max_repeat > 1) {
            rep = 1 + gen_below(g, c->max_repeat);
            g->bits += log2((double)c->max_repeat);
        }
        for (uint32_t j = 0; j < rep; j++)
            if ((r = gen_scope(g, w, n->child[i])) != CAP_OK)
                return r;
    }
    g->tick += gen_draw(g, n->tail_mu, n->tail_sd, n->tail_h);
    g->scopes++;
    return cap_writer_scope_end(w, 0, g->tick);
}

/* One frame: every system once, then the idle gap. */
static inline cap_result gen_frame(gen *g, cap_writer *w)
{
    uint64_t begin = g->tick;
    for (uint32_t s = 0; s < GEN_SYSTEMS; s++) {
        cap_result r = gen_scope(g, w, g->sys[s]);
        if (r != CAP_OK)
            return r;
    }
    g->tick += 100 + gen_below(g, 2000);
    g->bits += log2(2000.0);
    return cap_writer_frame(w, g->frames++, begin, g->tick);
}

/* Declare the names and thread 0 to w. */
static inline cap_result gen_declare(const gen *g, cap_writer *w)
{
    cap_result r = cap_writer_thread(w, 0, "main");
    for (uint32_t i = 0; r == CAP_OK && i < g->nn; i++)
        r = cap_writer_name(w, g->n[i].id, g->n[i].text, "bench_gen.h",
                            (uint32_t)(100 + g->n[i].level));
    return r;
}

/* Write at least `scopes` scopes (whole frames) from a fresh generator g
 * into path, through path.tmp renamed at the end, with o's options and
 * the generator's clock (a 0.4 ns TSC from tick 1,000,000, zstd level 1).
 * Returns 0, or -1 with nothing at path. */
static inline int gen_write_file(gen *g, const char *path, uint64_t scopes,
                                 cap_writer_options o)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    gen_init(g, 1000000);
    o.clock_source = "tsc";
    o.tick_period_ns = GEN_PERIOD_NS;
    o.origin_tick = 1000000;
    o.zstd_level = 1;
    cap_writer *w;
    if (cap_writer_open_path(&w, tmp, &o) != CAP_OK)
        return -1;
    cap_result r = gen_declare(g, w);
    while (r == CAP_OK && g->scopes < scopes)
        r = gen_frame(g, w);
    if (cap_writer_close(w) != CAP_OK || r != CAP_OK ||
        rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

static inline double gen_floor_bytes_per_scope(const gen *g)
{
    return g->scopes ? g->bits / 8.0 / (double)g->scopes : 0;
}

static inline int gen_max_depth(const gen *g)
{
    int d = 0;
    for (uint32_t i = 0; i < g->nn; i++)
        if (g->n[i].level + 1 > d)
            d = g->n[i].level + 1;
    return d;
}

#endif
