/*
 * read_capture - open a capture and answer: what costs (self time, as a
 * tree), which frames are slow and why (--split), and whether the machine
 * drifted under the measurement (--over-time).
 *
 * Option parsing (parse_args) is kept apart from the work (run); the
 * numbers all come from the analysis library.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "read_capture_fleet.h"
#include "render/render.h"
#ifdef CAP_HAVE_REMOTE
#include "remote.h"
#endif
#include "render/svg.h"
#include "report.h"
#include "tool_args.h"
#include "tool_exit.h"
#include "tool_source.h"
#include "tool_version.h"

#define TOOL "read_capture"

typedef enum report_kind { R_RANKING, R_TREE, R_SPLIT, R_OVER_TIME, R_FRAMES } report_kind;

typedef struct args {
    const char *file;
    report_kind report;
    int csv, strict;
    int depth;
    double min_share;
    const char *split_by;
    int split_work; /* --split-by-work */
    int bins;
    double bin_seconds;
    const char *scope;
    double skip_seconds;
    const char *wait[16];
    size_t nwait;
    const char *counter[16]; /* --counter GLOB: the counters of --frames */
    size_t ncounter;
    const char *svg; /* --svg FILE, or NULL */
    double seconds; /* --seconds: the window of a live source */
    double idle_timeout; /* --idle-timeout: a live source's (0: default) */
} args;

static void usage(FILE *f)
{
    fputs("usage: read_capture [options] FILE\n"
          "       read_capture [options] HOST:PORT --seconds N\n"
          "       read_capture [options] -\n"
          "\n"
          "FILE is a capture file; HOST:PORT a program serving its capture\n"
          "(CAP_LISTEN, docs/LIVE.md), of which a window is reported without\n"
          "keeping a file; - reads a capture from standard input.\n"
          "\n"
          "Reports (one at a time; the default ranks scopes by self time):\n"
          "  --tree             the call tree merged by path\n"
          "    --depth N        show scopes down to depth N (0: top level; "
          "default: all)\n"
          "    --min-share PCT  hide nodes under PCT % of the recorded time "
          "(default 0)\n"
          "  --split            fastest vs slowest quarter of frames, with the "
          "frame/GPU ratio\n"
          "    --split-by SCOPE order frames by SCOPE's self time instead of "
          "frame time\n"
          "    --split-by-work  order frames by their CPU work (every CPU "
          "scope that is\n"
          "                     not a wait, summed): the order to use when a "
          "frame cap\n"
          "                     holds the frame time\n"
          "  --over-time        frames binned by elapsed time (throttling, "
          "warm-up)\n"
          "    --bins N         number of bins (default 10)\n"
          "    --bin-seconds S  bins of S seconds instead\n"
          "  --frames           one row per frame (for scripts; a long "
          "capture's values\n"
          "                     wait in an unlinked file in $TMPDIR, else "
          "/tmp, or\n"
          "                     /var/tmp where /tmp is in memory)\n"
          "    --scope NAME     only this scope\n"
          "    --counter GLOB   only the counters whose name matches GLOB\n"
          "                     (repeatable; by default the text shows the\n"
          "                     first 4 counters, CSV all of them)\n"
          "  --summary FILE...  one row per capture, for many captures\n"
          "  --export DIR FILE...  tidy CSV tables for SQL engines\n"
          "                     (read_capture --summary --help says more)\n"
          "\n"
          "Common:\n"
          "  --csv              CSV (RFC 4180) instead of aligned text\n"
          "  --svg FILE         also draw the report as an SVG picture in FILE:\n"
          "                     the frame-time chart (the ranking, --frames),\n"
          "                     the flame graph (--tree), the two quarters\n"
          "                     (--split), the drift chart (--over-time)\n"
          "  --skip-seconds S   leave out the first S seconds after the first "
          "frame (default 0;\n"
          "                     HOST:PORT: after connecting)\n"
          "  --seconds N        HOST:PORT: report on N seconds (default: "
          "until the\n"
          "                     program closes its capture or Ctrl-C)\n"
          "  --idle-timeout S   HOST:PORT: give up when nothing arrives for "
          "S seconds\n"
          "                     (default 10)\n"
          "  --wait GLOB        scopes whose name matches are waits (time "
          "blocked, never\n"
          "                     called work; marked in every report), for "
          "a program\n"
          "                     that did not tag them; repeatable (up to "
          "16)\n"
          "  --strict           exit 3 when any warning was printed\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "Warnings (unnamed scope ids, truncated or damaged files, dropped "
          "scopes,\ninvalid GPU spans, too few frames) go to stderr.\n"
          "Durations (S, N seconds) are seconds, or a number with a unit: "
          "ms, s, min, h.\n\n",
          f);
    tool_exit_help(f);
}

enum { O_TREE = 1, O_DEPTH, O_MINSHARE, O_SPLIT, O_SPLITBY, O_OVER, O_BINS,
       O_BINSEC, O_FRAMES, O_SCOPE, O_CSV, O_STRICT, O_SKIP, O_WAIT, O_SVG,
       O_SECONDS, O_IDLE, O_COUNTER, O_SPLITWORK, O_HELP };

static const tool_opt opts[] = {
    {"tree", 0, 0, O_TREE},          {"depth", 0, 1, O_DEPTH},
    {"min-share", 0, 1, O_MINSHARE}, {"split", 0, 0, O_SPLIT},
    {"split-by", 0, 1, O_SPLITBY},   {"split-by-work", 0, 0, O_SPLITWORK},
    {"over-time", 0, 0, O_OVER},     {"bins", 0, 1, O_BINS},
    {"bin-seconds", 0, 1, O_BINSEC}, {"frames", 0, 0, O_FRAMES},
    {"scope", 0, 1, O_SCOPE},        {"counter", 0, 1, O_COUNTER},
    {"csv", 0, 0, O_CSV},            {"strict", 0, 0, O_STRICT},
    {"skip-seconds", 0, 1, O_SKIP},  {"wait", 0, 1, O_WAIT},
    {"svg", 0, 1, O_SVG},            {"seconds", 0, 1, O_SECONDS},
    {"idle-timeout", 0, 1, O_IDLE},  {"help", 'h', 0, O_HELP}};

/* Add a glob to list (at most 16). Returns 0, or -1 after a message. */
static int add_glob(const char **list, size_t *n, const tool_args *t)
{
    if (*n == 16)
        return tool_usage_error(TOOL, "at most 16 %s patterns", t->option);
    list[(*n)++] = t->value;
    return 0;
}

/* One option into *a; *reports counts the reports chosen. Returns 0, 1
 * for --help, or -1 after a message. */
static int take_option(args *a, const tool_args *t, int id, int *reports)
{
    uint64_t n;
    static const report_kind report_of[] = {
        [O_TREE] = R_TREE, [O_SPLIT] = R_SPLIT, [O_OVER] = R_OVER_TIME,
        [O_FRAMES] = R_FRAMES};
    switch (id) {
    case O_TREE: case O_SPLIT: case O_OVER: case O_FRAMES:
        a->report = report_of[id];
        (*reports)++;
        return 0;
    case O_CSV: a->csv = 1; return 0;
    case O_STRICT: a->strict = 1; return 0;
    case O_SPLITBY: a->split_by = t->value; return 0;
    case O_SPLITWORK: a->split_work = 1; return 0;
    case O_SCOPE: a->scope = t->value; return 0;
    case O_SVG: a->svg = t->value; return 0;
    case O_WAIT: return add_glob(a->wait, &a->nwait, t);
    case O_COUNTER: return add_glob(a->counter, &a->ncounter, t);
    case O_DEPTH:
        if (tool_args_count(t, 0, 1000000, &n))
            return -1;
        a->depth = (int)n;
        return 0;
    case O_MINSHARE: return tool_args_number(t, 0, 100, &a->min_share);
    case O_BINS:
        if (tool_args_count(t, 1, 1000000, &n))
            return -1;
        a->bins = (int)n;
        return 0;
    case O_BINSEC: return tool_args_seconds(t, 1e-6, INFINITY, &a->bin_seconds);
    case O_SKIP: return tool_args_seconds(t, 0, INFINITY, &a->skip_seconds);
    case O_SECONDS: return tool_args_seconds(t, 1e-3, INFINITY, &a->seconds);
    case O_IDLE: return tool_args_seconds(t, 0.1, 1e9, &a->idle_timeout);
    default: return 1; /* O_HELP */
    }
}

/* The options that go together, once all are read. Returns 0, or -1
 * after a message. */
static int check_args(args *a, int reports)
{
    if (reports > 1)
        return tool_usage_error(TOOL, "choose one report: --tree, --split, "
                                      "--over-time or --frames");
    if (a->split_by && a->split_work)
        return tool_usage_error(TOOL, "choose --split-by or --split-by-work");
    if ((a->split_by || a->split_work) && !reports)
        a->report = R_SPLIT;
    if ((a->split_by || a->split_work) && a->report != R_SPLIT)
        return tool_usage_error(TOOL, "%s goes with --split",
                                a->split_by ? "--split-by" : "--split-by-work");
    if (a->scope && a->report != R_FRAMES)
        return tool_usage_error(TOOL, "--scope goes with --frames");
    if (a->ncounter && a->report != R_FRAMES)
        return tool_usage_error(TOOL, "--counter goes with --frames");
    return 0;
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 to run. */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->depth = -1;
    a->bins = 10;
    tool_args t;
    if (tool_args_init(&t, TOOL, argc, argv, opts, sizeof opts / sizeof *opts))
        return -1;
    int reports = 0, id, rc = 0;
    while (rc == 0 && (id = tool_args_next(&t)) != TOOL_ARGS_END)
        rc = id < 0 ? -1 : take_option(a, &t, id, &reports);
    if (rc == 0)
        rc = check_args(a, reports);
    if (rc == 0 && t.noperands != 1)
        rc = tool_usage_error(TOOL, t.noperands ? "one capture file at a time "
                                                  "(see --help)"
                                                : "no capture file given (see "
                                                  "--help)");
    if (rc == 0) {
        a->file = t.operands[0];
        if ((a->seconds > 0 || a->idle_timeout > 0) &&
            !tool_is_address(a->file))
            rc = tool_usage_error(TOOL, "%s goes with HOST:PORT",
                                  a->seconds > 0 ? "--seconds"
                                                 : "--idle-timeout");
    }
    tool_args_free(&t);
    return rc;
}

/* Compute the chosen report, then render it as text or CSV, and as a
 * picture into svg when not NULL. */
static cap_result render(const args *a, const an_capture *m, int colour,
                         FILE *svg)
{
    cap_result rc = CAP_OK;
    FILE *out = stdout;
    an_frame_counters fc = {0}; /* --frames: the counters per frame */
    if (!a->csv) {
        an_frame_stats fs;
        an_totals t;
        if ((rc = an_frame_stats_compute(&fs, m)) != CAP_OK)
            return rc;
        an_totals_compute(m, &t);
        an_text_header(out, m, &fs, &t, colour);
    }
    switch (a->report) {
    case R_RANKING: {
        an_ranking r;
        if ((rc = an_ranking_compute(&r, m)) != CAP_OK)
            break;
        a->csv ? an_csv_ranking(out, &r) : an_text_ranking(out, m, &r, colour);
        an_ranking_free(&r);
        break;
    }
    case R_TREE: {
        an_tree t;
        if ((rc = an_tree_compute(&t, m, a->depth, a->min_share)) != CAP_OK)
            break;
        a->csv ? an_csv_tree(out, &t) : an_text_tree(out, m, &t, colour);
        if (svg)
            rc = an_svg_flame(svg, m, &t, a->file);
        an_tree_free(&t);
        break;
    }
    case R_SPLIT: {
        an_split s;
        if ((rc = an_split_compute(&s, m,
                                   a->split_work ? AN_SPLIT_BY_WORK
                                                 : a->split_by)) != CAP_OK)
            break;
        a->csv ? an_csv_split(out, &s) : an_text_split(out, m, &s, colour);
        if (svg)
            rc = an_svg_split(svg, m, &s, a->file);
        an_split_free(&s);
        break;
    }
    case R_OVER_TIME: {
        an_over_time ot;
        rc = an_over_time_compute(&ot, m, a->bins, a->bin_seconds);
        if (rc != CAP_OK)
            break;
        a->csv ? an_csv_over_time(out, &ot)
               : an_text_over_time(out, m, &ot, colour);
        if (svg)
            rc = an_svg_over_time(svg, m, &ot, a->file);
        an_over_time_free(&ot);
        break;
    }
    case R_FRAMES: {
        an_frames f;
        if ((rc = an_frames_compute(&f, m, a->scope)) != CAP_OK)
            break;
        rc = an_frame_counters_compute(&fc, m, a->counter, a->ncounter);
        if (rc == CAP_OK)
            rc = a->csv ? an_csv_frames(out, m, &f, &fc)
                        : an_text_frames(out, m, &f, &fc, colour);
        an_frames_free(&f);
        break;
    }
    }
    if (rc == CAP_OK && svg && (a->report == R_RANKING || a->report == R_FRAMES)) {
        an_frame_chart c;
        if ((rc = an_frame_chart_compute(&c, m, AN_SVG_FRAME_COLUMNS)) != CAP_OK) {
            an_frame_counters_free(&fc);
            return rc;
        }
        /* --frames: the counters the text shows, as strips under it */
        rc = an_frame_chart_counters(&c, &fc, AN_FC_TEXT_MAX);
        if (rc == CAP_OK)
            rc = an_svg_frames(svg, m, &c, a->file);
        an_frame_chart_free(&c);
    }
    an_frame_counters_free(&fc);
    return rc;
}

#ifdef CAP_HAVE_REMOTE
/* A live source's window into path (tool_source_open's recorder): the
 * first pass in TMPDIR, messages naming the source (rem_source_record). */
static tool_exit record_live(void *user, const tool_source *src,
                             const char *path)
{
    const args *a = user;
    rem_options o = {.seconds = a->seconds, .skip_seconds = a->skip_seconds,
                     .connect_timeout = 10, .idle_timeout = a->idle_timeout,
                     .progress = isatty(STDERR_FILENO), .tool = TOOL,
                     .diag = stderr};
    return rem_source_record(&o, src, path);
}
#else /* built without the converters: no live sources */
#define record_live NULL
#endif

/* The load options of a's report. */
static an_options load_options(const args *a)
{
    an_options o = {.skip_seconds = a->skip_seconds,
                    .progress = isatty(STDERR_FILENO) ? stderr : NULL};
    /* memory bounded whatever the length; --frames lists every frame's
       exact values: past the budget it keeps none and reads them again,
       frame by frame (an_frames_walk) */
    o.series_budget = AN_SERIES_BUDGET_DEFAULT;
    o.series_reread = a->report == R_FRAMES;
    o.no_tree = a->report == R_FRAMES;
    o.split_hint = a->report == R_SPLIT && !a->split_by && !a->split_work;
    /* --split-by-work orders frames by the CPU work the over-time hint
       sums per frame as it reads */
    o.over_time_hint = a->report == R_OVER_TIME || a->split_work;
    o.ot_bins = a->bins;
    o.ot_bin_seconds = a->bin_seconds;
    /* --wait: marked by the load, so that --over-time sums work and waits
       apart as it reads */
    o.wait_globs = a->wait;
    o.nwait_globs = a->nwait;
    return o;
}

/* Open a->file (a live source and standard input: a copy in TMPDIR, open
 * in *src until the report is written) and load it into *m. Returns
 * TOOL_EXIT_OK, TOOL_EXIT_INCOMPLETE when a live recording was cut short
 * (its reason printed: a warning), or TOOL_EXIT_USAGE after a message
 * (*src closed). */
static tool_exit load(const args *a, tool_source *src, an_capture **m)
{
    an_options o = load_options(a);
    tool_source_parse(src, a->file);
    tool_exit opened = tool_source_open(src, TOOL, record_live, (void *)a);
    if (opened == TOOL_EXIT_USAGE)
        return TOOL_EXIT_USAGE;
    if (src->kind == TOOL_SOURCE_ADDRESS)
        o.skip_seconds = 0; /* the window skipped it already */
    char detail[400];
    /* the descriptor, named as given: messages name "-" or HOST:PORT */
    if (an_load_fd(m, src->fd, a->file, &o, detail, sizeof detail) !=
        CAP_OK) {
        tool_source_close(src);
        fprintf(stderr, "read_capture: %s: %s\n", a->file, detail);
        return TOOL_EXIT_USAGE;
    }
    return opened;
}

/* The scope --split-by or --frames --scope names, and a counter for
 * --counter, must be in the capture. Returns 0, or -1 after a message. */
static int check_names(const args *a, const an_capture *m)
{
    const char *want = a->report == R_SPLIT ? a->split_by
                       : a->report == R_FRAMES ? a->scope : NULL;
    if (want && an_find_scope(m, AN_CPU, want) < 0 &&
        an_find_scope(m, AN_GPU, want) < 0) {
        fprintf(stderr, "read_capture: %s: no scope named '%s'\n", a->file,
                want);
        return -1;
    }
    if (!a->ncounter) /* --counter: at least one counter must match */
        return 0;
    for (size_t c = 0; c < m->ncounters; c++)
        for (size_t g = 0; g < a->ncounter; g++)
            if (m->counters[c].name &&
                fnmatch(a->counter[g], m->counters[c].name, 0) == 0)
                return 0;
    fprintf(stderr, "read_capture: %s: no counter matches --counter '%s'%s\n",
            a->file, a->counter[0],
            a->ncounter > 1 ? " (or the others)" : "");
    return -1;
}

/* The warnings of m on stderr, with the frames a's report needs; returns
 * whether any was printed. */
static int warnings(const args *a, const an_capture *m)
{
    static const char *names[] = {"the ranking", "--tree", "--split",
                                  "--over-time", "--frames"};
    size_t min_frames = 0;
    if (a->report == R_SPLIT)
        min_frames = 8;
    else if (a->report == R_OVER_TIME)
        min_frames = a->bin_seconds > 0 ? 4 : (size_t)a->bins * 2;
    else if (a->report == R_FRAMES)
        min_frames = 1;
    int colour = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    return an_text_warnings(stderr, m, names[a->report], min_frames, colour);
}

/* The exit status once render returned rc: the report's and the
 * picture's output checked. */
static tool_exit finish(const args *a, cap_result rc, FILE *svg)
{
    int svg_bad = svg && ferror(svg);
    if (svg && fclose(svg) != 0)
        svg_bad = 1;
    if (rc == CAP_E_MISUSE) {
        fprintf(stderr, "read_capture: %s: no scope named '%s'\n", a->file,
                a->report == R_SPLIT ? a->split_by : a->scope);
        return TOOL_EXIT_USAGE;
    }
    if (rc != CAP_OK) {
        fprintf(stderr, "read_capture: %s: %s\n", a->file,
                cap_result_message(rc));
        return tool_exit_of_result(rc);
    }
    if (svg_bad) {
        fprintf(stderr, "read_capture: %s: writing the picture failed\n",
                a->svg);
        return TOOL_EXIT_INCOMPLETE;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "read_capture: writing the report failed: %s\n",
                strerror(errno));
        return TOOL_EXIT_INCOMPLETE;
    }
    return TOOL_EXIT_OK;
}

static tool_exit run(const args *a)
{
    tool_source src;
    an_capture *m;
    tool_exit opened = load(a, &src, &m);
    if (opened == TOOL_EXIT_USAGE)
        return TOOL_EXIT_USAGE;
    tool_exit e = TOOL_EXIT_USAGE;
    FILE *svg = NULL;
    if (check_names(a, m) != 0)
        goto done;
    /* a live recording cut short warned as it ended */
    int warned = warnings(a, m) || opened == TOOL_EXIT_INCOMPLETE;
    if (a->svg && !(svg = fopen(a->svg, "w"))) {
        fprintf(stderr, "read_capture: %s: cannot write: %s\n", a->svg,
                strerror(errno));
        e = TOOL_EXIT_INCOMPLETE;
        goto done;
    }
    if (m->approx && !m->reread && a->csv)
        fprintf(stderr, "note: %s: %s\n", a->file, AN_APPROX_NOTE);
    int colour = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    /* may read the copy again: open till here */
    e = finish(a, render(a, m, colour, svg), svg);
    if (e == TOOL_EXIT_OK && a->strict && warned)
        e = TOOL_EXIT_INCOMPLETE;
done:
    tool_source_close(&src);
    an_free(m);
    return e;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, "read_capture"))
        return tool_version_done();
    if (fleet_wanted(argc, argv)) /* many captures: read_capture_fleet.c */
        return fleet_main(argc, argv);
    args a;
    int p = parse_args(argc, argv, &a);
    if (p == 1) {
        usage(stdout);
        return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_INCOMPLETE;
    }
    if (p != 0)
        return TOOL_EXIT_USAGE;
    return (int)run(&a);
}
