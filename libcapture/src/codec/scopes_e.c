/*
 * codec/scopes_e.c - SCOPES_E (0x0E, format 3.0): SCOPES_R's tokens and
 * residuals range-coded (rANS; format-spec "SCOPES_E (0x0E)";
 * format/format.h sums it up).
 */
#include "codec/scopes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_limits.h"
#include "codec/scopes_walk.h"

/* Scratch p of *cap elements of `size` bytes made room for n: p itself
 * when it holds them, else p reallocated to n (*cap set); NULL out of
 * memory (p then unchanged: the caller still owns it). */
static void *room(void *p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return p;
    void *q = realloc(p, n * size);
    if (q)
        *cap = n;
    return q;
}

/* ---- carried token lists (4.0) ------------------------------------------ */

void capc_se_carry_free(capc_se_carry *c)
{
    free(c->ids);
    free(c->l);
    memset(c, 0, sizeof *c);
}

#define AT(p, i, stride) ((const void *)((const char *)(p) + (i) * (stride)))

int capc_se_carry_save(capc_se_carry *c, uint64_t grp, const uint32_t *ids,
                       size_t ids_stride, uint32_t nn, const capf_se_list *l,
                       size_t l_stride)
{
    c->grp = 0;
    size_t n = (size_t)nn + 1;
    if (n > c->cap) {
        uint32_t *pi = realloc(c->ids, n * sizeof *pi);
        if (pi)
            c->ids = pi;
        capf_se_list *pl = pi ? realloc(c->l, 2 * n * sizeof *pl) : NULL;
        if (!pl)
            return -1;
        c->l = pl;
        c->cap = n;
    }
    c->ids[0] = 0;
    for (size_t i = 1; i <= nn; i++)
        c->ids[i] = *(const uint32_t *)AT(ids, i - 1, ids_stride);
    for (size_t j = 0; j < 2 * n; j++)
        c->l[j] = *(const capf_se_list *)AT(l, j, l_stride);
    c->nn = nn;
    c->grp = grp;
    return 0;
}

/* List o as carried into a section whose place of c's place v is map[v]
 * (0: not listed there): into *t (zeroed). */
static void carry_list(const capf_se_list *o, const uint32_t *map,
                       uint32_t onn, capf_se_list *t)
{
    unsigned len = 0;
    for (unsigned i = 0; i < o->len && i < CAPF_SE_LIST; i++) {
        uint32_t v = o->v[i];
        if (v > onn || (v && !map[v]))
            continue;
        t->v[len] = v ? map[v] : 0;
        t->n[len] = o->n[i];
        len++;
    }
    t->len = (uint16_t)len;
    t->tb = (uint16_t)(len * 3u + o->tb % 3u);
}

int capc_se_carry_load(const capc_se_carry *c, const uint32_t *ids,
                       size_t ids_stride, uint32_t nn, capf_se_list *l,
                       size_t l_stride)
{
    /* map: c's place -> this section's; inv: this section's -> c's (both
       lists in increasing id order) */
    uint32_t *map = calloc((size_t)c->nn + 1 + (size_t)nn + 1, sizeof *map);
    if (!map)
        return -1;
    uint32_t *inv = map + c->nn + 1;
    for (uint32_t i = 1, j = 1; i <= nn && j <= c->nn;) {
        uint32_t id = *(const uint32_t *)AT(ids, i - 1, ids_stride);
        if (id == c->ids[j]) {
            map[j] = i;
            inv[i] = j;
            i++;
            j++;
        } else if (id < c->ids[j]) {
            i++;
        } else {
            j++;
        }
    }
    carry_list(&c->l[1], map, c->nn, (capf_se_list *)AT(l, 1, l_stride));
    for (uint32_t i = 1; i <= nn; i++)
        for (size_t k = 0; k < 2 && inv[i]; k++)
            carry_list(&c->l[2 * (size_t)inv[i] + k], map, c->nn,
                       (capf_se_list *)AT(l, 2 * (size_t)i + k, l_stride));
    free(map);
    return 0;
}

/* ---- SCOPES_E (format-spec "SCOPES_E (0x0E)") ----------------------------
 * Three passes over th's events: the names and each context's mean, each
 * context's mean absolute deviation (its shift k and residual table),
 * then the coding steps (a token rank, raw bits, a residual symbol) in
 * event order; the tables are the steps' counts scaled to 4096, and the
 * steps are rANS-coded last to first. */


/* The raw bit stream as pass 3 of put_scopes_e writes it: bytes into
 * buf from len on, lowest bits first (the order the reader takes them). */
typedef struct se_bits {
    capf_buf *buf;
    size_t len;
    uint64_t acc;
    unsigned an; /* bits waiting in acc: fewer than 8 between calls */
} se_bits;

/* n raw bits of v, lowest first, at most 16 a step (room for them made by
 * the caller: se_bits_room) */
static inline void se_raw(se_bits *b, unsigned n, uint64_t v)
{
    while (n > 0) {
        unsigned k = n < CAPF_SE_RAW_MAX ? n : CAPF_SE_RAW_MAX;
        b->acc |= (v & ((1u << k) - 1)) << b->an;
        b->an += k;
        v >>= k;
        n -= k;
        for (; b->an >= 8; b->an -= 8, b->acc >>= 8)
            b->buf->data[b->len++] = (uint8_t)b->acc;
    }
}

/* Room for one event's raw bits (at most 24 + 71 of them); -1 when out of
 * memory. */
static inline int se_bits_room(se_bits *b)
{
    if (b->buf->cap - b->len >= 16)
        return 0;
    b->buf->len = b->len;
    return capf_buf_reserve(b->buf, 16);
}

static int se_add_name(capc_scopes_enc *w, uint32_t id, size_t *nn,
                       uint64_t gen)
{
    capc_sc_name *nm = name_slot(w, id);
    if (!nm)
        return -1;
    if (nm->se_gen == gen)
        return 0;
    if (*nn == w->se_names_cap) {
        size_t c = w->se_names_cap ? 2 * w->se_names_cap : 256;
        uint32_t *p = realloc(w->se_names, c * sizeof *p);
        if (!p)
            return -1;
        w->se_names = p;
        w->se_names_cap = c;
    }
    w->se_names[(*nn)++] = id;
    nm->se_gen = gen;
    nm->sr_m[0] = nm->sr_m[1] = nm->sr_n[0] = nm->sr_n[1] = 0;
    nm->se_dev[0] = nm->se_dev[1] = 0;
    return 0;
}

/* A context's prediction: the mean of its n deltas, rounded to a multiple
 * of 2^(k + 1) (k its shift) when n is at most 8, of 2^k up to 16: the
 * residual's low k bits are stored raw anyway, and in a small section the
 * name list's low bits cost more than the few residuals lose. Above 16
 * deltas the mean stays exact. */
static uint64_t se_pred(uint64_t mean, uint64_t n, unsigned k)
{
    return n == 0 || n > 16 ? mean : round_pow2(mean, k + (n <= 8));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Tables of at most this many symbols coded take coarse frequencies. */
#define SE_COARSE_COUNT 2048u

/* counts -> frequencies adding up to CAPF_SE_PROB, each symbol counted
 * at least 1; a table nothing used gives symbol 0 (or 4 for tokens) all.
 * A table of at most SE_COARSE_COUNT symbols (a small section's) gives
 * each symbol but the most used a power of two (the nearer one, about
 * geometrically), the most used the rest: a few hundred table bytes then
 * take few distinct values, which zstd stores in fewer bits than the
 * symbols lose. */
static void se_norm(const uint32_t *cnt, unsigned n, uint32_t *f,
                    unsigned unused_sym)
{
    uint64_t tot = 0;
    unsigned big = 0;
    for (unsigned i = 0; i < n; i++) {
        tot += cnt[i];
        if (cnt[i] > cnt[big])
            big = i;
    }
    if (!tot) {
        for (unsigned i = 0; i < n; i++)
            f[i] = i == unused_sym ? CAPF_SE_PROB : 0;
        return;
    }
    int64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        f[i] = cnt[i] ? (uint32_t)(((uint64_t)cnt[i] * CAPF_SE_PROB +
                                    tot / 2) / tot)
                      : 0;
        if (cnt[i] && f[i] == 0)
            f[i] = 1;
        sum += f[i];
    }
    f[big] = (uint32_t)((int64_t)f[big] + (int64_t)CAPF_SE_PROB - sum);
    if (tot > SE_COARSE_COUNT)
        return;
    uint32_t g[CAPF_SE_RES_SYMS];
    uint32_t rest = 0;
    for (unsigned i = 0; i < n && i < CAPF_SE_RES_SYMS; i++) {
        g[i] = f[i];
        if (i == big)
            continue;
        if (f[i] > 1) {
            uint32_t lo = 1u << (31 - __builtin_clz(f[i]));
            g[i] = 7 * f[i] < 11 * lo ? lo : 2 * lo;
        }
        rest += g[i];
    }
    if (n > CAPF_SE_RES_SYMS || rest >= CAPF_SE_PROB)
        return; /* keep the exact table */
    for (unsigned i = 0; i < n; i++)
        f[i] = i == big ? CAPF_SE_PROB - rest : g[i];
}

#define SE_TABLES (CAPF_SE_TOK_TABLES + SE_RES_TABLES)
#define SE_RES_TABLES 8
_Static_assert(SE_TABLES == CAPC_SE_GRP_TABLES, "capc_se_grp's tables");

static int se_out_byte(capf_buf *o, uint8_t b)
{
    capf_buf_u8(o, b);
    return o->failed ? -1 : 0;
}

/* SCOPES_E pass 1, after the prefix's names: the events' names (listed
 * in w->se_names, *nn_out of them, sorted, each with its index from 1)
 * and each context's mean, and on the first SR_SAMPLE events
 * scopes_repeat's test: 0; 1 where the section repeats itself; -1 when
 * out of memory. */
static int se_pass_names(capc_scopes_enc *w, const capc_scopes_src *th,
                         uint64_t gen, size_t *nn_out)
{
    size_t nn = 0;
    /* the prefix's names, then pass 1: the events' names and sums, and
       on the first SR_SAMPLE events scopes_repeat's test */
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        uint32_t depth = (uint32_t)capf_cur_varint(&o);
        for (uint32_t i = 0; i < depth && !o.bad; i++) {
            uint32_t id = (uint32_t)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
            if (se_add_name(w, id, &nn, gen) != 0)
                return -1;
        }
    }
    uint64_t same = 0, seen = 0; /* scopes_repeat's counts */
    SE_WALK(w, th, {
        if (tok && nm->se_gen != gen) {
            if (se_add_name(w, tok, &nn, gen) != 0)
                return -1;
            nm = name_peek(w, id); /* the same slot: slots never move */
        }
        if (e < SR_SAMPLE) {
            if (nm->sr_gen[kind] == gen) {
                seen++;
                same += nm->se_last[kind] == d;
            }
            nm->se_last[kind] = d;
            nm->sr_gen[kind] = gen;
        }
        if (e > 0 && d <= SR_MEAN_MAX && nm->sr_n[kind] < SR_MEAN_COUNT) {
            nm->sr_m[kind] += d;
            nm->sr_n[kind]++;
        }
    });
    if (2 * same > seen)
        return 1;
    if (nn > 1)
        qsort(w->se_names, nn, sizeof *w->se_names, cmp_u32);
    for (size_t i = 0; i < nn; i++) {
        capc_sc_name *nm = name_peek(w, w->se_names[i]);
        nm->se_dense = (uint32_t)(i + 1);
        for (int k = 0; k < 2; k++)
            nm->sr_m[k] = nm->sr_n[k] ? nm->sr_m[k] / nm->sr_n[k] : 0;
    }
    *nn_out = nn;
    return 0;
}

/* SCOPES_E pass 2 and the name table: each context's shift, residual
 * table and prediction, into t. -1 on a stack the writer cannot have
 * made. */
/* A context's shift and residual table for the spread sd of its deltas:
 * q = r >> k has a spread of 2..4 (tables 0..3 by the spread's place
 * between powers of two), or k = 0 and the spread below 4 (tables 4..7) */
static void se_shift(double sd, uint8_t *k, uint8_t *tab)
{
    if (sd < 4) {
        *k = 0;
        *tab = (uint8_t)(4 + (unsigned)sd);
    } else {
        double l = log2(sd);
        double fl = floor(l);
        *k = (uint8_t)(fl - 1);
        unsigned q = (unsigned)((l - fl) * 4);
        *tab = (uint8_t)(q > 3 ? 3 : q);
    }
}

/* 4.0: the context `kind` of a name listed earlier in the group: its
 * deltas in this section added to the group's, and its kept prediction,
 * shift and table replaced by the group's only where that pays: each
 * replacement breaks the repeat of the name list that the group's zstd
 * frame stores for next to nothing (bench_size's 60 fps 100 ms blocks,
 * token lists carried: 2.283 bytes a scope; 2.403 when the prediction
 * moved at an offset of 2^(k+1) or any change of shift; SE_GRP_MOVE 16:
 * 2.407 without the shift's rule, 400: 2.285, 4000: 2.290). */
#define SE_GRP_MOVE 100.0
static void se_grp_update(capc_sc_name *nm, int kind)
{
    nm->grp_sum[kind] += nm->sr_m[kind] * nm->sr_n[kind];
    nm->grp_n[kind] += nm->sr_n[kind];
    nm->grp_dev[kind] += nm->se_dev[kind];
    if (!nm->grp_n[kind])
        return;
    uint64_t mean = nm->grp_sum[kind] / nm->grp_n[kind];
    uint8_t k, tab;
    se_shift(1.2533 * (double)nm->grp_dev[kind] / (double)nm->grp_n[kind], &k,
             &tab);
    uint64_t off = mean > nm->grp_pred[kind] ? mean - nm->grp_pred[kind]
                                              : nm->grp_pred[kind] - mean;
    /* the move pays where the kept prediction's offset, in units of
       2^k, squared and times this section's deltas, is 100 or more (a
       residual loses about that square's worth of bits; the move costs
       the name list's bytes), or where the shift is off by 2 or more on
       8 deltas or more */
    double o = (double)off / (double)(1ull << nm->grp_k[kind]);
    double n = (double)nm->sr_n[kind];
    unsigned kd = k > nm->grp_k[kind] ? k - nm->grp_k[kind]
                                      : nm->grp_k[kind] - k;
    if (o * o * n < SE_GRP_MOVE && (kd < 2 || n < 8))
        return;
    nm->grp_pred[kind] = mean;
    nm->grp_k[kind] = k;
    nm->grp_tab[kind] = tab;
}

/* 4.0: the context `kind` of a name first listed in this group, listed
 * in an earlier one: its prediction, shift and table from its deltas
 * there (their sums halved down to SE_GRP_HIST) and in this section,
 * into t, kept for the group; 0, nothing done, where it has none. The
 * group's first section of a name then predicts from many deltas instead
 * of its own few (bench_size's 60 fps 100 ms blocks: 2.283 -> 2.194
 * bytes a scope; history 64: 2.198, 256: 2.195, unbounded: 2.193). */
#define SE_GRP_HIST 1024u
static int se_grp_again(capc_sc_name *nm, int kind, capf_buf *t)
{
    if (!nm->grp_n[kind])
        return 0;
    while (nm->grp_n[kind] > SE_GRP_HIST) {
        nm->grp_sum[kind] /= 2;
        nm->grp_n[kind] /= 2;
        nm->grp_dev[kind] /= 2;
    }
    nm->grp_sum[kind] += nm->sr_m[kind] * nm->sr_n[kind];
    nm->grp_n[kind] += nm->sr_n[kind];
    nm->grp_dev[kind] += nm->se_dev[kind];
    se_shift(1.2533 * (double)nm->grp_dev[kind] / (double)nm->grp_n[kind],
             &nm->se_k[kind], &nm->se_tab[kind]);
    nm->sr_m[kind] = nm->grp_sum[kind] / nm->grp_n[kind];
    capf_buf_varint(t, nm->sr_m[kind]);
    capf_buf_varint(t, (uint64_t)nm->se_k[kind] * 16 + nm->se_tab[kind]);
    nm->grp_pred[kind] = nm->sr_m[kind];
    nm->grp_k[kind] = nm->se_k[kind];
    nm->grp_tab[kind] = nm->se_tab[kind];
    return 1;
}

static int se_name_table(capc_scopes_enc *w, capf_buf *t,
                         const capc_scopes_src *th, size_t nn)
{
    /* pass 2: the spread of each context's deltas around its mean */
    SE_WALK(w, th, {
        (void)tok;
        if (e > 0 && d <= SR_MEAN_MAX) {
            uint64_t m = nm->sr_m[kind];
            nm->se_dev[kind] += d > m ? d - m : m - d;
        }
    });
    /* each context's shift and table (se_shift) and prediction */
    capf_buf_varint(t, nn);
    uint32_t prev = 0;
    for (size_t i = 0; i < nn; i++) {
        capc_sc_name *nm = name_peek(w, w->se_names[i]);
        capf_buf_varint(t, w->se_names[i] - prev);
        prev = w->se_names[i];
        if (w->grp && nm->grp_mark == w->grp) { /* as earlier in the group */
            for (int k = 0; k < 2; k++) {
                se_grp_update(nm, k);
                nm->se_k[k] = nm->grp_k[k];
                nm->se_tab[k] = nm->grp_tab[k];
                nm->sr_m[k] = nm->grp_pred[k];
                capf_buf_varint(t, nm->sr_m[k]);
                capf_buf_varint(t, (uint64_t)nm->se_k[k] * 16 + nm->se_tab[k]);
            }
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (w->grp && nm->grp_mark && se_grp_again(nm, k, t))
                continue; /* from its deltas in earlier groups too */
            double sd = nm->sr_n[k]
                            ? 1.2533 * (double)nm->se_dev[k] /
                                  (double)nm->sr_n[k]
                            : 0;
            se_shift(sd, &nm->se_k[k], &nm->se_tab[k]);
            nm->sr_m[k] = se_pred(nm->sr_m[k], nm->sr_n[k], nm->se_k[k]);
            capf_buf_varint(t, nm->sr_m[k]);
            capf_buf_varint(t, (uint64_t)nm->se_k[k] * 16 + nm->se_tab[k]);
            nm->grp_pred[k] = nm->sr_m[k];
            nm->grp_k[k] = nm->se_k[k];
            nm->grp_tab[k] = nm->se_tab[k];
            nm->grp_sum[k] = nm->grp_n[k] = nm->grp_dev[k] = 0;
            se_grp_update(nm, k); /* the group's sums from this section */
        }
        nm->grp_mark = w->grp;
    }
    return 0;
}

/* SCOPES_E pass 3: the coding steps (w->se_ops, *nops_out, *nres_out of
 * them residuals) counted by table in cnt (zeroed by the caller), the raw
 * bits into w->se_out[2]. -1 when out of memory. */
static int se_steps(capc_scopes_enc *w, const capc_scopes_src *th, size_t nn,
                    uint32_t (*cnt)[CAPF_SE_RES_SYMS], size_t *nops_out,
                    size_t *nres_out)
{
    /* pass 3: the coding steps in event order: each symbol (its table <<
     * 8 | the symbol) into w->se_ops and counted in cnt as it comes, its
     * raw bits straight into the raw stream (se_out[2]) */
    size_t nlists = 2 * (nn + 1);
    capf_se_list *lists =
        room(w->se_lists, &w->se_lists_cap, nlists, sizeof *lists);
    if (!lists)
        return -1;
    w->se_lists = lists;
    memset(lists, 0, nlists * sizeof *lists);
    if (w->grp && th->g && th->g->carry.grp == w->grp &&
        capc_se_carry_load(&th->g->carry, w->se_names, sizeof *w->se_names,
                           (uint32_t)nn, lists, sizeof *lists) != 0)
        return -1; /* 4.0: the lists the thread's previous section left */
    if (th->n_events > (SIZE_MAX / sizeof *w->se_ops) / 2)
        return -1;
    size_t ops_cap = 2 * (size_t)th->n_events; /* a token and a residual */
    uint16_t *const ops = room(w->se_ops, &w->se_ops_cap, ops_cap, sizeof *ops);
    if (!ops)
        return -1;
    w->se_ops = ops;
    size_t nops = 0, nres = 0;
    se_bits raw = {&w->se_out[2], 0, 0, 0};
    unsigned width = capf_bitlen(nn);
    uint32_t dstack[CAP_MAX_DEPTH];
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        uint32_t depth = (uint32_t)capf_cur_varint(&o);
        for (uint32_t i = 0; i < depth && i < CAP_MAX_DEPTH; i++) {
            const capc_sc_name *nm =
                name_peek(w, (uint32_t)capf_cur_varint(&o));
            dstack[i] = nm ? nm->se_dense : 0;
            (void)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
        }
    }
    uint32_t dd = 0; /* depth, as dstack sees it */
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        dd = (uint32_t)capf_cur_varint(&o);
    }
    size_t cur = 1; /* the list after an end of nothing: the start */
    SE_WALK(w, th, {
        if (se_bits_room(&raw) != 0)
            return -1;
        uint32_t v = tok ? nm->se_dense : 0;
        capf_se_list *l = &w->se_lists[cur];
        unsigned s = CAPF_SE_LIST;
        for (unsigned i = 0; i < l->len; i++)
            if (l->v[i] == v) {
                s = i;
                break;
            }
        uint32_t ttab = (uint32_t)(cur & 1) * 15u + l->tb;
        ops[nops++] = (uint16_t)(ttab << 8 | s);
        cnt[ttab][s]++;
        if (s == CAPF_SE_LIST)
            se_raw(&raw, width, v);
        capf_se_list_use(l, s, v);
        uint32_t dn;
        if (tok) {
            dn = dstack[dd++] = v;
            cur = 2 * (size_t)dn;
        } else {
            dn = dstack[--dd];
            cur = 2 * (size_t)dn + 1;
        }
        if (e > 0) {
            uint64_t r = d - nm->sr_m[kind];
            unsigned k = nm->se_k[kind];
            uint32_t tab = CAPF_SE_TOK_TABLES + nm->se_tab[kind];
            uint64_t zq = capf_zigzag((int64_t)r >> k);
            if (zq < CAPF_SE_RES_ESC) {
                se_raw(&raw, k, r);
            } else {
                uint64_t z = capf_zigzag((int64_t)r);
                unsigned bl = capf_bitlen(z);
                zq = CAPF_SE_RES_ESC;
                se_raw(&raw, 7, bl);
                se_raw(&raw, bl, z);
            }
            ops[nops++] = (uint16_t)(tab << 8 | (uint32_t)zq);
            cnt[tab][zq]++;
            nres++;
        }
    });
    if (raw.an > 0)
        raw.buf->data[raw.len++] = (uint8_t)raw.acc;
    raw.buf->len = raw.len;
    *nops_out = nops;
    *nres_out = nres;
    return 0;
}

/* Symbols coded in a section before a group keeps its tables (4.0). */
#define SE_GRP_MIN_SYMBOLS 4096u

/* Can the kept tables g code the symbols counted in cnt (each of them a
 * frequency above 0)? */
static int se_grp_fits(const capc_se_grp *g, uint32_t (*cnt)[CAPF_SE_RES_SYMS])
{
    for (unsigned tb = 0; tb < SE_TABLES; tb++)
        for (unsigned i = 0; i < CAPF_SE_RES_SYMS; i++)
            if (cnt[tb][i] && !g->fr[tb][i])
                return 0;
    return 1;
}

/* Tables to keep for a group: every symbol of every table counted at
 * least once, so that the group's later sections can code any symbol. */
static void se_smooth(uint32_t (*cnt)[CAPF_SE_RES_SYMS])
{
    for (unsigned tb = 0; tb < SE_TABLES; tb++) {
        unsigned n = tb < CAPF_SE_TOK_TABLES ? CAPF_SE_TOK_SYMS
                                             : CAPF_SE_RES_SYMS;
        for (unsigned i = 0; i < n; i++)
            if (!cnt[tb][i])
                cnt[tb][i] = 1;
    }
}

/* Symbols a thread's history of tables keeps (4.0), halved above it. */
#define SE_GRP_HIST_SYMBOLS (1u << 20)

/* A section's nops symbols, counted in cnt, added to g's history. */
static void se_grp_count(capc_se_grp *g, uint32_t (*cnt)[CAPF_SE_RES_SYMS],
                         size_t nops)
{
    g->acc_n += nops;
    int half = g->acc_n > SE_GRP_HIST_SYMBOLS;
    if (half)
        g->acc_n /= 2;
    for (unsigned tb = 0; tb < SE_TABLES; tb++)
        for (unsigned i = 0; i < CAPF_SE_RES_SYMS; i++) {
            g->acc[tb][i] += cnt[tb][i];
            if (half)
                g->acc[tb][i] /= 2;
        }
}

/* The tables: cnt scaled to frequencies (fr) and their starts (cum),
 * into t; with `kept`, fr as it is (a group's kept tables) instead. */
static void se_tables(capf_buf *t, uint32_t (*cnt)[CAPF_SE_RES_SYMS],
                      uint32_t (*fr)[CAPF_SE_RES_SYMS],
                      uint32_t (*cum)[CAPF_SE_RES_SYMS], int kept)
{
    static const unsigned nsym[2] = {CAPF_SE_TOK_SYMS, CAPF_SE_RES_SYMS};
    capf_buf_varint(t, SE_RES_TABLES);
    for (unsigned j = 0; j < SE_TABLES; j++) {
        /* residual tables first in the body, token tables after */
        unsigned tb = j < SE_RES_TABLES ? CAPF_SE_TOK_TABLES + j
                                        : j - SE_RES_TABLES;
        unsigned n = nsym[tb >= CAPF_SE_TOK_TABLES];
        if (!kept)
            se_norm(cnt[tb], n, fr[tb],
                    tb >= CAPF_SE_TOK_TABLES ? 0 : CAPF_SE_LIST);
        uint32_t c = 0;
        for (unsigned i = 0; i < n; i++) {
            cum[tb][i] = c;
            c += fr[tb][i];
            capf_buf_varint(t, fr[tb][i]);
        }
    }
}

/* The nops steps of w->se_ops (nres of them residuals) rANS-coded with
 * the tables fr and cum, then the three streams, into t. -1 when out of
 * memory. */
static int se_rans(capc_scopes_enc *w, capf_buf *t, size_t nops, size_t nres,
                   uint32_t (*fr)[CAPF_SE_RES_SYMS],
                   uint32_t (*cum)[CAPF_SE_RES_SYMS])
{
    const uint16_t *const ops = w->se_ops;
    /* the symbols, last to first: tokens in one rANS stream, residuals
     * in another, whose two states take turns (residual j: state j % 2) */
    uint32_t xs[3] = {CAPF_SE_L, CAPF_SE_L, CAPF_SE_L};
    w->se_out[0].len = w->se_out[1].len = 0;
    for (size_t i = nops; i-- > 0;) {
        uint32_t op = ops[i];
        int res = (op >> 8) >= CAPF_SE_TOK_TABLES;
        capf_buf *o = &w->se_out[res];
        int st = res ? 1 + (int)(--nres & 1) : 0;
        uint32_t x = xs[st];
        uint32_t f = fr[op >> 8][op & 0xff], c = cum[op >> 8][op & 0xff];
        if (x >= ((uint64_t)(CAPF_SE_L >> CAPF_SE_PROB_BITS) << 16) * f) {
            /* a word out: high byte first, so that it reads back low
             * byte first once the buffer is reversed */
            if (se_out_byte(o, (uint8_t)(x >> 8)) != 0 ||
                se_out_byte(o, (uint8_t)x) != 0)
                return -1;
            x >>= 16;
        }
        xs[st] = ((x / f) << CAPF_SE_PROB_BITS) + (x % f) + c;
    }
    for (int res = 0; res < 2; res++) {
        capf_buf *o = &w->se_out[res];
        /* the final states, the decoder's first one last */
        for (int st = res ? 2 : 0; st >= res; st--)
            for (int i = 3; i >= 0; i--)
                if (se_out_byte(o, (uint8_t)(xs[st] >> (8 * i))) != 0)
                    return -1;
        /* reversed: the states (lowest byte first), then the words in
         * the order the decoder takes them */
        for (size_t i = 0, j = o->len; i + 1 < j; i++, j--) {
            uint8_t b = o->data[i];
            o->data[i] = o->data[j - 1];
            o->data[j - 1] = b;
        }
    }
    capf_buf_varint(t, w->se_out[0].len);
    capf_buf_varint(t, w->se_out[1].len);
    for (int st = 0; st < 3; st++)
        capf_buf_bytes(t, w->se_out[st].data, w->se_out[st].len);
    return 0;
}

/* The rest of th's SCOPES_E body after n_events: 0, or -1 when out of
 * memory; or 1, nothing written, where the section repeats itself
 * (scopes_repeat's test, made on the same events in pass 1) and is
 * better written plain. */
int capc_scopes_e_put(capc_scopes_enc *w, capf_buf *t,
                      const capc_scopes_src *th)
{
    uint64_t gen = sr_pass(w);
    if (!gen)
        return -1;
    size_t nn = 0, nops = 0, nres = 0;
    int rc = se_pass_names(w, th, gen, &nn);
    if (rc != 0)
        return rc;
    if (se_name_table(w, t, th, nn) != 0)
        return -1;
    uint32_t cnt[SE_TABLES][CAPF_SE_RES_SYMS];
    memset(cnt, 0, sizeof cnt);
    if (se_steps(w, th, nn, cnt, &nops, &nres) != 0)
        return -1;
    if (w->grp && th->g &&
        capc_se_carry_save(&th->g->carry, w->grp, w->se_names,
                           sizeof *w->se_names, (uint32_t)nn, w->se_lists,
                           sizeof *w->se_lists) != 0)
        return -1; /* the reader carries them: the writer must too */
    uint32_t fr[SE_TABLES][CAPF_SE_RES_SYMS], cum[SE_TABLES][CAPF_SE_RES_SYMS];
    capc_se_grp *g = w->grp ? th->g : NULL;
    int kept = g && g->grp == w->grp && se_grp_fits(g, cnt);
    /* a group's first tables: from what the thread coded before too */
    int hist = g && !kept && g->grp != w->grp &&
               g->acc_n + nops >= SE_GRP_MIN_SYMBOLS;
    int keep = g && !kept && (hist || nops >= SE_GRP_MIN_SYMBOLS);
    uint32_t tc[SE_TABLES][CAPF_SE_RES_SYMS];
    memcpy(tc, cnt, sizeof tc);
    if (hist)
        for (unsigned tb = 0; tb < SE_TABLES; tb++)
            for (unsigned i = 0; i < CAPF_SE_RES_SYMS; i++)
                tc[tb][i] += g->acc[tb][i];
    if (kept)
        memcpy(fr, g->fr, sizeof fr);
    if (keep)
        se_smooth(tc);
    se_tables(t, tc, fr, cum, kept);
    if (keep) {
        memcpy(g->fr, fr, sizeof fr);
        g->grp = w->grp;
    }
    if (g)
        se_grp_count(g, cnt, nops);
    return se_rans(w, t, nops, nres, fr, cum);
}

/* ---- decoder ----------------------------------------------------------- */

void capc_se_dec_free(capc_se_dec *d)
{
    free(d->nm);
    free(d->ctx);
    free(d->rt);
    memset(d, 0, sizeof *d);
}

/* A SCOPES_E table of n frequencies (format-spec "SCOPES_E (0x0E)"):
 * each at most 4096, adding up to 4096. -1 when not. */
static int se_table(capf_cur *b, unsigned n, uint16_t *f, uint16_t *c)
{
    uint32_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t v = capf_cur_varint_max(b, CAPF_SE_PROB);
        c[i] = (uint16_t)sum;
        f[i] = (uint16_t)v;
        sum += (uint32_t)v;
    }
    return b->bad || sum != CAPF_SE_PROB ? -1 : 0;
}

static int cmp_se_id(const void *k, const void *e)
{
    uint32_t a = *(const uint32_t *)k;
    uint32_t b = ((const capc_se_name *)e)->id;
    return a < b ? -1 : a > b;
}

/* The section's 2 x (nn + 1) contexts in d->ctx: their lists empty or
 * (from not NULL) carried, each context's prediction, shift and table
 * from the name list. */
static cap_result se_contexts(capc_se_dec *d, uint32_t nn,
                              const capc_se_carry *from)
{
    size_t nl = 2 * ((size_t)nn + 1);
    if (nl > d->ctx_cap) { /* on cache lines: each context on one */
        free(d->ctx);
        d->ctx_cap = 0;
        d->ctx = aligned_alloc(_Alignof(capc_se_ctx), nl * sizeof(capc_se_ctx));
        if (!d->ctx)
            return CAP_E_NOMEM;
        d->ctx_cap = nl;
    }
    memset(d->ctx, 0, nl * sizeof *d->ctx); /* empty lists, f0 0 */
    if (from) { /* 4.0: the lists the thread's previous section left */
        if (capc_se_carry_load(from, nn ? &d->nm[1].id : NULL, sizeof *d->nm,
                               nn, &d->ctx[0].l,
                               sizeof *d->ctx) != 0)
            return CAP_E_NOMEM;
        for (size_t j = 1; j < nl; j++) {
            capc_se_ctx *c = &d->ctx[j];
            unsigned a = (unsigned)(j & 1) * 15u;
            c->f0 = c->l.len ? d->tf[a + c->l.tb][0] : 0;
            c->f0z = d->tf[a + c->l.len * 3u][0];
        }
    }
    for (size_t i = 1; i <= nn; i++)
        for (int k = 0; k < 2; k++) {
            capc_se_ctx *c = &d->ctx[2 * i + (size_t)k];
            const capc_se_name *e = &d->nm[i];
            c->pred = e->pred[k];
            c->k = e->k[k];
            c->kf = e->k[k] <= 32 ? e->k[k] : 255;
            c->rt = &d->rt[e->tab[k]];
        }
    return CAP_OK;
}

/* The rest of a SCOPES_E section's start, after n_events: the names, the
 * tables, the stream's first four bytes. */
cap_result capc_scopes_e_start(capc_se_dec *d, capf_cur *b,
                               uint64_t n_events, uint32_t depth,
                               const uint32_t *stk_name, uint32_t *stk_dense,
                               uint64_t *stk_epred, capc_name_use_fn use,
                               void *user, const capc_se_carry *from)
{
    uint64_t nn = capf_cur_varint_max(b, (uint64_t)(b->end - b->p) / 5);
    if (b->bad)
        return CAP_E_CORRUPT;
    if (nn + 1 > d->nm_cap) {
        capc_se_name *p = realloc(d->nm, (nn + 1) * sizeof *p);
        if (!p)
            return CAP_E_NOMEM;
        d->nm = p;
        d->nm_cap = nn + 1;
    }
    uint64_t id = 0;
    for (uint64_t i = 1; i <= nn; i++) {
        uint64_t dk = capf_cur_varint(b);
        if (b->bad || (i > 1 && dk == 0) || dk > CAP_MAX_NAME_ID - id)
            return CAP_E_CORRUPT;
        id += dk;
        if (id == 0)
            return CAP_E_CORRUPT;
        capc_se_name *e = &d->nm[i];
        e->id = (uint32_t)id;
        for (int k = 0; k < 2; k++) {
            e->pred[k] = capf_cur_varint(b);
            uint64_t kt = capf_cur_varint_max(b, 63 * 16 + 15);
            e->k[k] = (uint8_t)(kt >> 4);
            e->tab[k] = (uint8_t)(kt & 15);
        }
        if (b->bad)
            return CAP_E_CORRUPT;
        if (use(user, (uint32_t)id) != 0)
            return CAP_E_NOMEM;
    }
    d->nn = (uint32_t)nn;
    d->width = capf_bitlen(nn);
    uint64_t nrt = capf_cur_varint_max(b, CAPF_SE_RES_TABLES_MAX);
    if (b->bad || nrt == 0)
        return CAP_E_CORRUPT;
    d->nrt = (uint32_t)nrt;
    for (uint64_t i = 1; i <= nn; i++)
        if (d->nm[i].tab[0] >= nrt || d->nm[i].tab[1] >= nrt)
            return CAP_E_CORRUPT;
    if (!d->rt &&
        !(d->rt = malloc(CAPF_SE_RES_TABLES_MAX * sizeof *d->rt)))
        return CAP_E_NOMEM;
    for (uint32_t t = 0; t < nrt; t++) {
        uint16_t f[CAPF_SE_RES_SYMS], c[CAPF_SE_RES_SYMS];
        if (se_table(b, CAPF_SE_RES_SYMS, f, c) != 0)
            return CAP_E_CORRUPT;
        capc_se_rtab *rt = &d->rt[t];
        for (unsigned s = 0; s < CAPF_SE_RES_SYMS; s++) {
            memset(rt->sym + c[s], (int)s, f[s]);
            rt->si[s].f = f[s];
            rt->si[s].c = c[s];
            rt->si[s].q = (int32_t)capf_unzigzag(s);
        }
    }
    for (unsigned t = 0; t < CAPF_SE_TOK_TABLES; t++)
        if (se_table(b, CAPF_SE_TOK_SYMS, d->tf[t], d->tc[t]) != 0)
            return CAP_E_CORRUPT;
    /* the open stack's names in the list */
    for (uint32_t i = 0; i < depth; i++) {
        capc_se_name *e =
            nn ? bsearch(&stk_name[i], d->nm + 1, nn, sizeof *e,
                         cmp_se_id)
               : NULL;
        if (!e)
            return CAP_E_CORRUPT;
        stk_dense[i] = (uint32_t)(e - d->nm);
        stk_epred[i] = e->pred[1];
    }
    cap_result res = se_contexts(d, (uint32_t)nn, from);
    if (res != CAP_OK)
        return res;
    d->cur = 1;
    /* the token and residual streams, then the raw bits to the end */
    uint64_t len[2];
    len[0] = capf_cur_varint(b);
    len[1] = capf_cur_varint(b);
    if (b->bad || len[0] > (uint64_t)(b->end - b->p) ||
        len[1] > (uint64_t)(b->end - b->p) - len[0])
        return CAP_E_CORRUPT;
    const uint8_t *q = b->p;
    d->x[0] = d->x[1] = d->x[2] = 0;
    for (int st = 0; st < 2; st++) {
        d->p[st] = q;
        d->end[st] = q + len[st];
        if (n_events > 0) { /* the states: 4 bytes each, lowest first */
            if (len[st] < 4u + 4u * (unsigned)st)
                return CAP_E_CORRUPT;
            d->x[st] = capf_get_u32(q);
            if (st)
                d->x[2] = capf_get_u32(q + 4);
            d->p[st] = q + 4 + 4 * st;
        }
        q += len[st];
    }
    d->pend = 0;
    d->p[2] = q;
    d->end[2] = b->end;
    d->bb = 0;
    d->bn = 0;
    return CAP_OK;
}

int capc_se_dec_carry(const capc_se_dec *d, capc_se_carry *c, uint64_t grp)
{
    return capc_se_carry_save(c, grp, d->nn ? &d->nm[1].id : NULL,
                              sizeof *d->nm, d->nn, &d->ctx[0].l,
                              sizeof *d->ctx);
}
