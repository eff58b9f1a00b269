/* pass_split.c - --split's part of the load: each frame's population
 * (fastest, slowest quarter or neither), read as values are summarised. */
#include "model_int.h"
#include "pass.h"

/* The fastest and the slowest quarter of frames by frame time, as
 * an_split_compute picks them (ascending by (duration, position)): the
 * q-th smallest and q-th largest durations by selection, ties taken by
 * position. 1 byte a frame; -1 when out of memory. */
int ml_split_pops(an_capture *m)
{
    size_t n = m->nframes, q = n / 4;
    if (q == 0)
        return 0;
    double *k = malloc(n * sizeof *k);
    m->pop_of = malloc(n);
    if (!k || !m->pop_of) {
        free(k);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (double)an_frame_ns(&m->frames[i]);
    double a = cap_stats_select(k, n, q - 1);
    double b = cap_stats_select(k, n, n - q);
    free(k);
    size_t below = 0, above = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)an_frame_ns(&m->frames[i]);
        below += d < a;
        above += d > b;
        m->pop_of[i] = 2;
    }
    size_t ties = q - below;
    for (size_t i = 0; i < n; i++) {
        double d = (double)an_frame_ns(&m->frames[i]);
        if (d < a || (d == a && ties && ties--))
            m->pop_of[i] = 0;
    }
    ties = q - above;
    for (size_t i = n; i-- > 0;) {
        double d = (double)an_frame_ns(&m->frames[i]);
        if (d > b || (d == b && ties && ties--))
            m->pop_of[i] = 1;
    }
    return 0;
}

/* With a budget (values summarised), an_options.split_hint: the
 * populations, so that each row's values are also summarised by one. */
static int split_wanted(const loader *L)
{
    return L->o->split_hint && !L->visit && L->budget;
}

static int split_frames(loader *L)
{
    return ml_split_pops(L->m);
}

/* Every row's two histograms, empty where it had no value in either
 * population (split.c reads them for every row). */
static int split_finish(loader *L)
{
    an_capture *m = L->m;
    for (size_t i = 0; m->pop_of && i < m->nscopes; i++)
        if (ml_row_pops(&m->scopes[i]) != 0)
            return -1;
    return 0;
}

const ml_pass ml_pass_split = {"split", split_wanted, split_frames,
                               split_finish};
