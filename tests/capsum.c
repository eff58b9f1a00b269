/* capsum.c - see capsum.h. */
#include "capsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t capsum_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int push_frame(capsum *s, uint64_t index, int64_t end_ns, size_t *cap)
{
    if (s->frames == *cap) {
        size_t n = *cap ? *cap * 2 : 256;
        uint64_t *fi = realloc(s->frame_index, n * sizeof *fi);
        if (!fi)
            return -1;
        s->frame_index = fi;
        int64_t *fe = realloc(s->frame_end_ns, n * sizeof *fe);
        if (!fe)
            return -1;
        s->frame_end_ns = fe;
        *cap = n;
    }
    if (s->frames && index != s->frame_index[s->frames - 1] + 1)
        s->frames_contiguous = 0;
    s->frame_index[s->frames] = index;
    s->frame_end_ns[s->frames] = end_ns;
    s->frames++;
    return 0;
}

static void count_name(capsum *s, const char *name)
{
    if (!name)
        name = "";
    for (size_t i = 0; i < s->names_n; i++)
        if (strcmp(s->names[i].name, name) == 0) {
            s->names[i].count++;
            return;
        }
    if (s->names_n < sizeof s->names / sizeof s->names[0]) {
        snprintf(s->names[s->names_n].name, sizeof s->names[0].name, "%s",
                 name);
        s->names[s->names_n++].count = 1;
    }
}

int capsum_read(capsum *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->frames_contiguous = 1;
    s->final_error = CAP_DONE;
    cap_reader *r = NULL;
    s->open_result =
        cap_reader_open(&r, path, s->open_detail, sizeof s->open_detail);
    if (s->open_result != CAP_OK)
        return -1;
    size_t cap = 0;
    cap_event ev;
    for (;;) {
        cap_result res = cap_reader_next(r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT) {
            if (res == CAP_E_TRUNCATED)
                s->truncated++;
            else
                s->corrupt++;
            snprintf(s->detail, sizeof s->detail, "%s", cap_reader_detail(r));
            continue;
        }
        if (res != CAP_OK) {
            s->final_error = res;
            snprintf(s->detail, sizeof s->detail, "%s", cap_reader_detail(r));
            break;
        }
        s->events++;
        switch (ev.kind) {
        case CAP_EV_THREAD:
            if (ev.u.thread.tid < CAPSUM_MAX_THREADS)
                snprintf(s->threads[ev.u.thread.tid].name,
                         sizeof s->threads[0].name, "%s",
                         ev.u.thread.name ? ev.u.thread.name : "");
            break;
        case CAP_EV_FRAME:
            if (push_frame(s, ev.u.frame.index, ev.u.frame.end_ns, &cap) != 0) {
                s->final_error = CAP_E_NOMEM;
                goto out;
            }
            break;
        case CAP_EV_SCOPE:
            s->scopes++;
            if (ev.u.scope.tid < CAPSUM_MAX_THREADS) {
                s->threads[ev.u.scope.tid].scopes++;
                if (ev.u.scope.depth == 0)
                    s->threads[ev.u.scope.tid].roots++;
            }
            count_name(s, cap_reader_name(r, ev.u.scope.name));
            break;
        default:
            break;
        }
    }
out:
    s->stats = *cap_reader_get_stats(r);
    cap_reader_close(r);
    return 0;
}

void capsum_free(capsum *s)
{
    free(s->frame_index);
    free(s->frame_end_ns);
    s->frame_index = NULL;
    s->frame_end_ns = NULL;
    s->frames = 0;
}

uint64_t capsum_thread_scopes(const capsum *s, const char *name)
{
    uint64_t n = 0;
    for (size_t i = 0; i < CAPSUM_MAX_THREADS; i++)
        if (strcmp(s->threads[i].name, name) == 0)
            n += s->threads[i].scopes;
    return n;
}

uint64_t capsum_named(const capsum *s, const char *name)
{
    for (size_t i = 0; i < s->names_n; i++)
        if (strcmp(s->names[i].name, name) == 0)
            return s->names[i].count;
    return 0;
}

const char *capsum_describe(const capsum *s, char *buf, size_t n)
{
    if (s->open_result != CAP_OK)
        snprintf(buf, n, "open: %s (%s)", cap_result_name(s->open_result),
                 s->open_detail);
    else
        snprintf(buf, n,
                 "%llu events, %zu frames, %llu scopes, %u truncated, %u "
                 "corrupt, end %s, dropped %llu, footer %d; last detail: %s",
                 (unsigned long long)s->events, s->frames,
                 (unsigned long long)s->scopes, s->truncated, s->corrupt,
                 cap_result_name(s->final_error),
                 (unsigned long long)s->stats.dropped_scopes,
                 s->stats.has_footer, s->detail);
    return buf;
}
