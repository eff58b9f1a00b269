/* finish.c - after the events: names resolved, rows from nodes. */
#include "model_int.h"

int ml_resolve_names(loader *L)
{
    an_capture *m = L->m;
    cap_reader *r = L->r;
    for (size_t i = 0; i < m->nnodes; i++) {
        an_node *n = &m->nodes[i];
        if (n->is_root)
            continue;
        const char *nm = cap_reader_name(r, n->name_id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", n->name_id);
            nm = buf;
        }
        n->name = ml_xstrdup(nm);
        if (!n->name)
            return -1;
        n->is_wait = (cap_reader_name_flags(r, n->name_id) & CAP_NAME_WAIT) != 0;
    }
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope *s = &m->scopes[i];
        uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id : s->name_id;
        const char *nm = cap_reader_name(r, id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", id);
            nm = buf;
            s->unnamed = 1;
            int dup = 0;
            for (size_t k = 0; k < m->unnamed_n; k++)
                dup |= m->unnamed_ids[k] == id;
            if (!dup && m->unnamed_n < 8)
                m->unnamed_ids[m->unnamed_n++] = id;
        }
        s->name = ml_xstrdup(nm);
        if (!s->name)
            return -1;
        s->is_wait = (cap_reader_name_flags(r, id) & CAP_NAME_WAIT) != 0;
        if (L->o->by_path) {
            /* path: root;...;name */
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
        }
    }
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
