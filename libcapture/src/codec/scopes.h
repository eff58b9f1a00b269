/*
 * codec/scopes.h - the codings of a thread's scope events in a block:
 * SCOPES (0x06, plain), SCOPES_R (0x0D, predicted deltas) and SCOPES_E
 * (0x0E, range-coded), their encoders beside their decoders
 * (format-spec/capture-format.md has the bytes; format/format.h the
 * framing, varints and the constants these codings share).
 *
 * Internal to libcapture: the writer encodes a section's body with these,
 * the reader starts a section with them and decodes its events in its own
 * loop, with the per-event steps inlined from here.
 */
#ifndef CAP_CODEC_SCOPES_H
#define CAP_CODEC_SCOPES_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"
#include "common/idtab.h"
#include "format/format.h"

/* ---- encoders (writer side) ------------------------------------------- */

/* One thread's events in a block as the writer gathered them: the open
 * stack at the block's start (v depth, depth x (v name, v base - begin,
 * v children)), a token per event (a name: a begin; 0: an end) and each
 * event's tick delta (the first event's from base), all varints. The
 * buffers are borrowed for the call. */
/* 4.0: one thread's SCOPES_E tables (token tables, then residual tables,
 * each of CAPF_SE_RES_SYMS frequencies), kept for the rest of a group of
 * blocks once a section of it coded enough symbols to trust them: its
 * later sections give the same tables, byte for byte, which the group's
 * zstd frame stores for next to nothing. */
#define CAPC_SE_GRP_TABLES (CAPF_SE_TOK_TABLES + 8)

/* 4.0: a thread's SCOPES_E token lists as its latest section in a group
 * of blocks left them, which its next section of the group starts from
 * (format-spec "SCOPES_E (0x0E)", carried lists): the group they belong
 * to (the writer's capc_scopes_enc.grp, the reader's count of groups; 0
 * none), that section's name ids by place (ids[0] unused) and its
 * 2 x (nn + 1) lists. Zero it to start, capc_se_carry_free to end. */
typedef struct capc_se_carry {
    uint64_t grp;
    uint32_t nn;
    uint32_t *ids;
    capf_se_list *l;
    size_t cap; /* places ids and l have room for (nn + 1 at least) */
} capc_se_carry;

/* Frees what c holds and zeroes it; c itself is the caller's. */
void capc_se_carry_free(capc_se_carry *c);

/* Keeps, in c, a section's lists for group grp: its nn names' ids (the
 * id of place i at ids + (i - 1) x ids_stride bytes, increasing) and its
 * 2 x (nn + 1) lists (list j at l + j x l_stride bytes). 0, or -1 when
 * out of memory (c then holds none: grp 0). */
int capc_se_carry_save(capc_se_carry *c, uint64_t grp, const uint32_t *ids,
                       size_t ids_stride, uint32_t nn, const capf_se_list *l,
                       size_t l_stride);

/* A section's lists as carried from c (laid out as capc_se_carry_save's
 * arguments; the lists, zeroed by the caller, get those of the same
 * names in c, values moved to this section's places and entries of
 * names it does not list removed). 0, or -1 when out of memory. */
int capc_se_carry_load(const capc_se_carry *c, const uint32_t *ids,
                       size_t ids_stride, uint32_t nn, capf_se_list *l,
                       size_t l_stride);

typedef struct capc_se_grp {
    uint64_t grp; /* the group (capc_scopes_enc.grp) fr is kept for; 0 none */
    uint32_t fr[CAPC_SE_GRP_TABLES][CAPF_SE_RES_SYMS];
    capc_se_carry carry; /* the thread's token lists for the group */
    /* the symbols its sections coded (all groups; halved as they pass
       SE_GRP_HIST_SYMBOLS), by table: a group's tables start from them */
    uint32_t acc[CAPC_SE_GRP_TABLES][CAPF_SE_RES_SYMS];
    uint64_t acc_n;
} capc_se_grp;

typedef struct capc_scopes_src {
    capf_buf open, tokens, deltas;
    uint64_t n_events;
    capc_se_grp *g; /* 4.0: the thread's kept tables, or NULL */
} capc_scopes_src;

/* Per name id: the statistics of the section being encoded, for each
 * kind (0: begin, 1: end). */
typedef struct capc_sc_name {
    uint64_t sr_m[2];    /* SCOPES_R: begin, end: sum, then mean ... */
    uint64_t sr_n[2];    /* ... of this many deltas ... */
    uint64_t sr_gen[2];  /* ... in the section of this number */
    double sr_sq[2];     /* SCOPES_R: the sum of those deltas' squares */
    uint64_t se_gen;     /* SCOPES_E: listed in the section of this number */
    uint64_t se_dev[2];  /* ... the sum of |delta - mean| (begin, end) */
    uint64_t se_last[2]; /* ... its latest delta (scopes_repeat's test) */
    uint32_t se_dense;   /* ... its index in the section's list, from 1 */
    uint8_t se_k[2], se_tab[2]; /* ... its shift and residual table */
    /* 4.0: the prediction, shift and table the name took in the first
       section of the group grp_mark that listed it, kept for the group's
       later sections (capc_scopes_enc.grp) */
    uint64_t grp_mark;
    uint64_t grp_pred[2];
    uint8_t grp_k[2], grp_tab[2];
    /* ... and its deltas in the group's sections so far: their sum,
       count and sum of distances to each section's mean, by which the
       kept prediction, shift and table move once they are off by more
       than the residuals' low bits */
    uint64_t grp_sum[2], grp_n[2], grp_dev[2];
} capc_sc_name;

/* The encoders' state, kept from one section to the next so that its
 * buffers are made once: zero it to start, capc_scopes_enc_free to end. */
typedef struct capc_scopes_enc {
    /* capc_sc_name by id (common/idtab.h: memory follows the ids seen,
       not the largest; ids go up to CAP_MAX_NAME_ID); esz set on first
       use */
    cap__idtab names;
    uint64_t sr_gen;  /* sections encoded so far */
    capf_buf sr_lo[CAPF_SR_CLASSES], sr_hi[CAPF_SR_CLASSES];
    uint32_t *sr_stack; /* names open while a section is encoded */
    uint64_t *sr_keys;  /* its contexts: name << 1 | end */
    size_t sr_keys_cap;
    /* SCOPES_E: the section's names, its coding steps, its token lists
     * and the rANS bytes (written backwards) */
    uint32_t *se_names;
    size_t se_names_cap;
    uint16_t *se_ops; /* SCOPES_E symbols: table << 8 | symbol */
    size_t se_ops_cap;
    capf_se_list *se_lists;
    size_t se_lists_cap;
    capf_buf se_out[3]; /* tokens, residuals (rANS), raw bits */
    /* 4.0: the group of blocks the sections are written in (0: none).
       Within one, SCOPES_E gives a name the prediction, shift and table
       it had in the group's first section that listed it, so that the
       name lists of a group's blocks repeat byte for byte and its zstd
       frame stores the repeats for next to nothing */
    uint64_t grp;
} capc_scopes_enc;

/* Frees what e holds and zeroes it; e itself is the caller's. */
void capc_scopes_enc_free(capc_scopes_enc *e);

/* Does the section repeat itself: among its first events, do most deltas
 * equal the previous delta of the same (name, begin|end)? Then it is
 * better written plain (SCOPES) than as SCOPES_R. 1 also when out of
 * memory or when s holds a stack the writer cannot have made. */
int capc_scopes_repeat(capc_scopes_enc *e, const capc_scopes_src *s);

/* The rest of a SCOPES_R body after v tokens_len (format-spec "SCOPES_R
 * (0x0D)") appended to t: 0, or -1 when out of memory or when s holds a
 * stack the writer cannot have made (t then incomplete). */
int capc_scopes_r_put(capc_scopes_enc *e, capf_buf *t,
                      const capc_scopes_src *s);

/* The rest of a SCOPES_E body after n_events (format-spec "SCOPES_E
 * (0x0E)") appended to t: 0; -1 as capc_scopes_r_put; or 1, nothing
 * written, where the section repeats itself (capc_scopes_repeat's test,
 * made on the same events) and is better written plain. */
int capc_scopes_e_put(capc_scopes_enc *e, capf_buf *t,
                      const capc_scopes_src *s);

/* ---- decoders (reader side) ------------------------------------------- */

/* The reader's name table, told of a name a section uses: 0, or -1 when
 * out of memory. */
typedef int (*capc_name_use_fn)(void *user, uint32_t id);

/* SCOPES_R: a context's prediction and class (kind 0: begin, 1: end)
 * for the reader's name table: 0, or -1 when out of memory. */
typedef int (*capc_sr_set_fn)(void *user, uint32_t id, unsigned kind,
                              uint64_t pred, unsigned cls);

/* SCOPES_R: one class's two streams (the low bytes, the high varints). */
typedef struct capc_sr_class {
    const uint8_t *lo, *lo_end, *hi, *hi_end;
} capc_sr_class;

/* SCOPES_R: the section's streams, by class. */
typedef struct capc_sr_dec {
    capc_sr_class cls[CAPF_SR_CLASSES];
} capc_sr_dec;

/* SCOPES_R's prediction table, at b (after v tokens_len): each context
 * given to set, keys increasing. CAP_OK; CAP_E_CORRUPT when malformed;
 * CAP_E_NOMEM when set failed. */
cap_result capc_scopes_r_table(capf_cur *b, capc_sr_set_fn set, void *user);

/* SCOPES_R's stream table, at b (after the prediction table): d's streams
 * set into the body past the tlen bytes of tokens, which b then walks
 * (b->end moved to their end). CAP_OK or CAP_E_CORRUPT. */
cap_result capc_scopes_r_streams(capc_sr_dec *d, capf_cur *b, uint64_t tlen);

/* SCOPES_R: the delta of an event whose context predicts pred, from the
 * residual's bytes in class kc's streams, into *d: 0, or -1 when the
 * streams run out or hold a malformed varint. */
static inline __attribute__((always_inline)) int
capc_sr_residual(capc_sr_class *kc, uint64_t pred, uint64_t *d)
{
    const uint8_t *lp = kc->lo, *hp = kc->hi;
    uint64_t h;
    if (lp >= kc->lo_end || hp >= kc->hi_end)
        return -1;
    if (*hp < 0x80) { /* the usual: one byte */
        h = *hp++;
    } else {
        capf_cur hc = {hp, kc->hi_end, 0};
        h = capf_cur_varint(&hc);
        if (hc.bad || h >> 56)
            return -1;
        hp = hc.p;
    }
    kc->lo = lp + 1;
    kc->hi = hp;
    *d = pred + (uint64_t)capf_unzigzag(h << 8 | *lp);
    return 0;
}

/* SCOPES_E: a residual table as the decoder uses it: the symbol of each
 * slot, and each symbol's frequency, start and zigzag-decoded value. */
typedef struct capc_se_rtab {
    uint8_t sym[CAPF_SE_PROB];
    struct {
        uint16_t f, c;
        int32_t q;
    } si[CAPF_SE_RES_SYMS];
} capc_se_rtab;

/* SCOPES_E: one context, at 2 x place + kind (kind 1: an end; 1 alone:
 * the section's start): the token list of the event that follows it, with
 * the frequency of its rank 0 in the token table it picks now (f0; 0 while
 * the list is empty) and in the one it picks once rank 0 was given last
 * (f0z); then the coding of the context's own residuals: pred, k, kf (k,
 * or 255 above 32: read apart) and the table. One 64-byte line: the token
 * of the next event uses this one's list. */
typedef struct capc_se_ctx {
    _Alignas(64) capf_se_list l;
    uint16_t f0, f0z;
    uint8_t k, kf;
    uint64_t pred;
    const capc_se_rtab *rt;
} capc_se_ctx;
_Static_assert(sizeof(capc_se_ctx) == 64, "a context takes one cache line");

/* SCOPES_E: a name the section lists (index from 1), with its
 * contexts' shift, residual table and prediction (begin, end). */
typedef struct capc_se_name {
    uint32_t id;
    uint8_t k[2], tab[2]; /* begin, end */
    uint64_t pred[2];
} capc_se_name;

/* SCOPES_E: a section's decoder: its names (from 1), token lists, tables
 * and the rANS streams' state. Zero it to start, capc_se_dec_free to
 * end; the reader's event loop keeps the state in locals and stores it
 * back. */
typedef struct capc_se_dec {
    capc_se_name *nm;
    size_t nm_cap;
    uint32_t nn, width, nrt, cur;
    capc_se_ctx *ctx; /* 2 x (n_names + 1) contexts */
    int pend;      /* an end decoded, waiting for room in the arena */
    size_t ctx_cap;
    uint16_t tf[CAPF_SE_TOK_TABLES][CAPF_SE_TOK_SYMS];
    uint16_t tc[CAPF_SE_TOK_TABLES][CAPF_SE_TOK_SYMS];
    capc_se_rtab *rt; /* CAPF_SE_RES_TABLES_MAX residual tables */
    uint32_t x[3];              /* rANS states: tokens, residuals
                                   (two, taking turns) */
    const uint8_t *p[3], *end[3]; /* ... and the raw bits */
    uint64_t bb;                /* raw bits read ahead, lowest first */
    unsigned bn;                /* ... how many */
} capc_se_dec;

/* Frees what d holds and zeroes it; d itself is the caller's. */
void capc_se_dec_free(capc_se_dec *d);

/* The rest of a SCOPES_E section's start, at b after n_events: the names
 * (each told to use), the tables, the streams' first bytes, the token
 * lists empty or (4.0, from not NULL) carried from the thread's previous
 * section in the group; the open
 * stack's depth names (stk_name) get their index in the section's list
 * (stk_dense) and their end's prediction (stk_epred). CAP_OK;
 * CAP_E_CORRUPT when malformed; CAP_E_NOMEM when out of memory or use
 * failed. */
cap_result capc_scopes_e_start(capc_se_dec *d, capf_cur *b,
                               uint64_t n_events, uint32_t depth,
                               const uint32_t *stk_name, uint32_t *stk_dense,
                               uint64_t *stk_epred, capc_name_use_fn use,
                               void *user, const capc_se_carry *from);

/* 4.0: d's lists as its section left them (a section decoded to its
 * end), kept in c for the thread's next section of group grp: 0, or -1
 * when out of memory. */
int capc_se_dec_carry(const capc_se_dec *d, capc_se_carry *c, uint64_t grp);

/* SCOPES_E: the raw bit stream (format-spec "SCOPES_E (0x0E)"), read
 * ahead into bb, lowest bit first. */
typedef struct capc_se_bits {
    uint64_t bb;
    unsigned bn; /* bits in bb */
    const uint8_t *p, *end;
} capc_se_bits;

/* At least 56 bits read ahead, or all that are left. */
static inline __attribute__((always_inline)) void
capc_se_bits_fill(capc_se_bits *b)
{
    if (b->end - b->p >= 8) {
        uint64_t w;
        memcpy(&w, b->p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        b->bb |= w << b->bn;
        b->p += (63 - b->bn) >> 3;
        b->bn |= 56;
    } else {
        while (b->bn <= 56 && b->p < b->end) {
            b->bb |= (uint64_t)*b->p++ << b->bn;
            b->bn += 8;
        }
    }
}

/* The next n bits (n <= 32), lowest first; *bad set when the stream has
 * fewer left. */
static inline __attribute__((always_inline)) uint64_t
capc_se_bits_get(capc_se_bits *b, unsigned n, int *bad)
{
    if (b->bn < n) {
        capc_se_bits_fill(b);
        if (b->bn < n) {
            *bad = 1;
            return 0;
        }
    }
    uint64_t v = b->bb & ((1ull << n) - 1);
    b->bb >>= n;
    b->bn -= n;
    return v;
}

/* n bits (n <= 64), lowest first */
static inline __attribute__((always_inline)) uint64_t
capc_se_bits_wide(capc_se_bits *b, unsigned n, int *bad)
{
    if (n <= 32)
        return capc_se_bits_get(b, n, bad);
    uint64_t lo = capc_se_bits_get(b, 32, bad);
    return lo | capc_se_bits_get(b, n - 32, bad) << 32;
}

/* A token that is not the usual (rank 0 of a list that has one): slot
 * (x mod 4096) decoded with list c's token table (kind a), the rank's value
 * into *v, the list and its f0 and f0z updated; the new state returned.
 * *bad set when the token is malformed or the bits run out. */
static inline __attribute__((always_inline)) uint32_t
capc_se_token_rare(const capc_se_dec *d, capc_se_ctx *c, unsigned a,
                   uint32_t x, capc_se_bits *bs, uint32_t *v, int *bad)
{
    capf_se_list *l = &c->l;
    uint32_t slot = x & (CAPF_SE_PROB - 1);
    const uint16_t *tf = d->tf[a * 15u + l->tb],
                   *tc = d->tc[a * 15u + l->tb];
    unsigned s = (slot >= tc[1]) + (slot >= tc[2]) + (slot >= tc[3]) +
                 (slot >= tc[4]); /* the last symbol starting at or before
                                     slot: zero-width ones share the next
                                     one's start */
    x = tf[s] * (x >> CAPF_SE_PROB_BITS) + slot - tc[s];
    if (s < CAPF_SE_LIST) {
        if (s >= l->len) {
            *bad = 1;
            return x;
        }
        *v = l->v[s];
    } else {
        *v = (uint32_t)capc_se_bits_get(bs, d->width, bad);
        int dup = *v > d->nn;
        for (unsigned i = 0; i < l->len; i++)
            dup |= l->v[i] == *v;
        if (dup || *bad) {
            *bad = 1;
            return x;
        }
    }
    capf_se_list_use(l, s, *v);
    c->f0 = d->tf[a * 15u + l->tb][0]; /* the list holds one at least */
    c->f0z = d->tf[a * 15u + l->len * 3u][0];
    return x;
}

/* A residual's value past the usual (a symbol below the escape, k at most
 * 32, the bits read ahead): symbol s of context c. *bad set when the bits
 * run out or an escape's length is above 64. */
static inline __attribute__((always_inline)) uint64_t
capc_se_res_rare(const capc_se_ctx *c, unsigned s, capc_se_bits *bs,
                 int *bad)
{
    if (s < CAPF_SE_RES_ESC)
        return (uint64_t)capf_unzigzag(s) << c->k |
               capc_se_bits_wide(bs, c->k, bad);
    unsigned bl = (unsigned)capc_se_bits_get(bs, 7, bad);
    if (bl > 64) {
        *bad = 1;
        return 0;
    }
    return (uint64_t)capf_unzigzag(capc_se_bits_wide(bs, bl, bad));
}

#endif
