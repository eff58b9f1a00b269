/*
 * fleet.c - one summary row per capture (see fleet.h).
 */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void hash_bytes(uLong *crc, uLong *adl, const void *p, size_t n)
{
    *crc = crc32(*crc, p, (uInt)n);
    *adl = adler32(*adl, p, (uInt)n);
}

static void hash_str(uLong *crc, uLong *adl, const char *s)
{
    if (s)
        hash_bytes(crc, adl, s, strlen(s) + 1); /* the NUL separates */
}

void an_capture_id(const an_capture *m, char out[17])
{
    uLong crc = crc32(0L, Z_NULL, 0), adl = adler32(0L, Z_NULL, 0);
    for (size_t i = 0; i < m->meta_n; i++) {
        hash_str(&crc, &adl, m->meta_k[i]);
        hash_str(&crc, &adl, m->meta_v[i]);
    }
    hash_str(&crc, &adl, m->clock_source);
    int64_t nums[4] = {m->origin_unix_ns, (int64_t)m->nframes, m->first_ns,
                       m->last_ns};
    hash_bytes(&crc, &adl, nums, sizeof nums);
    snprintf(out, 17, "%08lx%08lx", crc & 0xffffffffUL, adl & 0xffffffffUL);
}

static const char *meta_or_empty(const an_capture *m, const char *k)
{
    const char *v = an_meta(m, k);
    return v ? v : "";
}

void an_capture_row_compute(const an_capture *m, unsigned warnings, an_capture_row *s)
{
    memset(s, 0, sizeof *s);
    an_capture_id(m, s->id);
    s->file = m->path;
    s->program = meta_or_empty(m, "program");
    s->build = meta_or_empty(m, "build");
    s->machine = meta_or_empty(m, "machine");
    s->gpu = meta_or_empty(m, "gpu");
    s->start = meta_or_empty(m, "start_time");
    s->duration_s = m->last_ns > m->first_ns
                        ? an_elapsed_ns(m->first_ns, m->last_ns) / 1e9
                        : 0.0;
    if (an_frame_stats_compute(&s->fs, m) != CAP_OK)
        memset(&s->fs, 0, sizeof s->fs); /* out of memory: no statistics */
    double gpu = 0;
    for (size_t i = 0; i < m->nframes; i++)
        if (an_frame_has_gpu(m, i)) {
            gpu += (double)an_frame_gpu_ns(m, i);
            s->gpu_frames++;
        }
    s->gpu_ms_per_frame = s->gpu_frames ? gpu / 1e6 / (double)s->gpu_frames
                                        : 0.0;
    /* the top scopes by total self time, CPU and GPU together, waits
     * included but marked (ties: the earlier row) */
    double per = m->nframes ? (double)m->nframes : 1.0;
    for (size_t i = 0; i < m->nscopes; i++) {
        const an_scope *sc = &m->scopes[i];
        if (sc->self_ns <= 0)
            continue;
        size_t k = s->ntop;
        while (k > 0 && (double)sc->self_ns / 1e6 / per >
                            s->top[k - 1].self_ms_per_frame)
            k--;
        if (k >= AN_ROW_TOP)
            continue;
        size_t last = s->ntop < AN_ROW_TOP ? s->ntop : AN_ROW_TOP - 1;
        memmove(&s->top[k + 1], &s->top[k], (last - k) * sizeof s->top[0]);
        s->top[k] = (an_capture_row_scope){sc->name, sc->kind, sc->is_wait,
                                           (double)sc->self_ns / 1e6 / per};
        if (s->ntop < AN_ROW_TOP)
            s->ntop++;
    }
    s->warnings = warnings;
}
