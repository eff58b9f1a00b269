/*
 * fuzz_stream.c - libFuzzer target: a capture arriving as a stream, as a
 * live client (capture_remote, read_capture HOST:PORT) receives it.
 *
 * The input goes through a pipe, so the reader sees what it sees on a
 * socket: no size, no seeking (cap_reader_open_fd; damage is skipped by
 * resynchronising on the bytes that follow). First every event is walked
 * and its borrowed pointers touched; then the same stream is copied
 * through a window (cvt_copy_reader, what capture_remote runs on the
 * network's bytes) into a memory file. Any crash, sanitizer report, leak
 * or hang is a bug.
 */
#include <capture/cap_reader.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cvt.h"

static volatile size_t sink;

static void touch_str(const char *s)
{
    if (s)
        sink += strlen(s);
}

/* A pipe holding data, its write end closed; returns the read end. */
static int stream_of(const uint8_t *data, size_t size)
{
    int p[2];
    if (pipe(p) != 0)
        abort();
    if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < (int)size && size > 65536)
        size = 65536; /* more than a pipe holds: the fuzzer's -max_len */
    while (size) {
        ssize_t n = write(p[1], data, size);
        if (n <= 0)
            abort();
        data += n;
        size -= (size_t)n;
    }
    close(p[1]);
    return p[0];
}

static void walk(const uint8_t *data, size_t size)
{
    cap_reader *r;
    char detail[256];
    if (cap_reader_open_fd(&r, stream_of(data, size), detail, sizeof detail) !=
        CAP_OK) {
        touch_str(detail);
        return;
    }
    for (size_t i = 0; i < cap_reader_meta_count(r); i++)
        touch_str(cap_reader_meta_value(r, i));
    cap_event ev;
    for (;;) {
        cap_result res = cap_reader_next(r, &ev);
        if (res == CAP_OK) {
            if (ev.kind == CAP_EV_SCOPE) {
                touch_str(cap_reader_name(r, ev.u.scope.name));
                touch_str(cap_reader_thread_name(r, ev.u.scope.tid));
                for (uint32_t i = 0; i < ev.u.scope.depth; i++)
                    touch_str(cap_reader_name(r, ev.u.scope.stack[i]));
            } else if (ev.kind == CAP_EV_THREAD) {
                touch_str(ev.u.thread.name);
            } else if (ev.kind == CAP_EV_GPU_SPAN) {
                for (uint32_t i = 0; i < ev.u.gpu_span.depth; i++)
                    touch_str(cap_reader_name(r, ev.u.gpu_span.stack[i]));
            }
            continue;
        }
        touch_str(cap_reader_detail(r));
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED)
            continue;
        break;
    }
    sink += (size_t)cap_reader_get_stats(r)->scopes;
    cap_reader_close(r);
}

static void copy_window(const uint8_t *data, size_t size)
{
    static int out = -1;
    static FILE *diag;
    if (out < 0) {
        out = memfd_create("fuzz-stream-out", 0);
        diag = fopen("/dev/null", "w");
        if (out < 0 || !diag)
            abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", out);
    cap_reader *r;
    char detail[256];
    if (cap_reader_open_fd(&r, stream_of(data, size), detail, sizeof detail) !=
        CAP_OK)
        return;
    cvt_window w = {.skip_seconds = 0.001, .seconds = 0.5, .frames = 100};
    cvt_options o = {.diag = diag};
    cvt_copy_result res;
    (void)cvt_copy_reader(r, "stream", path, &w, &o, &res);
    sink += (size_t)res.frames;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    walk(data, size);
    copy_window(data, size);
    return 0;
}
