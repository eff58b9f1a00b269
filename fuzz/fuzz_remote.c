/*
 * fuzz_remote.c - libFuzzer target: the client side of a live capture,
 * capture_remote's stream reader (tools/remote/remote.c) on bytes a
 * hostile server sends.
 *
 * The input arrives on a connected socket (a socketpair, then closed: the
 * server's end of the stream), and rem_record_fd does all capture_remote
 * does after connecting: the framing checks as bytes arrive (header, chunk
 * headers, sizes within the format's limits, the trailer), the copying
 * thread reading the pipe with cap_reader_open_fd, the window copied into
 * OUT as it arrives, then the window's frames sliced into a file beside
 * OUT and renamed over it. Odd-sized inputs go the way read_capture
 * HOST:PORT goes instead (spill files in TMPDIR, messages naming the
 * source). Any crash, sanitizer report, leak or hang is a bug; so is a
 * message naming a /proc/self/fd path.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out[64]; /* OUT, in /tmp, removed at exit */

static void remove_out(void)
{
    unlink(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char spill[64];
    static int spill_fd = -1;
    if (!out[0]) {
        signal(SIGPIPE, SIG_IGN); /* rem_record_fd leaves it to its caller */
        snprintf(out, sizeof out, "/tmp/fuzz_remote_%d.cap", (int)getpid());
        atexit(remove_out);
        spill_fd = memfd_create("fuzz-remote-window", 0);
        if (spill_fd < 0)
            abort();
        snprintf(spill, sizeof spill, "/proc/self/fd/%d", spill_fd);
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    int sb = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
    if (size > 65536)
        size = 65536; /* what the socket holds at once: the -max_len */
    for (size_t at = 0; at < size;) {
        ssize_t n = send(sv[1], data + at, size - at, MSG_NOSIGNAL);
        if (n <= 0)
            abort();
        at += (size_t)n;
    }
    close(sv[1]);
    char *text = NULL;
    size_t len = 0;
    FILE *diag = open_memstream(&text, &len);
    if (!diag)
        abort();
    int spilled = size & 1;
    rem_options o = {.source = "127.0.0.1:8585",
                     .out = spilled ? spill : out,
                     .skip_seconds = 0.001,
                     .seconds = 0.5,
                     .frames = 100,
                     .idle_timeout = 5,
                     .quiet = 1,
                     .spill = spilled,
                     .tool = "fuzz_remote",
                     .diag = diag};
    tool_exit rc = rem_record_fd(&o, sv[0]);
    fclose(diag);
    if (rc != TOOL_EXIT_OK && rc != TOOL_EXIT_USAGE &&
        rc != TOOL_EXIT_INCOMPLETE)
        abort(); /* a status capture_remote does not document */
    if (spilled && text && strstr(text, "/proc/self/fd/")) {
        fputs(text, stderr);
        abort(); /* a reader's messages name the source */
    }
    free(text);
    return 0;
}
