/* access.c - the model's public accessors and an_free (model.h). */
#include "model_int.h"

int an_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Whether name p lies in m's name block (an_free frees it with the
 * block). */
static int in_name_block(const an_capture *m, const char *p)
{
    return p && m->name_block && p >= m->name_block &&
           p < m->name_block + m->name_block_len;
}

void an_free(an_capture *m)
{
    if (!m)
        return;
    free(m->path);
    if (m->fd_open)
        close(m->fd);
    free(m->pop_of);
    free(m->ot_bin);
    free(m->ot_cpu_ms);
    free(m->ot_wait_ms);
    free(m->frame_work_ms);
    for (size_t i = 0; i < m->meta_n; i++) {
        if (m->meta_k)
            free(m->meta_k[i]);
        if (m->meta_v)
            free(m->meta_v[i]);
    }
    free(m->meta_k);
    free(m->meta_v);
    free(m->clock_source);
    free(m->frames);
    free(m->frame_index);
    free(m->frame_gpu_ns);
    free(m->frame_has_gpu);
    for (size_t i = 0; i < m->nscopes; i++) {
        if (!in_name_block(m, m->scopes[i].name))
            free(m->scopes[i].name);
        free(m->scopes[i].path);
        ml_series_free(m, &m->scopes[i]);
        an_hist_free(&m->scopes[i].pf_hist);
        for (int p = 0; m->scopes[i].pf_pop && p < 2; p++)
            an_hist_free(&m->scopes[i].pf_pop[p]);
        free(m->scopes[i].pf_pop);
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            an_hist_free(&m->scopes[i].pf_bin[b]);
        free(m->scopes[i].pf_bin);
    }
    ml_pf_arena_free(m);
    free(m->scopes);
    for (size_t i = 0; i < m->nnodes; i++)
        if (!in_name_block(m, m->nodes[i].name))
            free(m->nodes[i].name);
    free(m->name_block);
    free(m->nodes);
    for (size_t i = 0; i < m->ncounters; i++) {
        free(m->counters[i].name);
        free(m->counters[i].s);
    }
    free(m->counters);
    for (size_t i = 0; i < m->nthreads; i++)
        free(m->threads[i]);
    for (size_t i = 0; i < m->noutside_threads; i++)
        free(m->outside_threads[i]);
    free(m->outside_threads);
    free(m->threads);
    for (size_t i = 0; i < m->ntracks; i++)
        free(m->tracks[i]);
    free(m->tracks);
    free(m->scope_ht);
    free(m->node_ht);
    ml_pack_free(m->pack);
    free(m);
}

typedef struct dense_ctx {
    size_t row;
    double *dense;
} dense_ctx;

static void dense_visit(void *p, size_t row, size_t frame, int64_t v)
{
    dense_ctx *c = p;
    if (row == c->row)
        c->dense[frame] += (double)v;
}

void an_scope_dense(const an_capture *m, const an_scope *s, double *dense_ns)
{
    for (size_t i = 0; i < m->nframes; i++)
        dense_ns[i] = 0;
    if (m->approx) {
        dense_ctx c = {(size_t)(s - m->scopes), dense_ns};
        if (an_series_scan(m, dense_visit, &c) != CAP_OK)
            for (size_t i = 0; i < m->nframes; i++)
                dense_ns[i] = NAN;
        return;
    }
    for (size_t i = 0; i < s->pf_n; i++)
        if (s->pf_frame[i] < m->nframes)
            dense_ns[s->pf_frame[i]] += (double)s->pf_self[i];
}

void an_cpu_frame_sums(const an_capture *m, double *row_ns,
                       double *const sum_ms[2])
{
    for (size_t s = 0; s < m->nscopes; s++) {
        const an_scope *sc = &m->scopes[s];
        double *to = sum_ms[sc->is_wait != 0];
        if (sc->kind != AN_CPU || !to)
            continue;
        an_scope_dense(m, sc, row_ns);
        for (size_t i = 0; i < m->nframes; i++)
            to[i] += row_ns[i];
    }
    an_frame_sums_ms(sum_ms, m->nframes); /* whole ns: in any order */
}

void an_frame_sums_ms(double *const sum[2], size_t n)
{
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; sum[k] && i < n; i++)
            sum[k][i] /= 1e6;
}

const char *an_meta(const an_capture *m, const char *key)
{
    for (size_t i = 0; i < m->meta_n; i++)
        if (strcmp(m->meta_k[i], key) == 0)
            return m->meta_v[i];
    return NULL;
}

unsigned an_machine_cpus(const an_capture *m)
{
    const char *s = an_meta(m, "machine");
    const char *tail = " CPUs)";
    size_t len = s ? strlen(s) : 0, tl = strlen(tail);
    if (len <= tl || strcmp(s + len - tl, tail) != 0)
        return 0;
    size_t k = len - tl, d = k;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d == k || k - d > 6 || d < 2 || s[d - 1] != ' ' || s[d - 2] != ',')
        return 0;
    unsigned c = 0;
    for (size_t i = d; i < k; i++)
        c = c * 10 + (unsigned)(s[i] - '0');
    return c;
}

long an_find_scope(const an_capture *m, an_kind kind, const char *name)
{
    for (size_t i = 0; i < m->nscopes; i++)
        if (m->scopes[i].kind == kind && strcmp(m->scopes[i].name, name) == 0)
            return (long)i;
    return -1;
}

int64_t an_total_frame_ns(const an_capture *m)
{
    int64_t t = 0;
    for (size_t i = 0; i < m->nframes; i++)
        cap_stats_sat_add(&t, an_frame_ns(&m->frames[i]));
    return t;
}
