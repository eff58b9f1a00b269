/* pass_over_time.c - --over-time's part of the load: each frame's bin,
 * each row's histogram by bin (summed in window.c's emit), merged or let go. */
#include "model_int.h"
#include "pass.h"

/* The --over-time bin of each frame, by its begin, as
 * an_over_time_compute picks them (bins.h), and how many bins. */
size_t ml_frame_bins(const an_capture *m, int bins, double bin_seconds,
                         uint16_t *bin_of)
{
    size_t n = m->nframes;
    if (!n)
        return 0;
    int64_t t0 = m->frames[0].begin_ns;
    double width;
    bins = an_bins_choose(an_elapsed_ns(t0, m->frames[n - 1].end_ns), bins,
                          bin_seconds, &width);
    for (size_t i = 0; i < n; i++)
        bin_of[i] = (uint16_t)an_bins_index(
            an_elapsed_ns(t0, m->frames[i].begin_ns) / width, bins);
    return (size_t)bins;
}

/* Each row's histogram over all frames from its histograms by bin. */
int ml_ot_merge(an_capture *m)
{
    for (size_t i = 0; i < m->nscopes; i++)
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            if (an_hist_merge(&m->scopes[i].pf_hist,
                              &m->scopes[i].pf_bin[b]) != 0)
                return -1;
    return 0;
}

/* The histograms by bin outgrew AN_OT_HINT_MAX_BYTES: merged into each
 * row's and let go (an_over_time_compute then reads the file again). */
int ml_ot_drop(an_capture *m)
{
    if (ml_ot_merge(m) != 0)
        return -1;
    for (size_t i = 0; i < m->nscopes; i++) {
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            an_hist_free(&m->scopes[i].pf_bin[b]);
        free(m->scopes[i].pf_bin);
        m->scopes[i].pf_bin = NULL;
    }
    free(m->ot_bin);
    free(m->ot_cpu_ms);
    free(m->ot_wait_ms);
    m->ot_bin = NULL;
    m->ot_cpu_ms = NULL;
    m->ot_wait_ms = NULL;
    m->ot_sums = 0;
    m->ot_nbins = 0;
    return 0;
}

/* At the end of the load, the flags final: the sums stand only if every
 * row was summed under its final flag. */
void ml_ot_check(loader *L)
{
    an_capture *m = L->m;
    for (size_t i = 0; m->ot_sums && i < m->nscopes && i < L->row_wait_cap;
         i++)
        if (L->row_wait[i] && (L->row_wait[i] == 2) != !!m->scopes[i].is_wait)
            m->ot_sums = 0;
    if (!m->ot_sums) {
        free(m->ot_cpu_ms);
        free(m->ot_wait_ms);
        free(m->frame_work_ms);
        m->ot_cpu_ms = m->ot_wait_ms = NULL;
        m->frame_work_ms = NULL;
    }
}

static int over_time_wanted(const loader *L)
{
    return L->o->over_time_hint || L->o->frame_work;
}

/* With a budget, an_options.over_time_hint: each frame's bin (none past
 * AN_OT_HINT_MAX_BINS bins: too many histograms), and the work and wait
 * sums by bin while every row's flag holds; an_options.frame_work
 * without bins: the work of each frame summed, on the same terms. */
static int over_time_frames(loader *L)
{
    an_capture *m = L->m;
    if (!L->visit && L->budget && L->o->over_time_hint && m->nframes) {
        m->ot_bin = malloc(m->nframes * sizeof *m->ot_bin);
        if (!m->ot_bin)
            return -1;
        m->ot_nbins = ml_frame_bins(m, L->o->ot_bins, L->o->ot_bin_seconds,
                                    m->ot_bin);
        if (m->ot_nbins > AN_OT_HINT_MAX_BINS) {
            free(m->ot_bin);
            m->ot_bin = NULL;
            m->ot_nbins = 0;
        }
        m->ot_sums = m->ot_bin != NULL;
    }
    if (L->o->frame_work && !m->ot_bin)
        m->ot_sums = 1; /* until a row's flag says otherwise (ml_ot_check) */
    return 0;
}

/* Each row's histogram over all frames from its bins', and the sums kept
 * only if every row was summed under its final wait flag, in ms. */
static int over_time_finish(loader *L)
{
    if (ml_ot_merge(L->m) != 0)
        return -1;
    ml_ot_check(L);
    an_capture *m = L->m; /* summed in ns (window.c's emit_ot) */
    an_frame_sums_ms((double *const[2]){m->ot_cpu_ms, m->ot_wait_ms},
                     m->nframes);
    return 0;
}

const ml_pass ml_pass_over_time = {"over_time", over_time_wanted,
                                   over_time_frames, over_time_finish};
