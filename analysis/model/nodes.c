/* nodes.c - the call tree's nodes and the scope rows, found or made. */
#include "model_int.h"

/* ---- nodes and scope rows --------------------------------------------- */

static int ht_grow(uint32_t **ht, size_t *cap, size_t used)
{
    if ((used + 1) * 2 <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 1024;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    free(*ht);
    *ht = t;
    *cap = n;
    return 1; /* caller re-inserts */
}

static uint32_t node_new(an_capture *m, uint32_t parent, an_kind kind,
                         uint32_t name_id, const char *ml_root_name)
{
    if ((m->nnodes & (m->nnodes - 1)) == 0 || m->nnodes == 0) {
        size_t cap = m->nnodes ? m->nnodes * 2 : 64;
        an_node *p = realloc(m->nodes, cap * sizeof *p);
        if (!p)
            return NONE;
        m->nodes = p;
    }
    uint32_t idx = (uint32_t)m->nnodes;
    an_node *n = &m->nodes[idx];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->kind = kind;
    n->name_id = name_id;
    n->is_root = parent == NONE;
    n->depth = parent == NONE ? 0 : m->nodes[parent].depth + 1;
    n->first_child = n->next_sibling = NONE;
    for (uint32_t a = parent; a != NONE && !m->nodes[a].is_root;
         a = m->nodes[a].parent)
        if (m->nodes[a].name_id == name_id && m->nodes[a].kind == kind) {
            n->recursive = 1;
            break;
        }
    if (ml_root_name) {
        n->name = ml_xstrdup(ml_root_name);
        if (!n->name)
            return NONE;
    }
    m->nnodes++;
    return idx;
}

static void kid_ht_put(kid_table *t, uint32_t key, uint32_t entry)
{
    uint32_t mask = t->ht_cap - 1;
    uint32_t i = (uint32_t)mix(key) & mask;
    while (t->ht[i])
        i = (i + 1) & mask;
    t->ht[i] = entry + 1;
}

__attribute__((noinline)) uint32_t
ml_node_find(loader *L, uint32_t parent, an_kind kind, uint32_t name,
          struct kid_memo *mm)
{
    (void)mm;
    an_capture *m = L->m;
    if (parent >= L->kids_cap) {
        size_t n = L->kids_cap ? L->kids_cap : 256;
        while (n <= parent)
            n *= 2;
        kid_table *p = realloc(L->kids, n * sizeof *p);
        if (!p)
            return NONE;
        memset(p + L->kids_cap, 0, (n - L->kids_cap) * sizeof *p);
        L->kids = p;
        L->kids_cap = n;
    }
    uint32_t key = kid_key(kind, name);
    kid_table *t = &L->kids[parent];
    if (!t->ht) {
        for (uint32_t i = 0; i < t->n; i++)
            if ((uint32_t)(t->e[i] >> 32) == key)
                return (uint32_t)t->e[i];
    } else {
        uint32_t mask = t->ht_cap - 1;
        for (uint32_t i = (uint32_t)mix(key) & mask; t->ht[i];
             i = (i + 1) & mask)
            if ((uint32_t)(t->e[t->ht[i] - 1] >> 32) == key)
                return (uint32_t)t->e[t->ht[i] - 1];
    }
    uint32_t node = node_new(m, parent, kind, name, NULL);
    if (node == NONE)
        return NONE;
    t = &L->kids[parent];
    if (t->n == t->cap) {
        uint32_t n = t->cap ? t->cap * 2 : 4;
        uint64_t *e = realloc(t->e, n * sizeof *e);
        if (!e)
            return NONE;
        t->e = e;
        t->cap = n;
    }
    t->e[t->n] = ((uint64_t)key << 32) | node;
    t->n++;
    if (t->n > KID_SCAN && (!t->ht || t->n * 2 > t->ht_cap)) {
        uint32_t hc = t->ht_cap ? t->ht_cap * 2 : 64;
        uint32_t *h = calloc(hc, sizeof *h);
        if (!h)
            return NONE;
        free(t->ht);
        t->ht = h;
        t->ht_cap = hc;
        for (uint32_t i = 0; i < t->n; i++)
            kid_ht_put(t, (uint32_t)(t->e[i] >> 32), i);
    } else if (t->ht) {
        kid_ht_put(t, key, t->n - 1);
    }
    return node;
}

/* The root of kind `kind` named `name`, made when missing (ix: the roots
 * of that kind by name). NONE when out of memory. */
uint32_t ml_root_get(an_capture *m, str_index *ix, an_kind kind,
                         const char *name)
{
    long i = ml_str_find(ix, name, ml_node_at, m);
    if (i >= 0)
        return (uint32_t)i;
    uint32_t r = node_new(m, NONE, kind, 0, name);
    if (r != NONE && ml_str_add(ix, r, ml_node_at, m) != 0)
        return NONE;
    return r;
}

static uint64_t scope_key(an_kind kind, uint32_t id)
{
    return ((uint64_t)kind << 40) | id;
}

long ml_scope_get(an_capture *m, an_kind kind, uint32_t id)
{
    uint64_t key = scope_key(kind, id);
    if (m->scope_ht_cap) {
        size_t mask = m->scope_ht_cap - 1;
        size_t i = mix(key) & mask;
        while (m->scope_ht[i]) {
            an_scope *s = &m->scopes[m->scope_ht[i] - 1];
            if (scope_key(s->kind, s->name_id) == key)
                return (long)m->scope_ht[i] - 1;
            i = (i + 1) & mask;
        }
    }
    if ((m->nscopes & (m->nscopes - 1)) == 0 || m->nscopes == 0) {
        size_t cap = m->nscopes ? m->nscopes * 2 : 32;
        an_scope *p = realloc(m->scopes, cap * sizeof *p);
        if (!p)
            return -1;
        m->scopes = p;
    }
    an_scope *s = &m->scopes[m->nscopes];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name_id = id; /* a node index when by_path */
    s->pf_sorted = 1;
    m->nscopes++;
    int g = ht_grow(&m->scope_ht, &m->scope_ht_cap, m->nscopes);
    if (g < 0)
        return -1;
    size_t mask = m->scope_ht_cap - 1;
    for (size_t k = g > 0 ? 0 : m->nscopes - 1; k < m->nscopes; k++) {
        size_t i = mix(scope_key(m->scopes[k].kind, m->scopes[k].name_id)) &
                   mask;
        while (m->scope_ht[i])
            i = (i + 1) & mask;
        m->scope_ht[i] = (uint32_t)k + 1;
    }
    return (long)m->nscopes - 1;
}
