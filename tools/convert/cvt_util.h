/*
 * cvt_util.h - helpers shared by the converters of capture_convert.
 *
 * Internal to tools/convert: growable arrays, a string table that hands out
 * dense ids, rate-limited warnings, JSON string output, exact decimal time
 * parsing, and the post-order -> pre-order reordering of a reader's scopes.
 * Nothing here is global or static mutable: every object is owned by the
 * converter call that created it.
 */
#ifndef CVT_UTIL_H
#define CVT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <capture/cap_reader.h>

/* ---- growable array ---------------------------------------------------- */

/* Make room for `need` elements of `elem` bytes in *p (capacity *cap).
 * Returns 0, or -1 when out of memory (then *p is unchanged). */
int cvt_grow(void **p, size_t *cap, size_t need, size_t elem);

/* qsort that accepts an empty (NULL) array. */
void cvt_sort(void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *));

/* ---- string table ------------------------------------------------------ */

/* Interned byte strings with ids 1..n in order of first insertion. */
typedef struct cvt_strtab {
    char **str;      /* str[id - 1], NUL-terminated */
    size_t *len;     /* len[id - 1] */
    size_t n, cap;
    uint32_t *slot;  /* open addressing: 0 empty, else id */
    size_t nslot;    /* power of two */
} cvt_strtab;

void cvt_strtab_free(cvt_strtab *t);
/* The id of s[0..len), inserted if new. 0 when out of memory. */
uint32_t cvt_strtab_intern(cvt_strtab *t, const char *s, size_t len);
/* The id of s[0..len), or 0 when absent. */
uint32_t cvt_strtab_find(const cvt_strtab *t, const char *s, size_t len);
static inline const char *cvt_strtab_get(const cvt_strtab *t, uint32_t id)
{
    return (id && id <= t->n) ? t->str[id - 1] : NULL;
}

/* ---- diagnostics ------------------------------------------------------- */

#define CVT_WARN_LIMIT 20 /* lines per kind before a summary takes over */

typedef struct cvt_diag {
    FILE *out;         /* NULL: silent */
    const char *file;  /* named in every line */
    unsigned long count[32];
} cvt_diag;

/* "warning: FILE: message" for kind `kind` (0..31); after CVT_WARN_LIMIT
 * lines of one kind the rest are only counted (see cvt_warn_summary). */
void cvt_warn(cvt_diag *d, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One line per kind that went over the limit: how many were not shown. */
void cvt_warn_summary(cvt_diag *d);
/* "error: FILE: message" (always printed when d->out is set). */
void cvt_error(cvt_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The reader's next event into *ev, reading past damage: a truncated or
 * corrupt stretch is warned about once per stretch, as kind `damage_kind`
 * ("...; VERB what can be read"), and skipped. Returns CAP_OK with *ev
 * set, CAP_DONE at the end, or the reader's error, already reported with
 * cvt_error (the caller stops). */
cap_result cvt_next_event(cvt_diag *d, cap_reader *r, cap_event *ev,
                          unsigned damage_kind, const char *verb);

/* ---- JSON output ------------------------------------------------------- */

/* Write s as a JSON string literal with quotes. Control characters are
 * escaped, bytes that are not valid UTF-8 become U+FFFD. */
void cvt_json_string(FILE *f, const char *s);
/* Write ns as microseconds with exactly three decimals ("12.345"). */
void cvt_json_us(FILE *f, int64_t ns);
/* The characters cvt_fmt_us writes at most ("-9223372036854775.808"). */
#define CVT_US_CHARS 24
/* Write v in decimal at d (at most 20 characters, no terminator); returns
 * the end. */
char *cvt_fmt_u64(char *d, uint64_t v);
/* Write ns at d as cvt_json_us writes it (at most CVT_US_CHARS
 * characters, no terminator); returns the end. */
char *cvt_fmt_us(char *d, int64_t ns);

/* ---- numbers ----------------------------------------------------------- */

#define CVT_NS_MAX ((int64_t)1 << 62)

/* Parse a decimal number of microseconds (JSON number syntax, a leading
 * '+' and a missing integer part tolerated) into nanoseconds, exactly,
 * rounding half away from zero. Returns 0, or -1 when s is not a number or
 * its magnitude exceeds CVT_NS_MAX ns. */
int cvt_parse_us(const char *s, size_t len, int64_t *ns);

/* Copy a name into buf (size > CVT_NAME_MAX), cut at the first NUL and to
 * at most CVT_NAME_MAX bytes on a UTF-8 character boundary. Returns the
 * length; *cut is set when bytes were dropped. */
#define CVT_NAME_MAX 4096u
size_t cvt_name_clean(char *buf, const char *s, size_t len, int *cut);

/* ---- scope order ------------------------------------------------------- */

/* A closed scope as a reader yields it (post-order, children first). */
typedef struct cvt_scope {
    int64_t begin, end;
    uint32_t name;
    uint32_t depth;
    uint64_t ord; /* arrival order */
} cvt_scope;

/* Per-thread buffers that turn post-order scopes into pre-order: a thread's
 * scopes are held until their root (depth 0) closes, then handed to `emit`
 * parents first. Memory: one root's subtree per thread. */
typedef struct cvt_preorder {
    struct cvt_pre_thread *th;
    size_t nth;
    uint64_t ord;
    int (*emit)(void *user, uint32_t tid, const cvt_scope *s, size_t n);
    void *user;
} cvt_preorder;

void cvt_preorder_init(cvt_preorder *p,
                       int (*emit)(void *user, uint32_t tid,
                                   const cvt_scope *s, size_t n),
                       void *user);
/* Add one scope; may call emit. Returns emit's non-zero result, or -1 when
 * out of memory, else 0. */
int cvt_preorder_add(cvt_preorder *p, uint32_t tid, int64_t begin, int64_t end,
                     uint32_t name, uint32_t depth);
/* Emit what is still held (scopes whose root never closed: a truncated
 * capture), thread by thread. *orphans counts them. */
int cvt_preorder_finish(cvt_preorder *p, uint64_t *orphans);
void cvt_preorder_free(cvt_preorder *p);

#endif
