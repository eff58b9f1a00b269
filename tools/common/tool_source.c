/* tool_source.c - files, standard input and live sources (tool_source.h). */
#include "tool_source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tool_address_split(const char *s, char *host, size_t hn, char *port,
                       size_t pn)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1] || strlen(colon + 1) >= pn)
        return -1;
    long p = 0;
    for (const char *c = colon + 1; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        p = p * 10 + (*c - '0');
    }
    if (p < 1 || p > 65535)
        return -1;
    const char *h = s;
    size_t hl = (size_t)(colon - s);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= hn)
        return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, pn, "%s", colon + 1);
    return 0;
}

int tool_is_address(const char *s)
{
    char host[256], port[8];
    struct stat sb;
    return s && tool_address_split(s, host, sizeof host, port, sizeof port) == 0 &&
           stat(s, &sb) != 0;
}

void tool_source_parse(tool_source *src, const char *text)
{
    memset(src, 0, sizeof *src);
    src->text = text;
    src->fd = -1;
    if (strcmp(text, "-") == 0)
        src->kind = TOOL_SOURCE_STDIN;
    else if (tool_is_address(text) &&
             tool_address_split(text, src->host, sizeof src->host, src->port,
                                sizeof src->port) == 0)
        src->kind = TOOL_SOURCE_ADDRESS;
    else
        src->kind = TOOL_SOURCE_FILE;
}

int tool_spill_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/capture-XXXXXX", dir) >=
        (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Every byte from `from` into the spill file m. */
static int copy_into(int from, int m)
{
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n == 0)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        for (ssize_t off = 0; off < n;) {
            ssize_t k = write(m, buf + off, (size_t)(n - off));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return -1;
            off += k;
        }
    }
}

/* A spill file for src, or -1 after a message. */
static int spill_for(tool_source *src, const char *tool)
{
    /* in TMPDIR, unlinked: memory stays bounded however long the source */
    int m = tool_spill_file();
    if (m < 0)
        fprintf(stderr, "%s: %s: cannot make a temporary file: %s\n", tool,
                src->text, strerror(errno));
    else
        snprintf(src->buf, sizeof src->buf, "/proc/self/fd/%d", m);
    return m;
}

/* The bytes of the stream `from` (standard input, a pipe named by a path)
 * into a spill file: src->fd. */
static tool_exit spill_stream(tool_source *src, const char *tool, int from)
{
    int m = spill_for(src, tool);
    if (m < 0)
        return TOOL_EXIT_USAGE;
    if (copy_into(from, m) != 0) {
        fprintf(stderr, "%s: %s: %s\n", tool, src->text, strerror(errno));
        close(m);
        return TOOL_EXIT_USAGE;
    }
    src->fd = m;
    src->path = src->buf;
    return TOOL_EXIT_OK;
}

static tool_exit open_file(tool_source *src, const char *tool)
{
    struct stat sb;
    int fd = open(src->text, O_RDONLY | O_CLOEXEC);
    int err = errno;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        fd = -1;
        err = EISDIR;
    }
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", tool, src->text,
                strerror(err));
        return TOOL_EXIT_USAGE;
    }
    if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode)) {
        /* a pipe by name (mkfifo, <(...)): read once, as "-" is */
        tool_exit e = spill_stream(src, tool, fd);
        close(fd);
        return e;
    }
    src->fd = fd;
    src->path = src->text;
    return TOOL_EXIT_OK;
}

tool_exit tool_source_open(tool_source *src, const char *tool,
                           tool_record_fn record, void *user)
{
    if (src->kind == TOOL_SOURCE_FILE)
        return open_file(src, tool);
    if (src->kind == TOOL_SOURCE_STDIN)
        return spill_stream(src, tool, STDIN_FILENO);
    if (!record) {
        fprintf(stderr, "%s: %s: this build reads no live source (built "
                        "without the converters)\n", tool, src->text);
        return TOOL_EXIT_USAGE;
    }
    int m = spill_for(src, tool);
    if (m < 0)
        return TOOL_EXIT_USAGE;
    tool_exit e = record(user, src, src->buf);
    if (e != TOOL_EXIT_OK && e != TOOL_EXIT_INCOMPLETE) {
        close(m);
        return TOOL_EXIT_USAGE;
    }
    src->fd = m;
    src->path = src->buf;
    return e;
}

void tool_source_close(tool_source *src)
{
    if (src->fd >= 0)
        close(src->fd);
    src->fd = -1;
}
