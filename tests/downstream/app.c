/*
 * app.c - the program every downstream recipe builds (README, "Using
 * libcapture in your project"; tests/downstream.sh): it records a capture
 * through capture.h, reads it back through cap_reader.h and checks what it
 * finds (a second time as records in ticks, converted by the header's
 * inline cap_ticks_ns, which needs the math library on the link line),
 * so a recipe passes only when headers, library and its dependencies all
 * link and work together.
 *
 *   app OUT.cap    exit 0 and one "ok" line, or 1 and what went wrong
 */
#include <capture/cap_reader.h>
#include <capture/cap_version.h>
#include <capture/capture.h>

#include <stdio.h>
#include <string.h>

enum { FRAMES = 10 };

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "app: %s: %s\n", what, detail);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fail("usage", "app OUT.cap");
    if (strcmp(cap_version(), CAP_VERSION_STRING) != 0)
        return fail("library version differs from the headers", cap_version());

    cap_result r = cap_open(argv[1], NULL);
    if (r != CAP_OK)
        return fail(argv[1], cap_result_message(r));
    CAP_THREAD("main");
    for (int f = 0; f < FRAMES; f++) {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
        { CAP_SCOPE("update"); }
        CAP_BEGIN("render");
        CAP_END();
    }
    CAP_FRAME_MARK();
    if ((r = cap_close()) != CAP_OK)
        return fail(argv[1], cap_result_message(r));

    /* Read it back: 3 scopes per frame, "update" among them. */
    cap_reader *rd;
    char detail[256];
    if ((r = cap_reader_open(&rd, argv[1], detail, sizeof detail)) != CAP_OK)
        return fail(argv[1], detail);
    unsigned scopes = 0, updates = 0;
    int64_t total = 0; /* the scopes' durations, ns */
    cap_event ev;
    while ((r = cap_reader_next(rd, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        scopes++;
        total += ev.u.scope.end_ns - ev.u.scope.begin_ns;
        const char *name = cap_reader_name(rd, ev.u.scope.name);
        if (name && strcmp(name, "update") == 0)
            updates++;
    }
    cap_reader_close(rd);
    if (r != CAP_DONE)
        return fail(argv[1], cap_result_message(r));
    if (scopes != 3 * FRAMES || updates != FRAMES) {
        fprintf(stderr, "app: %s: %u scopes (%u update), expected %u (%u)\n",
                argv[1], scopes, updates, 3 * FRAMES, FRAMES);
        return 1;
    }

    /* Again, runs of scopes as records: the same scopes, the same ns. */
    if ((r = cap_reader_open(&rd, argv[1], detail, sizeof detail)) != CAP_OK)
        return fail(argv[1], detail);
    unsigned scopes2 = 0;
    int64_t total2 = 0;
    cap_scope_rec rec[16];
    uint32_t stacks[2 * CAP_MAX_DEPTH];
    for (;;) {
        size_t n = 0;
        cap_scope_run run;
        cap_reader_next_scopes(rd, rec, 16, &n, stacks, 2 * CAP_MAX_DEPTH,
                               &run);
        for (size_t i = 0; i < n; i++) {
            scopes2++;
            total2 += cap_ticks_ns(rec[i].end, run.period_ns) -
                      cap_ticks_ns(rec[i].begin, run.period_ns);
        }
        if (n)
            continue;
        if ((r = cap_reader_next(rd, &ev)) != CAP_OK)
            break;
        if (ev.kind == CAP_EV_SCOPE) {
            scopes2++;
            total2 += ev.u.scope.end_ns - ev.u.scope.begin_ns;
        }
    }
    cap_reader_close(rd);
    if (r != CAP_DONE)
        return fail(argv[1], cap_result_message(r));
    if (scopes2 != scopes || total2 != total) {
        fprintf(stderr, "app: %s: as records %u scopes, %lld ns; as events "
                "%u, %lld ns\n", argv[1], scopes2, (long long)total2,
                scopes, (long long)total);
        return 1;
    }
    printf("ok: libcapture %s, %u scopes written and read back\n",
           cap_version(), scopes);
    return 0;
}
