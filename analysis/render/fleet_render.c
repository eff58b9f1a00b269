/*
 * fleet_render.c - the --summary table and the --export tables.
 */
#include "fleet_render.h"

#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* "gpu", "cpu", or "wait" for a CPU scope that is time spent blocked (the
 * producer's tag or --wait): a wait at the top of a capture says what it
 * waited on, not what worked */
static const char *kind_word(an_kind k, int is_wait)
{
    return k == AN_GPU ? "gpu" : is_wait ? "wait" : "cpu";
}

/* ---- --summary ---------------------------------------------------------- */

int an_fleet_header(FILE *out, int csv)
{
    if (csv) {
        fputs("capture_id,file,program,build,machine,gpu,start_time,"
              "duration_s,frames,frame_mean_ms,frame_median_ms,frame_p95_ms,"
              "frame_p99_ms,low1_ms,stutters,gpu_ms_per_frame,gpu_frames",
              out);
        for (int i = 1; i <= AN_ROW_TOP; i++)
            fprintf(out, ",top%d_scope,top%d_kind,top%d_self_ms_per_frame", i,
                    i, i);
        fputs(",warnings\n", out);
    } else {
        fprintf(out, "%-16s %7s %9s %9s %9s %9s %8s %9s  %-38s %8s  %s\n",
                "capture", "frames", "mean ms", "p95 ms", "p99 ms", "1% low",
                "stutters", "gpu ms", "top scope (self ms/frame)", "warnings",
                "file");
    }
    return ferror(out) ? -1 : 0;
}

int an_fleet_row(FILE *out, int csv, const an_capture_row *s)
{
    if (csv) {
        fprintf(out, "%s,", s->id);
        const char *txt[] = {s->file, s->program, s->build, s->machine, s->gpu,
                             s->start};
        for (size_t i = 0; i < sizeof txt / sizeof *txt; i++) {
            an_csv_field(out, txt[i]);
            fputc(',', out);
        }
        fprintf(out, "%.3f,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%zu,%.3f,%zu",
                s->duration_s, s->fs.n, s->fs.mean, s->fs.median, s->fs.p95,
                s->fs.p99, s->fs.low1, s->fs.stutters, s->gpu_ms_per_frame,
                s->gpu_frames);
        for (size_t i = 0; i < AN_ROW_TOP; i++) {
            if (i < s->ntop) {
                fputc(',', out);
                an_csv_field(out, s->top[i].name);
                fprintf(out, ",%s,%.3f", kind_word(s->top[i].kind,
                                                  s->top[i].is_wait),
                        s->top[i].self_ms_per_frame);
            } else {
                fputs(",,,", out);
            }
        }
        fprintf(out, ",%u\n", s->warnings);
    } else {
        char top[64] = "-";
        if (s->ntop) {
            char nm[40];
            snprintf(nm, sizeof nm, "%s", s->top[0].name);
            if (strlen(s->top[0].name) >= sizeof nm)
                memcpy(nm + sizeof nm - 4, "...", 4);
            snprintf(top, sizeof top, "%s (%.3f%s)", nm,
                     s->top[0].self_ms_per_frame,
                     s->top[0].is_wait ? ", wait" : "");
        }
        fprintf(out, "%-16s %7zu %9.3f %9.3f %9.3f %9.3f %8zu %9.3f  %-38s "
                     "%8u  %s\n",
                s->id, s->fs.n, s->fs.mean, s->fs.p95, s->fs.p99, s->fs.low1,
                s->fs.stutters, s->gpu_ms_per_frame, top, s->warnings,
                s->file);
    }
    return ferror(out) ? -1 : 0;
}

/* ---- --export ----------------------------------------------------------- */

enum { T_CAPTURES, T_FRAMES, T_SCOPES, T_COUNTERS, T_N };

static const char *const table_file[T_N] = {
    "captures.csv.gz", "frames.csv.gz", "scopes.csv.gz", "counters.csv.gz"};

struct an_export {
    gzFile gz[T_N];
    char *path[T_N];
    int failed;          /* the first failure sticks */
    char msg[512];
    char *buf;           /* one row, built in memory then written */
    size_t len, cap;
};

static void fail(an_export *x, int t, const char *why)
{
    if (x->failed)
        return;
    x->failed = 1;
    snprintf(x->msg, sizeof x->msg, "%s: %s", x->path[t], why);
}

static void put(an_export *x, const void *p, size_t n)
{
    if (x->len + n + 1 > x->cap) {
        size_t c = x->cap ? x->cap : 256;
        while (x->len + n + 1 > c)
            c *= 2;
        char *b = realloc(x->buf, c);
        if (!b) {
            x->failed = 1;
            snprintf(x->msg, sizeof x->msg, "out of memory");
            return;
        }
        x->buf = b;
        x->cap = c;
    }
    memcpy(x->buf + x->len, p, n);
    x->len += n;
}

static void putf(an_export *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(an_export *x, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(x, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A CSV text field, quoted by libcsv when it needs quoting. */
static void put_field(an_export *x, const char *s)
{
    size_t n = strlen(s);
    if (!(strpbrk(s, ",\"\r\n") || s[0] == ' ' || (n && s[n - 1] == ' '))) {
        put(x, s, n);
        return;
    }
    size_t need = csv_write(NULL, 0, s, n);
    char *q = malloc(need);
    if (!q) {
        x->failed = 1;
        snprintf(x->msg, sizeof x->msg, "out of memory");
        return;
    }
    csv_write(q, need, s, n);
    put(x, q, need);
    free(q);
}

static void end_row(an_export *x, int t)
{
    put(x, "\n", 1);
    if (x->failed)
        return;
    if (gzwrite(x->gz[t], x->buf, (unsigned)x->len) != (int)x->len) {
        int ze;
        const char *m = gzerror(x->gz[t], &ze);
        fail(x, t, ze == Z_ERRNO ? strerror(errno) : m);
    }
    x->len = 0;
}

int an_export_open(an_export **out, const char *dir, char *err, size_t n)
{
    *out = NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, n, "%s: cannot create the directory: %s", dir,
                 strerror(errno));
        return -1;
    }
    an_export *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    for (int t = 0; t < T_N; t++) {
        size_t len = strlen(dir) + strlen(table_file[t]) + 2;
        x->path[t] = malloc(len);
        if (!x->path[t]) {
            snprintf(err, n, "out of memory");
            an_export_close(x, NULL, 0);
            return -1;
        }
        snprintf(x->path[t], len, "%s/%s", dir, table_file[t]);
        x->gz[t] = gzopen(x->path[t], "wb6");
        if (!x->gz[t]) {
            snprintf(err, n, "%s: cannot create: %s", x->path[t],
                     errno ? strerror(errno) : "gzopen failed");
            an_export_close(x, NULL, 0);
            return -1;
        }
    }
    static const char *const head[T_N] = {
        NULL, /* captures: the --summary CSV header */
        "capture_id,frame,start_s,frame_ms,gpu_ms",
        "capture_id,frame,kind,scope,self_ms",
        "capture_id,counter,time_s,value"};
    char *sum = NULL;
    size_t sl = 0;
    FILE *m = open_memstream(&sum, &sl);
    if (!m || an_fleet_header(m, 1) != 0 || fclose(m) != 0) {
        free(sum);
        snprintf(err, n, "out of memory");
        an_export_close(x, NULL, 0);
        return -1;
    }
    put(x, sum, sl - 1); /* without its newline: end_row adds one */
    free(sum);
    end_row(x, T_CAPTURES);
    for (int t = 1; t < T_N; t++) {
        put(x, head[t], strlen(head[t]));
        end_row(x, t);
    }
    if (x->failed) {
        snprintf(err, n, "%s", x->msg);
        an_export_close(x, NULL, 0);
        return -1;
    }
    *out = x;
    return 0;
}

typedef struct scope_rows {
    an_export *x;
    const an_capture *m;
    const char *id;
} scope_rows;

/* One scopes.csv.gz row: row's self time in frame (an_series_fn). */
static void scope_row(void *ctx, size_t row, size_t frame, int64_t self_ns)
{
    scope_rows *r = ctx;
    const an_capture *m = r->m;
    if (r->x->failed || row >= m->nscopes || frame >= m->nframes)
        return;
    const an_scope *sc = &m->scopes[row];
    putf(r->x, "%s,%llu,%s,", r->id,
         (unsigned long long)an_frame_index(m, frame),
         kind_word(sc->kind, sc->is_wait));
    put_field(r->x, sc->name);
    putf(r->x, ",%.6f", (double)self_ns / 1e6);
    end_row(r->x, T_SCOPES);
}

int an_export_add(an_export *x, const an_capture *m, const an_capture_row *s,
                  char *err, size_t n)
{
    int walk_failed = 0;
    if (x->failed)
        return -1;
    /* captures: the --summary CSV row */
    char *row = NULL;
    size_t rl = 0;
    FILE *f = open_memstream(&row, &rl);
    if (!f || an_fleet_row(f, 1, s) != 0 || fclose(f) != 0) {
        free(row);
        x->failed = 1;
        snprintf(x->msg, sizeof x->msg, "out of memory");
        return -1;
    }
    put(x, row, rl - 1);
    free(row);
    end_row(x, T_CAPTURES);
    /* times in seconds since the first frame began (the capture's first
     * event when it has no frames), as read_capture --frames shows them */
    int64_t t0 = m->nframes ? m->frames[0].begin_ns : m->first_ns;
    for (size_t i = 0; i < m->nframes && !x->failed; i++) {
        const an_frame *fr = &m->frames[i];
        putf(x, "%s,%llu,%.6f,%.6f,", s->id,
             (unsigned long long)an_frame_index(m, i),
             an_elapsed_ns(t0, fr->begin_ns) / 1e9,
             (double)an_frame_ns(fr) / 1e6);
        if (an_frame_has_gpu(m, i))
            putf(x, "%.6f", (double)an_frame_gpu_ns(m, i) / 1e6);
        end_row(x, T_FRAMES);
    }
    /* every (frame, scope) value, scope by scope: from the model's exact
       series, or from what a load with a budget kept of them (its pack,
       else the file read again, frame by frame): an_series_rows */
    scope_rows sr = {x, m, s->id};
    cap_result wr = an_series_rows(m, scope_row, &sr);
    if (wr != CAP_OK && !x->failed) {
        snprintf(err, n, "its scopes' values could not be read back (%s): "
                         "scopes.csv.gz lacks some of its rows",
                 cap_result_message(wr));
        walk_failed = 1;
    }
    for (size_t k = 0; k < m->ncounters && !x->failed; k++) {
        const an_counter *c = &m->counters[k];
        for (size_t j = 0; j < c->n && !x->failed; j++) {
            putf(x, "%s,", s->id);
            put_field(x, c->name);
            putf(x, ",%.6f,%.17g", an_elapsed_ns(t0, c->s[j].time_ns) / 1e9,
                 c->s[j].value);
            end_row(x, T_COUNTERS);
        }
    }
    return x->failed ? -1 : walk_failed;
}

int an_export_close(an_export *x, char *err, size_t n)
{
    if (!x)
        return 0;
    for (int t = 0; t < T_N; t++) {
        if (x->gz[t]) {
            int r = gzclose(x->gz[t]);
            if (r != Z_OK)
                fail(x, t, r == Z_ERRNO ? strerror(errno) : "gzip close failed");
        }
        free(x->path[t]);
    }
    int rc = x->failed ? -1 : 0;
    if (rc && err)
        snprintf(err, n, "%s", x->msg);
    free(x->buf);
    free(x);
    return rc;
}
