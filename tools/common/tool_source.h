/*
 * tool_source.h - where a tool reads a capture from: a file, standard
 * input ("-"), a pipe by name (mkfifo, a shell's <(...)) or a program
 * serving its capture live (HOST:PORT), each turned into an open
 * descriptor of a regular file (the analysis reads a capture more than
 * once: an_load_fd).
 *
 *     tool_source src;
 *     tool_source_parse(&src, argv[k]);
 *     tool_exit e = tool_source_open(&src, "read_capture", record, &opts);
 *     if (e != TOOL_EXIT_OK) return e;     (one line printed)
 *     ... an_load_fd(src.fd, argv[k]) ...
 *     tool_source_close(&src);
 *
 * A stream (standard input, a named pipe) is read once, as it is (damage
 * and truncation stay visible), into an unlinked file in TMPDIR (default
 * /tmp: disk, not memory); a live source is recorded into one by the
 * tool's recorder (tools/remote: rem_source_record), which this wing does
 * not link.
 */
#ifndef TOOL_SOURCE_H
#define TOOL_SOURCE_H

#include <stddef.h>

#include "tool_exit.h"

typedef enum tool_source_kind {
    TOOL_SOURCE_FILE,    /* a path */
    TOOL_SOURCE_STDIN,   /* "-" */
    TOOL_SOURCE_ADDRESS  /* HOST:PORT, [V6ADDR]:PORT */
} tool_source_kind;

typedef struct tool_source {
    tool_source_kind kind;
    const char *text;  /* as given (borrowed): names it in messages */
    char host[256];    /* TOOL_SOURCE_ADDRESS: the host, brackets removed */
    char port[8];      /* and the port, 1 to 65535 */
    int fd;            /* after tool_source_open: the bytes; else -1 */
    const char *path;  /* after tool_source_open: a path that opens them
                          (text for a file, /proc/self/fd/N otherwise) */
    char buf[32];      /* path's storage for /proc/self/fd/N */
} tool_source;

/* Split "HOST:PORT" or "[V6ADDR]:PORT" at its last colon into host (size
 * hn) and port (size pn). Returns 0, or -1 when s is not of that form (no
 * host, a port that is not a number from 1 to 65535, too long). */
int tool_address_split(const char *s, char *host, size_t hn, char *port,
                       size_t pn);

/* 1 when s looks like HOST:PORT and names no existing file (a file named
 * "a:1" is read as a file), else 0. */
int tool_is_address(const char *s);

/* Classify text ("-", HOST:PORT, else a path) into *src, fd -1. text is
 * borrowed for src's lifetime. */
void tool_source_parse(tool_source *src, const char *text);

/* Records a live source's capture into the file at path, complete;
 * returns the tool's exit status for it (TOOL_EXIT_OK, or
 * TOOL_EXIT_INCOMPLETE when the recording was cut short but written:
 * both are read), its reason printed on stderr. */
typedef tool_exit (*tool_record_fn)(void *user, const tool_source *src,
                                    const char *path);

/* Open src: a file read-only (a directory is refused), standard input
 * or a named pipe copied into an unlinked file in TMPDIR
 * (tool_spill_file), a live source
 * recorded into one by record (NULL: live sources are refused). Returns TOOL_EXIT_OK with src->fd and
 * src->path set, TOOL_EXIT_INCOMPLETE for a live recording cut short
 * (open as well), or TOOL_EXIT_USAGE after one line on stderr prefixed by
 * tool and naming src (missing, unreadable, unreachable). */
tool_exit tool_source_open(tool_source *src, const char *tool,
                           tool_record_fn record, void *user);

/* An unlinked file in TMPDIR (default /tmp), read and written through
 * /proc/self/fd/N: disk, not memory, holds what a reader only reads. The
 * caller owns the descriptor (close it). Returns it, or -1 (errno: TMPDIR
 * missing or not writable, ENAMETOOLONG). */
int tool_spill_file(void);

/* Close src->fd (when open). */
void tool_source_close(tool_source *src);

#endif
