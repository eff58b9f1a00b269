/* pack.c - --frames' values packed past the budget, spilled to a temporary file. */
#include "model_int.h"

uint8_t *ml_pack_chunk(const struct an_pack *p, uint32_t c)
{
    c--;
    return p->slab[c / PACK_SLAB] + (size_t)(c % PACK_SLAB) * PACK_CHUNK;
}

static void pack_free_slabs(struct an_pack *p)
{
    for (size_t i = 0; i < p->nslab; i++)
        free(p->slab[i]);
    free(p->slab);
    p->slab = NULL;
    p->nslab = p->slab_cap = 0;
}

void ml_pack_free(struct an_pack *p)
{
    if (!p)
        return;
    pack_free_slabs(p);
    if (p->fd >= 0)
        close(p->fd);
    free(p->piece);
    free(p->row);
    free(p);
}

/* A new chunk, after `prev` (0: the row's first); 0 past max_chunks or
 * out of memory. */
static uint32_t pack_new_chunk(struct an_pack *p, uint32_t prev)
{
    if (p->nchunks >= p->max_chunks)
        return 0;
    if (p->nchunks / PACK_SLAB >= p->nslab) {
        size_t bytes = (size_t)PACK_SLAB * PACK_CHUNK;
        if (an_grow((void **)&p->slab, &p->slab_cap, p->nslab + 1,
                    sizeof *p->slab) != 0 ||
            (!(p->slab[p->nslab] = ml_huge_alloc(bytes)) &&
             !(p->slab[p->nslab] = malloc(bytes))))
            return 0;
        p->nslab++;
    }
    uint32_t c = ++p->nchunks;
    uint8_t *b = ml_pack_chunk(p, c);
    memset(b, 0, PACK_HEAD);
    if (prev)
        memcpy(ml_pack_chunk(p, prev), &c, sizeof c);
    return c;
}

#ifdef __linux__
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
/* 1 when dir is a tmpfs (its files in memory), 0 otherwise or unknown. */
static int in_memory(const char *dir)
{
    struct statfs sf;
    return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC;
}
#else
static int in_memory(const char *dir)
{
    (void)dir;
    return 0;
}
#endif

const char *an_spill_dir(const char *tmpdir, const char *tmp,
                         const char *var_tmp)
{
    if (tmpdir && *tmpdir)
        return tmpdir;
    if (in_memory(tmp) && access(var_tmp, W_OK | X_OK) == 0 &&
        !in_memory(var_tmp))
        return var_tmp;
    return tmp;
}

/* An unlinked temporary file in an_spill_dir's choice: its descriptor, or
 * -1. */
static int pack_tempfile(void)
{
    const char *dir = an_spill_dir(getenv("TMPDIR"), "/tmp", "/var/tmp");
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/capture-pack-XXXXXX", dir) >=
        (int)sizeof path)
        return -1;
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The tail chunk's header made to count its bytes. */
static void pack_sync(struct an_pack *p, const pack_row *pr)
{
    uint16_t used = (uint16_t)pr->used;
    memcpy(ml_pack_chunk(p, pr->tail) + 4, &used, sizeof used);
}

/* Every row's bytes in memory appended to the temporary file, one piece a
 * row, and the chunks emptied for reuse (each row's next frame kept): 0,
 * or -1 (spilling off, no file, a failed write: the caller gives the
 * pack up). */
static int pack_spill(struct an_pack *p)
{
    if (!p->spill)
        return -1;
    /* past a file size limit (ulimit -f) a write would raise SIGXFSZ,
       which ends the program: give up before */
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        p->fbytes + (uint64_t)p->nchunks * PACK_CHUNK > (uint64_t)fl.rlim_cur)
        return -1;
    if (p->fd < 0 && (p->fd = pack_tempfile()) < 0)
        return -1;
    uint8_t buf[1 << 16];
    size_t nb = 0;
    for (size_t r = 0; r < p->nrow; r++) {
        pack_row *pr = &p->row[r];
        if (!pr->head)
            continue;
        if (an_grow((void **)&p->piece, &p->piece_cap, p->npiece + 1,
                    sizeof *p->piece) != 0)
            return -1;
        pack_sync(p, pr);
        pack_piece *pc = &p->piece[p->npiece++];
        pc->off = p->fbytes + nb;
        pc->row = (uint32_t)r;
        size_t len = 0;
        for (uint32_t c = pr->head; c;) {
            const uint8_t *b = ml_pack_chunk(p, c);
            uint16_t used;
            memcpy(&used, b + 4, sizeof used);
            size_t n = (size_t)used - PACK_HEAD;
            if (nb + n > sizeof buf) {
                if (write_all(p->fd, buf, nb) != 0)
                    return -1;
                p->fbytes += nb;
                nb = 0;
            }
            memcpy(buf + nb, b + PACK_HEAD, n);
            nb += n;
            len += n;
            memcpy(&c, b, sizeof c);
        }
        if (len > UINT32_MAX)
            return -1;
        pc->len = (uint32_t)len;
        pr->head = pr->tail = 0;
    }
    if (nb && write_all(p->fd, buf, nb) != 0)
        return -1;
    p->fbytes += nb;
    p->nchunks = 0;
    return 0;
}

/* The end of the load: a pack that spilled puts the rest in its file and
 * frees its slabs. 0, or -1 (give the pack up). */
int ml_pack_finish(struct an_pack *p)
{
    if (p->fd < 0) {
        for (size_t r = 0; r < p->nrow; r++)
            if (p->row[r].tail)
                pack_sync(p, &p->row[r]);
        return 0;
    }
    if (pack_spill(p) != 0)
        return -1;
    pack_free_slabs(p);
    return 0;
}

/* pack_put where the row is new, its tail chunk full or none (out of
 * line: once in about 40 values of a row). */
__attribute__((noinline)) int ml_pack_put_new(struct an_pack *p,
                                                  size_t row, uint64_t frame,
                                                  int64_t v)
{
    if (row >= p->nrow) {
        size_t n = p->nrow ? p->nrow : 64;
        while (n <= row)
            n *= 2;
        pack_row *q = realloc(p->row, n * sizeof *q);
        if (!q)
            return -1;
        memset(q + p->nrow, 0, (n - p->nrow) * sizeof *q);
        p->row = q;
        p->nrow = n;
    }
    pack_row *pr = &p->row[row];
    if (frame < pr->next)
        return -1;
    if (!pr->tail || pr->used + 20 > PACK_CHUNK) { /* two varints: <= 20 */
        if (pr->tail)
            pack_sync(p, pr);
        uint32_t c = pack_new_chunk(p, pr->tail);
        if (!c && p->nchunks >= p->max_chunks && pack_spill(p) == 0)
            c = pack_new_chunk(p, 0); /* every row starts a new piece */
        if (!c)
            return -1;
        if (!pr->head)
            pr->head = c;
        pr->tail = c;
        pr->used = PACK_HEAD;
    }
    uint8_t *b = ml_pack_chunk(p, pr->tail);
    pr->used = (uint32_t)(pack_write(b + pr->used, pr, frame, v) - b);
    pr->next = frame + 1;
    p->values++;
    return 0;
}

/* The pack let go: --frames reads the file again (an_series_walk). */
void ml_pack_give_up(loader *L)
{
    ml_pack_free(L->m->pack);
    L->m->pack = NULL;
    L->packing = 0;
    L->dropping = 1;
    for (size_t i = 0; i < L->acc_cap; i++)
        L->acc[i].frame = NONE;
}

/* The pack's chunks in memory: what the 64 MiB read_capture keeps within
 * leaves beside the model's frames (AN_PACK_MAX_BYTES less 64 bytes a
 * frame), at least PACK_MIN_BYTES where it may spill; pack_bytes or
 * CAP_PACK_BYTES=N in the environment (tests) set it, at least a chunk
 * where it may spill. */
static void pack_limits(const loader *L, struct an_pack *p)
{
    size_t set = ml_env_size("CAP_PACK_BYTES", L->o->pack_bytes);
    size_t most = set ? set : AN_PACK_MAX_BYTES;
    size_t frames = L->m->nframes * (size_t)64;
    size_t b = frames < most ? most - frames : 0;
    p->spill = !L->o->pack_no_spill;
    if (p->spill && !set && b < PACK_MIN_BYTES)
        b = PACK_MIN_BYTES;
    size_t c = b / PACK_CHUNK;
    if (p->spill && c == 0)
        c = 1;
    p->max_chunks = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* The exact series (each row's frames in order, or no pack) moved into a
 * new pack: 0, or -1 when they do not fit it (none is kept then). */
static int pack_start(loader *L)
{
    an_capture *m = L->m;
    struct an_pack *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->fd = -1;
    pack_limits(L, p);
    m->pack = p;
    for (size_t i = 0; i < m->nscopes; i++) {
        const an_scope *s = &m->scopes[i];
        if (!s->pf_sorted)
            return -1;
        for (size_t k = 0; k < s->pf_n; k++)
            if (pack_put(p, i, s->pf_frame[k], s->pf_self[k]) != 0)
                return -1;
    }
    return 0;
}

/* The exact series outgrew the budget: summarise what they hold (frames
 * more than a ring behind the furthest one seen) or move it to the ring,
 * free them, and go on with the ring. */
int ml_spill(loader *L)
{
    an_capture *m = L->m;
    if (L->o->series_reread) { /* packed, else read again when asked */
        L->win = ml_win_frames(m->nscopes);
        m->win = L->win; /* for an_series_scan */
        m->approx = 1;
        m->reread = 1;
        L->packing = pack_start(L) == 0;
        for (size_t i = 0; i < m->nscopes; i++)
            ml_series_free(m, &m->scopes[i]);
        ml_pf_arena_free(m);
        if (!L->packing)
            ml_pack_give_up(L);
        return 0;
    }
    for (size_t i = 0; i < L->acc_cap && i < m->nscopes; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE &&
            ml_pf_add(m, &m->scopes[i], (long)a->frame, a->sum) < 0)
            return -1;
        a->frame = NONE;
    }
    uint64_t hi = 0;
    for (size_t i = 0; i < m->nscopes; i++)
        for (size_t k = 0; k < m->scopes[i].pf_n; k++)
            if (m->scopes[i].pf_frame[k] > hi)
                hi = m->scopes[i].pf_frame[k];
    L->win = ml_win_frames(m->nscopes);
    m->win = L->win;
    L->wbase = hi + 1 > L->win ? hi + 1 - L->win : 0;
    L->whi = hi;
    L->windowed = 1;
    m->approx = 1;
    /* the ring for every row at once (the same window as made row by
       row: ml_win_frames(ring_cap) is ml_win_frames(nscopes)); grown a row at
       a time it was allocated, faulted in and copied three times (10 ms
       of a 10 M scope load, with the reader thread waiting) */
    if (m->nscopes && ml_win_grow(L, m->nscopes - 1) != 0)
        return -1;
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope *s = &m->scopes[i];
        if (ml_sort_pf(s) != 0)
            return -1;
        for (size_t k = 0; k < s->pf_n; k++)
            if ((s->pf_frame[k] < L->wbase
                     ? ml_emit(L, i, s->pf_frame[k], s->pf_self[k])
                     : ml_win_note(L, i, s->pf_frame[k], s->pf_self[k])) != 0)
                return -1;
        ml_series_free(m, s);
    }
    ml_pf_arena_free(m);
    return 0;
}
