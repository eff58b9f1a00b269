/*
 * scopes.c - the reader's scope-event decoding loops: runs of SCOPES,
 * SCOPES_R and SCOPES_E events decoded in one go (cap_reader_next_batch,
 * cap_reader_next_batch_into, cap_reader_next_scopes) and one at a time
 * for cap_reader_next.
 */
#include "capture/cap_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_int.h"

/* A varint from p, which has at least 10 bytes left; NULL if malformed. */
static inline const uint8_t *varint_10(const uint8_t *p, uint64_t *out)
{
    uint64_t v = *p++;
    if (v < 0x80) {
        *out = v;
        return p;
    }
    v &= 0x7f;
    for (int shift = 7; shift < 64; shift += 7) {
        uint8_t byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

/* The tick counts dn for which (double)dn * period is in [0, 2^52), so
 * cap__round_pos converts them: below 2^51 / period (the products' rounding is
 * far below the factor of 2 left); none (0) for a period that is not
 * between 2^-11 and 2^60. Made again when the period changed. */
static inline uint64_t fast_lim(cap_reader *r)
{
    if (r->lim_per != r->period) {
        double per = r->period;
        r->fast_lim = cap__ticks_lim(per);
        r->lim_per = per;
    }
    return r->fast_lim;
}

#define RD_ARENA (1u << 15) /* uint32 entries of ancestor stacks a batch
                              may copy, at most */

/* The scope that begins at tick, pushed (depth below CAP_MAX_DEPTH). */
static inline __attribute__((always_inline)) void
scope_push(cap_reader *r, uint32_t depth, uint32_t name, uint64_t tick,
           int unit, double per, uint64_t lim, uint64_t origin, const int rec)
{
    int64_t dn = (int64_t)(tick - origin);
    r->stk_name[depth] = name;
    r->stk_begin[depth] = tick;
    if (!rec) /* records keep ticks: stk_begin_ns made when needed */
        r->stk_begin_ns[depth] = unit ? dn : cap__ticks_ns_lim(dn, per, lim);
    r->stk_children[depth] = 0;
}

/* The innermost of depth + 1 open scopes, ended at tick, as a record (its
 * ancestors at stack in the caller's stacks); its duration added to its
 * parent's children. */
static inline __attribute__((always_inline)) void
scope_pop_rec(cap_reader *r, cap_scope_rec *o, uint32_t dpt, uint64_t tick,
              uint32_t stack, uint64_t origin)
{
    uint64_t begin = r->stk_begin[dpt];
#if RD_HAVE_STREAM
    if (r->nt_recs) {
        /* the record's five 8-byte words, past this core's cache: a whole
           line is written in turn, so none is read first (the fields as
           the struct lays them out, little-endian) */
        long long *q = (long long *)(void *)o;
        _mm_stream_si64(q, (long long)(begin - origin));
        _mm_stream_si64(q + 1, (long long)(tick - origin));
        _mm_stream_si64(q + 2, (long long)r->stk_children[dpt]);
        _mm_stream_si64(q + 3, (long long)((uint64_t)r->stk_name[dpt] |
                                           (uint64_t)dpt << 32));
        _mm_stream_si64(q + 4, (long long)(uint64_t)stack);
    } else
#endif
    {
        o->begin = (int64_t)(begin - origin);
        o->end = (int64_t)(tick - origin);
        o->children = r->stk_children[dpt];
        o->name = r->stk_name[dpt];
        o->depth = dpt;
        o->stack = stack;
        o->reserved = 0;
    }
    if (dpt)
        r->stk_children[dpt - 1] += tick - begin;
}

/* The innermost of depth + 1 open scopes, ended at tick, into *sc with
 * its ancestors' names in stack; its duration added to its parent's
 * children. */
static inline __attribute__((always_inline)) void
scope_pop(cap_reader *r, cap_ev_scope *sc, uint32_t tid, uint32_t dpt,
          uint64_t tick, const uint32_t *stack, int unit, double per,
          uint64_t lim, uint64_t origin)
{
    uint64_t begin = r->stk_begin[dpt];
    uint64_t children = r->stk_children[dpt];
    int64_t dn = (int64_t)(tick - origin);
    sc->tid = tid;
    sc->name = r->stk_name[dpt];
    sc->depth = dpt;
    sc->begin_ns = r->stk_begin_ns[dpt];
    sc->end_ns = unit ? dn : cap__ticks_ns_lim(dn, per, lim);
    sc->children_ns = unit ? (int64_t)children
                           : cap__ticks_dur_ns_lim(children, per, lim);
    sc->stack = stack;
    if (dpt)
        r->stk_children[dpt - 1] += tick - begin;
}

/* The innermost open scope, ended at tick, out as the k-th record (rec)
 * or event of the run: scope_pop_rec or scope_pop. */
static inline __attribute__((always_inline)) void
scope_out(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t k,
          const int rec, uint32_t tid, uint32_t dpt, uint64_t tick,
          const uint32_t *stack, const uint32_t *arena, int unit, double per,
          uint64_t lim, uint64_t origin)
{
    if (rec) {
        scope_pop_rec(r, &rv[k], dpt, tick, (uint32_t)(stack - arena),
                      origin);
    } else {
        ev[k].kind = CAP_EV_SCOPE;
        scope_pop(r, &ev[k].u.scope, tid, dpt, tick, stack, unit, per, lim,
                  origin);
    }
}

/* The end of a run that filled k scopes and stopped with res: an error
 * after some scopes waits in r->pending; a section's end is found again
 * by the next call. */
static inline cap_result run_done(cap_reader *r, size_t k, cap_result res,
                                  size_t *got)
{
    r->st.scopes += k;
    if (k && res != CAP_OK && res != CAP_DONE) {
        r->pending = res;
        res = CAP_OK;
    }
    if (k && res == CAP_DONE)
        res = CAP_OK;
    *got = k;
    return res;
}

/* An end's ancestors for scope_pop: the reader's own stack when the call
 * reads one event (max == 1), else a copy in the batch's arena at *ap.
 * *cur is the latest copy, of which the first *cv entries still equal the
 * open stack's (a begin at depth d lowers *cv to d: pops change nothing
 * below them): an end at depth dpt <= *cv shares it, so a run of ends and
 * the siblings that follow each other under one parent take one copy.
 * The caller has checked that the arena holds dpt more when a copy is
 * needed (end_copies). */
static inline __attribute__((always_inline)) int
end_copies(const uint32_t *cur, uint32_t cv, uint32_t dpt)
{
    return !cur || dpt > cv;
}

static inline __attribute__((always_inline)) const uint32_t *
end_stack(const cap_reader *r, size_t max, uint32_t dpt, uint32_t *arena,
          size_t *ap, const uint32_t **cur, uint32_t *cv)
{
    if (max <= 1)
        return r->stk_name;
    if (end_copies(*cur, *cv, dpt)) {
        /* the usual few names in one fixed copy (no library call) when
           the arena has room past them */
        if (dpt <= 8 && *ap + 8 <= r->arena_cap)
            memcpy(arena + *ap, r->stk_name, 8 * sizeof *arena);
        else
            memcpy(arena + *ap, r->stk_name, dpt * sizeof *arena);
        *cur = arena + *ap;
        *cv = dpt;
        *ap += dpt;
    }
    return *cur;
}

/* ST_SCOPES: decode begin/end events until `max` scopes have closed
 * (CAP_OK, ev[0..max) filled) or the section ends (CAP_DONE, *got filled);
 * an error after some scopes were filled is kept in r->pending and the
 * call returns CAP_OK with them. Each tick is converted to ns once: a
 * begin when it is pushed, an end when it pops. With max == 1 the event's
 * stack is the reader's own; otherwise each scope's ancestors are in
 * r->arena from *apos on (copied only when a begin changed the stack since
 * the previous copy: pops leave the entries below them as they were).
 * The cursors and the stack depth live in locals for the loop and are
 * stored back on the way out. */
static inline __attribute__((always_inline)) cap_result
scopes_run_as(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t max,
              size_t *got, size_t *apos, const int sr, const int rec)
{
    capf_cur tok_c = r->body, dt_c = r->deltas;
    uint64_t left = r->left, tick = r->tick;
    uint32_t depth = r->depth;
    const double per = r->period;
    const int unit = per == 1.0;
    const uint64_t origin = r->origin_tick;
    const uint64_t lim = fast_lim(r);
    const uint32_t *cur = NULL; /* the latest arena copy */
    uint32_t cv = 0;            /* its entries still on the stack */
    /* the arena's place, the arena and the thread in locals: the stores
     * into ev and the arena would otherwise load them again each time */
    size_t ap = *apos;
    uint32_t *const arena = r->arena;
    const size_t acap = r->arena_cap;
    const uint32_t tid = r->tid;
    /* names below RD_PAGE (most captures' every name) from their page,
     * which stays where it is while the loop may add others */
    rd_name *const page0 = r->page0;
    const uint64_t p0lim = page0 ? RD_PAGE : 0;
    size_t k = 0;
    int first = r->sr_first;
    cap_result res = CAP_DONE;
    while (left > 0) {
        uint64_t tok, d = 0;
        const uint8_t *tok_p = tok_c.p, *dt_p = dt_c.p;
        if (!sr && tok_c.end - tok_c.p >= 10 && dt_c.end - dt_c.p >= 10) {
            const uint8_t *a = varint_10(tok_c.p, &tok);
            const uint8_t *b = varint_10(dt_c.p, &d);
            if (!a || !b) {
                res = CAP_E_CORRUPT;
                break;
            }
            tok_c.p = a;
            dt_c.p = b;
        } else if (!sr) {
            tok = capf_cur_varint(&tok_c);
            d = capf_cur_varint(&dt_c);
            if (tok_c.bad || dt_c.bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        } else if (tok_c.end - tok_c.p >= 10) {
            const uint8_t *a = varint_10(tok_c.p, &tok);
            if (!a) {
                res = CAP_E_CORRUPT;
                break;
            }
            tok_c.p = a;
        } else {
            tok = capf_cur_varint(&tok_c);
            if (tok_c.bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        rd_name *nm = NULL;
        if (tok != 0) {
            if (tok > CAP_MAX_NAME_ID || depth >= CAP_MAX_DEPTH) {
                res = CAP_E_CORRUPT;
                break;
            }
            nm = tok < p0lim ? &page0[tok] : name_peek(r, (uint32_t)tok);
            if (!nm || !nm->used) {
                nm = name_slot(r, (uint32_t)tok);
                if (!nm) {
                    res = CAP_E_NOMEM;
                    break;
                }
                nm->used = 1;
            }
        } else {
            if (depth == 0) {
                res = CAP_E_CORRUPT;
                break;
            }
            if ((rec || max > 1) && end_copies(cur, cv, depth - 1) &&
                ap + depth - 1 > acap) {
                r->arena_full = 1; /* full: this end waits */
                tok_c.p = tok_p;
                dt_c.p = dt_p;
                res = CAP_OK;
                break;
            }
        }
        if (!sr) {
            /* SCOPES: d was read with the token */
        } else if (first) {
            first = 0; /* SCOPES_R: the first event is at base */
        } else {
            /* SCOPES_R: the residual from the streams of the class of the
             * context's prediction */
            uint64_t pred;
            unsigned c;
            if (tok) {
                pred = nm->sr_pred[0];
                c = nm->sr_cls[0];
            } else {
                pred = r->stk_epred[depth - 1];
                c = r->stk_ecls[depth - 1];
            }
            if (capc_sr_residual(&r->srd.cls[c], pred, &d) != 0) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        left--;
        tick += d;
        if (tok != 0) {
            scope_push(r, depth, (uint32_t)tok, tick, unit, per, lim,
                       origin, rec);
            if (sr) {
                r->stk_epred[depth] = nm->sr_pred[1];
                r->stk_ecls[depth] = nm->sr_cls[1];
            }
            if (depth < cv) /* stk_name[depth] is written */
                cv = depth;
            depth++;
            continue;
        }
        uint32_t dpt = depth - 1;
        const uint32_t *stack =
            end_stack(r, rec ? 2 : max, dpt, arena, &ap, &cur, &cv);
        depth = dpt;
        scope_out(r, ev, rv, k, rec, tid, dpt, tick, stack, arena, unit, per,
                  lim, origin);
        k++;
        if (k == max) {
            res = CAP_OK;
            break;
        }
    }
    *apos = ap;
    res = run_done(r, k, res, got);
    r->body = tok_c;
    r->deltas = dt_c;
    r->sr_first = first;
    r->left = left;
    r->tick = tick;
    r->depth = depth;
    return res;
}

/* ST_SCOPES for a SCOPES_E section: as scopes_run_as, made once for the
 * section's first call (fst: its first event, at base, has no residual)
 * and, for the others, once for a period of 1 ns (unit) and once for
 * others. An end that finds the arena full is kept decoded (r->sed.pend)
 * for the next call. The rANS states, the bits read ahead, the residual
 * stream's place and the previous event's context live in locals; the
 * token stream's and the bits' places stay in r, used only in the rarer
 * branches (more locals than the registers hold put some of the loop's
 * chains through memory). Each stream's bounds are checked only where it
 * is read: a rANS state's word (one at most per symbol, in the branch that
 * needs it), the raw bits when fewer than 32 are read ahead (the usual
 * residual's low bits, k <= 32, are then there). The usual token (rank 0
 * of the list) and residual (a symbol below the escape with k <= 32) take
 * no other branch. */
static inline __attribute__((always_inline)) cap_result
scopes_run_e_as(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t max,
                size_t *got, size_t *apos, const int unit, const int fst,
                const int rec)
{
    uint64_t left = r->left, tick = r->tick;
    uint32_t depth = r->depth;
    const double per = r->period;
    const uint64_t origin = r->origin_tick;
    const uint64_t lim = fast_lim(r);
    const uint32_t *cur = NULL; /* as in scopes_run_as */
    uint32_t cv = 0;
    size_t ap = *apos;
    uint32_t *const arena = r->arena;
    const size_t acap = r->arena_cap;
    const uint32_t tid = r->tid;
    size_t k = 0;
    int first = fst && r->sr_first;
    uint32_t tx = r->sed.x[0], rx0 = r->sed.x[1], rx1 = r->sed.x[2];
    /* the token stream's and the bits' places stay in r (read in the
     * rarer branches): fewer values for the loop's registers */
    const uint8_t *rp = r->sed.p[1], *const rend = r->sed.end[1];
    capc_se_bits bs = {r->sed.bb, r->sed.bn, NULL, NULL}; /* p, end: in r */
    capc_se_ctx *const ctx = r->sed.ctx;
    capc_se_ctx *lp = ctx + r->sed.cur; /* the previous event's context */
    const capc_se_name *const names = r->sed.nm;
    cap_result res = CAP_DONE;
    uint32_t v = 0;
    if (r->sed.pend) {
        r->sed.pend = 0; /* an end, its tick in tick already */
        goto end;
    }
    while (left > 0) {
        int bad = 0;
        if (bs.bn < 32) {
            bs.p = r->sed.p[2];
            bs.end = r->sed.end[2];
            capc_se_bits_fill(&bs);
            r->sed.p[2] = bs.p;
        }
        /* the token: rank 0 of the previous event's list, usually */
        capc_se_ctx *l = lp;
        uint32_t slot = tx & (CAPF_SE_PROB - 1), f0 = l->f0;
        if (__builtin_expect(slot < f0, 1)) {
            tx = f0 * (tx >> CAPF_SE_PROB_BITS) + slot;
            v = l->l.v[0];
            l->l.n[0]++;
            /* rank 0 given last now: stored each time (a test of the
             * last rank would go either way after another rank) */
            l->f0 = l->f0z;
            l->l.tb = (uint16_t)(l->l.len * 3u);
        } else {
            bs.p = r->sed.p[2];
            bs.end = r->sed.end[2];
            tx = capc_se_token_rare(&r->sed, l, (unsigned)(l - ctx) & 1, tx,
                                    &bs, &v, &bad);
            r->sed.p[2] = bs.p;
            if (bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        if (__builtin_expect(tx < CAPF_SE_L, 0)) {
            const uint8_t *tp = r->sed.p[0];
            if (r->sed.end[0] - tp < 2) {
                res = CAP_E_CORRUPT;
                break;
            }
            tx = tx << 16 | (uint32_t)tp[0] | (uint32_t)tp[1] << 8;
            r->sed.p[0] = tp + 2;
        }
        uint32_t dn;
        if (v) {
            if (depth >= CAP_MAX_DEPTH) {
                res = CAP_E_CORRUPT;
                break;
            }
            dn = v;
            lp = ctx + 2 * (size_t)dn;
        } else {
            if (depth == 0) {
                res = CAP_E_CORRUPT;
                break;
            }
            dn = r->stk_dense[depth - 1];
            lp = ctx + 2 * (size_t)dn + 1;
        }
        uint64_t d = 0;
        if (fst && first) {
            first = 0; /* the first event is at base */
        } else {
            /* the residual: its symbol with the context's table, from the
             * residual stream's state whose turn it is */
            const capc_se_ctx *c = lp;
            const capc_se_rtab *rt = c->rt;
            uint32_t x = rx0;
            slot = x & (CAPF_SE_PROB - 1);
            unsigned s = rt->sym[slot];
            x = rt->si[s].f * (x >> CAPF_SE_PROB_BITS) + slot - rt->si[s].c;
            if (__builtin_expect(rend - rp >= 2, 1)) {
                /* the word taken or not without a branch: whether a
                 * state needs one follows the data, not a pattern */
                uint32_t w = (uint32_t)rp[0] | (uint32_t)rp[1] << 8;
                uint32_t need = 0u - (uint32_t)(x < CAPF_SE_L);
                x = (x & ~need) | ((x << 16 | w) & need);
                rp += need & 2u;
            } else if (x < CAPF_SE_L) {
                res = CAP_E_CORRUPT;
                break;
            }
            rx0 = rx1; /* the states take turns */
            rx1 = x;
            uint64_t rv;
            if (__builtin_expect(s < CAPF_SE_RES_ESC && c->kf <= bs.bn, 1)) {
                unsigned sh = c->k;
                rv = (uint64_t)(int64_t)rt->si[s].q << sh |
                     (bs.bb & ((1ull << sh) - 1));
                bs.bb >>= sh;
                bs.bn -= sh;
            } else {
                bs.p = r->sed.p[2];
                bs.end = r->sed.end[2];
                rv = capc_se_res_rare(c, s, &bs, &bad);
                r->sed.p[2] = bs.p;
                if (bad) {
                    res = CAP_E_CORRUPT;
                    break;
                }
            }
            d = c->pred + rv;
        }
        left--;
        tick += d;
        if (v) {
            scope_push(r, depth, names[v].id, tick, unit, per, lim, origin,
                       rec);
            r->stk_dense[depth] = v;
            if (depth < cv) /* stk_name[depth] is written */
                cv = depth;
            depth++;
            continue;
        }
    end:;
        uint32_t dpt = depth - 1;
        if ((rec || max > 1) && end_copies(cur, cv, dpt) && ap + dpt > acap) {
            r->arena_full = 1; /* full: this end waits */
            r->sed.pend = 1;
            res = CAP_OK;
            break;
        }
        const uint32_t *stack =
            end_stack(r, rec ? 2 : max, dpt, arena, &ap, &cur, &cv);
        depth = dpt;
        scope_out(r, ev, rv, k, rec, tid, dpt, tick, stack, arena, unit, per,
                  lim, origin);
        k++;
        if (k == max) {
            res = CAP_OK;
            break;
        }
    }
    *apos = ap;
    res = run_done(r, k, res, got);
    r->sed.x[0] = tx;
    r->sed.x[1] = rx0;
    r->sed.x[2] = rx1;
    r->sed.p[1] = rp;
    r->sed.bb = bs.bb;
    r->sed.bn = bs.bn;
    r->sed.cur = (uint32_t)(lp - ctx);
    if (fst)
        r->sr_first = first;
    r->left = left;
    r->tick = tick;
    r->depth = depth;
    return res;
}

static cap_result scopes_run_e(cap_reader *r, cap_event *ev, size_t max,
                               size_t *got, size_t *apos)
{
    if (r->sr_first) /* the section's first call */
        return scopes_run_e_as(r, ev, NULL, max, got, apos,
                               r->period == 1.0, 1, 0);
    return r->period == 1.0
               ? scopes_run_e_as(r, ev, NULL, max, got, apos, 1, 0, 0)
               : scopes_run_e_as(r, ev, NULL, max, got, apos, 0, 0, 0);
}

/* scopes_run_as, made once for SCOPES and once for SCOPES_R. */
static cap_result scopes_run(cap_reader *r, cap_event *ev, size_t max,
                             size_t *got, size_t *apos)
{
    if (r->bns_stale) {
        /* records ran before: the open scopes' begins in ns, as
           scope_push would have made them */
        for (uint32_t i = 0; i < r->depth; i++)
            r->stk_begin_ns[i] = to_ns(r, r->stk_begin[i]);
        r->bns_stale = 0;
    }
    if (r->sr == 2)
        return scopes_run_e(r, ev, max, got, apos);
    return r->sr ? scopes_run_as(r, ev, NULL, max, got, apos, 1, 0)
                 : scopes_run_as(r, ev, NULL, max, got, apos, 0, 0);
}

/* scopes_run for records (cap_reader_next_scopes): made once for each
 * kind of section, and for a SCOPES_E section's first call. */
static cap_result scopes_run_rec(cap_reader *r, cap_scope_rec *rv,
                                 size_t max, size_t *got, size_t *apos)
{
    r->bns_stale = 1;
    if (r->sr == 2)
        return r->sr_first
                   ? scopes_run_e_as(r, NULL, rv, max, got, apos, 0, 1, 1)
                   : scopes_run_e_as(r, NULL, rv, max, got, apos, 0, 0, 1);
    return r->sr ? scopes_run_as(r, NULL, rv, max, got, apos, 1, 1)
                 : scopes_run_as(r, NULL, rv, max, got, apos, 0, 1);
}

/* 4.0: r->se_carry made room for thread tid, and the lists of the
 * SCOPES_E section decoded last (se_pend) kept in its thread's. -1 when
 * out of memory. */
int cap__se_carry_for(cap_reader *r, uint32_t tid)
{
    if (tid >= r->se_carry_n) {
        size_t n = (size_t)tid + 1;
        capc_se_carry *p = realloc(r->se_carry, n * sizeof *p);
        if (!p)
            return -1;
        memset(p + r->se_carry_n, 0, (n - r->se_carry_n) * sizeof *p);
        r->se_carry = p;
        r->se_carry_n = n;
    }
    if (!r->se_pend)
        return 0;
    r->se_pend = 0;
    return capc_se_dec_carry(&r->sed, &r->se_carry[r->se_pend_tid],
                             r->se_pend_gen);
}

cap_result cap__scopes_event(cap_reader *r, cap_event *ev)
{
    if (r->pending) {
        cap_result res = r->pending;
        r->pending = CAP_OK;
        return res;
    }
    size_t got, apos = 0;
    cap_result res = scopes_run(r, ev, 1, &got, &apos);
    return got ? CAP_OK : res;
}

static cap_result batch_run(cap_reader *r, cap_event *ev, size_t max,
                            size_t *n);

cap_result cap_reader_next_batch(cap_reader *r, cap_event *ev, size_t max,
                                 size_t *n)
{
    if (!r || !ev || !n || max == 0)
        return CAP_E_MISUSE;
    *n = 0;
    if (max > 1 && (!r->arena || (r->arena_full && r->arena_cap < RD_ARENA))) {
        /* small to start with (captures are often small), doubled when a
         * batch ran out of room; always room for one full stack */
        size_t cap = r->arena ? r->arena_cap * 2 : 2 * CAP_MAX_DEPTH;
        uint32_t *a = realloc(r->arena, cap * sizeof *a);
        if (a) {
            r->arena = a;
            r->arena_cap = cap;
        }
        r->arena_full = 0;
        if (!r->arena)
            max = 1;
    }
    return batch_run(r, ev, max, n);
}

/* The reader's own arena, set aside while a call decodes stacks into the
 * caller's memory (which does not grow). */
typedef struct rd_arena {
    uint32_t *a;
    size_t cap;
    int full;
} rd_arena;

static rd_arena arena_lend(cap_reader *r, uint32_t *stacks, size_t cap)
{
    rd_arena own = {r->arena, r->arena_cap, r->arena_full};
    r->arena = stacks;
    r->arena_cap = cap;
    r->arena_full = 0;
    return own;
}

static void arena_restore(cap_reader *r, rd_arena own)
{
    r->arena = own.a;
    r->arena_cap = own.cap;
    r->arena_full = own.full;
}

cap_result cap_reader_next_batch_into(cap_reader *r, cap_event *ev,
                                      size_t max, size_t *n, uint32_t *stacks,
                                      size_t stacks_cap)
{
    if (!r || !ev || !n || max == 0 || !stacks ||
        stacks_cap < 2 * (size_t)CAP_MAX_DEPTH)
        return CAP_E_MISUSE;
    *n = 0;
    /* the batch's stacks go to the caller's memory: the reader's own
     * arena is set aside for the call (and does not grow for it) */
    rd_arena own = arena_lend(r, stacks, stacks_cap);
    cap_result res = batch_run(r, ev, max, n);
    arena_restore(r, own);
    return res;
}

cap_result cap_reader_next_scopes(cap_reader *r, cap_scope_rec *rec,
                                  size_t max, size_t *n, uint32_t *stacks,
                                  size_t stacks_cap, cap_scope_run *run)
{
    if (!r || !rec || !n || max == 0 || !stacks || !run ||
        stacks_cap < 2 * (size_t)CAP_MAX_DEPTH)
        return CAP_E_MISUSE;
    *n = 0;
    if (r->state != ST_SCOPES || r->pending || r->finished ||
        r->owe_truncated)
        return CAP_OK; /* the others' turn */
    rd_arena own = arena_lend(r, stacks, stacks_cap);
    size_t apos = 0, k = 0;
    cap_result res = scopes_run_rec(r, rec, max, &k, &apos);
#if RD_HAVE_STREAM
    if (r->nt_recs)
        _mm_sfence(); /* the streamed records ordered before what follows */
#endif
    arena_restore(r, own);
    r->anc_n = 0;
    r->last_gpu = 0;
    if (k) {
        *n = k;
        run->tid = r->tid;
        run->period_ns = r->real_period;
        run->stacks_used = apos;
        return CAP_OK;
    }
    if (res != CAP_DONE && res != CAP_OK)
        r->pending = res; /* reported by the next of the other calls */
    return CAP_OK;
}

/* cap_reader_next_batch once r->arena is there (or max is 1). */
static cap_result batch_run(cap_reader *r, cap_event *ev, size_t max,
                            size_t *n)
{
    size_t apos = 0, k = 0;
    if (max > 1 && r->state == ST_SCOPES && !r->pending && !r->finished &&
        !r->owe_truncated) {
        cap_result res = scopes_run(r, ev, max, &k, &apos);
        if (k) {
            *n = k;
            r->anc_n = 0;
            return CAP_OK;
        }
        if (res != CAP_DONE)
            r->pending = res; /* reported by cap_reader_next below */
    }
    cap_result res = cap_reader_next(r, ev);
    if (res != CAP_OK)
        return res;
    *n = 1;
    if (max > 1 && ev->kind == CAP_EV_SCOPE && r->state == ST_SCOPES &&
        !r->pending) {
        /* the section's first scope: its stack into the arena, then the
         * rest of the run */
        uint32_t dpt = ev->u.scope.depth;
        memcpy(r->arena, ev->u.scope.stack, dpt * sizeof *r->arena);
        ev->u.scope.stack = r->arena;
        apos = dpt;
        cap_result more = scopes_run(r, ev + 1, max - 1, &k, &apos);
        *n += k;
        if (k)
            r->anc_n = 0; /* an error after them waits in r->pending */
        else if (more != CAP_OK && more != CAP_DONE)
            r->pending = more; /* reported by the next call, as a run
                                  that gave no scope reports it */
    }
    return CAP_OK;
}
