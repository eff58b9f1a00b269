/*
 * capture_diff - did it get faster or slower, and is that real?
 *
 *   capture_diff [options] BASE NEW
 *   capture_diff [options] BASE... -- NEW...
 *   capture_diff [options] --base-glob PATTERN --new-glob PATTERN
 *
 * Compares two captures, or several runs a side, scope by scope with
 * statistics that separate a change from noise (run-to-run spread
 * included), and exits 1 when anything regressed, so a CI job can gate on
 * it. Option parsing (parse_args) is apart from the work (run).
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "render/render.h"
#include "render/svg.h"
#include "report.h"
#include "tool_args.h"
#include "tool_exit.h"
#include "tool_version.h"

#define TOOL "capture_diff"

#define MAX_PATTERNS 64

typedef struct args {
    char **base, **new_;      /* the runs of each side */
    size_t nbase, nnew;
    const char *base_glob, *new_glob;
    glob_t gb, gn;            /* the globs' matches (base_glob, new_glob) */
    int gb_used, gn_used;     /* gb, gn hold matches to free */
    tool_args t;              /* the command line; its operands are the
                                 file arguments, in order (owned) */
    an_diff_options o;
    const char *exclude[MAX_PATTERNS], *wait[MAX_PATTERNS];
    size_t top;
    double skip_seconds;
    int csv, by_path;
    const char *svg; /* --svg FILE: the differential flame graph */
} args;

static void usage(FILE *f)
{
    fputs("usage: capture_diff [options] BASE NEW\n"
          "       capture_diff [options] BASE... -- NEW...\n"
          "       capture_diff [options] --base-glob PATTERN --new-glob "
          "PATTERN\n"
          "\n"
          "Compares the per-frame self time of every scope (and the frame "
          "time) of two\ncaptures of the same route, or of several runs a "
          "side: then a change must\nalso clear the spread between the "
          "runs of a side (the run medians' t test).\n"
          "\n"
          "  --base-glob PAT    the base runs: the files PAT matches, sorted "
          "(quote it)\n"
          "  --new-glob PAT     the new runs, the same way\n"
          "  --threshold PCT    relative band: changes within PCT % of the "
          "base median\n"
          "                     never count (default 5)\n"
          "  --floor-us US      absolute band: changes under US us per frame "
          "never count\n"
          "                     (default 0)\n"
          "  --floor-share PCT  absolute band as a share of the base median "
          "frame time\n"
          "                     (default 0.1); the floor is the larger of the "
          "two\n"
          "  --alpha A          significance level after Holm correction "
          "(default 0.05;\n"
          "                     the interval's level is 1 - 2A)\n"
          "  --min-frames N     samples each side needs, and frames a scope "
          "must have run\n"
          "                     in (default 10)\n"
          "  --block N          frames averaged into one sample (default 8; "
          "fewer when a\n"
          "                     run is short)\n"
          "  --top N            show the N largest changes (default 20; 0: "
          "all)\n"
          "  --scope NAME       compare this scope only (and the frame time)\n"
          "  --by-path          match scopes by call path, not by name\n"
          "  --exclude GLOB     drop the scopes whose name matches (repeatable)\n"
          "  --wait GLOB        mark the scopes whose name matches as waits "
          "(repeatable);\n"
          "                     scopes the program tagged as waits are marked "
          "anyway\n"
          "  --gate-waits       let regressed waits fail the run too\n"
          "  --gate-frame       let a regressed frame time fail the run too\n"
          "  --skip-seconds S   drop the first S seconds of both runs "
          "(warm-up)\n"
          "  --csv              CSV (RFC 4180) with every row\n"
          "  --svg FILE         also draw the differential flame graph in FILE:\n"
          "                     NEW's call tree, significant changes coloured\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "A scope's band is the larger of the threshold (relative to its "
          "base median)\nand the floor (time per frame). Verdicts: regressed "
          "/ improved (p < alpha after\nHolm and the whole interval past "
          "the band), unchanged (interval inside the\nband), inconclusive, "
          "insufficient (too few frames), added / removed.\n"
          "Waits (time blocked) grow when other work slows, and the frame "
          "time is wall\ntime that holds them and the machine's other load: "
          "both are judged but gate\nthe exit status only with --gate-waits "
          "and --gate-frame.\n"
          "Frames in a light and a heavy group (by frame time, or by CPU "
          "work under a\ncap): the (heavy frames) row compares how often "
          "frames are heavy, as the\nchange of the mean frame that the mix "
          "alone makes, which no row's shift\nsees; it gates like a scope "
          "(docs/STATISTICS.md section 17).\n"
          "Several runs a side: each row's frames are pooled per side, "
          "and the runs'\nmedians compared too; the report adds the "
          "between-run SD (run sd) and marks\nthe rows whose change is "
          "within run-to-run spread. One run a side is the\nplain "
          "comparison.\n"
          "Long captures: past a budget of exact per-frame values "
          "(CAP_SERIES_BUDGET), the\nsamples are read back from log "
          "histograms (each within 0.5 %), and the report\nsays so in its "
          "first line (with --csv, a note on stderr).\n"
          "Durations (S) are seconds, or a number with a unit: ms, s, min, "
          "h.\n"
          "Exit status 1 means at least one regression that gates; a glob "
          "that matches\nno file is a usage error (2).\n\n",
          f);
    tool_exit_help(f);
}

enum { O_THR = 1, O_ALPHA, O_MIN, O_TOP, O_SCOPE, O_PATH, O_SKIP, O_CSV,
       O_FLOOR_US, O_FLOOR_SHARE, O_EXCLUDE, O_WAIT, O_GATE_WAITS,
       O_GATE_FRAME, O_BLOCK, O_SVG, O_BASE_GLOB, O_NEW_GLOB, O_HELP };

static const tool_opt opts[] = {
    {"threshold", 0, 1, O_THR},          {"alpha", 0, 1, O_ALPHA},
    {"min-frames", 0, 1, O_MIN},         {"top", 0, 1, O_TOP},
    {"scope", 0, 1, O_SCOPE},            {"by-path", 0, 0, O_PATH},
    {"skip-seconds", 0, 1, O_SKIP},      {"floor-us", 0, 1, O_FLOOR_US},
    {"floor-share", 0, 1, O_FLOOR_SHARE}, {"exclude", 0, 1, O_EXCLUDE},
    {"wait", 0, 1, O_WAIT},              {"gate-waits", 0, 0, O_GATE_WAITS},
    {"gate-frame", 0, 0, O_GATE_FRAME},  {"block", 0, 1, O_BLOCK},
    {"csv", 0, 0, O_CSV},                {"svg", 0, 1, O_SVG},
    {"base-glob", 0, 1, O_BASE_GLOB},    {"new-glob", 0, 1, O_NEW_GLOB},
    {"help", 'h', 0, O_HELP}};

/* --exclude and --wait: one more pattern. Returns 0, or -1 after a
 * message. */
static int add_pattern(args *a, const tool_args *t, int id)
{
    size_t *count = id == O_EXCLUDE ? &a->o.nexclude : &a->o.nwait;
    const char **list = id == O_EXCLUDE ? a->exclude : a->wait;
    if (*count == MAX_PATTERNS)
        return tool_usage_error(TOOL, "at most %d %s patterns", MAX_PATTERNS,
                                id == O_EXCLUDE ? "--exclude" : "--wait");
    list[(*count)++] = t->value;
    return 0;
}

/* One option that takes a number into *a. Returns 0, or -1 after a
 * message. */
static int take_number(args *a, const tool_args *t, int id)
{
    uint64_t n;
    int rc;
    switch (id) {
    case O_THR: return tool_args_number(t, 1e-9, 1000, &a->o.stat.threshold_pct);
    case O_ALPHA: return tool_args_number(t, 1e-12, 0.49, &a->o.stat.alpha);
    case O_FLOOR_US: return tool_args_number(t, 0, 1e9, &a->o.floor_us);
    case O_FLOOR_SHARE:
        return tool_args_number(t, 1e-9, 100, &a->o.floor_share_pct);
    case O_SKIP: return tool_args_seconds(t, 0, 1e9, &a->skip_seconds);
    case O_MIN:
        rc = tool_args_count(t, 2, 1000000000, &n);
        a->o.stat.min_frames = (size_t)n;
        return rc;
    case O_BLOCK:
        rc = tool_args_count(t, 1, 1000000, &n);
        a->o.block = (size_t)n;
        return rc;
    default: /* O_TOP */
        rc = tool_args_count(t, 0, 1000000000, &n);
        a->top = (size_t)n;
        return rc;
    }
}

/* One option into *a. Returns 0, 1 for --help, or -1 after a message. */
static int take_option(args *a, const tool_args *t, int id)
{
    switch (id) {
    case O_BASE_GLOB: a->base_glob = t->value; return 0;
    case O_NEW_GLOB: a->new_glob = t->value; return 0;
    case O_EXCLUDE: case O_WAIT: return add_pattern(a, t, id);
    case O_GATE_WAITS: a->o.gate_waits = 1; return 0;
    case O_GATE_FRAME: a->o.gate_frame = 1; return 0;
    case O_SCOPE: a->o.only_scope = t->value; return 0;
    case O_PATH: a->by_path = 1; return 0;
    case O_SVG: a->svg = t->value; return 0;
    case O_CSV: a->csv = 1; return 0;
    case O_HELP: return 1;
    default: return take_number(a, t, id);
    }
}

/* The runs of each side from the operands: BASE NEW, BASE... -- NEW...,
 * or none with --base-glob and --new-glob. Returns 0, or -1 after a
 * message. */
static int take_runs(args *a)
{
    tool_args *t = &a->t;
    if (a->base_glob || a->new_glob) {
        if (!a->base_glob || !a->new_glob || t->noperands > 0 ||
            t->seen_split)
            return tool_usage_error(TOOL, "--base-glob and --new-glob go "
                                          "together, without other captures "
                                          "(see --help)");
        return 0;
    }
    a->base = t->operands;
    if (t->seen_split) {
        a->nbase = t->split;
        a->new_ = t->operands + t->split;
        a->nnew = t->noperands - t->split;
        if (a->nbase == 0 || a->nnew == 0)
            return tool_usage_error(TOOL, "give at least one capture on each "
                                          "side of '--' (see --help)");
        return 0;
    }
    if (t->noperands != 2)
        return tool_usage_error(TOOL, "give two captures, BASE and NEW (see "
                                      "--help)");
    a->new_ = a->base + 1;
    a->nbase = a->nnew = 1;
    return 0;
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 to run;
 * a->t is to be freed in every case. */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->top = 20;
    a->o.exclude = a->exclude;
    a->o.wait = a->wait;
    if (tool_args_init(&a->t, TOOL, argc, argv, opts,
                       sizeof opts / sizeof *opts))
        return -1;
    int id, rc = 0;
    while (rc == 0 && (id = tool_args_next(&a->t)) != TOOL_ARGS_END)
        rc = id < 0 ? -1 : take_option(a, &a->t, id);
    return rc != 0 ? rc : take_runs(a);
}

/* The files that pattern matches, sorted, into *g (folders that cannot be
 * read, or do not exist, hold no match). Returns 0, or -1 after a message
 * (no match, or out of memory); *g then needs no globfree. */
static int expand(const char *opt, const char *pattern, glob_t *g)
{
    int rc = glob(pattern, 0, NULL, g);
    if (rc == 0)
        return 0;
    if (rc == GLOB_NOMATCH)
        fprintf(stderr, "capture_diff: %s '%s' matches no file\n", opt,
                pattern);
    else
        fprintf(stderr, "capture_diff: %s '%s': %s\n", opt, pattern,
                rc == GLOB_NOSPACE ? "out of memory" : "cannot be expanded");
    globfree(g);
    return -1;
}

static void compare_meta(const an_capture *b, const an_capture *n)
{
    static const char *keys[] = {"program", "build", "machine"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = an_meta(b, keys[i]), *y = an_meta(n, keys[i]);
        if (x && y && strcmp(x, y) != 0)
            fprintf(stderr, "warning: the runs differ in %s (base '%s', new "
                            "'%s')%s\n",
                    keys[i], x, y,
                    i == 1 ? ": make sure that is the change under test"
                           : ": the comparison measures that difference too");
    }
    size_t fb = b->nframes, fn = n->nframes;
    if (fb && fn && (fb * 2 < fn || fn * 2 < fb))
        fprintf(stderr, "warning: one run is much shorter than the other "
                        "(%zu frames vs %zu): did both cover the same "
                        "route? (record a fixed window: CAP_SKIP_SECONDS, "
                        "CAP_RECORD_SECONDS)\n",
                fb, fn);
}

/* The runs of one side (names[0..n)) that differ from its first run in
 * program or build: one warning each. */
static void compare_side(const char *side, char *const *names,
                         an_capture *const *m, size_t n)
{
    static const char *keys[] = {"program", "build"};
    for (size_t r = 1; r < n; r++)
        for (size_t i = 0; i < 2; i++) {
            const char *x = an_meta(m[0], keys[i]), *y = an_meta(m[r], keys[i]);
            if (x && y && strcmp(x, y) != 0)
                fprintf(stderr, "warning: the %s runs differ in %s ('%s' in "
                                "%s, '%s' in %s): runs of a side should be "
                                "the same code\n",
                        side, keys[i], x, names[0], y, names[r]);
        }
}

/* The differential flame graph into a->svg, on the call tree of the first
 * new run. Returns 0, or -1 after a message. */
static int write_svg(const args *a, const an_capture *mb, const an_capture *mn,
                     const an_diff *d)
{
    an_tree t;
    if (an_tree_compute(&t, mn, -1, 0) != CAP_OK) {
        fprintf(stderr, "capture_diff: out of memory\n");
        return -1;
    }
    FILE *f = fopen(a->svg, "w");
    if (!f) {
        fprintf(stderr, "capture_diff: %s: cannot write: %s\n", a->svg,
                strerror(errno));
        an_tree_free(&t);
        return -1;
    }
    size_t tl = strlen(a->base[0]) + strlen(a->new_[0]) + 80;
    char *title = malloc(tl);
    cap_result r = CAP_E_NOMEM;
    if (title) {
        if (a->nbase == 1 && a->nnew == 1)
            snprintf(title, tl, "%s \xE2\x86\x92 %s", a->base[0], a->new_[0]);
        else
            snprintf(title, tl, "%s (%zu runs) \xE2\x86\x92 %s (%zu runs)",
                     a->base[0], a->nbase, a->new_[0], a->nnew);
        r = an_svg_diff(f, mb, mn, &t, d, a->by_path, title);
    }
    free(title);
    an_tree_free(&t);
    int bad = r != CAP_OK || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        fprintf(stderr, "capture_diff: %s: writing the picture failed\n",
                a->svg);
    return bad ? -1 : 0;
}

/* Whether any run has a CPU or GPU scope named `scope`. */
static int any_has_scope(an_capture *const *m, size_t n, const char *scope)
{
    for (size_t i = 0; i < n; i++)
        if (an_find_scope(m[i], AN_CPU, scope) >= 0 ||
            an_find_scope(m[i], AN_GPU, scope) >= 0)
            return 1;
    return 0;
}

static tool_exit run(const args *a)
{
    /* exact per-frame values while they fit read_capture's budget, log
     * histograms past it (an_diff.approx); every file loaded at once; no
     * call tree but for the picture (the rows are by name, or by path:
     * then the tree is built whatever no_tree says) */
    an_options lo = {.skip_seconds = a->skip_seconds, .by_path = a->by_path,
                     .series_budget = AN_DIFF_SERIES_BUDGET,
                     .no_tree = !a->svg};
    size_t nall = a->nbase + a->nnew;
    an_capture **m = calloc(nall, sizeof *m);
    an_diff_sums **sums = calloc(nall, sizeof *sums);
    const char **names = calloc(nall, sizeof *names);
    if (!m || !sums || !names) {
        fprintf(stderr, "capture_diff: out of memory\n");
        free(m);
        free(sums);
        free(names);
        return TOOL_EXIT_INCOMPLETE;
    }
    an_capture **mb = m, **mn = m + a->nbase;
    char detail[400];
    tool_exit status = TOOL_EXIT_USAGE;
    for (size_t i = 0; i < nall; i++)
        names[i] = i < a->nbase ? a->base[i] : a->new_[i - a->nbase];
    size_t failed = 0;
    if (an_diff_load(m, sums, names, nall, &lo, &a->o, 0, &failed, detail,
                     sizeof detail) != CAP_OK) {
        fprintf(stderr, "capture_diff: %s: %s\n", names[failed], detail);
        goto done;
    }
    int colour_err = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    for (size_t i = 0; i < nall; i++)
        rep_warnings(stderr, m[i], "capture_diff", 0, colour_err);
    compare_meta(mb[0], mn[0]);
    compare_side("base", a->base, mb, a->nbase);
    compare_side("new", a->new_, mn, a->nnew);
    const char *scope = a->o.only_scope;
    if (scope && !any_has_scope(m, nall, scope)) {
        fprintf(stderr, "capture_diff: no scope named '%s' in %s\n", scope,
                nall == 2 ? "either run" : "any run");
        goto done;
    }
    an_diff d;
    cap_result r = an_diff_runs_sums(
        &d, (const an_capture *const *)mb,
        (const an_diff_sums *const *)sums, a->nbase,
        (const an_capture *const *)mn,
        (const an_diff_sums *const *)sums + a->nbase, a->nnew, &a->o);
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: comparison failed: %s\n",
                cap_result_message(r));
    } else {
        if (d.approx && a->csv)
            fprintf(stderr, "note: %s\n", AN_DIFF_APPROX_NOTE);
        int colour = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
        an_diff_report(stdout, &d, &a->o.stat, a->csv, colour,
                       a->csv ? 0 : a->top);
        status = d.gating ? TOOL_EXIT_FINDING : TOOL_EXIT_OK;
        if (a->svg && write_svg(a, mb[0], mn[0], &d) != 0)
            status = TOOL_EXIT_INCOMPLETE;
        if (fflush(stdout) != 0) {
            fprintf(stderr, "capture_diff: writing the report failed: %s\n",
                    strerror(errno));
            status = TOOL_EXIT_INCOMPLETE;
        }
        an_diff_free(&d);
    }
done:
    for (size_t i = 0; i < nall; i++) {
        an_free(m[i]);
        an_diff_sums_free(sums[i]);
    }
    free(m);
    free(sums);
    free(names);
    return status;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, TOOL))
        return tool_version_done();
    args a;
    int p = parse_args(argc, argv, &a);
    tool_exit status = TOOL_EXIT_USAGE;
    if (p == 1) {
        usage(stdout);
        status = fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_INCOMPLETE;
        goto out;
    }
    if (p == 0 && a.base_glob) {
        if (expand("--base-glob", a.base_glob, &a.gb) != 0)
            goto out;
        a.gb_used = 1;
        if (expand("--new-glob", a.new_glob, &a.gn) != 0)
            goto out;
        a.gn_used = 1;
        a.base = a.gb.gl_pathv;
        a.nbase = a.gb.gl_pathc;
        a.new_ = a.gn.gl_pathv;
        a.nnew = a.gn.gl_pathc;
    }
    if (p == 0)
        status = run(&a);
out:
    if (a.gb_used)
        globfree(&a.gb);
    if (a.gn_used)
        globfree(&a.gn);
    tool_args_free(&a.t);
    return (int)status;
}
