/*
 * frame_counters.c - each counter's value per frame (frame_counters.h).
 */
#include "frame_counters.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int chosen(const char *name, const char *const *globs, size_t nglobs)
{
    if (!nglobs)
        return 1;
    for (size_t i = 0; i < nglobs; i++)
        if (globs[i] && fnmatch(globs[i], name, 0) == 0)
            return 1;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const an_sample *x = a, *y = b;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* One counter over the frames (sorted by begin). s[0..ns) sorted by time,
 * finite values only. */
static void per_frame(const an_capture *m, const an_sample *s, size_t ns,
                      an_frame_counter *out)
{
    size_t j = 0; /* first sample at or after the current frame's begin */
    for (size_t i = 0; i < m->nframes; i++) {
        const an_frame *f = &m->frames[i];
        while (j < ns && s[j].time_ns < f->begin_ns)
            j++;
        double sum = 0;
        size_t k = 0;
        for (size_t q = j; q < ns && s[q].time_ns < f->end_ns; q++) {
            sum += s[q].value * 0x1p-64; /* exact: sums of finite */
            k++;                         /* values stay finite */
        }
        if (k) {
            out->value[i] = sum / (double)k * 0x1p64;
            out->state[i] = AN_FC_MEAN;
        } else if (j > 0) {
            out->value[i] = s[j - 1].value;
            out->state[i] = AN_FC_CARRIED;
        } else {
            out->value[i] = NAN;
            out->state[i] = AN_FC_NONE;
        }
    }
}

cap_result an_frame_counters_compute(an_frame_counters *out,
                                     const an_capture *m,
                                     const char *const *globs, size_t nglobs)
{
    memset(out, 0, sizeof *out);
    size_t nf = m->nframes;
    out->nframes = nf;
    out->chosen = nglobs > 0;
    size_t want = 0, most = 0;
    for (size_t c = 0; c < m->ncounters; c++)
        if (m->counters[c].name && chosen(m->counters[c].name, globs, nglobs)) {
            want++;
            most = m->counters[c].n > most ? m->counters[c].n : most;
        }
    if (!want)
        return nglobs ? CAP_E_MISUSE : CAP_OK;
    an_sample *tmp = malloc((most ? most : 1) * sizeof *tmp);
    out->c = calloc(want, sizeof *out->c);
    if (!tmp || !out->c)
        goto fail;
    for (size_t c = 0; c < m->ncounters; c++) {
        const an_counter *C = &m->counters[c];
        if (!C->name || !chosen(C->name, globs, nglobs))
            continue;
        an_frame_counter *o = &out->c[out->n++];
        o->name = C->name;
        o->value = malloc((nf ? nf : 1) * sizeof *o->value);
        o->state = malloc(nf ? nf : 1);
        if (!o->value || !o->state)
            goto fail;
        size_t k = 0;
        int sorted = 1;
        for (size_t i = 0; i < C->n; i++) {
            if (!isfinite(C->s[i].value))
                continue;
            if (k && C->s[i].time_ns < tmp[k - 1].time_ns)
                sorted = 0;
            tmp[k++] = C->s[i];
        }
        /* samples recorded on several threads may interleave (samples
         * at the same time then carry in no particular order) */
        if (!sorted)
            qsort(tmp, k, sizeof *tmp, by_time);
        per_frame(m, tmp, k, o);
    }
    free(tmp);
    out->ntext = out->chosen || out->n < AN_FC_TEXT_MAX ? out->n
                                                         : AN_FC_TEXT_MAX;
    return CAP_OK;
fail:
    free(tmp);
    an_frame_counters_free(out);
    return CAP_E_NOMEM;
}

void an_frame_counters_free(an_frame_counters *fc)
{
    if (!fc)
        return;
    for (size_t i = 0; i < fc->n; i++) {
        free(fc->c[i].value);
        free(fc->c[i].state);
    }
    free(fc->c);
    memset(fc, 0, sizeof *fc);
}
