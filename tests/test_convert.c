/*
 * test_convert.c - capture_convert's converters and command line.
 *
 * Inputs are the fixtures in fixtures/convert/ (named after their case) and
 * the real traces in ../shared/corpus (skipped with a message when absent).
 * Captures are checked through the reader, printed by dump() as one line
 * per declaration or event with times in microseconds:
 *   thread TID NAME
 *   scope TID DEPTH BEGIN END NAME        sorted by thread, begin, depth
 *   gputrack TRACK PERIOD NAME
 *   frame INDEX BEGIN END                  then, each in file order,
 *   counter TIME VALUE NAME                frames, counters and GPU spans
 *   gpu TRACK CPUFRAME DEPTH BEGIN END NAME < PARENT   (CPU axis)
 * A name id without text prints as "(unnamed)".
 *
 * Environment (set by tests/meson.build): CVT_FIXTURES, CVT_CORPUS,
 * CVT_TOOL (the capture_convert binary), CVT_SELF_TIME (the expected
 * self-time files made by tests/tools/chrome_self_time.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <capture/cap_reader.h>
#include <capture/cap_writer.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "cvt.h"
#include "cvt_util.h"

typedef struct env {
    const char *fixtures, *corpus, *tool, *self_time;
    char tmp[PATH_MAX];
    char path[PATH_MAX]; /* scratch for path() */
} env;

static int rm_entry(const char *p, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    e->fixtures = getenv("CVT_FIXTURES");
    e->corpus = getenv("CVT_CORPUS");
    e->tool = getenv("CVT_TOOL");
    e->self_time = getenv("CVT_SELF_TIME");
    if (!e->fixtures || !e->tool) {
        fprintf(stderr, "CVT_FIXTURES and CVT_TOOL must be set (run through "
                        "meson test)\n");
        free(e);
        return -1;
    }
    const char *t = getenv("TMPDIR");
    snprintf(e->tmp, sizeof e->tmp, "%s/test_convert-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(e->tmp)) {
        free(e);
        return -1;
    }
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    if (!e)
        return 0;
    nftw(e->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(e);
    return 0;
}

static const char *fixture(env *e, const char *name)
{
    snprintf(e->path, sizeof e->path, "%s/%s", e->fixtures, name);
    return e->path;
}

static char *tmp_path(env *e, const char *name)
{
    size_t n = strlen(e->tmp) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", e->tmp, name);
    return p;
}

/* ---- reading captures back --------------------------------------------- */

typedef struct line {
    uint32_t tid, depth;
    int64_t begin;
    uint64_t ord;
    char *text;
} line;

static int cmp_line(const void *a, const void *b)
{
    const line *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void us(char *buf, size_t n, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(buf, n, "%s%llu.%03llu", ns < 0 ? "-" : "",
             (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
}

static const char *name_or(const cap_reader *r, uint32_t id)
{
    const char *s = id ? cap_reader_name(r, id) : "-";
    return s ? s : "(unnamed)";
}

/* The capture as text (see the top of this file). */
static char *dump(const char *cap)
{
    cap_reader *r = NULL;
    char detail[256];
    cap_result res = cap_reader_open(&r, cap, detail, sizeof detail);
    if (res != CAP_OK)
        fail_msg("cannot open %s: %s", cap, detail);
    char *head = NULL, *frames = NULL, *counters = NULL, *gpus = NULL;
    size_t hl = 0, fl = 0, cl = 0, gl = 0;
    FILE *h = open_memstream(&head, &hl), *fr = open_memstream(&frames, &fl),
         *co = open_memstream(&counters, &cl), *gp = open_memstream(&gpus, &gl);
    line *scopes = NULL;
    size_t n = 0, cap_n = 0;
    cap_event ev;
    uint64_t ord = 0;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT)
            continue;
        assert_int_equal(res, CAP_OK);
        char b[32], e[32];
        switch (ev.kind) {
        case CAP_EV_THREAD:
            fprintf(h, "thread %u %s\n", ev.u.thread.tid,
                    ev.u.thread.name ? ev.u.thread.name : "(none)");
            break;
        case CAP_EV_GPU_TRACK:
            fprintf(h, "gputrack %u %g %s\n", ev.u.gpu_track.track,
                    ev.u.gpu_track.period_ns, ev.u.gpu_track.name);
            break;
        case CAP_EV_FRAME:
            us(b, sizeof b, ev.u.frame.begin_ns);
            us(e, sizeof e, ev.u.frame.end_ns);
            fprintf(fr, "frame %llu %s %s\n",
                    (unsigned long long)ev.u.frame.index, b, e);
            break;
        case CAP_EV_COUNTER:
            us(b, sizeof b, ev.u.counter.time_ns);
            fprintf(co, "counter %s %g %s\n", b, ev.u.counter.value,
                    name_or(r, ev.u.counter.name));
            break;
        case CAP_EV_GPU_SPAN: {
            const cap_ev_gpu_span *g = &ev.u.gpu_span;
            us(b, sizeof b, g->begin_ns);
            us(e, sizeof e, g->end_ns);
            fprintf(gp, "gpu %u %llu %u %s %s %s < %s%s\n", g->track,
                    (unsigned long long)g->cpu_frame, g->depth, b, e,
                    name_or(r, g->name), name_or(r, g->parent_name),
                    g->calibrated ? "" : " (uncalibrated)");
            break;
        }
        case CAP_EV_SCOPE: {
            const cap_ev_scope *s = &ev.u.scope;
            if (n == cap_n) {
                cap_n = cap_n ? cap_n * 2 : 64;
                scopes = realloc(scopes, cap_n * sizeof *scopes);
                assert_non_null(scopes);
            }
            us(b, sizeof b, s->begin_ns);
            us(e, sizeof e, s->end_ns);
            char *txt = NULL;
            size_t tlen = 0;
            FILE *f = open_memstream(&txt, &tlen);
            fprintf(f, "scope %u %u %s %s %s\n", s->tid, s->depth, b, e,
                    name_or(r, s->name));
            fclose(f);
            scopes[n++] = (line){s->tid, s->depth, s->begin_ns, ord++, txt};
            break;
        }
        }
    }
    cap_reader_close(r);
    if (n > 1)
        qsort(scopes, n, sizeof *scopes, cmp_line);
    for (size_t i = 0; i < n; i++) {
        fputs(scopes[i].text, h);
        free(scopes[i].text);
    }
    free(scopes);
    fclose(fr);
    fclose(co);
    fclose(gp);
    fputs(frames, h);
    fputs(counters, h);
    fputs(gpus, h);
    fclose(h);
    free(frames);
    free(counters);
    free(gpus);
    return head;
}

/* Self time per scope name, in the format of tests/tools/chrome_self_time.py */
typedef struct selfsum {
    char *key;
    int64_t ns;
} selfsum;

static int cmp_selfsum(const void *a, const void *b)
{
    return strcmp(((const selfsum *)a)->key, ((const selfsum *)b)->key);
}

static char *escape_name(const char *s)
{
    char *out = malloc(strlen(s) * 2 + 1), *o = out;
    assert_non_null(out);
    for (; *s; s++) {
        switch (*s) {
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        default: *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

static char *self_time_text(const char *cap)
{
    cap_reader *r = NULL;
    char detail[256];
    if (cap_reader_open(&r, cap, detail, sizeof detail) != CAP_OK)
        fail_msg("cannot open %s: %s", cap, detail);
    int64_t *by_id = NULL;
    uint8_t *seen = NULL;
    size_t nid = 0;
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        assert_int_equal(res, CAP_OK);
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        uint32_t id = ev.u.scope.name;
        if (id >= nid) {
            size_t m = (size_t)id + 1;
            by_id = realloc(by_id, m * sizeof *by_id);
            seen = realloc(seen, m);
            assert_non_null(by_id);
            assert_non_null(seen);
            memset(by_id + nid, 0, (m - nid) * sizeof *by_id);
            memset(seen + nid, 0, m - nid);
            nid = m;
        }
        seen[id] = 1;
        by_id[id] += ev.u.scope.end_ns - ev.u.scope.begin_ns -
                     ev.u.scope.children_ns;
    }
    selfsum *s = calloc(nid ? nid : 1, sizeof *s);
    size_t n = 0;
    int64_t unnamed = 0;
    int any_unnamed = 0;
    for (size_t id = 1; id < nid; id++) {
        if (!seen[id])
            continue;
        const char *nm = cap_reader_name(r, (uint32_t)id);
        if (!nm) {
            any_unnamed = 1;
            unnamed += by_id[id];
            continue;
        }
        s[n++] = (selfsum){escape_name(nm), by_id[id]};
    }
    if (any_unnamed)
        s[n++] = (selfsum){strdup("\\0unnamed"), unnamed};
    if (n > 1)
        qsort(s, n, sizeof *s, cmp_selfsum);
    char *text = NULL;
    size_t tl = 0;
    FILE *f = open_memstream(&text, &tl);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\t%lld\n", s[i].key, (long long)s[i].ns);
        free(s[i].key);
    }
    fclose(f);
    free(s);
    free(by_id);
    free(seen);
    cap_reader_close(r);
    return text;
}

/* ---- running converters ------------------------------------------------ */

typedef cvt_fn converter;

/* Run conv with the options; *diag receives what it printed. */
static int convert(converter conv, const char *in, const char *out,
                   const char *frame_scope, const char *gpu_thread,
                   const char *weight, char **diag)
{
    size_t len = 0;
    char *text = NULL;
    FILE *d = open_memstream(&text, &len);
    /* gpu_thread: one name, or several separated by commas */
    char gbuf[256] = "";
    const char *gpus[8];
    size_t ngpu = 0;
    if (gpu_thread) {
        snprintf(gbuf, sizeof gbuf, "%s", gpu_thread);
        for (char *p = gbuf, *q; p && ngpu < 8; p = q) {
            q = strchr(p, ',');
            if (q)
                *q++ = '\0';
            gpus[ngpu++] = p;
        }
    }
    cvt_options o = {.frame_scope = frame_scope,
                     .gpu_threads = ngpu ? gpus : NULL,
                     .n_gpu_threads = ngpu,
                     .weight = weight,
                     .diag = d};
    int rc = conv(in, out, &o);
    fclose(d);
    if (diag)
        *diag = text;
    else
        free(text);
    return rc;
}

/* Import fixture `name` and return the dump of the capture. */
static char *import_dump(env *e, const char *name, const char *frame_scope,
                         const char *gpu_thread, char **diag)
{
    char *out = tmp_path(e, "import.cap");
    int rc = convert(cvt_chrome_to_cap, fixture(e, name), out, frame_scope,
                     gpu_thread, NULL, diag);
    if (rc != CAP_OK)
        fail_msg("import of %s failed (%d): %s", name, rc, diag ? *diag : "");
    char *d = dump(out);
    free(out);
    return d;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int contains(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!contains(hay, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
}

/* diag must be exactly one warning line about fixture `name`. */
static void assert_one_warning(env *e, const char *diag, const char *name,
                               const char *msg)
{
    char want[1024];
    snprintf(want, sizeof want, "warning: %s/%s: %s\n", e->fixtures, name, msg);
    assert_string_equal(diag, want);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, k, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* ---- Chrome JSON in: structure ----------------------------------------- */

/* What the JSON writers print for a string and a time, byte for byte:
 * escapes, bytes that are not UTF-8, and the ends of int64. */
static char *json_of(const char *s, int64_t ns, int which)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    if (which == 0)
        cvt_json_string(f, s);
    else
        cvt_json_us(f, ns);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void json_strings_and_microseconds_are_written_exactly(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } strs[] = {
        {"", "\"\""},
        {"plain", "\"plain\""},
        {"q\"b\\e", "\"q\\\"b\\\\e\""},
        {"t\tn\nr\r\x01\x1f\x7f", "\"t\\tn\\nr\\r\\u0001\\u001f\x7f\""},
        {"\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "\"\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80\""},
        /* a lone continuation byte, an overlong form, a surrogate, a cut
           sequence at the end */
        {"a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe6\x97",
         "\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\""},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char *got = json_of(strs[i].in, 0, 0);
        assert_string_equal(got, strs[i].out);
        free(got);
    }
    static const struct {
        int64_t ns;
        const char *out;
    } times[] = {
        {0, "0.000"},
        {7, "0.007"},
        {999, "0.999"},
        {1000, "1.000"},
        {123456789, "123456.789"},
        {-1, "-0.001"},
        {-1500, "-1.500"},
        {INT64_MAX, "9223372036854775.807"},
        {INT64_MIN, "-9223372036854775.808"},
    };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        char *got = json_of(NULL, times[i].ns, 1);
        assert_string_equal(got, times[i].out);
        free(got);
    }
}

static void object_form_keeps_names_times_counters_and_metadata(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-object-form-metadata.json", NULL, NULL,
                          &diag);
    assert_string_equal(d,
        "thread 0 game/main\n"
        "thread 1 loader\n"
        "thread 2 tools/4\n"
        "thread 3 10/11\n"
        "scope 0 0 100.500 110.000 update\n"
        "scope 0 1 101.000 103.250 physics\n"
        "scope 1 0 100.000 110.000 load\n"
        "scope 2 0 0.002 0.002 compile\n"
        "scope 3 0 50.000 51.000 idle\n"
        "counter 104.000 3 queue.high\n"
        "counter 104.000 1 queue.low\n"
        "counter 105.000 12.5 memory\n");
    assert_contains(diag, "1 event(s) of phase 'i' (instant) not imported");
    assert_contains(diag, "1 event(s) of phase 'b' (async begin) not imported");
    assert_int_equal(count_lines(diag), 2);
    free(diag);
    free(d);

    /* displayTimeUnit is kept as metadata and does not scale ts */
    char *out = tmp_path(e, "import.cap");
    cap_reader *r = NULL;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    assert_string_equal(cap_reader_meta_get(r, "chrome.displayTimeUnit"), "ns");
    assert_string_equal(cap_reader_meta_get(r, "source"), "chrome-trace");
    assert_string_equal(cap_reader_meta_get(r, "source_file"),
                        "chrome-object-form-metadata.json");
    assert_string_equal(cap_reader_clock_source(r), "imported");
    cap_reader_close(r);
    free(out);
}

static void gzip_input_reads_like_plain_json(void **state)
{
    env *e = *state;
    char *plain = read_file(fixture(e, "chrome-object-form-metadata.json"));
    assert_non_null(plain);
    char *gz = tmp_path(e, "trace.json.gz");
    gzFile g = gzopen(gz, "wb");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, plain, (unsigned)strlen(plain)),
                     (int)strlen(plain));
    assert_int_equal(gzclose(g), Z_OK);
    char *out1 = tmp_path(e, "gz.cap"), *out2 = tmp_path(e, "plain.cap");
    assert_int_equal(convert(cvt_chrome_to_cap, gz, out1, NULL, NULL, NULL,
                             NULL), CAP_OK);
    assert_int_equal(convert(cvt_chrome_to_cap,
                             fixture(e, "chrome-object-form-metadata.json"),
                             out2, NULL, NULL, NULL, NULL), CAP_OK);
    char *d1 = dump(out1), *d2 = dump(out2);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
    free(out1);
    free(out2);
    free(gz);
    free(plain);
}

/* The offset of bad JSON is counted from the start of the file, also past
 * the first 64 KiB read. */
static void invalid_json_far_into_the_file_names_the_file_offset(void **state)
{
    env *e = *state;
    char *path = tmp_path(e, "far.json");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("[", f);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "{\"ph\": \"X\", \"name\": \"s\", \"pid\": 1, "
                   "\"tid\": 1, \"ts\": %d, \"dur\": 1},\n", i * 2);
    long bad = ftell(f); /* 0-based offset of the bad byte */
    fputs("oops]", f);
    fclose(f);
    assert_true(bad > 3 * 65536);
    char *out = tmp_path(e, "far.cap"), *diag;
    assert_int_equal(convert(cvt_chrome_to_cap, path, out, NULL, NULL, NULL,
                             &diag), CAP_E_CORRUPT);
    char want[128];
    snprintf(want, sizeof want, "invalid JSON near byte %ld of the trace",
             bad + 1);
    assert_contains(diag, want);
    assert_contains(diag, "after 3000 events: the file is damaged\n");
    assert_int_equal(count_lines(diag), 1);
    free(diag);
    free(out);
    free(path);
}

/* A gzip file cut short says so, and what it held is imported. */
static void gzip_cut_short_is_named(void **state)
{
    env *e = *state;
    char *gz = tmp_path(e, "cut.json.gz");
    gzFile g = gzopen(gz, "wb");
    assert_non_null(g);
    gzputs(g, "[");
    for (int i = 0; i < 20000; i++)
        gzprintf(g, "{\"ph\": \"X\", \"name\": \"s%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %d, \"dur\": 1},\n", i % 97, i * 2);
    gzputs(g, "]");
    assert_int_equal(gzclose(g), Z_OK);
    FILE *f = fopen(gz, "rb+");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(gz, size / 2), 0);
    char *out = tmp_path(e, "cut.cap"), *diag;
    assert_int_equal(convert(cvt_chrome_to_cap, gz, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_contains(diag, "gzip: unexpected end of file: the compressed file "
                          "is cut short after ");
    assert_contains(diag, "the trace is cut short (no closing bracket)");
    assert_int_equal(count_lines(diag), 2);
    free(diag);
    free(out);
    free(gz);
}

static void array_cut_short_imports_every_complete_event(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-array-cut-short.json", NULL, NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 2.000 kept\n"
        "scope 0 0 3.000 4.000 also kept\n");
    assert_one_warning(e, diag, "chrome-array-cut-short.json",
        "the trace is cut short (no closing bracket); the 2 complete events "
        "before the cut are imported");
    free(d);
    free(diag);
}

/* ---- Chrome JSON in: repairs ------------------------------------------- */

static void end_without_matching_begin_is_ignored(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-end-without-begin-ignored.json", NULL,
                          NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 2.000 4.000 outer\n");
    assert_int_equal(count_lines(diag), 3);
    assert_contains(diag, "E event 'early' at 1.000 us has no open B event; "
                          "ignored");
    assert_contains(diag, "E event 'stranger' at 3.000 us matches no open "
                          "scope (innermost is 'outer'); ignored");
    assert_contains(diag, "E event '' at 5.000 us has no open B event");
    free(d);
    free(diag);
}

static void end_of_an_outer_scope_closes_the_scopes_inside(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-end-of-outer-closes-inner.json", NULL,
                          NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 10.000 A\n"
        "scope 0 1 1.000 10.000 B\n"
        "scope 0 2 2.000 10.000 C\n"
        "scope 0 0 12.000 13.000 D\n");
    assert_contains(diag, "E event 'A' at 10.000 us ends a scope that is not "
                          "the innermost; 2 scope(s) above it ('C' innermost) "
                          "closed at the same time");
    assert_contains(diag, "E event 'C' at 11.000 us has no open B event");
    assert_int_equal(count_lines(diag), 2);
    free(d);
    free(diag);
}

static void unclosed_begin_ends_at_the_threads_last_timestamp(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-unclosed-begin-ends-at-last-timestamp.json",
                          NULL, NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "thread 1 1/2\n"
        "scope 0 0 0.000 7.000 frame\n"
        "scope 0 1 1.000 7.000 draw\n"
        "scope 0 2 2.000 7.000 submit\n"
        "scope 1 0 0.000 100.000 other\n");
    assert_one_warning(e, diag,
        "chrome-unclosed-begin-ends-at-last-timestamp.json",
        "thread '1/1': 2 B event(s) never ended ('draw' innermost); closed at "
        "the thread's last timestamp 7.000 us");
    free(d);
    free(diag);
}

static void x_overlapping_its_parents_end_is_clipped(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-x-overlapping-parent-is-clipped.json",
                          NULL, NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 10.000 parent\n"
        "scope 0 1 5.000 10.000 child\n"
        "scope 0 2 8.000 10.000 grandchild\n"
        "scope 0 0 12.000 13.000 after\n");
    assert_int_equal(count_lines(diag), 3);
    assert_contains(diag, "'child' [5.000, 15.000] us overlaps the end of its "
                          "parent 'parent' at 10.000 us; clipped to end there");
    /* 5 us of 'child' and 2 us of 'grandchild' */
    assert_contains(diag, "thread '1/1': 2 overlapping scope(s) clipped, "
                          "0.007 ms of their time removed in all\n");
    assert_contains(diag, "'grandchild' [8.000, 12.000] us overlaps the end of "
                          "its parent 'child' at 10.000 us");
    free(d);
    free(diag);
}

static void ties_are_ordered_as_chrome_orders_them(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-ties-follow-chrome.json", NULL, NULL,
                          &diag);
    /* same start: longer first; same start and length: file order; a run
     * of E events at one ts closes by name; an empty B/E pair ending where
     * the next begins stays before it; one at its parent's end stays in */
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 5.000 long\n"
        "scope 0 1 0.000 2.000 short\n"
        "scope 0 0 10.000 13.000 first\n"
        "scope 0 1 10.000 13.000 second\n"
        "scope 0 0 20.000 22.000 p\n"
        "scope 0 1 20.000 22.000 q\n"
        "scope 0 0 25.000 25.000 empty\n"
        "scope 0 0 25.000 26.000 next\n"
        "scope 0 1 26.000 26.000 tail\n");
    assert_string_equal(diag, "");
    free(d);
    free(diag);
}

static void x_without_dur_ends_with_its_thread(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-x-without-dur-is-unfinished.json", NULL,
                          NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 5.000 9.000 task\n"
        "scope 0 1 6.000 9.000 work\n"
        "scope 0 2 7.000 7.000 negative\n");
    assert_contains(diag, "X event 'task' at 5.000 us has no dur (it had not "
                          "finished when the trace ended); closed at the "
                          "thread's last timestamp");
    assert_contains(diag, "X event 'negative' at 7.000 us has a negative dur; "
                          "imported with zero duration");
    assert_contains(diag, "X event 'notime' has no ts; skipped");
    assert_int_equal(count_lines(diag), 3);
    free(d);
    free(diag);
}

static void events_without_a_name_become_unnamed_scopes(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-unnamed-events.json", NULL, NULL, &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 4.000 (unnamed)\n"
        "scope 0 1 1.000 2.000 (unnamed)\n"
        "scope 0 1 2.000 3.000 named\n");
    assert_contains(diag, "X event at 0.000 us has no name; imported as an "
                          "unnamed scope");
    assert_int_equal(count_lines(diag), 2);
    free(d);
    free(diag);
    /* the id is used but never named: the reader says so */
    char *out = tmp_path(e, "import.cap");
    cap_reader *r = NULL;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    cap_event ev;
    while (cap_reader_next(r, &ev) == CAP_OK)
        ;
    assert_int_equal(cap_reader_get_stats(r)->unnamed_ids, 1);
    assert_null(cap_reader_name(r, 2));
    assert_string_equal(cap_reader_name(r, 1), "named");
    cap_reader_close(r);
    free(out);
}

static void negative_timestamps_are_shifted_to_zero(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-negative-timestamps.json", NULL, NULL,
                          &diag);
    assert_string_equal(d,
        "thread 0 1/1\n"
        "scope 0 0 0.000 2.000 before\n"
        "scope 0 0 8.000 9.000 after\n");
    assert_contains(diag, "every time is shifted by 5.000 us");
    free(d);
    free(diag);
}

/* ---- Chrome JSON in: frames and GPU ------------------------------------ */

static void frame_scope_makes_each_outermost_occurrence_a_frame(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-frame-scope.json", "tick", NULL, &diag);
    assert_string_equal(d,
        "thread 0 main\n"
        "thread 1 worker\n"
        "scope 0 0 0.000 100.000 run\n"
        "scope 0 1 10.000 30.000 tick\n"
        "scope 0 2 12.000 17.000 tick\n"
        "scope 0 1 30.000 50.000 tick\n"
        "scope 0 1 60.000 90.000 tick\n"
        "scope 1 0 0.000 50.000 tick\n"
        "frame 0 10.000 30.000\n"
        "frame 1 30.000 50.000\n"
        "frame 2 60.000 90.000\n");
    assert_one_warning(e, diag, "chrome-frame-scope.json",
        "'tick' occurs on several threads: frames taken from thread 'main' (3 "
        "occurrences), 1 elsewhere ignored");
    free(d);
    free(diag);
}

static void without_frame_scope_there_are_no_frames(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-frame-scope.json", NULL, NULL, &diag);
    assert_false(contains(d, "frame "));
    assert_string_equal(diag, "");
    free(d);
    free(diag);
    d = import_dump(e, "chrome-frame-scope.json", "absent", NULL, &diag);
    assert_false(contains(d, "frame "));
    assert_contains(diag, "no scope named 'absent' on a CPU thread; the "
                          "capture has no frames");
    free(d);
    free(diag);
}

static void gpu_thread_becomes_a_calibrated_gpu_track(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-gpu-thread.json", "frame", "gpu", &diag);
    assert_string_equal(d,
        "thread 0 main\n"
        "gputrack 0 1 gpu\n"
        "scope 0 0 0.000 100.000 frame\n"
        "scope 0 0 100.000 200.000 frame\n"
        "frame 0 0.000 100.000\n"
        "frame 1 100.000 200.000\n"
        "gpu 0 0 0 20.000 50.000 pass < -\n"
        "gpu 0 0 1 25.000 35.000 draw < pass\n"
        "gpu 0 0 0 60.000 65.000 blit < -\n"
        "gpu 0 1 0 120.000 160.000 pass < -\n");
    assert_string_equal(diag, "");
    free(d);
    free(diag);
}

/* PyTorch-style: numbered steps are frames through a glob, each CUDA stream
 * is a GPU track of its own, a kernel shorter than a microsecond is kept,
 * and a thread with an empty name keeps its tid. */
static void steps_glob_and_several_gpu_streams(void **state)
{
    env *e = *state;
    char *diag;
    char *d = import_dump(e, "chrome-profiler-steps-two-streams.json",
                          "ProfilerStep#*", "stream 7,stream 8", &diag);
    assert_string_equal(d,
        "thread 0 main\n"
        "thread 1 1/5\n"
        "gputrack 0 1 stream 7\n"
        "gputrack 1 1 stream 8\n"
        "scope 0 0 0.000 100.000 ProfilerStep#1\n"
        "scope 0 1 10.000 50.000 forward\n"
        "scope 0 0 100.000 200.000 ProfilerStep#2\n"
        "scope 0 1 110.000 160.000 forward\n"
        "scope 1 0 20.000 50.000 loader\n"
        "frame 0 0.000 100.000\n"
        "frame 1 100.000 200.000\n"
        "gpu 0 0 0 20.000 35.000 gemm < -\n"
        "gpu 0 0 0 40.000 40.001 relu < -\n"
        "gpu 1 0 0 30.000 35.000 memcpy < -\n"
        "gpu 0 1 0 120.000 145.000 gemm < -\n");
    assert_one_warning(e, diag, "chrome-profiler-steps-two-streams.json",
        "GPU thread 'stream 7': 1 span(s) of zero length (shorter than the "
        "trace's resolution) are recorded as 1 ns");
    free(d);
    free(diag);
}

static void the_same_gpu_thread_twice_is_an_input_error(void **state)
{
    env *e = *state;
    char *out = tmp_path(e, "x.cap"), *diag;
    assert_int_equal(convert(cvt_chrome_to_cap,
                             fixture(e, "chrome-gpu-thread.json"), out, NULL,
                             "gpu,gpu", NULL, &diag), CAP_E_MISUSE);
    assert_contains(diag, "--gpu-thread 'gpu' names the same thread as an "
                          "earlier --gpu-thread\n");
    assert_int_equal(count_lines(diag), 1);
    free(diag);
    free(out);
}

static void unknown_gpu_thread_is_an_input_error(void **state)
{
    env *e = *state;
    char *out = tmp_path(e, "x.cap"), *diag;
    assert_int_equal(convert(cvt_chrome_to_cap,
                             fixture(e, "chrome-gpu-thread.json"), out, NULL,
                             "nope", NULL, &diag), CAP_E_MISUSE);
    assert_contains(diag, "error: ");
    assert_contains(diag, "no thread named 'nope' for --gpu-thread\n");
    assert_int_equal(count_lines(diag), 1);
    free(diag);
    free(out);
}

/* ---- Chrome JSON in: files that are not traces -------------------------- */

static void unreadable_inputs_fail_with_one_line(void **state)
{
    env *e = *state;
    static const struct {
        const char *file, *message;
        cap_result rc;
    } cases[] = {
        {"chrome-invalid-json-before-any-event.json", "not a Chrome trace: "
                                  "invalid JSON near byte 17 (lexical error: "
                                  "invalid char in json text.)", CAP_E_CORRUPT},
        {"chrome-scalar-document.json", "not a Chrome trace: the JSON is a "
                                        "single value", CAP_E_NOT_CAPTURE},
        {"chrome-empty-file.json", "not a Chrome trace: the file is empty",
         CAP_E_NOT_CAPTURE},
        {"chrome-invalid-json.json", "invalid JSON near byte 67 of the trace "
                                     "(lexical error: invalid char in json "
                                     "text.), after 1 events: the file is "
                                     "damaged", CAP_E_CORRUPT},
        {"chrome-object-without-events.json", "not a Chrome trace: no event "
                                              "array", CAP_E_NOT_CAPTURE},
        {"does-not-exist.json", "cannot open: No such file or directory",
         CAP_E_IO},
    };
    char *out = tmp_path(e, "x.cap");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *diag;
        int rc = convert(cvt_chrome_to_cap, fixture(e, cases[i].file), out,
                         NULL, NULL, NULL, &diag);
        if (rc != (int)cases[i].rc || count_lines(diag) != 1 ||
            !contains(diag, cases[i].message) ||
            strncmp(diag, "error: ", 7) != 0)
            fail_msg("%s: rc %d, diag: %s", cases[i].file, rc, diag);
        free(diag);
    }
    free(out);
}

/* ---- building captures for the exporters -------------------------------- */

/* A capture with two threads (nested scopes, a parent and child with the
 * same span), frames, counters and a calibrated GPU track. */
static void write_sample(const char *path, int gpu, int truncate)
{
    cap_writer *w = NULL;
    cap_writer_options o = {0};
    cap_meta_kv meta[] = {{"program", "sample"}};
    o.meta = meta;
    o.meta_count = 1;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    const char *names[] = {"", "frame", "update", "physics", "render", "draw",
                           "io", "rss", "shadow;pass"};
    for (uint32_t i = 1; i < sizeof names / sizeof names[0]; i++)
        assert_int_equal(cap_writer_name(w, i, names[i], NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 1, "loader"), CAP_OK);
    /* main: frame [1000,11000] { update [1000,5000] { physics [2000,3500] }
     * render [5000,11000] { draw [5000,11000] } } twice, 20 us apart */
    for (int f = 0; f < 2; f++) {
        uint64_t o0 = (uint64_t)f * 20000;
        assert_int_equal(cap_writer_scope_begin(w, 0, 1, o0 + 1000), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 2, o0 + 1000), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 3, o0 + 2000), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, o0 + 3500), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, o0 + 5000), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 4, o0 + 5000), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 5, o0 + 5000), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, o0 + 11000), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, o0 + 11000), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, o0 + 11000), CAP_OK);
        assert_int_equal(cap_writer_frame(w, (uint64_t)f, o0 + 1000,
                                          o0 + 11000), CAP_OK);
        assert_int_equal(cap_writer_counter(w, 7, o0 + 11000, 100.5 + f),
                         CAP_OK);
    }
    assert_int_equal(cap_writer_scope_begin(w, 1, 6, 1500), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 1, 8, 1600), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 1, 1700), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 1, 30250), CAP_OK);
    if (gpu) {
        assert_int_equal(cap_writer_gpu_track(w, 0, "queue", 1.0), CAP_OK);
        assert_int_equal(cap_writer_gpu_calibration(w, 0, 0, 0, 0), CAP_OK);
        cap_gpu_span s[] = {{4, -1, 6000, 9000, 1}, {5, 0, 6500, 7000, 1}};
        assert_int_equal(cap_writer_gpu_frame(w, 0, 0, s, 2), CAP_OK);
    }
    if (truncate) {
        /* a scope left open when the "process" dies */
        assert_int_equal(cap_writer_scope_begin(w, 1, 6, 40000), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 1, 3, 40100), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 1, 40200), CAP_OK);
        assert_int_equal(cap_writer_flush(w), CAP_OK);
        cap_writer_abandon(w);
    } else {
        assert_int_equal(cap_writer_close(w), CAP_OK);
    }
}

static const char sample_dump[] =
    "thread 0 main\n"
    "thread 1 loader\n"
    "scope 0 0 1.000 11.000 frame\n"
    "scope 0 1 1.000 5.000 update\n"
    "scope 0 2 2.000 3.500 physics\n"
    "scope 0 1 5.000 11.000 render\n"
    "scope 0 2 5.000 11.000 draw\n"
    "scope 0 0 21.000 31.000 frame\n"
    "scope 0 1 21.000 25.000 update\n"
    "scope 0 2 22.000 23.500 physics\n"
    "scope 0 1 25.000 31.000 render\n"
    "scope 0 2 25.000 31.000 draw\n"
    "scope 1 0 1.500 30.250 io\n"
    "scope 1 1 1.600 1.700 shadow;pass\n";

/* ---- Chrome JSON out --------------------------------------------------- */

static yajl_val get(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static void chrome_output_is_a_trace_perfetto_can_load(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "sample.cap"), *json = tmp_path(e, "sample.json");
    write_sample(cap, 1, 0);
    char *diag;
    assert_int_equal(convert(cvt_cap_to_chrome, cap, json, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    char *text = read_file(json);
    assert_non_null(text);
    char err[256];
    yajl_val root = yajl_tree_parse(text, err, sizeof err);
    if (!root)
        fail_msg("output is not JSON: %s", err);
    assert_true(YAJL_IS_OBJECT(root));
    yajl_val unit = get(root, "displayTimeUnit");
    assert_non_null(unit);
    assert_string_equal(YAJL_GET_STRING(unit), "ns");
    yajl_val other = get(root, "otherData");
    assert_non_null(other);
    assert_string_equal(YAJL_GET_STRING(get(other, "program")), "sample");
    yajl_val evs = get(root, "traceEvents");
    assert_true(YAJL_IS_ARRAY(evs));
    size_t nx = 0, nm = 0, nc = 0, nframes = 0, ngpu = 0;
    for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
        yajl_val ev = YAJL_GET_ARRAY(evs)->values[i];
        assert_true(YAJL_IS_OBJECT(ev));
        const char *ph = YAJL_GET_STRING(get(ev, "ph"));
        const char *name = YAJL_GET_STRING(get(ev, "name"));
        assert_non_null(ph);
        assert_non_null(name);
        assert_true(YAJL_IS_INTEGER(get(ev, "pid")));
        if (strcmp(ph, "X") == 0) {
            assert_true(YAJL_IS_NUMBER(get(ev, "ts")));
            assert_true(YAJL_IS_NUMBER(get(ev, "dur")));
            assert_true(YAJL_IS_INTEGER(get(ev, "tid")));
            nx++;
            if (strcmp(name, "frame") == 0 &&
                YAJL_GET_INTEGER(get(ev, "tid")) == 65536) {
                nframes++;
                assert_true(YAJL_IS_INTEGER(get(get(ev, "args"), "index")));
            }
            if (YAJL_GET_INTEGER(get(ev, "pid")) == 2)
                ngpu++;
        } else if (strcmp(ph, "M") == 0) {
            assert_true(YAJL_IS_STRING(get(get(ev, "args"), "name")));
            nm++;
        } else if (strcmp(ph, "C") == 0) {
            assert_true(YAJL_IS_NUMBER(get(get(ev, "args"), "value")));
            nc++;
        } else {
            fail_msg("unexpected phase %s", ph);
        }
    }
    assert_int_equal(nx, 12 + 2 + 2); /* scopes, frames, GPU spans */
    assert_int_equal(nframes, 2);
    assert_int_equal(ngpu, 2);
    assert_int_equal(nm, 2 + 1 + 1 + 1); /* threads, Frames, GPU process+track */
    assert_int_equal(nc, 2);
    yajl_tree_free(root);
    /* the exact text of a few events: ts and dur in us with 3 decimals */
    assert_contains(text, "{\"name\":\"physics\",\"ph\":\"X\",\"pid\":1,"
                          "\"tid\":0,\"ts\":2.000,\"dur\":1.500}");
    assert_contains(text, "{\"name\":\"frame\",\"cat\":\"libcapture.frame\","
                          "\"ph\":\"X\",\"pid\":1,\"tid\":65536,\"ts\":21.000,"
                          "\"dur\":10.000,\"args\":{\"index\":1}}");
    assert_contains(text, "{\"name\":\"draw\",\"cat\":\"libcapture.gpu\","
                          "\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":6.500,"
                          "\"dur\":0.500}");
    assert_contains(text, "{\"name\":\"rss\",\"ph\":\"C\",\"pid\":1,\"tid\":0,"
                          "\"ts\":11.000,\"args\":{\"value\":100.5}}");
    assert_contains(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,"
                          "\"tid\":0,\"args\":{\"name\":\"queue\"}}");
    /* a parent is written before its child of the same span */
    char *render = strstr(text, "\"render\""), *draw = strstr(text, "\"draw\"");
    assert_non_null(render);
    assert_true(render < draw);
    free(text);
    free(cap);
    free(json);
}

static void capture_to_json_and_back_keeps_every_scope(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "rt.cap"), *json = tmp_path(e, "rt.json"),
         *back = tmp_path(e, "rt-back.cap");
    write_sample(cap, 0, 0);
    assert_int_equal(convert(cvt_cap_to_chrome, cap, json, NULL, NULL, NULL,
                             NULL), CAP_OK);
    char *diag;
    assert_int_equal(convert(cvt_chrome_to_cap, json, back, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    char *a = dump(cap), *b = dump(back);
    assert_string_equal(a, b);
    /* and the text itself, so that a bug in both directions cannot hide */
    assert_int_equal(strncmp(b, sample_dump, strlen(sample_dump)), 0);
    assert_string_equal(b + strlen(sample_dump),
        "frame 0 1.000 11.000\n"
        "frame 1 21.000 31.000\n"
        "counter 11.000 100.5 rss\n"
        "counter 31.000 101.5 rss\n");
    free(a);
    free(b);
    free(cap);
    free(json);
    free(back);
}

/* ---- slices ------------------------------------------------------------ */

static int run_tool(env *e, char **out, char **err, const char *const *args);

/* One scope as the reader gives it, for comparing two captures. */
typedef struct sc {
    uint32_t tid, depth;
    int64_t begin, end;
    char name[64];
} sc;

static int cmp_sc(const void *a, const void *b)
{
    const sc *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return strcmp(x->name, y->name);
}

typedef struct slice_view {
    uint64_t frames[512];     /* frame indices, file order */
    int64_t fb[512], fe[512]; /* their begin and end */
    size_t nframes;
    sc *scopes;               /* every scope whose root begins inside
                                 [lo, hi) of some frame in `keep`, or all */
    size_t nscopes;
    uint64_t gpu_frames[4096];/* cpu_frame of each GPU span */
    size_t ngpu;
    uint64_t unnamed;
} slice_view;

/* Read cap; keep[] (NULL: everything) selects frames by position in file
 * order, and with them the scopes that run in a kept frame for some time
 * (one of no length: that begins in one). */
static void read_view(const char *cap, const unsigned char *keep,
                      slice_view *v)
{
    memset(v, 0, sizeof *v);
    /* pass 1: frames */
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, cap, NULL, 0), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        assert_int_equal(res, CAP_OK);
        if (ev.kind == CAP_EV_FRAME) {
            assert_true(v->nframes < 512);
            v->fb[v->nframes] = ev.u.frame.begin_ns;
            v->fe[v->nframes] = ev.u.frame.end_ns;
            v->frames[v->nframes++] = ev.u.frame.index;
        }
    }
    cap_reader_close(r);
    /* pass 2: scopes by their time, GPU spans by frame */
    assert_int_equal(cap_reader_open(&r, cap, NULL, 0), CAP_OK);
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        assert_int_equal(res, CAP_OK);
        if (ev.kind == CAP_EV_GPU_SPAN) {
            assert_true(v->ngpu < 4096);
            v->gpu_frames[v->ngpu++] = ev.u.gpu_span.cpu_frame;
        }
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        const cap_ev_scope *s = &ev.u.scope;
        assert_true(s->tid < 16);
        sc one = {s->tid, s->depth, s->begin_ns, s->end_ns, ""};
        const char *nm = cap_reader_name(r, s->name);
        v->unnamed += nm == NULL;
        snprintf(one.name, sizeof one.name, "%s", nm ? nm : "?");
        int in = keep == NULL;
        for (size_t i = 0; !in && i < v->nframes; i++)
            in = keep[i] && (s->begin_ns < s->end_ns
                                 ? s->begin_ns < v->fe[i] && s->end_ns > v->fb[i]
                                 : v->fb[i] <= s->begin_ns &&
                                       s->begin_ns < v->fe[i]);
        if (in) {
            v->scopes = realloc(v->scopes, (v->nscopes + 1) * sizeof *v->scopes);
            assert_non_null(v->scopes);
            v->scopes[v->nscopes++] = one;
        }
    }
    cap_reader_close(r);
    qsort(v->scopes, v->nscopes, sizeof *v->scopes, cmp_sc);
}

/* The slice holds exactly the frames asked for, every scope that ran in
 * one of them (same times, same names), the GPU spans of those frames and
 * no unnamed id. */
static void check_slice(env *e, const char *demo, const char *const *args,
                        const unsigned char *keep)
{
    char *out, *err;
    assert_int_equal(run_tool(e, &out, &err, args), 0);
    slice_view *full = malloc(sizeof *full), *cut = malloc(sizeof *cut);
    assert_non_null(full);
    assert_non_null(cut);
    read_view(demo, keep, full);
    read_view(args[3], NULL, cut);
    size_t k = 0;
    for (size_t i = 0; i < full->nframes; i++)
        if (keep[i]) {
            assert_true(k < cut->nframes);
            assert_int_equal(cut->frames[k], full->frames[i]);
            assert_int_equal(cut->fb[k], full->fb[i]);
            k++;
        }
    assert_int_equal(k, cut->nframes);
    assert_int_equal(cut->nscopes, full->nscopes);
    for (size_t i = 0; i < cut->nscopes; i++)
        assert_int_equal(cmp_sc(&cut->scopes[i], &full->scopes[i]), 0);
    for (size_t i = 0; i < cut->ngpu; i++) {
        int found = 0;
        for (size_t j = 0; j < full->nframes && !found; j++)
            found = keep[j] && full->frames[j] == cut->gpu_frames[i];
        assert_true(found);
    }
    assert_true(cut->ngpu > 0);
    assert_int_equal(cut->unnamed, 0);
    assert_contains(err, "window(s);");
    free(full->scopes);
    free(cut->scopes);
    free(full);
    free(cut);
    free(out);
    free(err);
}

static void slices_keep_their_frames_scopes_and_names(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "slice.cap");
    char demo[PATH_MAX];
    snprintf(demo, sizeof demo, "%s", fixture(e, "../demo.cap"));
    slice_view *full = malloc(sizeof *full);
    assert_non_null(full);
    read_view(demo, NULL, full);
    assert_true(full->nframes == 240);
    unsigned char keep[512] = {0};

    /* --frames 10:20 */
    for (size_t i = 0; i < full->nframes; i++)
        keep[i] = full->frames[i] >= 10 && full->frames[i] < 20;
    const char *a1[] = {"--frames", "10:20", demo, cap, NULL};
    check_slice(e, demo, a1, keep);

    /* --seconds 1:1.5, measured from the first frame's begin */
    for (size_t i = 0; i < full->nframes; i++) {
        double t = (double)(full->fb[i] - full->fb[0]) / 1e9;
        keep[i] = t >= 1.0 && t < 1.5;
    }
    const char *a2[] = {"--seconds", "1:1.5", demo, cap, NULL};
    check_slice(e, demo, a2, keep);

    /* --slowest 3 --context 1: the three longest frames and their
     * neighbours */
    memset(keep, 0, sizeof keep);
    for (int round = 0; round < 3; round++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < full->nframes; i++) {
            if (keep[i] & 2)
                continue;
            if (best == SIZE_MAX || full->fe[i] - full->fb[i] >
                                        full->fe[best] - full->fb[best])
                best = i;
        }
        keep[best] |= 2;
    }
    for (size_t i = 0; i < full->nframes; i++)
        if (keep[i] & 2) {
            keep[i] |= 1;
            if (i > 0)
                keep[i - 1] |= 1;
            if (i + 1 < full->nframes)
                keep[i + 1] |= 1;
        }
    for (size_t i = 0; i < full->nframes; i++)
        keep[i] = keep[i] & 1;
    /* check_slice reads args[3] as the output */
    const char *a3[] = {"--slowest=3", "--context=1", demo, cap, NULL};
    check_slice(e, demo, a3, keep);

    /* a window with no frame is an input error, one line */
    char *out, *err;
    const char *a4[] = {"--frames", "1000:2000", demo, cap, NULL};
    assert_int_equal(run_tool(e, &out, &err, a4), 2);
    assert_contains(err, "the slice --frames 1000:2000 holds no frame (the "
                         "capture has 240, indices 0 to 239)");
    assert_int_equal(count_lines(err), 1);
    free(out);
    free(err);
    free(full->scopes);
    free(full);
    free(cap);
}

/* ---- folded out -------------------------------------------------------- */

static void folded_self_time_merges_and_sorts_stacks(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "f.cap"), *out = tmp_path(e, "f.folded");
    write_sample(cap, 1, 0);
    assert_int_equal(convert(cvt_cap_to_folded, cap, out, NULL, NULL, NULL,
                             NULL), CAP_OK);
    char *text = read_file(out);
    /* frame and render have no self time and shadow;pass 0.1 us: their
     * lines round to 0 and are left out; GPU spans come under their track;
     * 2.5 and 0.5 us round away from zero */
    assert_string_equal(text,
        "loader;io 29\n"
        "main;frame;render;draw 12\n"
        "main;frame;update 5\n"
        "main;frame;update;physics 3\n"
        "queue;render 3\n"
        "queue;render;draw 1\n");
    free(text);
    free(cap);
    free(out);
}

static void folded_calls_count_occurrences(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "f.cap"), *out = tmp_path(e, "f.folded");
    write_sample(cap, 0, 0);
    assert_int_equal(convert(cvt_cap_to_folded, cap, out, NULL, NULL, "calls",
                             NULL), CAP_OK);
    char *text = read_file(out);
    assert_string_equal(text,
        "loader;io 1\n"
        "loader;io;shadow:pass 1\n"
        "main;frame 2\n"
        "main;frame;render 2\n"
        "main;frame;render;draw 2\n"
        "main;frame;update 2\n"
        "main;frame;update;physics 2\n");
    free(text);
    free(cap);
    free(out);
}

/* ---- capture copy ------------------------------------------------------ */

/* Every scope of a capture as the reader reports it, one line each. */
static char *scope_lines(const char *path)
{
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = '\0';
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED)
            continue; /* a damaged input: what can be read */
        assert_int_equal(res, CAP_OK);
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        char line[160];
        int k = snprintf(line, sizeof line, "%u %u %u %lld %lld %lld\n",
                         ev.u.scope.tid, ev.u.scope.name, ev.u.scope.depth,
                         (long long)ev.u.scope.begin_ns,
                         (long long)ev.u.scope.end_ns,
                         (long long)ev.u.scope.children_ns);
        if (n + (size_t)k + 1 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + n, line, (size_t)k + 1);
        n += (size_t)k;
    }
    assert_int_equal(res, CAP_DONE);
    cap_reader_close(r);
    return out;
}

/* A scope open across a block boundary whose clock estimate changed: the
 * reader converts a scope with the period of the block it ends in. The
 * copy keeps the input's clock and ticks and writes each scope's end into
 * a block with the same clock sample, so every scope reads back to the
 * same nanosecond, children included, with nothing out of order (no
 * warning, no "timestamps went backwards"). */
static void copying_keeps_each_blocks_clock(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "clk.cap"), *out = tmp_path(e, "clk-copy.cap");
    cap_writer_options wo = {0};
    wo.clock_source = "tsc";
    wo.tick_period_ns = 0.3;
    wo.origin_tick = 1000;
    wo.origin_mono_ns = 1;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, cap, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "a", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "b", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 3, "c", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 9, "unused", "u.c", 7), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    /* block 1: 0.300001 ns per tick */
    assert_int_equal(cap_writer_clock_sample(w, 1000 + 1000000000,
                                             1 + 300001000), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 1000000000), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1000000333), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 1000000500), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 3, 1000000501), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1000000777), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    /* block 2: 0.299999 ns per tick; b is repeated as open */
    assert_int_equal(cap_writer_clock_sample(w, 1000 + 2000000000,
                                             1 + 599998000), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1000001000), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);

    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    char *want = scope_lines(cap), *got = scope_lines(out);
    /* a and c end in block 1 (0.300001 ns a tick): a's begin, 999999000
     * ticks after the origin, is 300000699.9 -> 300000700 ns; b ends in
     * block 2 (0.299999), its begin too: 999999500 ticks -> 299998850 ns,
     * its child c's 276 ticks -> 83 ns */
    assert_string_equal(want, "0 1 0 300000700 300000800 0\n"
                              "0 3 1 300000850 300000933 0\n"
                              "0 2 0 299998850 299999000 83\n");
    assert_string_equal(got, want);
    free(want);
    free(got);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        ;
    assert_int_equal(res, CAP_DONE);
    assert_int_equal(cap_reader_get_stats(r)->clock_backwards, 0);
    assert_int_equal(cap_reader_get_stats(r)->scopes, 3);
    double per;
    uint64_t otick, omono;
    cap_reader_clock(r, &per, &otick, &omono);
    assert_true(per == 0.3);
    assert_int_equal(otick, 1000);
    assert_int_equal(omono, 1);
    /* a name defined and never used is kept too */
    assert_string_equal(cap_reader_name(r, 9), "unused");
    assert_string_equal(cap_reader_name_file(r, 9), "u.c");
    assert_int_equal(cap_reader_name_line(r, 9), 7);
    cap_reader_close(r);
    free(cap);
    free(out);
}

/* Every GPU span of a capture as the reader reports it, one line each,
 * then the count of invalid spans. */
static char *gpu_lines(const char *path)
{
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_GPU_SPAN)
            continue;
        const cap_ev_gpu_span *g = &ev.u.gpu_span;
        fprintf(f, "%u %llu %u %u m%d c%d %lld %lld %lld %lld d%llu\n",
                g->track, (unsigned long long)g->cpu_frame, g->name,
                g->depth, g->measured, g->calibrated, (long long)g->begin_ns,
                (long long)g->end_ns, (long long)g->duration_ns,
                (long long)g->self_ns,
                (unsigned long long)cap_reader_track_calibration_deviation(
                    r, g->track));
    }
    assert_int_equal(res, CAP_DONE);
    fprintf(f, "invalid %llu\n",
            (unsigned long long)cap_reader_get_stats(r)->gpu_invalid);
    fclose(f);
    cap_reader_close(r);
    return out;
}

/* GPU spans of a track of 0.3 ns ticks, first uncalibrated, then under
 * two calibrations: the copy keeps the track's period, its ticks and its
 * calibrations, so every span reads back the same, self times included
 * (in ns at 1 ns a tick, a child of 1 tick, 0.3 ns, would come out empty
 * and be dropped as invalid); and each calibration's stated deviation,
 * also where only the deviation changed (d7, d9, d11). */
static void copying_keeps_gpu_ticks_and_calibrations(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "gpu.cap"), *out = tmp_path(e, "gpu-copy.cap");
    cap_writer_options wo = {0};
    wo.tick_period_ns = 0.5;
    wo.origin_tick = 1000;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, cap, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "pass", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "draw", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_gpu_track(w, 0, "queue", 0.3), CAP_OK);
    cap_gpu_span a[] = {{1, -1, 100, 103, 1}, {2, 0, 101, 102, 1},
                        {2, 0, 102, 102, 0}};
    assert_int_equal(cap_writer_frame(w, 0, 1000, 1100), CAP_OK);
    assert_int_equal(cap_writer_gpu_frame(w, 0, 0, a, 3), CAP_OK);
    assert_int_equal(cap_writer_gpu_calibration(w, 0, 90, 1001, 7), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 1, 1100, 1200), CAP_OK);
    assert_int_equal(cap_writer_gpu_frame(w, 0, 1, a, 2), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    assert_int_equal(cap_writer_gpu_calibration(w, 0, 95, 1003, 9), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 2, 1200, 1300), CAP_OK);
    assert_int_equal(cap_writer_gpu_frame(w, 0, 2, a, 3), CAP_OK);
    assert_int_equal(cap_writer_gpu_calibration(w, 0, 95, 1003, 11), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 3, 1300, 1400), CAP_OK);
    assert_int_equal(cap_writer_gpu_frame(w, 0, 3, a, 2), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    char *want = gpu_lines(cap), *got = gpu_lines(out);
    /* uncalibrated: 100 x 0.3 = 30 ns; 3 ticks 0.9 -> 1 ns, 1 tick 0.3 ->
     * 0 ns, self 2 ticks 0.6 -> 1 ns. Calibrated (90 = CPU tick 1001, 0.5
     * ns a tick: 0.5 -> 1 ns): 1 + 10 x 0.3 = 4 ns; then (95 = 1003:
     * 1.5 -> 2 ns): 2 + (5 x 0.3 = 1.5 -> 2) = 4 ns */
    assert_string_equal(want, "0 0 1 0 m1 c0 30 31 1 1 d0\n"
                              "0 0 2 1 m1 c0 30 30 0 0 d0\n"
                              "0 0 2 1 m0 c0 0 0 0 0 d0\n"
                              "0 1 1 0 m1 c1 4 5 1 1 d7\n"
                              "0 1 2 1 m1 c1 4 4 0 0 d7\n"
                              "0 2 1 0 m1 c1 4 5 1 1 d9\n"
                              "0 2 2 1 m1 c1 4 4 0 0 d9\n"
                              "0 2 2 1 m0 c1 0 0 0 0 d9\n"
                              "0 3 1 0 m1 c1 4 5 1 1 d11\n"
                              "0 3 2 1 m1 c1 4 4 0 0 d11\n"
                              "invalid 0\n");
    assert_string_equal(got, want);
    free(want);
    free(got);
    free(cap);
    free(out);
}

/* What this version cannot copy is said, one line each: a chunk of a type
 * it does not know (convert-unknown-chunk.cap: waits-and-strays.cap with
 * one inserted before its footer) is skipped; the rest is copied. A flag
 * given to a name after its first use is copied too. */
static void copying_says_what_it_cannot_copy(void **state)
{
    env *e = *state;
    char *out = tmp_path(e, "unk-copy.cap");
    const char *in = fixture(e, "convert-unknown-chunk.cap");
    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, in, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    char want[4700];
    snprintf(want, sizeof want, "warning: %s: 1 chunk(s) of a type this "
             "version of libcapture does not know were skipped; they are "
             "not in the copy\n", in);
    assert_string_equal(diag, want);
    free(diag);
    char *a = scope_lines(in), *b = scope_lines(out);
    assert_string_equal(b, a);
    free(a);
    free(b);
    free(out);

    char *cap = tmp_path(e, "late-flag.cap");
    out = tmp_path(e, "late-flag-copy.cap");
    cap_writer_options wo = {.format_major = 1, .format_minor = 1};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, cap, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "wait_gpu", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 10), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 20), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    assert_int_equal(cap_writer_name_flags(w, 1, CAP_NAME_WAIT), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 30), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 40), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    cap_event ev;
    while (cap_reader_next(r, &ev) == CAP_OK)
        ;
    assert_int_equal(cap_reader_name_flags(r, 1), CAP_NAME_WAIT);
    cap_reader_close(r);
    free(cap);
    free(out);
}

/* A damaged chunk in the middle, inside scopes that span it: the input
 * still counts the children lost with it (its later blocks' open-stack
 * prefix says so) and never reports the scopes that ended in it; the copy
 * gives every scope the same times and self times (it adds the lost
 * children's time, cap_writer_scope_children). */
static void copying_around_a_damaged_chunk_keeps_every_self_time(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "mid.cap"), *out = tmp_path(e, "mid-copy.cap");
    cap_writer_options wo = {0};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, cap, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "frame", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "work", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 3, "inner", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 100), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 110), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 120), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 0, 100, 1000), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    /* block 2, to be damaged: a work ends in it, one begins, an inner
     * begins and ends in it */
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 200), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 300), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 310), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 3, 320), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 330), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 3, 400), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 450), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 500), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 900), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    /* a payload byte of the third chunk (META, block 1, block 2) */
    FILE *f = fopen(cap, "r+b");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    size_t at = 0, k = 0;
    for (size_t i = 16; i + 4 <= n && !at; i++)
        if (memcmp(buf + i, "CHNK", 4) == 0 && ++k == 3)
            at = i + 24 + 3;
    assert_true(at > 0 && at < n);
    buf[at] ^= 0xff;
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);

    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL,
                             &diag), CAP_OK);
    assert_contains(diag, "payload checksum mismatch; copying what can be "
                          "read\n");
    assert_int_equal(count_lines(diag), 2); /* the damage, the result */
    free(diag);
    char *want = scope_lines(cap), *got = scope_lines(out);
    /* the input: work 110-120; inner 400-450 in work 310-500 (children 50
     * and the lost inner's 10); frame with work 10 + 100 (lost) + 190 */
    assert_string_equal(want, "0 2 1 110 120 0\n"
                              "0 3 2 400 450 0\n"
                              "0 2 1 310 500 60\n"
                              "0 1 0 100 900 300\n");
    assert_string_equal(got, want);
    free(want);
    free(got);
    free(cap);
    free(out);
}

static void copying_a_truncated_capture_makes_it_complete(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "cut.cap"), *out = tmp_path(e, "fixed.cap");
    write_sample(cap, 1, 1);
    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL, &diag),
                     CAP_OK);
    assert_int_equal(count_lines(diag), 3);
    assert_contains(diag, "cut.cap: file ends at offset ");
    assert_contains(diag, "without a footer; copying what can be read\n");
    assert_contains(diag, "cut.cap: 1 scope(s) never end in the input "
                          "(their ends were lost: the capture was cut or "
                          "damaged inside them); the copy leaves them open "
                          "as well, and no reader reports them\n");
    assert_contains(diag, "fixed.cap, which is complete: what the damage lost is not in it either, and reading it does not warn about the damage (keep the input)\n");
    free(diag);
    cap_reader *r = NULL;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        ;
    assert_int_equal(res, CAP_DONE);
    assert_true(cap_reader_get_stats(r)->has_footer);
    assert_false(cap_reader_get_stats(r)->truncated);
    assert_string_equal(cap_reader_meta_get(r, "program"), "sample");
    cap_reader_close(r);
    /* physics closed inside io, which never closed: kept at its depth,
     * as the input has it; io is not reported, as in the input */
    char *d = dump(out);
    assert_int_equal(strncmp(d, "thread 0 main\nthread 1 loader\n"
                                "gputrack 0 1 queue\n", 49), 0);
    assert_int_equal(strncmp(d + 49, sample_dump + 30, strlen(sample_dump) - 30),
                     0);
    assert_string_equal(d + 49 + strlen(sample_dump) - 30,
        "scope 1 1 40.100 40.200 physics\n"
        "frame 0 1.000 11.000\n"
        "frame 1 21.000 31.000\n"
        "counter 11.000 100.5 rss\n"
        "counter 31.000 101.5 rss\n"
        "gpu 0 0 0 6.000 9.000 render < -\n"
        "gpu 0 0 1 6.500 7.000 draw < render\n");
    free(d);
    free(cap);
    free(out);
}

static void copying_a_complete_capture_changes_nothing_readable(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "a.cap"), *out = tmp_path(e, "b.cap");
    write_sample(cap, 1, 0);
    char *diag;
    assert_int_equal(convert(cvt_cap_to_cap, cap, out, NULL, NULL, NULL, &diag),
                     CAP_OK);
    assert_string_equal(diag, "");
    free(diag);
    char *a = dump(cap), *b = dump(out);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(cap);
    free(out);
}

/* ---- real traces ------------------------------------------------------- */

static int has_suffix(const char *s, const char *x)
{
    size_t n = strlen(s), k = strlen(x);
    return n >= k && strcmp(s + n - k, x) == 0;
}

static void every_corpus_trace_imports_or_fails_with_one_line(void **state)
{
    env *e = *state;
    static const char *const dirs[] = {"chrome-trace/catapult",
                                       "chrome-trace/speedscope"};
    char dir[PATH_MAX];
    size_t tried = 0;
    for (size_t k = 0; k < 2; k++) {
        snprintf(dir, sizeof dir, "%s/%s", e->corpus ? e->corpus : "", dirs[k]);
        DIR *d = e->corpus ? opendir(dir) : NULL;
        if (!d) {
            print_message("SKIP: corpus not found at %s\n", dir);
            skip();
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!has_suffix(de->d_name, ".json") &&
                !has_suffix(de->d_name, ".json.gz"))
                continue;
            char in[PATH_MAX * 2];
            snprintf(in, sizeof in, "%s/%s", dir, de->d_name);
            char *out = tmp_path(e, "corpus.cap"), *diag;
            int rc = convert(cvt_chrome_to_cap, in, out, NULL, NULL, NULL,
                             &diag);
            if (rc < 0 && rc != CAP_E_IO && rc != CAP_E_NOMEM) {
                /* an input error */
                if (count_lines(diag) < 1 || !contains(diag, "error: "))
                    fail_msg("%s failed without a message", in);
            } else if (rc != CAP_OK) {
                fail_msg("%s: rc %d: %s", in, rc, diag);
            } else {
                free(dump(out)); /* readable */
            }
            free(diag);
            free(out);
            tried++;
        }
        closedir(d);
    }
    assert_true(tried >= 40);
}

static void corpus_self_time_matches_the_python_reference(void **state)
{
    env *e = *state;
    static const char *const dirs[] = {"catapult", "speedscope"};
    char dir[PATH_MAX];
    size_t compared = 0;
    for (size_t k = 0; k < 2; k++) {
        snprintf(dir, sizeof dir, "%s/chrome-trace/%s",
                 e->corpus ? e->corpus : "", dirs[k]);
        DIR *probe = e->corpus ? opendir(dir) : NULL;
        if (!probe) {
            print_message("SKIP: corpus not found at %s\n", dir);
            skip();
        }
        closedir(probe);
        char exp_dir[PATH_MAX];
        snprintf(exp_dir, sizeof exp_dir, "%s/%s", e->self_time, dirs[k]);
        DIR *d = opendir(exp_dir);
        assert_non_null(d);
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!has_suffix(de->d_name, ".txt"))
                continue;
            char in[PATH_MAX * 2], exp_path[PATH_MAX * 2];
            snprintf(in, sizeof in, "%s/%.*s", dir,
                     (int)(strlen(de->d_name) - 4), de->d_name);
            snprintf(exp_path, sizeof exp_path, "%s/%s", exp_dir, de->d_name);
            char *out = tmp_path(e, "self.cap");
            if (convert(cvt_chrome_to_cap, in, out, NULL, NULL, NULL, NULL) !=
                CAP_OK)
                fail_msg("%s did not import", in);
            char *got = self_time_text(out), *want = read_file(exp_path);
            assert_non_null(want);
            if (strcmp(got, want) != 0)
                fail_msg("%s: self time differs from %s:\n--- got\n%s",
                         in, exp_path, got);
            free(got);
            free(want);
            free(out);
            compared++;
        }
        closedir(d);
    }
    assert_true(compared >= 40);
}

/* ---- the command line -------------------------------------------------- */

/* Run capture_convert with args; capture stdout and stderr. */
static int run_tool(env *e, char **out, char **err, const char *const *args)
{
    char *o = tmp_path(e, "stdout.txt"), *er = tmp_path(e, "stderr.txt");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(o, "w", stdout) || !freopen(er, "w", stderr))
            _exit(127);
        const char *argv[16] = {e->tool};
        size_t n = 1;
        for (; args[n - 1] && n < 15; n++)
            argv[n] = args[n - 1];
        argv[n] = NULL;
        execv(e->tool, (char *const *)argv);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    *out = read_file(o);
    *err = read_file(er);
    free(o);
    free(er);
    return WEXITSTATUS(status);
}

static void help_shows_defaults_and_exit_codes(void **state)
{
    env *e = *state;
    char *out, *err;
    const char *args[] = {"--help", NULL};
    assert_int_equal(run_tool(e, &out, &err, args), 0);
    assert_contains(out, "usage: capture_convert [options] IN OUT");
    assert_contains(out, "(default: self-us)");
    assert_contains(out, "(default: from IN's extension)");
    /* the tools' one exit table (tools/common/tool_exit.h) */
    assert_contains(out, "Exit status:\n  0  done: the report or output was "
                         "written\n  1  a finding that gates");
    assert_contains(out, "\n  2  usage error or unreadable input");
    assert_contains(out, "\n  3  written, but with warnings under --strict, "
                         "or with output or I/O failing");
    assert_string_equal(err, "");
    free(out);
    free(err);
}

static void usage_errors_exit_with_2(void **state)
{
    env *e = *state;
    static const char *const cases[][5] = {
        {"--bogus", "a.json", "b.cap", NULL, "unknown option '--bogus'"},
        {"a.json", NULL, NULL, NULL, "expected IN and OUT"},
        {"a.txt", "b.cap", NULL, NULL, "a.txt: cannot tell the format"},
        {"--weight", "heavy", "a.cap", "b.folded", "--weight 'heavy'"},
        {"--to", "puffin", "a.cap", "b.x", "--to 'puffin': expected cap, json, "
                                           "folded, svg or perfetto"},
        {"--frame-scope", NULL, NULL, NULL, "--frame-scope needs a value"},
        {"--frames", "5", "a.cap", "b.cap", "--frames '5': expected A:B, A: "
                                            "or :B with 0 <= A < B"},
        {"--frames", "9:3", "a.cap", "b.cap", "--frames '9:3'"},
        {"--seconds", "x:1", "a.cap", "b.cap", "--seconds 'x:1'"},
        {"--slowest", "0", "a.cap", "b.cap", "--slowest needs a whole number "
                                            ">= 1, not '0'"},
        {"--frames", "1:2", "a.cap", "b.json", "cut a capture into a capture"},
        {"--context", "3", "a.cap", "b.cap", "--context goes with --slowest"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        const char *args[5] = {cases[i][0], cases[i][1], cases[i][2],
                               cases[i][3], NULL};
        int rc = run_tool(e, &out, &err, args);
        if (rc != 2 || !contains(err, cases[i][4]) || count_lines(err) != 1 ||
            out[0])
            fail_msg("case %zu: rc %d, stderr: %s", i, rc, err);
        free(out);
        free(err);
    }
}

static void unreadable_input_exits_2_and_unwritable_output_3(void **state)
{
    env *e = *state;
    char *out, *err;
    char *missing = tmp_path(e, "missing.json"), *cap = tmp_path(e, "x.cap");
    const char *a1[] = {missing, cap, NULL};
    assert_int_equal(run_tool(e, &out, &err, a1), 2);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, "cannot open");
    free(out);
    free(err);
    const char *a2[] = {fixture(e, "chrome-ties-follow-chrome.json"),
                        "/nonexistent-dir/x.cap", NULL};
    assert_int_equal(run_tool(e, &out, &err, a2), 3);
    assert_contains(err, "cannot write /nonexistent-dir/x.cap");
    free(out);
    free(err);
    free(missing);
    free(cap);
}

static void json_to_folded_goes_through_a_capture(void **state)
{
    env *e = *state;
    char *out, *err;
    const char *args[] = {"--weight=calls", "--to", "folded",
                          fixture(e, "chrome-x-overlapping-parent-is-clipped.json"),
                          "-", NULL};
    assert_int_equal(run_tool(e, &out, &err, args), 0);
    assert_string_equal(out,
        "1/1;after 1\n"
        "1/1;parent 1\n"
        "1/1;parent;child 1\n"
        "1/1;parent;child;grandchild 1\n");
    assert_int_equal(count_lines(err), 3);
    free(out);
    free(err);
}

static void same_input_and_output_is_refused(void **state)
{
    env *e = *state;
    char *cap = tmp_path(e, "same.cap"), *out, *err;
    write_sample(cap, 0, 0);
    const char *args[] = {cap, cap, NULL};
    assert_int_equal(run_tool(e, &out, &err, args), 2);
    assert_contains(err, "IN and OUT are the same file");
    free(out);
    free(err);
    free(cap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(object_form_keeps_names_times_counters_and_metadata),
        cmocka_unit_test(gzip_input_reads_like_plain_json),
        cmocka_unit_test(array_cut_short_imports_every_complete_event),
        cmocka_unit_test(end_without_matching_begin_is_ignored),
        cmocka_unit_test(end_of_an_outer_scope_closes_the_scopes_inside),
        cmocka_unit_test(unclosed_begin_ends_at_the_threads_last_timestamp),
        cmocka_unit_test(x_overlapping_its_parents_end_is_clipped),
        cmocka_unit_test(ties_are_ordered_as_chrome_orders_them),
        cmocka_unit_test(x_without_dur_ends_with_its_thread),
        cmocka_unit_test(events_without_a_name_become_unnamed_scopes),
        cmocka_unit_test(negative_timestamps_are_shifted_to_zero),
        cmocka_unit_test(frame_scope_makes_each_outermost_occurrence_a_frame),
        cmocka_unit_test(without_frame_scope_there_are_no_frames),
        cmocka_unit_test(gpu_thread_becomes_a_calibrated_gpu_track),
        cmocka_unit_test(unknown_gpu_thread_is_an_input_error),
        cmocka_unit_test(steps_glob_and_several_gpu_streams),
        cmocka_unit_test(copying_keeps_each_blocks_clock),
        cmocka_unit_test(copying_keeps_gpu_ticks_and_calibrations),
        cmocka_unit_test(copying_says_what_it_cannot_copy),
        cmocka_unit_test(copying_around_a_damaged_chunk_keeps_every_self_time),
        cmocka_unit_test(slices_keep_their_frames_scopes_and_names),
        cmocka_unit_test(invalid_json_far_into_the_file_names_the_file_offset),
        cmocka_unit_test(gzip_cut_short_is_named),
        cmocka_unit_test(the_same_gpu_thread_twice_is_an_input_error),
        cmocka_unit_test(unreadable_inputs_fail_with_one_line),
        cmocka_unit_test(chrome_output_is_a_trace_perfetto_can_load),
        cmocka_unit_test(capture_to_json_and_back_keeps_every_scope),
        cmocka_unit_test(folded_self_time_merges_and_sorts_stacks),
        cmocka_unit_test(folded_calls_count_occurrences),
        cmocka_unit_test(copying_a_truncated_capture_makes_it_complete),
        cmocka_unit_test(copying_a_complete_capture_changes_nothing_readable),
        cmocka_unit_test(every_corpus_trace_imports_or_fails_with_one_line),
        cmocka_unit_test(corpus_self_time_matches_the_python_reference),
        cmocka_unit_test(json_strings_and_microseconds_are_written_exactly),
        cmocka_unit_test(help_shows_defaults_and_exit_codes),
        cmocka_unit_test(usage_errors_exit_with_2),
        cmocka_unit_test(unreadable_input_exits_2_and_unwritable_output_3),
        cmocka_unit_test(json_to_folded_goes_through_a_capture),
        cmocka_unit_test(same_input_and_output_is_refused),
    };
    return cmocka_run_group_tests_name("convert", tests, setup, teardown);
}
