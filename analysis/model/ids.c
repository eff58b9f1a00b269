/* ids.c - tables by name id and names by text, for the load. */
#include "model_int.h"

char *ml_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- tables by name id -------------------------------------------------- */

static inline size_t id_slot(uint32_t id, size_t cap)
{
    return (size_t)mix(id) & (cap - 1);
}

uint32_t ml_id_get(const struct id_map *t, uint32_t id)
{
    if (id < ID_DIRECT)
        return id < t->dcap ? t->d[id] : 0;
    for (size_t i = t->hcap ? id_slot(id, t->hcap) : 0; t->hcap;
         i = (i + 1) & (t->hcap - 1)) {
        if (t->hk[i] == id)
            return t->hv[i];
        if (!t->hk[i])
            break;
    }
    return 0;
}

/* Make id's value v (not 0). 0, or -1 when out of memory. */
int ml_id_set(struct id_map *t, uint32_t id, uint32_t v)
{
    if (id < ID_DIRECT) {
        if (id >= t->dcap) {
            size_t n = t->dcap ? t->dcap : 64;
            while (n <= id)
                n *= 2;
            uint32_t *p = realloc(t->d, n * sizeof *p);
            if (!p)
                return -1;
            memset(p + t->dcap, 0, (n - t->dcap) * sizeof *p);
            t->d = p;
            t->dcap = n;
        }
        t->d[id] = v;
        return 0;
    }
    if ((t->hn + 1) * 2 > t->hcap) {
        size_t cap = t->hcap ? t->hcap * 2 : 64;
        uint32_t *k = calloc(cap, sizeof *k), *w = malloc(cap * sizeof *w);
        if (!k || !w) {
            free(k);
            free(w);
            return -1;
        }
        for (size_t i = 0; i < t->hcap; i++) {
            if (!t->hk[i])
                continue;
            size_t j = id_slot(t->hk[i], cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = t->hk[i];
            w[j] = t->hv[i];
        }
        free(t->hk);
        free(t->hv);
        t->hk = k;
        t->hv = w;
        t->hcap = cap;
    }
    size_t i = id_slot(id, t->hcap);
    while (t->hk[i] && t->hk[i] != id)
        i = (i + 1) & (t->hcap - 1);
    t->hn += !t->hk[i];
    t->hk[i] = id;
    t->hv[i] = v;
    return 0;
}

void ml_id_free(struct id_map *t)
{
    free(t->d);
    free(t->hk);
    free(t->hv);
}

/* ---- names by text ------------------------------------------------------ */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return mix(h);
}

/* The index i in ix of the text `name`, where at(ctx, i) gives the text
 * of index i; -1 when absent. */
long ml_str_find(const str_index *ix, const char *name,
                     const char *(*at)(const void *, uint32_t),
                     const void *ctx)
{
    if (!ix->cap)
        return -1;
    size_t mask = ix->cap - 1;
    for (size_t i = str_hash(name) & mask; ix->slot[i]; i = (i + 1) & mask)
        if (strcmp(at(ctx, ix->slot[i] - 1), name) == 0)
            return (long)ix->slot[i] - 1;
    return -1;
}

/* Add index `v` (whose text at() gives) to ix; -1 when out of memory. */
int ml_str_add(str_index *ix, uint32_t v,
                   const char *(*at)(const void *, uint32_t), const void *ctx)
{
    if ((ix->n + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        uint32_t *p = calloc(cap, sizeof *p);
        if (!p)
            return -1;
        for (size_t i = 0; i < ix->cap; i++) {
            uint32_t e = ix->slot[i];
            if (!e)
                continue;
            size_t j = str_hash(at(ctx, e - 1)) & (cap - 1);
            while (p[j])
                j = (j + 1) & (cap - 1);
            p[j] = e;
        }
        free(ix->slot);
        ix->slot = p;
        ix->cap = cap;
    }
    size_t j = str_hash(at(ctx, v)) & (ix->cap - 1);
    while (ix->slot[j])
        j = (j + 1) & (ix->cap - 1);
    ix->slot[j] = v + 1;
    ix->n++;
    return 0;
}

const char *ml_arr_at(const void *ctx, uint32_t i)
{
    return (*(char **const *)ctx)[i];
}

const char *ml_node_at(const void *ctx, uint32_t i)
{
    return ((const an_capture *)ctx)->nodes[i].name;
}
