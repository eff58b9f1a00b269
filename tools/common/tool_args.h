/*
 * tool_args.h - the command line of every libcapture tool: one option
 * walker, one parser each for numbers, counts, durations and capture
 * format versions, all with the same messages.
 *
 * Usage:
 *
 *     static const tool_opt opts[] = {{"seconds", 0, 1, O_SECONDS},
 *                                     {"help", 'h', 0, O_HELP}};
 *     tool_args a;
 *     if (tool_args_init(&a, "capture_remote", argc, argv, opts, 2) != 0)
 *         return TOOL_EXIT_USAGE;
 *     for (int id; (id = tool_args_next(&a)) > 0;)
 *         switch (id) {
 *         case O_SECONDS:
 *             if (tool_args_seconds(&a, 1e-3, 1e9, &seconds)) ...
 *         }
 *     (id < 0: a usage error, its message printed)
 *     ... a.operands[0 .. a.noperands) ...
 *     tool_args_free(&a);
 *
 * Every message is one line on stderr that starts with the tool's name
 * and ends with "(see --help)" where the user has to look something up.
 * Nothing here is global: getopt's optind/opterr are not used.
 */
#ifndef TOOL_ARGS_H
#define TOOL_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* One option of a tool. */
typedef struct tool_opt {
    const char *name; /* the long name without "--" ("seconds") */
    char letter;      /* a short form ('h' for -h), or 0 */
    int takes_value;  /* 1: "--name VALUE" or "--name=VALUE" */
    int id;           /* what tool_args_next returns for it: > 0 */
} tool_opt;

typedef struct tool_args {
    const char *tool;      /* names every message */
    int argc;
    char **argv;           /* borrowed */
    const tool_opt *opts;  /* borrowed */
    size_t nopts;
    int i;                 /* the next argv index to read */
    const char *option;    /* the option just returned, as written
                              ("--seconds"; "-h"), for messages */
    const char *value;     /* its value, or NULL */
    char **operands;       /* the arguments that are not options, in
                              order (owned: tool_args_free) */
    size_t noperands;
    size_t split;          /* operands given before a "--" (the first
                              "--" ends the options); noperands when no
                              "--" was given */
    int seen_split;        /* a "--" was given */
} tool_args;

#define TOOL_ARGS_END 0
#define TOOL_ARGS_ERROR (-1)

/* Start walking argv[1 .. argc). Returns 0, or -1 when out of memory
 * (message printed); a->operands is then NULL (tool_args_free is still
 * safe). */
int tool_args_init(tool_args *a, const char *tool, int argc, char **argv,
                   const tool_opt *opts, size_t nopts);

/* The next option's id (a->option, a->value set), TOOL_ARGS_END when argv
 * is used up (a->operands holds the rest), or TOOL_ARGS_ERROR after one
 * message: an unknown option, a missing value, a value given to an option
 * that takes none. "-" alone is an operand (standard input); "--" ends
 * the options. */
int tool_args_next(tool_args *a);

/* Free a->operands. Accepts a zeroed or failed tool_args. */
void tool_args_free(tool_args *a);

/* ---- values ---------------------------------------------------------- */
/* Each returns 0 with *out set, or -1 after one message naming the tool,
 * the option and the value, and saying what was expected. */

/* A decimal number (strtod syntax, finite) in [min, max]. */
int tool_parse_number(const char *tool, const char *opt, const char *s,
                      double min, double max, double *out);

/* A whole number (digits only) in [min, max]. */
int tool_parse_count(const char *tool, const char *opt, const char *s,
                     uint64_t min, uint64_t max, uint64_t *out);

/* A duration in seconds, in [min, max]: a number of seconds, or a number
 * followed by a unit: "ms", "s", "min" or "h" ("250ms", "1.5min"). */
int tool_parse_seconds(const char *tool, const char *opt, const char *s,
                       double min, double max, double *out);

/* A capture format version to write: "1.1", "2.0", "3.0" or "3.1".
 * *major is 1, 2 or 3; *no_frame_list is 1 for 3.0 (3.1 without the
 * frames listed in the footer), else 0. */
int tool_parse_format_version(const char *tool, const char *opt,
                              const char *s, unsigned *major,
                              int *no_frame_list);

/* The same on the option tool_args_next just returned (a->option,
 * a->value). */
int tool_args_number(const tool_args *a, double min, double max, double *out);
int tool_args_count(const tool_args *a, uint64_t min, uint64_t max,
                    uint64_t *out);
int tool_args_seconds(const tool_args *a, double min, double max,
                      double *out);
int tool_args_format_version(const tool_args *a, unsigned *major,
                             int *no_frame_list);

/* "TOOL: MESSAGE\n" on stderr, printf-style; returns -1 (for
 * `return tool_usage_error(...)`). */
int tool_usage_error(const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
