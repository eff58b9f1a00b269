/* frames.c - the frame index: frames sorted, found by time or by index. */
#include "model_int.h"

/* ---- frames ------------------------------------------------------------ */

int ml_frame_cmp(const void *a, const void *b)
{
    const frame_ix *x = a, *y = b;
    if (x->f.begin_ns != y->f.begin_ns)
        return x->f.begin_ns < y->f.begin_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Frames i - 1 and i in the order ml_frame_cmp sorts them. */
int ml_frames_in_order(const an_capture *m, size_t i)
{
    const an_frame *x = &m->frames[i - 1], *y = &m->frames[i];
    if (x->begin_ns != y->begin_ns)
        return x->begin_ns < y->begin_ns;
    return an_frame_index(m, i - 1) <= an_frame_index(m, i);
}

/* Drop m->frame_index when its indices are frame_index0 + position,
 * increasing (no wrap), as an_frame_index then gives them. */
void ml_frame_index_compact(an_capture *m)
{
    if (!m->frame_index)
        return;
    for (size_t i = 0; i < m->nframes; i++)
        if (m->frame_index[i] != m->frame_index[0] + i ||
            m->frame_index[i] < m->frame_index[0])
            return;
    m->frame_index0 = m->nframes ? m->frame_index[0] : 0;
    free(m->frame_index);
    m->frame_index = NULL;
}

size_t an_frame_after(const an_capture *m, int64_t t)
{
    size_t lo = 0, hi = m->nframes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->frames[mid].begin_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Position of the frame containing t (up to frame_until), or -1. */
long ml_frame_at(const an_capture *m, int64_t t, size_t *hint)
{
    size_t n = m->nframes;
    if (!n)
        return -1;
    size_t h = *hint < n ? *hint : 0;
    const an_frame *f = m->frames;
    if (f[h].begin_ns <= t && t < frame_until(m, h))
        return (long)h;
    if (h + 1 < n && f[h + 1].begin_ns <= t && t < frame_until(m, h + 1)) {
        *hint = h + 1;
        return (long)h + 1;
    }
    size_t lo = an_frame_after(m, t);
    if (lo == 0)
        return -1;
    size_t k = lo - 1;
    if (t >= frame_until(m, k) &&
        !(f[k].end_ns == f[k].begin_ns && t == f[k].begin_ns))
        return -1;
    *hint = k;
    return (long)k;
}

long ml_frame_by_index(const an_capture *m, uint64_t index)
{
    if (!m->frame_index) /* frame_index0 + position, increasing */
        return index >= m->frame_index0 && index - m->frame_index0 < m->nframes
                   ? (long)(index - m->frame_index0)
                   : -1;
    size_t lo = 0, hi = m->nframes;
    /* frames are sorted by begin, and indices grow with begin */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->frame_index[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->nframes && m->frame_index[lo] == index)
        return (long)lo;
    return -1;
}
