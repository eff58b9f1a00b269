/*
 * common/idtab.c - the slow paths of common/idtab.h: making entries, the
 * far ids' hash, walking and freeing.
 */
#include "common/idtab.h"

#include <stdlib.h>
#include <string.h>

/* murmur3's finaliser: consecutive or strided ids spread over the table */
static inline size_t hash_at(uint32_t id, size_t cap)
{
    uint32_t h = id;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & (cap - 1);
}

static inline void *far_entry(const cap__idtab *t, size_t e)
{
    return t->blk[e >> CAP__IDTAB_PAGE_BITS] +
           (e & (CAP__IDTAB_PAGE - 1)) * t->esz;
}

void *cap__idtab_peek_far(const cap__idtab *t, uint32_t id)
{
    if (!t->hcap || id == 0)
        return NULL;
    for (size_t i = hash_at(id, t->hcap);; i = (i + 1) & (t->hcap - 1)) {
        if (t->hk[i] == id)
            return far_entry(t, t->hv[i]);
        if (!t->hk[i])
            return NULL;
    }
}

/* The hash at twice its size (at least 1024). -1 when out of memory. */
static int rehash(cap__idtab *t)
{
    size_t cap = t->hcap ? t->hcap * 2 : 1024;
    uint32_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < t->hcap; i++) {
        if (!t->hk[i])
            continue;
        size_t j = hash_at(t->hk[i], cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = t->hk[i];
        v[j] = t->hv[i];
    }
    free(t->hk);
    free(t->hv);
    t->hk = k;
    t->hv = v;
    t->hcap = cap;
    return 0;
}

static void *make_far(cap__idtab *t, uint32_t id)
{
    if ((t->hn + 1) * 2 > t->hcap && rehash(t) != 0)
        return NULL;
    size_t e = t->ent_n;
    if (e >> CAP__IDTAB_PAGE_BITS >= t->blk_n) {
        if ((t->blk_n & (t->blk_n - 1)) == 0) { /* 0 or a power of 2 */
            size_t c = t->blk_n ? t->blk_n * 2 : 4;
            uint8_t **p = realloc(t->blk, c * sizeof *p);
            if (!p)
                return NULL;
            t->blk = p;
        }
        if (!(t->blk[t->blk_n] = calloc(CAP__IDTAB_PAGE, t->esz)))
            return NULL;
        t->blk_n++;
    }
    size_t i = hash_at(id, t->hcap);
    while (t->hk[i])
        i = (i + 1) & (t->hcap - 1);
    t->hk[i] = id;
    t->hv[i] = (uint32_t)e;
    t->hn++;
    t->ent_n++;
    return far_entry(t, e);
}

void *cap__idtab_make(cap__idtab *t, uint32_t id, uint32_t max_id)
{
    if (id == 0 || id > max_id)
        return NULL;
    if (id >= CAP__IDTAB_DIRECT) {
        void *e = cap__idtab_peek_far(t, id);
        return e ? e : make_far(t, id);
    }
    uint32_t pg = id >> CAP__IDTAB_PAGE_BITS;
    if (pg >= t->pages_n) {
        uint32_t n = t->pages_n ? t->pages_n : 16;
        while (n <= pg)
            n *= 2;
        uint8_t **p = realloc(t->pages, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + t->pages_n, 0, (size_t)(n - t->pages_n) * sizeof *p);
        t->pages = p;
        t->pages_n = n;
    }
    if (!t->pages[pg] && !(t->pages[pg] = calloc(CAP__IDTAB_PAGE, t->esz)))
        return NULL;
    return t->pages[pg] + (size_t)(id & (CAP__IDTAB_PAGE - 1)) * t->esz;
}

void cap__idtab_each(const cap__idtab *t,
                     void (*fn)(void *ctx, uint32_t id, void *entry),
                     void *ctx)
{
    for (uint32_t pg = 0; pg < t->pages_n; pg++)
        if (t->pages[pg])
            for (uint32_t j = 0; j < CAP__IDTAB_PAGE; j++)
                fn(ctx, pg << CAP__IDTAB_PAGE_BITS | j,
                   t->pages[pg] + (size_t)j * t->esz);
    for (size_t i = 0; i < t->hcap; i++)
        if (t->hk[i])
            fn(ctx, t->hk[i], far_entry(t, t->hv[i]));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int cap__idtab_far_ids(const cap__idtab *t, uint32_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    if (!t->hn)
        return 0;
    uint32_t *v = malloc(t->hn * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->hcap; i++)
        if (t->hk[i])
            v[k++] = t->hk[i];
    qsort(v, k, sizeof *v, cmp_u32);
    *ids = v;
    *n = k;
    return 0;
}

void cap__idtab_free(cap__idtab *t)
{
    for (uint32_t pg = 0; pg < t->pages_n; pg++)
        free(t->pages[pg]);
    free(t->pages);
    for (size_t i = 0; i < t->blk_n; i++)
        free(t->blk[i]);
    free(t->blk);
    free(t->hk);
    free(t->hv);
    size_t esz = t->esz;
    memset(t, 0, sizeof *t);
    t->esz = esz;
}
