/* finish.c - after the events: names resolved, rows from nodes. */
#include "model_int.h"

/* Row s's call path "root;a;b" (rows by path), from its nodes' names.
 * 0, or -1 when out of memory. */
static int scope_path(an_capture *m, an_scope *s)
{
    size_t len = 0;
    for (uint32_t k = s->name_id; k != NONE; k = m->nodes[k].parent)
        len += strlen(m->nodes[k].name) + 1;
    len--; /* k names, k - 1 separators */
    s->path = malloc(len + 1);
    if (!s->path)
        return -1;
    size_t pos = len;
    s->path[len] = 0;
    for (uint32_t k = s->name_id; k != NONE; k = m->nodes[k].parent) {
        size_t l = strlen(m->nodes[k].name);
        pos -= l;
        memcpy(s->path + pos, m->nodes[k].name, l);
        if (pos > 0)
            s->path[--pos] = ';';
    }
    memmove(s->path, s->path + pos, len - pos + 1);
    return 0;
}

/* Name id `id`'s text: the capture's, or "<unnamed #id>" in buf (48
 * bytes), with *unnamed set. */
static const char *name_text(cap_reader *r, uint32_t id, char *buf,
                             int *unnamed)
{
    const char *nm = cap_reader_name(r, id);
    *unnamed = !nm;
    if (!nm) {
        snprintf(buf, 48, "<unnamed #%u>", id);
        nm = buf;
    }
    return nm;
}

/* The row whose name node n shares (rows by name: its row, the same
 * CPU name id), or NULL (rows by path: a node names its row). */
static const an_scope *node_row(const an_capture *m, const an_options *o,
                                const an_node *n)
{
    if (o->by_path || !n->row1 || n->kind != AN_CPU)
        return NULL;
    const an_scope *s = &m->scopes[n->row1 - 1];
    return s->kind == AN_CPU && s->name_id == n->name_id ? s : NULL;
}

/* Text `nm` into the name block at *at (NULL block: only counted). */
static char *block_put(an_capture *m, size_t *at, const char *nm)
{
    size_t len = strlen(nm) + 1;
    char *p = m->name_block ? m->name_block + *at : NULL;
    if (p)
        memcpy(p, nm, len);
    *at += len;
    return p;
}

/* The rows' names (and, rows by path, their paths need the nodes'). A
 * row by path shares its node's name. With `block` NULL only the bytes
 * are counted (into *at). */
static int rows_named(loader *L, size_t *at)
{
    an_capture *m = L->m;
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope *s = &m->scopes[i];
        uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id : s->name_id;
        char buf[48];
        int unnamed;
        const char *nm = name_text(L->r, id, buf, &unnamed);
        if (L->o->by_path) {
            s->name = m->name_block ? m->nodes[s->name_id].name : NULL;
        } else {
            s->name = block_put(m, at, nm);
        }
        if (!m->name_block)
            continue;
        s->is_wait = (cap_reader_name_flags(L->r, id) & CAP_NAME_WAIT) != 0;
        if (unnamed) {
            s->unnamed = 1;
            int dup = 0;
            for (size_t k = 0; k < m->unnamed_n; k++)
                dup |= m->unnamed_ids[k] == id;
            if (!dup && m->unnamed_n < 8)
                m->unnamed_ids[m->unnamed_n++] = id;
        }
        if (L->o->by_path && scope_path(m, s) != 0)
            return -1;
    }
    return 0;
}

/* The nodes' names (not the roots': theirs are their own), each in the
 * block or shared with its row's. With the block NULL only counted. */
static void nodes_named(loader *L, size_t *at)
{
    an_capture *m = L->m;
    for (size_t i = 0; i < m->nnodes; i++) {
        an_node *n = &m->nodes[i];
        if (n->is_root)
            continue;
        const an_scope *row = node_row(m, L->o, n);
        if (row) {
            n->name = row->name; /* NULL while only counted */
        } else {
            char buf[48];
            int unnamed;
            n->name = block_put(m, at, name_text(L->r, n->name_id, buf,
                                                 &unnamed));
        }
        if (m->name_block)
            n->is_wait = (cap_reader_name_flags(L->r, n->name_id) &
                          CAP_NAME_WAIT) != 0;
    }
}

/* The names of the rows and nodes, each text once in m->name_block: a
 * row by name and its nodes share one (issue 46: two copies of every
 * name, 64 bytes with malloc's, were a tenth of a capture of a million
 * distinct names). Rows by name first (nodes share theirs); rows by path
 * after the nodes (they share and join the nodes' names). */
static int names_into_block(loader *L)
{
    an_capture *m = L->m;
    size_t n = 0, at = 0;
    /* counted first (the block NULL), then written, in the same order */
    for (int pass = 0; pass < 2; pass++) {
        size_t *to = pass ? &at : &n;
        if (pass) {
            m->name_block = malloc(n ? n : 1);
            if (!m->name_block)
                return -1;
            m->name_block_len = n ? n : 1;
        }
        if (L->o->by_path)
            nodes_named(L, to);
        if (rows_named(L, to) != 0)
            return -1;
        if (!L->o->by_path)
            nodes_named(L, to);
    }
    return 0;
}

int ml_resolve_names(loader *L)
{
    an_capture *m = L->m;
    cap_reader *r = L->r;
    if (names_into_block(L) != 0)
        return -1;
    const struct id_map *co = &L->counter_of;
    for (size_t k = 0; k < co->dcap + co->hcap; k++) {
        uint32_t id = k < co->dcap ? (uint32_t)k : co->hk[k - co->dcap];
        uint32_t ci = k < co->dcap ? co->d[k] : co->hv[k - co->dcap];
        if (!id || !ci)
            continue;
        an_counter *c = &m->counters[ci - 1];
        const char *nm = cap_reader_name(r, id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", id);
            nm = buf;
        }
        c->name = ml_xstrdup(nm);
        if (!c->name)
            return -1;
    }
    /* children lists, in order of first appearance */
    for (size_t i = m->nnodes; i-- > 0;) {
        an_node *n = &m->nodes[i];
        if (n->parent != NONE) {
            n->next_sibling = m->nodes[n->parent].first_child;
            m->nodes[n->parent].first_child = (uint32_t)i;
        }
    }
    return 0;
}

/* With a call tree, a CPU row's calls and sums are its nodes' (each
 * scope went into one node, and the node's row is the scope's): summed
 * here once a node instead of once a scope. The totals of a row by name
 * leave out its recursive nodes (an ancestor has the name: counted at the
 * outermost). Every value is >= 0 and the sums saturate, so the order of
 * the additions does not change them. */
void ml_rows_from_nodes(loader *L)
{
    an_capture *m = L->m;
    for (size_t i = 0; i < m->nnodes; i++) {
        const an_node *n = &m->nodes[i];
        if (n->kind != AN_CPU || !n->row1 || !n->calls)
            continue;
        an_scope *s = &m->scopes[n->row1 - 1];
        s->calls += n->calls;
        cap_stats_sat_add(&s->self_ns, n->self_ns);
        if (L->o->by_path || !n->recursive)
            cap_stats_sat_add(&s->total_ns, n->total_ns);
    }
}
