/* cvt_util.c - helpers shared by the converters (see cvt_util.h). */
#include "cvt_util.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

int cvt_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void cvt_sort(void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/* ---- string table ------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t len)
{
    /* XXH3: eight bytes and more a step, where FNV-1a took a multiply a
       byte (folded stacks are hashed once a scope) */
    return XXH3_64bits(s, len);
}

void cvt_strtab_free(cvt_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->str[i]);
    free(t->str);
    free(t->len);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

uint32_t cvt_strtab_find(const cvt_strtab *t, const char *s, size_t len)
{
    if (!t->nslot)
        return 0;
    size_t mask = t->nslot - 1;
    for (size_t i = (size_t)hash_bytes(s, len) & mask;; i = (i + 1) & mask) {
        uint32_t id = t->slot[i];
        if (!id)
            return 0;
        if (t->len[id - 1] == len && memcmp(t->str[id - 1], s, len) == 0)
            return id;
    }
}

static int rehash(cvt_strtab *t, size_t nslot)
{
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t id = 1; id <= t->n; id++) {
        size_t i = (size_t)hash_bytes(t->str[id - 1], t->len[id - 1]) &
                   (nslot - 1);
        while (slot[i])
            i = (i + 1) & (nslot - 1);
        slot[i] = (uint32_t)id;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return 0;
}

uint32_t cvt_strtab_intern(cvt_strtab *t, const char *s, size_t len)
{
    uint32_t id = cvt_strtab_find(t, s, len);
    if (id)
        return id;
    if (t->n >= UINT32_MAX - 1)
        return 0;
    if ((t->n + 1) * 2 > t->nslot &&
        rehash(t, t->nslot ? t->nslot * 2 : 64) != 0)
        return 0;
    size_t cap = t->cap;
    if (cvt_grow((void **)&t->str, &cap, t->n + 1, sizeof *t->str) != 0)
        return 0;
    if (cvt_grow((void **)&t->len, &t->cap, t->n + 1, sizeof *t->len) != 0)
        return 0;
    if (cap != t->cap) { /* keep both arrays the same size */
        char **q = realloc(t->str, t->cap * sizeof *q);
        if (!q)
            return 0;
        t->str = q;
    }
    char *c = malloc(len + 1);
    if (!c)
        return 0;
    memcpy(c, s, len);
    c[len] = '\0';
    t->str[t->n] = c;
    t->len[t->n] = len;
    id = (uint32_t)++t->n;
    size_t mask = t->nslot - 1;
    size_t i = (size_t)hash_bytes(s, len) & mask;
    while (t->slot[i])
        i = (i + 1) & mask;
    t->slot[i] = id;
    return id;
}

/* ---- diagnostics ------------------------------------------------------- */

/* Print one line: names from a trace may hold line breaks, which would
 * split a diagnostic; they become spaces. */
static void vline(FILE *out, const char *what, const char *file,
                  const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    char *msg = small;
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (!msg)
        msg = small;
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(out, "%s: %s: %s\n", what, file, msg);
    if (msg != small)
        free(msg);
}

void cvt_warn(cvt_diag *d, unsigned kind, const char *fmt, ...)
{
    if (kind >= 32)
        kind = 31;
    if (++d->count[kind] > CVT_WARN_LIMIT || !d->out)
        return;
    va_list ap;
    va_start(ap, fmt);
    vline(d->out, "warning", d->file, fmt, ap);
    va_end(ap);
}

void cvt_warn_summary(cvt_diag *d)
{
    if (!d->out)
        return;
    for (unsigned k = 0; k < 32; k++)
        if (d->count[k] > CVT_WARN_LIMIT)
            fprintf(d->out,
                    "warning: %s: %lu more warnings like the one above "
                    "were not shown\n",
                    d->file, d->count[k] - CVT_WARN_LIMIT);
}

void cvt_error(cvt_diag *d, const char *fmt, ...)
{
    if (!d->out)
        return;
    va_list ap;
    va_start(ap, fmt);
    vline(d->out, "error", d->file, fmt, ap);
    va_end(ap);
}

cap_result cvt_next_event(cvt_diag *d, cap_reader *r, cap_event *ev,
                          unsigned damage_kind, const char *verb)
{
    for (;;) {
        cap_result res = cap_reader_next(r, ev);
        const char *dt = cap_reader_detail(r);
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT) {
            cvt_warn(d, damage_kind, "%s; %s what can be read",
                     dt[0] ? dt : cap_result_message(res), verb);
            continue;
        }
        if (res != CAP_OK && res != CAP_DONE)
            cvt_error(d, "%s", dt[0] ? dt : cap_result_message(res));
        return res;
    }
}

/* ---- JSON output ------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void cvt_json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    fputc('"', f);
    /* runs of bytes written as they are go out in one fwrite: a write a
       character cost capture_convert's JSON most of its time */
    for (;;) {
        unsigned c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            p++;
            continue;
        }
        if (c == 0)
            break;
        size_t n = c >= 0x80 ? utf8_len(p) : 0;
        if (n > 0) {
            p += n;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
        } else {
            fputs("\\ufffd", f); /* not UTF-8 */
        }
        p++;
        run = p;
    }
    fwrite(run, 1, (size_t)(p - run), f);
    fputc('"', f);
}

char *cvt_fmt_u64(char *d, uint64_t v)
{
    char t[20];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *d++ = t[--n];
    return d;
}

char *cvt_fmt_us(char *d, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        *d++ = '-';
    d = cvt_fmt_u64(d, a / 1000);
    unsigned r = (unsigned)(a % 1000);
    d[0] = '.';
    d[1] = (char)('0' + r / 100);
    d[2] = (char)('0' + r / 10 % 10);
    d[3] = (char)('0' + r % 10);
    return d + 4;
}

void cvt_json_us(FILE *f, int64_t ns)
{
    char b[CVT_US_CHARS];
    fwrite(b, 1, (size_t)(cvt_fmt_us(b, ns) - b), f);
}

/* ---- numbers ----------------------------------------------------------- */

/* A decimal number as its significant digits (leading zeros dropped) and
 * the decimal exponent of the last one. */
typedef struct cvt_dec {
    char dig[40];
    size_t nd;
    long exp10;
} cvt_dec;

/* Digits, then '.' and digits, from s[*i..len) into *d. Returns whether
 * there was any digit. */
static int dec_mantissa(const char *s, size_t len, size_t *i, cvt_dec *d)
{
    int any = 0;
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        any = 1;
        if (d->nd == 0 && s[*i] == '0')
            continue;
        if (d->nd < sizeof d->dig)
            d->dig[d->nd++] = s[*i];
        else
            d->exp10++; /* digits past 40: only their magnitude counts */
    }
    if (*i < len && s[*i] == '.') {
        (*i)++;
        for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
            any = 1;
            if (d->nd == 0 && s[*i] == '0') {
                d->exp10--;
                continue;
            }
            if (d->nd < sizeof d->dig) {
                d->dig[d->nd++] = s[*i];
                d->exp10--;
            }
        }
    }
    return any;
}

/* An optional exponent ("e-3") at s[*i..len) added to d->exp10. Returns
 * 0, or -1 when malformed. */
static int dec_exponent(const char *s, size_t len, size_t *i, cvt_dec *d)
{
    if (*i >= len || (s[*i] != 'e' && s[*i] != 'E'))
        return 0;
    (*i)++;
    int eneg = 0;
    if (*i < len && (s[*i] == '-' || s[*i] == '+'))
        eneg = s[(*i)++] == '-';
    if (*i >= len || s[*i] < '0' || s[*i] > '9')
        return -1;
    long e = 0;
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
        if (e < 100000)
            e = e * 10 + (s[*i] - '0');
    d->exp10 += eneg ? -e : e;
    return 0;
}

int cvt_parse_us(const char *s, size_t len, int64_t *ns)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    cvt_dec d = {.nd = 0};
    if (!dec_mantissa(s, len, &i, &d) || dec_exponent(s, len, &i, &d) != 0 ||
        i != len)
        return -1;
    if (d.nd == 0) {
        *ns = 0;
        return 0;
    }
    long k = d.exp10 + 3; /* value in ns = digits * 10^k */
    /* keep = digits that stay before the decimal point */
    long keep = (long)d.nd + (k < 0 ? k : 0);
    if (keep + (k > 0 ? k : 0) > 19)
        return -1;
    uint64_t v = 0;
    for (long j = 0; j < keep; j++)
        v = v * 10 + (uint64_t)(d.dig[j] - '0');
    for (long j = 0; j < k; j++)
        v *= 10;
    if (keep >= 0 && keep < (long)d.nd && d.dig[keep] >= '5')
        v++; /* half away from zero: the first dropped digit decides */
    if (v > (uint64_t)CVT_NS_MAX)
        return -1;
    *ns = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

size_t cvt_name_clean(char *buf, const char *s, size_t len, int *cut)
{
    size_t n = 0;
    *cut = 0;
    while (n < len && s[n])
        n++;
    if (n < len)
        *cut = 1;
    if (n > CVT_NAME_MAX) {
        *cut = 1;
        n = CVT_NAME_MAX;
        /* back off to the start of a UTF-8 character */
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return n;
}

/* ---- scope order ------------------------------------------------------- */

struct cvt_pre_thread {
    cvt_scope *s;
    size_t n, cap;
};

void cvt_preorder_init(cvt_preorder *p,
                       int (*emit)(void *user, uint32_t tid,
                                   const cvt_scope *s, size_t n),
                       void *user)
{
    memset(p, 0, sizeof *p);
    p->emit = emit;
    p->user = user;
}

static int cmp_pre(const void *a, const void *b)
{
    const cvt_scope *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int flush_thread(cvt_preorder *p, uint32_t tid)
{
    struct cvt_pre_thread *t = &p->th[tid];
    if (!t->n)
        return 0;
    cvt_sort(t->s, t->n, sizeof *t->s, cmp_pre);
    int r = p->emit(p->user, tid, t->s, t->n);
    t->n = 0;
    return r;
}

int cvt_preorder_add(cvt_preorder *p, uint32_t tid, int64_t begin, int64_t end,
                     uint32_t name, uint32_t depth)
{
    if (tid >= p->nth) {
        size_t cap = p->nth;
        if (cvt_grow((void **)&p->th, &cap, (size_t)tid + 1, sizeof *p->th))
            return -1;
        memset(p->th + p->nth, 0, (cap - p->nth) * sizeof *p->th);
        p->nth = cap;
    }
    struct cvt_pre_thread *t = &p->th[tid];
    if (cvt_grow((void **)&t->s, &t->cap, t->n + 1, sizeof *t->s))
        return -1;
    t->s[t->n++] = (cvt_scope){begin, end, name, depth, p->ord++};
    return depth == 0 ? flush_thread(p, tid) : 0;
}

int cvt_preorder_finish(cvt_preorder *p, uint64_t *orphans)
{
    *orphans = 0;
    for (size_t i = 0; i < p->nth; i++) {
        *orphans += p->th[i].n;
        int r = flush_thread(p, (uint32_t)i);
        if (r)
            return r;
    }
    return 0;
}

void cvt_preorder_free(cvt_preorder *p)
{
    for (size_t i = 0; i < p->nth; i++)
        free(p->th[i].s);
    free(p->th);
    memset(p, 0, sizeof *p);
}
