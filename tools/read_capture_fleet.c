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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "model.h"
#include "render/fleet_render.h"
#include "report.h"

#define EXIT_OK 0
#define EXIT_WRITE 1
#define EXIT_INPUT 2

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
          "number):\n"
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
          "cannot be\nread is reported in one line and skipped.\n"
          "Exit status: 0 every capture summarised; 1 the export could not be "
          "written;\n2 usage error, or at least one file could not be read "
          "(the others are\nsummarised).\n",
          f);
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

/* Returns 0, 1 for --help, or 2 after a message. */
static int fleet_parse(int argc, char **argv, fleet_args *a)
{
    memset(a, 0, sizeof *a);
    a->files = calloc((size_t)argc, sizeof *a->files);
    if (!a->files)
        return 2;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (only_files || s[0] != '-' || strcmp(s, "-") == 0) {
            a->files[a->nfiles++] = argv[i];
            continue;
        }
        const char *val = NULL;
        const char *eq = strchr(s, '=');
        size_t klen = eq ? (size_t)(eq - s) : strlen(s);
        static const char *const needs_value[] = {"--export", "--files-from",
                                                  "--skip-seconds", "--wait"};
        int nv = -1;
        for (int k = 0; k < 4; k++)
            if (strlen(needs_value[k]) == klen &&
                strncmp(s, needs_value[k], klen) == 0)
                nv = k;
        if (nv >= 0) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else {
                fprintf(stderr, "read_capture: %s needs a value\n", s);
                return 2;
            }
        }
        if (strcmp(s, "--") == 0) {
            only_files = 1;
        } else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            return 1;
        } else if (strcmp(s, "--summary") == 0) {
            a->summary = 1;
        } else if (strcmp(s, "--csv") == 0) {
            a->csv = 1;
        } else if (nv == 0) {
            a->export_dir = val;
        } else if (nv == 1) {
            a->files_from = val;
        } else if (nv == 2) {
            char *end;
            errno = 0;
            a->skip_seconds = strtod(val, &end);
            if (errno || end == val || *end || !(a->skip_seconds >= 0)) {
                fprintf(stderr, "read_capture: --skip-seconds needs a number "
                                ">= 0, not '%s'\n", val);
                return 2;
            }
        } else if (nv == 3) {
            if (a->nwait == sizeof a->wait / sizeof a->wait[0]) {
                fprintf(stderr, "read_capture: at most 16 --wait patterns\n");
                return 2;
            }
            a->wait[a->nwait++] = val;
        } else {
            fprintf(stderr, "read_capture: %s does not go with --summary or "
                            "--export; see --help\n", s);
            return 2;
        }
    }
    if (a->summary && a->export_dir) {
        fprintf(stderr, "read_capture: give --summary or --export, not "
                        "both\n");
        return 2;
    }
    if (a->csv && !a->summary) {
        fprintf(stderr, "read_capture: --csv goes with --summary (--export "
                        "always writes CSV)\n");
        return 2;
    }
    if (!a->nfiles && !a->files_from) {
        fprintf(stderr, "read_capture: no capture given; see --help\n");
        return 2;
    }
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
        st->status = EXIT_INPUT;
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
            st->status = EXIT_INPUT;
        }
    } else if (an_fleet_row(stdout, st->a->csv, &s) != 0) {
        rc = -1;
    }
    an_free(m);
    st->done++;
    return rc;
}

static int fleet_run(const fleet_args *a)
{
    fleet_state st = {a, NULL, EXIT_OK, 0};
    char err[600];
    if (a->export_dir) {
        if (an_export_open(&st.x, a->export_dir, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            return EXIT_WRITE;
        }
    } else if (an_fleet_header(stdout, a->csv) != 0) {
        return EXIT_WRITE;
    }
    int failed = 0;
    for (int i = 0; i < a->nfiles && !failed; i++)
        failed = fleet_one(&st, a->files[i]) != 0;
    if (a->files_from && !failed) {
        FILE *f = strcmp(a->files_from, "-") == 0 ? stdin
                                                  : fopen(a->files_from, "r");
        if (!f) {
            fprintf(stderr, "error: %s: cannot open: %s\n", a->files_from,
                    strerror(errno));
            st.status = EXIT_INPUT;
        } else {
            char *line = NULL;
            size_t cap = 0;
            ssize_t n;
            while (!failed && (n = getline(&line, &cap, f)) > 0) {
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                    line[--n] = '\0';
                if (n > 0)
                    failed = fleet_one(&st, line) != 0;
            }
            free(line);
            if (f != stdin)
                fclose(f);
        }
    }
    if (st.x) {
        if (an_export_close(st.x, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            return EXIT_WRITE;
        }
        fprintf(stderr, "read_capture: %zu capture(s) exported to %s\n",
                st.done, a->export_dir);
    } else if (failed || fflush(stdout) != 0) {
        return EXIT_WRITE;
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
        rc = EXIT_OK;
    } else if (p != 0) {
        rc = 2;
    } else {
        rc = fleet_run(&a);
    }
    free(a.files);
    return rc;
}
