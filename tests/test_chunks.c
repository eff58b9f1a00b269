/*
 * test_chunks.c - cap_chunks.h: a capture cut into runs of blocks, each
 * read by its own reader, gives the events of a whole read, in order.
 *
 * For every fixture with a footer, at one block a chunk and at 4 KiB a
 * chunk: the scopes, frames and counters of the chunk readers, one after
 * the other, equal those of one reader of the whole file (kind, times,
 * thread, depth, names of the scope and of its ancestors); declarations
 * are left out (a chunk reader declares again what it meets). A file
 * cut short or a stream is not cut (n 0). A capture written here with
 * many blocks is cut at block offsets.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <capture/cap_chunks.h>
#include <capture/cap_reader.h>
#include <capture/cap_writer.h>

static const char *fixtures_dir;

/* One event as text: what a chunk must give as the whole read does. */
static int event_line(cap_reader *r, const cap_event *ev, char *buf,
                      size_t n)
{
    switch (ev->kind) {
    case CAP_EV_SCOPE: {
        const cap_ev_scope *s = &ev->u.scope;
        int k = snprintf(buf, n, "S %u %s %u %lld %lld %lld", s->tid,
                         cap_reader_name(r, s->name), s->depth,
                         (long long)s->begin_ns, (long long)s->end_ns,
                         (long long)s->children_ns);
        for (uint32_t d = 0; d < s->depth && (size_t)k < n; d++)
            k += snprintf(buf + k, n - (size_t)k, " <%s",
                          cap_reader_name(r, s->stack[d]));
        return 1;
    }
    case CAP_EV_FRAME:
        snprintf(buf, n, "F %llu %lld %lld",
                 (unsigned long long)ev->u.frame.index,
                 (long long)ev->u.frame.begin_ns,
                 (long long)ev->u.frame.end_ns);
        return 1;
    case CAP_EV_COUNTER:
        snprintf(buf, n, "C %s %lld %.17g", cap_reader_name(r, ev->u.counter.name),
                 (long long)ev->u.counter.time_ns, ev->u.counter.value);
        return 1;
    default:
        return 0;
    }
}

typedef struct lines {
    char **s;
    size_t n, cap;
} lines;

static void lines_add(lines *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->s = realloc(l->s, l->cap * sizeof *l->s);
        assert_non_null(l->s);
    }
    l->s[l->n++] = strdup(s);
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
}

/* Every event of r into l; returns the last result (CAP_DONE, or the
 * file's CAP_E_TRUNCATED / CAP_E_CORRUPT last seen). */
static cap_result read_all(cap_reader *r, lines *l)
{
    cap_event ev;
    cap_result res, last = CAP_DONE;
    char buf[8192];
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED) {
            last = res;
            continue;
        }
        assert_int_equal(res, CAP_OK);
        if (event_line(r, &ev, buf, sizeof buf))
            lines_add(l, buf);
    }
    return last;
}

/* The file at path, cut at min_bytes: chunk events == whole events.
 * Returns the number of chunks (0: not cut). */
static size_t check_file(const char *path, uint64_t min_bytes)
{
    cap_reader *r;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        return 0;
    lines whole = {0};
    cap_result wres = read_all(r, &whole);
    const cap_reader_stats *st = cap_reader_get_stats(r);
    int intact = st->has_footer && !st->corrupt_chunks && wres == CAP_DONE;
    uint64_t blocks = st->chunks >= 2 ? st->chunks - 2 : 0;
    cap_reader_close(r);

    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    cap_chunk_plan plan;
    assert_int_equal(cap_chunks_plan(fd, min_bytes, &plan), CAP_OK);
    if (!intact) { /* damaged: read whole, or at least not lost */
        cap_chunks_free(&plan);
        close(fd);
        lines_free(&whole);
        return 0;
    }
    assert_true(plan.n >= 1);
    assert_null(plan.why_whole);
    /* 4.0: a chunk holds a group's blocks (one at least) */
    uint8_t hdr[16];
    assert_int_equal(pread(fd, hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
    int groups = hdr[8] >= 4;
    for (size_t i = 0; i < plan.n; i++) { /* each begins a group */
        uint8_t hb[24];
        assert_int_equal(pread(fd, hb, sizeof hb, (off_t)plan.chunks[i].begin),
                         (ssize_t)sizeof hb);
        assert_int_equal(hb[6] & 2, 0);
    }
    assert_int_equal(plan.blocks, blocks);
    lines cut = {0};
    uint64_t nb = 0;
    for (size_t i = 0; i < plan.n; i++) {
        const cap_chunk *c = &plan.chunks[i];
        assert_true(c->blocks >= 1);
        assert_true(c->begin < c->end);
        if (i)
            assert_int_equal(c->begin, plan.chunks[i - 1].end);
        if (min_bytes == 0 && !groups)
            assert_int_equal(c->blocks, 1);
        else if (i + 1 < plan.n)
            assert_true(c->end - c->begin >= min_bytes);
        nb += c->blocks;
        cap_reader *cr;
        char detail[200];
        assert_int_equal(cap_chunks_open(&cr, fd, c->begin, c->end, detail,
                                         sizeof detail),
                         CAP_OK);
        assert_int_equal(read_all(cr, &cut), CAP_DONE);
        cap_reader_close(cr);
    }
    assert_int_equal(nb, plan.blocks);
    assert_int_equal(plan.chunks[plan.n - 1].end, plan.footer_offset);
    assert_int_equal(cut.n, whole.n);
    for (size_t i = 0; i < whole.n; i++)
        if (strcmp(cut.s[i], whole.s[i]) != 0)
            fail_msg("%s: event %zu: chunked '%s', whole '%s'", path, i,
                     cut.s[i], whole.s[i]);
    size_t n = plan.n;
    cap_chunks_free(&plan);
    close(fd);
    lines_free(&whole);
    lines_free(&cut);
    return n;
}

static void fixtures_match(void **state)
{
    (void)state;
    DIR *d = opendir(fixtures_dir);
    assert_non_null(d);
    struct dirent *e;
    size_t files = 0, multi = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".cap") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir, e->d_name);
        size_t n = check_file(path, 0);
        (void)check_file(path, 4096);
        files++;
        multi += n > 1;
    }
    closedir(d);
    assert_true(files >= 20);
    assert_true(multi >= 5); /* fixtures of several blocks were cut */
}

/* A capture of many small blocks, two threads, a scope open across
 * blocks: cut at every block and at every 3rd. */
static void many_blocks(void **state)
{
    (void)state;
    char path[] = "/tmp/test_chunks_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer_options o = {0};
    o.block_bytes = 4096;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 1, "main"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 2, "worker"), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "outer", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "inner", NULL, 0), CAP_OK);
    uint64_t t = 1000;
    assert_int_equal(cap_writer_scope_begin(w, 2, 1, t), CAP_OK);
    for (uint64_t f = 0; f < 400; f++) {
        uint64_t b = t;
        for (int k = 0; k < 20; k++) {
            assert_int_equal(cap_writer_scope_begin(w, 1, 1, t += 3), CAP_OK);
            assert_int_equal(cap_writer_scope_begin(w, 1, 2, t += 5), CAP_OK);
            assert_int_equal(cap_writer_scope_end(w, 1, t += 7), CAP_OK);
            assert_int_equal(cap_writer_scope_end(w, 1, t += 2), CAP_OK);
        }
        assert_int_equal(cap_writer_frame(w, f, b, t += 1), CAP_OK);
    }
    assert_int_equal(cap_writer_scope_end(w, 2, t += 10), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    assert_true(check_file(path, 0) >= 10);
    size_t n1 = check_file(path, 0), n3 = check_file(path, 1500);
    assert_true(n3 >= 2 && n3 < n1);
    /* cut short: no footer, not cut */
    int f2 = open(path, O_RDWR);
    assert_true(f2 >= 0);
    off_t size = lseek(f2, 0, SEEK_END);
    assert_int_equal(ftruncate(f2, size - 10), 0);
    cap_chunk_plan plan;
    assert_int_equal(cap_chunks_plan(f2, 0, &plan), CAP_OK);
    assert_int_equal(plan.n, 0);
    assert_string_equal(plan.why_whole, "no footer");
    cap_chunks_free(&plan);
    close(f2);
    unlink(path);
}

static void misuse(void **state)
{
    (void)state;
    cap_chunk_plan plan;
    assert_int_equal(cap_chunks_plan(-1, 0, &plan), CAP_E_MISUSE);
    assert_int_equal(cap_chunks_plan(0, 0, NULL), CAP_E_MISUSE);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(cap_chunks_plan(p[0], 0, &plan), CAP_OK);
    assert_int_equal(plan.n, 0);
    assert_string_equal(plan.why_whole, "not a regular file");
    cap_reader *r;
    assert_int_equal(cap_chunks_open(&r, p[0], 0, 0, NULL, 0), CAP_E_MISUSE);
    close(p[0]);
    close(p[1]);
    cap_chunks_free(NULL);
}

int main(int argc, char **argv)
{
    fixtures_dir = argc > 1 ? argv[1] : "fixtures";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixtures_match),
        cmocka_unit_test(many_blocks),
        cmocka_unit_test(misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
