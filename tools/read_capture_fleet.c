/*
 * read_capture_fleet.c - read_capture --summary and --export: many
 * captures at once, one at a time in memory.
 *
 *   read_capture --summary [--csv] [options] FILE...
 *   read_capture --export DIR [options] FILE...
 *
 * Option parsing (fleet_parse) is apart from the work (fleet_run); the
 * numbers come from analysis/fleet.c, the output from
 * analysis/render/fleet_render.c.
 */
#include "read_capture_fleet.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fleet.h"
#include "model.h"
#include "render/fleet_render.h"
#include "report.h"
#include "tool_args.h"
#include "tool_exit.h"

#define TOOL "read_capture"

typedef struct fleet_args {
    int summary, csv;
    const char *export_dir;
    const char *files_from;   /* a file listing captures, one per line */
    double skip_seconds;
    const char *wait[16];     /* --wait GLOB, as read_capture's */
    size_t nwait;
    char **files;             /* borrowed from argv */
    int nfiles;
} fleet_args;

static void fleet_usage(FILE *f)
{
    fputs("usage: read_capture --summary [--csv] [options] FILE...\n"
          "       read_capture --export DIR [options] FILE...\n"
          "\n"
          "Many captures, one at a time (memory does not grow with their "
          "number).\n"
          "A FILE that is a folder stands for the *.cap files in it (not "
          "below it), in\nname order, as a flight recorder's CAP_FLIGHT_DIR "
          "holds them.\n"
          "  --summary          one row per capture: id, file, program, build,\n"
          "                     machine, GPU, start, duration, frames, frame "
          "time\n"
          "                     (mean, median, p95, p99, 1% low), stutters, GPU "
          "time,\n"
          "                     the top scopes' self time per frame, warnings\n"
          "  --csv              the summary as CSV (RFC 4180)\n"
          "  --export DIR       tidy tables for SQL engines in DIR: "
          "captures.csv.gz,\n"
          "                     frames.csv.gz, scopes.csv.gz, counters.csv.gz\n"
          "                     (docs/FLEET.md)\n"
          "  --files-from LIST  read capture paths from LIST, one per line "
          "('-':\n"
          "                     standard input), besides any FILE given\n"
          "  --skip-seconds S   leave out the first S seconds of each capture "
          "(default 0)\n"
          "  --wait GLOB        scopes whose name matches are waits (time "
          "spent\n"
          "                     blocked), besides those the program tagged: "
          "a wait\n"
          "                     among the top scopes has kind 'wait' (at most "
          "16)\n"
          "\n"
          "Each capture's warnings go to stderr, named by file. A file that "
          "cannot be\nread is reported in one line and skipped, and the "
          "exit status is 2 (the others\nare summarised); a summary or "
          "export that cannot be written exits 3.\n\n",
          f);
    tool_exit_help(f);
}

int fleet_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--summary") == 0 ||
            strcmp(argv[i], "--export") == 0 ||
            strncmp(argv[i], "--export=", 9) == 0)
            return 1;
    }
    return 0;
}

enum { O_SUMMARY = 1, O_CSV, O_EXPORT, O_FILES_FROM, O_SKIP, O_WAIT, O_HELP };

static const tool_opt fleet_opts[] = {
    {"summary", 0, 0, O_SUMMARY},      {"csv", 0, 0, O_CSV},
    {"export", 0, 1, O_EXPORT},        {"files-from", 0, 1, O_FILES_FROM},
    {"skip-seconds", 0, 1, O_SKIP},    {"wait", 0, 1, O_WAIT},
    {"help", 'h', 0, O_HELP}};

/* One option into *a. Returns 0, 1 for --help, or -1 after a message. */
static int fleet_option(fleet_args *a, const tool_args *t, int id)
{
    switch (id) {
    case O_SUMMARY: a->summary = 1; return 0;
    case O_CSV: a->csv = 1; return 0;
    case O_EXPORT: a->export_dir = t->value; return 0;
    case O_FILES_FROM: a->files_from = t->value; return 0;
    case O_SKIP: return tool_args_seconds(t, 0, INFINITY, &a->skip_seconds);
    case O_WAIT:
        if (a->nwait == sizeof a->wait / sizeof a->wait[0])
            return tool_usage_error(TOOL, "at most 16 --wait patterns");
        a->wait[a->nwait++] = t->value;
        return 0;
    default: return 1; /* O_HELP */
    }
}

/* Returns 0, 1 for --help, or -1 after a message; a->files is then
 * allocated (free it). */
static int fleet_parse(int argc, char **argv, fleet_args *a)
{
    memset(a, 0, sizeof *a);
    tool_args t;
    if (tool_args_init(&t, TOOL, argc, argv, fleet_opts,
                       sizeof fleet_opts / sizeof *fleet_opts))
        return -1;
    int id, rc = 0;
    while (rc == 0 && (id = tool_args_next(&t)) != TOOL_ARGS_END)
        rc = id < 0 ? -1 : fleet_option(a, &t, id);
    a->files = t.operands; /* taken over: freed with a */
    a->nfiles = (int)t.noperands;
    if (rc != 0)
        return rc;
    if (a->summary && a->export_dir)
        return tool_usage_error(TOOL, "give --summary or --export, not both");
    if (a->csv && !a->summary)
        return tool_usage_error(TOOL, "--csv goes with --summary (--export "
                                      "always writes CSV)");
    if (!a->nfiles && !a->files_from)
        return tool_usage_error(TOOL, "no capture given (see --help)");
    return 0;
}

typedef struct fleet_state {
    const fleet_args *a;
    an_export *x;
    int status;
    size_t done;
} fleet_state;

/* One capture: load, summarise, render, free. */
static int fleet_one(fleet_state *st, const char *path)
{
    an_options opt = {0};
    opt.skip_seconds = st->a->skip_seconds;
    opt.wait_globs = st->a->wait;
    opt.nwait_globs = st->a->nwait;
    /* memory bounded whatever the length (issue 12): rows by name alone
       (the row and its totals take no call tree), the per-frame values
       past the budget summarised (--summary reads none of them) or, for
       --export's scopes.csv.gz, packed as --frames keeps them */
    opt.series_budget = AN_SERIES_BUDGET_DEFAULT;
    opt.series_reread = st->x != NULL;
    opt.no_tree = 1;
    an_capture *m = NULL;
    char detail[512] = "";
    cap_result r = an_load(&m, path, &opt, detail, sizeof detail);
    if (r != CAP_OK) {
        fprintf(stderr, "error: %s: %s\n", path,
                detail[0] ? detail : cap_result_message(r));
        st->status = TOOL_EXIT_USAGE;
        return 0;
    }
    int w = an_text_warnings(stderr, m, NULL, 0, 0);
    an_capture_row s;
    an_capture_row_compute(m, w > 0 ? (unsigned)w : 0, &s);
    int rc = 0;
    if (st->x) {
        char err[400] = "";
        int e = an_export_add(st->x, m, &s, err, sizeof err);
        if (e < 0) {
            rc = -1;
        } else if (e > 0) {
            fprintf(stderr, "error: %s: %s\n", path, err);
            st->status = TOOL_EXIT_USAGE;
        }
    } else if (an_fleet_row(stdout, st->a->csv, &s) != 0) {
        rc = -1;
    }
    an_free(m);
    st->done++;
    return rc;
}

/* Keeps the names that end in ".cap" (not hidden ones). */
static int is_cap_entry(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 4 &&
           strcmp(e->d_name + n - 4, ".cap") == 0;
}

/* A folder: its *.cap files in name order; anything else: that path.
   A folder without one is an error of that folder (exit 2), not a
   silent empty summary. */
static int fleet_path(fleet_state *st, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return fleet_one(st, path);
    struct dirent **ents = NULL;
    int n = scandir(path, &ents, is_cap_entry, alphasort);
    if (n < 0) {
        fprintf(stderr, "error: %s: cannot list the folder: %s\n", path,
                strerror(errno));
        st->status = TOOL_EXIT_USAGE;
        return 0;
    }
    if (n == 0) {
        fprintf(stderr, "error: %s: a folder without any .cap file\n", path);
        st->status = TOOL_EXIT_USAGE;
    }
    int rc = 0;
    size_t len = strlen(path);
    int slash = len > 0 && path[len - 1] == '/';
    for (int i = 0; i < n; i++) {
        char *full = NULL;
        if (rc == 0) {
            size_t need = len + strlen(ents[i]->d_name) + 2;
            full = malloc(need);
            if (!full) {
                fprintf(stderr, "error: %s: out of memory\n", path);
                rc = -1;
            } else {
                snprintf(full, need, "%s%s%s", path, slash ? "" : "/",
                         ents[i]->d_name);
                rc = fleet_one(st, full);
            }
        }
        free(full);
        free(ents[i]);
    }
    free(ents);
    return rc;
}

static int fleet_run(const fleet_args *a)
{
    fleet_state st = {a, NULL, TOOL_EXIT_OK, 0};
    char err[600];
    if (a->export_dir) {
        if (an_export_open(&st.x, a->export_dir, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            return TOOL_EXIT_INCOMPLETE;
        }
    } else if (an_fleet_header(stdout, a->csv) != 0) {
        return TOOL_EXIT_INCOMPLETE;
    }
    int failed = 0;
    for (int i = 0; i < a->nfiles && !failed; i++)
        failed = fleet_path(&st, a->files[i]) != 0;
    if (a->files_from && !failed) {
        FILE *f = strcmp(a->files_from, "-") == 0 ? stdin
                                                  : fopen(a->files_from, "r");
        if (!f) {
            fprintf(stderr, "error: %s: cannot open: %s\n", a->files_from,
                    strerror(errno));
            st.status = TOOL_EXIT_USAGE;
        } else {
            char *line = NULL;
            size_t cap = 0;
            ssize_t n;
            while (!failed && (n = getline(&line, &cap, f)) > 0) {
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                    line[--n] = '\0';
                if (n > 0)
                    failed = fleet_path(&st, line) != 0;
            }
            free(line);
            if (f != stdin)
                fclose(f);
        }
    }
    if (st.x) {
        if (an_export_close(st.x, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            return TOOL_EXIT_INCOMPLETE;
        }
        fprintf(stderr, "read_capture: %zu capture(s) exported to %s\n",
                st.done, a->export_dir);
    } else if (failed || fflush(stdout) != 0) {
        return TOOL_EXIT_INCOMPLETE;
    }
    return st.status;
}

int fleet_main(int argc, char **argv)
{
    fleet_args a;
    int p = fleet_parse(argc, argv, &a);
    int rc;
    if (p == 1) {
        fleet_usage(stdout);
        rc = fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_INCOMPLETE;
    } else if (p != 0) {
        rc = TOOL_EXIT_USAGE;
    } else {
        rc = fleet_run(&a);
    }
    free(a.files);
    return rc;
}
