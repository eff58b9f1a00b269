/*
 * codec/scopes_r.c - SCOPES_R (0x0D, format 2.0): tick deltas as
 * residuals of a per-(name, begin|end) prediction (format-spec "SCOPES_R
 * (0x0D)"; format/format.h sums it up).
 */
#include "codec/scopes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_limits.h"
#include "codec/scopes_walk.h"

/* Sections of at most this many events give every context class 0: the
 * class byte of each table entry costs more there than keeping residuals
 * of one scale together saves. */
#define SR_SMALL_EVENTS 4096u

/* A context's prediction: the mean of its n deltas (sq: the sum of their
 * squares), rounded to a multiple of 2^s when n is small, where a table
 * entry's low bits cost more than they save on so few residuals. s is
 * floor(log2(sd)) of the deltas' standard deviation sd, plus 1 for up to 8
 * deltas; a context of one delta has no spread and takes sd = mean / 8;
 * above 64 deltas the mean stays exact. Bounded by SR_MEAN_MAX. */
static uint64_t sr_pred(uint64_t mean, uint64_t n, double sq)
{
    if (n == 0 || n > 64)
        return mean;
    int s; /* floor(log2(sd)) by exponents: no sqrt or log per context */
    if (n == 1) {
        s = (int)capf_bitlen(mean) - 4; /* sd = mean / 8 */
    } else {
        double m = (double)mean, var = sq / (double)n - m * m;
        int e = 1;
        if (var > 1)
            (void)frexp(var, &e); /* var = f * 2^e, f in [0.5, 1) */
        s = (e - 1) / 2 + (n <= 8);
    }
    return s <= 0 ? mean : round_pow2(mean, (unsigned)s);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int capc_scopes_r_put(capc_scopes_enc *w, capf_buf *t,
                      const capc_scopes_src *th)
{
    uint64_t gen = sr_pass(w);
    if (!gen)
        return -1;
    size_t nkeys = 0;
    /* pass 1: each context's sum and count, its key listed once */
    SR_WALK(w, th, {
        if (nm->sr_gen[kind] != gen) {
            if (nkeys == w->sr_keys_cap) {
                size_t c = w->sr_keys_cap ? 2 * w->sr_keys_cap : 256;
                uint64_t *k = realloc(w->sr_keys, c * sizeof *k);
                if (!k)
                    return -1;
                w->sr_keys = k;
                w->sr_keys_cap = c;
            }
            w->sr_keys[nkeys++] = key;
            nm->sr_gen[kind] = gen;
            nm->sr_m[kind] = nm->sr_n[kind] = 0;
            nm->sr_sq[kind] = 0;
        }
        if (d <= SR_MEAN_MAX && nm->sr_n[kind] < SR_MEAN_COUNT) {
            nm->sr_m[kind] += d;
            nm->sr_n[kind]++;
            double dd = (double)(int64_t)d; /* d <= 2^40 */
            nm->sr_sq[kind] += dd * dd;
        }
    });
    int one_class = th->n_events <= SR_SMALL_EVENTS;
    if (nkeys > 1)
        qsort(w->sr_keys, nkeys, sizeof *w->sr_keys, cmp_u64);
    /* the table lists the contexts whose (pred, class) is not (0, 0), the
     * value of a context it leaves out */
    size_t listed = 0;
    for (size_t i = 0; i < nkeys; i++) {
        capc_sc_name *nm = name_peek(w, (uint32_t)(w->sr_keys[i] >> 1));
        int kind = (int)(w->sr_keys[i] & 1);
        uint64_t n = nm->sr_n[kind];
        uint64_t pred = sr_pred(n ? nm->sr_m[kind] / n : 0, n, nm->sr_sq[kind]);
        nm->sr_m[kind] = pred;
        listed += pred != 0;
    }
    capf_buf_varint(t, listed);
    uint64_t prev = 0;
    for (size_t i = 0; i < nkeys; i++) {
        capc_sc_name *nm = name_peek(w, (uint32_t)(w->sr_keys[i] >> 1));
        uint64_t pred = nm->sr_m[w->sr_keys[i] & 1];
        if (!pred)
            continue;
        capf_buf_varint(t, w->sr_keys[i] - prev);
        capf_buf_varint(t, one_class ? 0 : capf_sr_class(pred));
        capf_buf_varint(t, pred);
        prev = w->sr_keys[i];
    }
    /* pass 2: the residuals into their class's streams */
    for (int c = 0; c < CAPF_SR_CLASSES; c++)
        w->sr_lo[c].len = w->sr_hi[c].len = 0;
    unsigned top = 0; /* 1 + the highest class used */
    SR_WALK(w, th, {
        (void)key;
        uint64_t pred = nm->sr_m[kind];
        unsigned c = one_class ? 0 : capf_sr_class(pred);
        uint64_t z = capf_zigzag((int64_t)(d - pred));
        capf_buf_u8(&w->sr_lo[c], (uint8_t)z);
        capf_buf_varint(&w->sr_hi[c], z >> 8);
        if (c >= top)
            top = c + 1;
    });
    unsigned used = 0; /* the stream table: the classes with residuals */
    for (unsigned c = 0; c < top; c++)
        used += w->sr_lo[c].len > 0;
    capf_buf_varint(t, used);
    for (unsigned c = 0; c < top; c++) {
        if (!w->sr_lo[c].len)
            continue;
        capf_buf_varint(t, c);
        capf_buf_varint(t, w->sr_lo[c].len);
        capf_buf_varint(t, w->sr_hi[c].len);
    }
    capf_buf_bytes(t, th->tokens.data, th->tokens.len);
    /* every lo stream, then every hi stream: bytes of one kind together */
    for (unsigned c = 0; c < top; c++) {
        capf_buf_bytes(t, w->sr_lo[c].data, w->sr_lo[c].len);
        if (w->sr_lo[c].failed || w->sr_hi[c].failed)
            return -1;
    }
    for (unsigned c = 0; c < top; c++)
        capf_buf_bytes(t, w->sr_hi[c].data, w->sr_hi[c].len);
    return 0;
}

/* ---- decoder ----------------------------------------------------------- */

cap_result capc_scopes_r_table(capf_cur *b, capc_sr_set_fn set, void *user)
{
    uint64_t nctx = capf_cur_varint_max(b, (uint64_t)(b->end - b->p) / 3);
    uint64_t key = 0;
    for (uint64_t i = 0; i < nctx && !b->bad; i++) {
        uint64_t dk = capf_cur_varint(b);
        uint64_t cls = capf_cur_varint_max(b, CAPF_SR_CLASSES - 1);
        uint64_t pred = capf_cur_varint(b);
        if (b->bad || (i > 0 && dk == 0) ||
            dk > ((uint64_t)CAP_MAX_NAME_ID << 1 | 1) - key)
            return CAP_E_CORRUPT;
        key += dk;
        if (key >> 1 == 0)
            return CAP_E_CORRUPT;
        if (set(user, (uint32_t)(key >> 1), (unsigned)(key & 1), pred,
                (unsigned)cls) != 0)
            return CAP_E_NOMEM;
    }
    return CAP_OK;
}

cap_result capc_scopes_r_streams(capc_sr_dec *d, capf_cur *b, uint64_t tlen)
{
    /* the stream table (classes increasing); the streams follow the
     * tokens, in the table's order; a class not listed has none */
    uint64_t nst = capf_cur_varint_max(b, CAPF_SR_CLASSES);
    uint64_t st[CAPF_SR_CLASSES][3];
    for (uint64_t i = 0; i < nst; i++) {
        st[i][0] = capf_cur_varint_max(b, CAPF_SR_CLASSES - 1);
        st[i][1] = capf_cur_varint(b);
        st[i][2] = capf_cur_varint(b);
        if (i > 0 && st[i][0] <= st[i - 1][0])
            return CAP_E_CORRUPT;
    }
    if (b->bad || tlen > (uint64_t)(b->end - b->p))
        return CAP_E_CORRUPT;
    memset(d->cls, 0, sizeof d->cls);
    /* every lo stream in table order, then every hi stream */
    const uint8_t *p = b->p + tlen;
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0; i < nst; i++) {
            uint64_t len = st[i][1 + pass];
            if (len > (uint64_t)(b->end - p))
                return CAP_E_CORRUPT;
            capc_sr_class *k = &d->cls[st[i][0]];
            if (pass == 0) {
                k->lo = p;
                k->lo_end = p + len;
            } else {
                k->hi = p;
                k->hi_end = p + len;
            }
            p += len;
        }
    }
    b->end = b->p + tlen;
    return CAP_OK;
}
