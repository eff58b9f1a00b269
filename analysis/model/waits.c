/* waits.c - which names are waits (over_time_hint, an_mark_waits). */
#include "model_int.h"
#include "pass.h"

/* 1 when name id `id` is a wait: the producer's flag, or a wait_globs
 * match on its display name (as an_mark_waits sees it). */
int ml_name_is_wait(const loader *L, cap_reader *r, uint32_t id)
{
    if (cap_reader_name_flags(r, id) & CAP_NAME_WAIT)
        return 1;
    if (!L->o->nwait_globs)
        return 0;
    const char *nm = cap_reader_name(r, id);
    char buf[48];
    if (!nm) {
        snprintf(buf, sizeof buf, "<unnamed #%u>", id);
        nm = buf;
    }
    for (size_t i = 0; i < L->o->nwait_globs; i++)
        if (fnmatch(L->o->wait_globs[i], nm, 0) == 0)
            return 1;
    return 0;
}

/* Make *p hold at least `need` bytes, the new ones 0. */
static int grow_zero(uint8_t **p, size_t *cap, size_t need)
{
    size_t old = *cap;
    if (an_grow((void **)p, cap, need, 1) != 0)
        return -1;
    memset(*p + old, 0, *cap - old);
    return 0;
}

/* Note name id `id`'s wait flag (w: 1 work, 2 wait). */
int ml_name_wait_set(loader *L, uint32_t id, uint8_t w)
{
    return ml_id_set(&L->name_wait, id, w);
}

/* row_wait for a row met the first time. */
int ml_row_wait_first(loader *L, size_t row)
{
    an_capture *m = L->m;
    const an_scope *s = &m->scopes[row];
    uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id : s->name_id;
    uint8_t w = (uint8_t)ml_id_get(&L->name_wait, id);
    if (!w && !L->reader_busy) {
        w = ml_name_is_wait(L, L->r, id) ? 2 : 1;
        if (ml_name_wait_set(L, id, w) != 0)
            return -1;
    }
    if (!w) /* not carried by the decoding thread: cannot be */
        w = 1, m->ot_sums = 0;
    if (grow_zero(&L->row_wait, &L->row_wait_cap, row + 1) != 0)
        return -1;
    L->row_wait[row] = w;
    return w == 2;
}

static int glob_matches(const char *name, const char *const *globs,
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return 1;
    return 0;
}

size_t an_mark_waits(an_capture *m, const char *const *globs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < m->nscopes; i++)
        if (glob_matches(m->scopes[i].name, globs, n)) {
            m->scopes[i].is_wait = 1;
            k++;
        }
    for (size_t i = 0; i < m->nnodes; i++)
        if (!m->nodes[i].is_root && glob_matches(m->nodes[i].name, globs, n))
            m->nodes[i].is_wait = 1;
    return k;
}

/* an_options.wait_globs: the rows and nodes whose names match marked as
 * waits, once the names are known (as --wait marks them). */
static int waits_wanted(const loader *L)
{
    return L->o->nwait_globs != 0;
}

static int waits_finish(loader *L)
{
    an_mark_waits(L->m, L->o->wait_globs, L->o->nwait_globs);
    return 0;
}

const ml_pass ml_pass_waits = {"waits", waits_wanted, NULL, waits_finish};
