/*
 * fuzz_input.h - hand a fuzzer's bytes to code that reads files by path.
 *
 * The reader and the importers take a path, so each input is written to a
 * memory file (memfd) and passed as /proc/self/fd/N: no disk traffic, and
 * opening that path gives the code under test its own file offset.
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Replace the memory file's contents with data; returns its path in buf.
 * The descriptor is kept for the whole run (one per fuzzing process). */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size,
                                          char *buf, size_t n)
{
    static int fd = -1;
    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
    }
    if (ftruncate(fd, 0) != 0 ||
        (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz input");
        abort();
    }
    snprintf(buf, n, "/proc/self/fd/%d", fd);
    return buf;
}

#endif
