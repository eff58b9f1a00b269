/* series.c - each scope row's exact per-frame series (pf_*), in an arena. */
#include "model_int.h"

/* model.h: read each time (no state kept between loads). */
int an_huge_pages(void)
{
#ifdef MADV_HUGEPAGE
    char mode[64] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    return strstr(mode, "[always]") || strstr(mode, "[madvise]");
#else
    return 0;
#endif
}

/* Where the system makes memory of at least 2 MiB out of huge pages on
 * request (an_huge_pages), bytes (not zeroed) on 2 MiB boundaries, asked
 * as huge pages: a fault each 2 MiB instead of each 4 KiB, which on this
 * project's virtual machines costs about 10 us a fault (a 10 M scope load
 * took 1,650 to 2,460 of them). NULL where it does not, or when out of
 * memory: the caller allocates as usual. Freed with free. */
void *ml_huge_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    size_t huge = (size_t)2 << 20;
    if (bytes < huge || !an_huge_pages())
        return NULL;
    void *p = NULL;
    size_t len = (bytes + huge - 1) / huge * huge;
    if (posix_memalign(&p, huge, len) != 0)
        return NULL;
    (void)madvise(p, len, MADV_HUGEPAGE);
    return p;
#else
    (void)bytes;
    return NULL;
#endif
}

/* The exact series' arena (PF_ARENA_MIN_FILE, model_int.h, says why). */
void ml_pf_arena_make(an_capture *m, size_t budget)
{
    /* CAP_PF_ARENA_VALUES=N (tests): room for N values, so that the rows
       outgrow it and go on in the heap */
    size_t values = ml_env_size("CAP_PF_ARENA_VALUES", budget * 4 + 16384);
    size_t bytes = values * (sizeof(int64_t) + sizeof(uint32_t)),
           huge = (size_t)2 << 20;
    m->pf_arena = ml_huge_alloc(bytes < huge ? huge : bytes);
    m->pf_arena_len = m->pf_arena ? bytes : 0;
    m->pf_arena_used = 0;
}

static int pf_in_arena(const an_capture *m, const void *p)
{
    const unsigned char *q = p;
    return q && m->pf_arena && q >= m->pf_arena &&
           q < m->pf_arena + m->pf_arena_len;
}

/* Let go of the arena, once no row's series is in it. */
void ml_pf_arena_free(an_capture *m)
{
    if (m->pf_arena_used > m->pf_arena_peak)
        m->pf_arena_peak = m->pf_arena_used;
    free(m->pf_arena);
    m->pf_arena = NULL;
    m->pf_arena_len = m->pf_arena_used = 0;
}

/* Row s's series made room for n values (n > pf_n): from the arena while
 * it has room, else from the heap. 0, or -1 out of memory. */
static int pf_grow(an_capture *m, an_scope *s, size_t n)
{
    size_t need = n * (sizeof(int64_t) + sizeof(uint32_t));
    int64_t *b;
    uint32_t *a;
    int old_in = pf_in_arena(m, s->pf_self);
    if (m->pf_arena && (n & 1) == 0 &&
        m->pf_arena_len - m->pf_arena_used >= need) {
        /* the values first: n even keeps the next ones 8-aligned */
        b = (int64_t *)(void *)(m->pf_arena + m->pf_arena_used);
        a = (uint32_t *)(void *)(b + n);
        m->pf_arena_used += need;
    } else {
        b = malloc(n * sizeof *b);
        a = malloc(n * sizeof *a);
        if (!a || !b) {
            free(a);
            free(b);
            return -1;
        }
    }
    if (s->pf_n) {
        memcpy(b, s->pf_self, s->pf_n * sizeof *b);
        memcpy(a, s->pf_frame, s->pf_n * sizeof *a);
    }
    if (!old_in) {
        free(s->pf_self);
        free(s->pf_frame);
    }
    s->pf_self = b;
    s->pf_frame = a;
    s->pf_cap = n;
    return 0;
}

int ml_pf_add(an_capture *m, an_scope *s, long frame, int64_t self)
{
    if (frame < 0)
        return 0;
    uint32_t f = (uint32_t)frame;
    if (s->pf_n && s->pf_frame[s->pf_n - 1] == f) {
        cap_stats_sat_add(&s->pf_self[s->pf_n - 1], self);
        return 0;
    }
    if (s->pf_n == s->pf_cap &&
        pf_grow(m, s, s->pf_cap ? s->pf_cap * 2 : 2) != 0)
        return -1;
    if (s->pf_n && s->pf_frame[s->pf_n - 1] > f)
        s->pf_sorted = 0;
    s->pf_frame[s->pf_n] = f;
    s->pf_self[s->pf_n] = self;
    s->pf_n++;
    return 1;
}

int ml_pf_note(loader *L, long si, long frame, int64_t self, uint32_t who)
{
    if (frame < 0)
        return 0;
    if (L->reread) { /* --frames: its lag measured, its values let go */
        lag_note(L, (uint64_t)frame);
        if (L->dropping)
            return 0;
    }
    if ((size_t)si >= L->acc_cap) {
        size_t n = L->acc_cap ? L->acc_cap : 256;
        while (n <= (size_t)si)
            n *= 2;
        pf_acc *p = realloc(L->acc, n * sizeof *p);
        if (!p)
            return -1;
        for (size_t i = L->acc_cap; i < n; i++)
            p[i] = (pf_acc){.frame = NONE, .who = NONE, .late_frame = NONE};
        L->acc = p;
        L->acc_cap = n;
    }
    pf_acc *a = &L->acc[si];
    if (a->who != who) {
        a->multi |= a->who != NONE;
        a->who = who;
    }
    if (L->windowed)
        return ml_win_note(L, (size_t)si, (uint64_t)frame, self);
    if (a->frame == (uint32_t)frame) {
        cap_stats_sat_add(&a->sum, self);
        return 0;
    }
    if (a->frame != NONE && L->packing) {
        pack_move(L, a, (size_t)si, (uint32_t)frame, self);
        return 0;
    }
    if (a->frame != NONE) {
        int k = ml_pf_add(L->m, &L->m->scopes[si], (long)a->frame, a->sum);
        if (k < 0)
            return -1;
        if (k > 0 && L->budget && ++L->pf_total > L->budget) {
            a->frame = (uint32_t)frame;
            a->sum = self;
            return ml_spill(L);
        }
    }
    a->frame = (uint32_t)frame;
    a->sum = self;
    return 0;
}

int ml_pf_flush(loader *L)
{
    if (L->windowed)
        return ml_win_flush_all(L);
    for (size_t i = 0; L->packing && i < L->acc_cap; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE && pack_put(L->m->pack, i, a->frame, a->sum) != 0)
            ml_pack_give_up(L);
        a->frame = NONE;
    }
    if (L->packing) {
        if (ml_pack_finish(L->m->pack) != 0)
            ml_pack_give_up(L);
        else
            L->m->pack_file_bytes = L->m->pack->fbytes;
    }
    for (size_t i = 0; i < L->acc_cap && i < L->m->nscopes; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE &&
            ml_pf_add(L->m, &L->m->scopes[i], (long)a->frame, a->sum) < 0)
            return -1;
        a->frame = NONE;
    }
    return 0;
}

/* Let go of a row's exact series (of m). */
void ml_series_free(an_capture *m, an_scope *s)
{
    if (!pf_in_arena(m, s->pf_self)) {
        free(s->pf_frame);
        free(s->pf_self);
    }
    s->pf_frame = NULL;
    s->pf_self = NULL;
    s->pf_n = s->pf_cap = 0;
    s->pf_sorted = 1;
}

/* The positive number in environment variable `name` (tests: a budget
 * small enough for a fixture to pass it), else dflt. */
size_t ml_env_size(const char *name, size_t dflt)
{
    const char *e = getenv(name);
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end == 0 && v > 0)
            return (size_t)v;
    }
    return dflt;
}

typedef struct pf_pair {
    uint32_t f;
    int64_t v;
} pf_pair;

static int pf_cmp(const void *a, const void *b)
{
    const pf_pair *x = a, *y = b;
    return x->f < y->f ? -1 : x->f > y->f;
}

int ml_sort_pf(an_scope *s)
{
    if (s->pf_sorted)
        return 0;
    pf_pair *t = malloc(s->pf_n * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->pf_n; i++)
        t[i] = (pf_pair){s->pf_frame[i], s->pf_self[i]};
    qsort(t, s->pf_n, sizeof *t, pf_cmp); /* stable enough: equal keys sum */
    size_t w = 0;
    for (size_t i = 0; i < s->pf_n; i++) {
        if (w && s->pf_frame[w - 1] == t[i].f) {
            cap_stats_sat_add(&s->pf_self[w - 1], t[i].v);
        } else {
            s->pf_frame[w] = t[i].f;
            s->pf_self[w] = t[i].v;
            w++;
        }
    }
    free(t);
    s->pf_n = w;
    s->pf_sorted = 1;
    return 0;
}

size_t ml_series_budget(const an_options *o)
{
    if (!o->series_budget)
        return 0;
    return ml_env_size("CAP_SERIES_BUDGET", o->series_budget);
}
