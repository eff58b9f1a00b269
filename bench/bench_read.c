/*
 * bench_read.c - reading a long capture: speed on one core and peak memory.
 *
 * Workload (issue 7, item 4): a capture of 100 million scopes (and one of
 * 10 million, to show how memory grows with length), generated once into
 * the working directory and reused by later runs (read-<N>-v2.cap; delete
 * it to regenerate). It has the recording workload's shape (frames of
 * 1,000 scopes nested four deep) with 205 distinct scope names in a tree
 * (5 systems, 4 parts each, 3 steps each, 2 leaves each), durations drawn
 * from a fixed-seed generator, and a time-stamp-counter clock (0.4 ns per
 * tick, refined by clock samples), so reading converts every timestamp.
 *
 * Each measurement runs in a child process (so its peak RSS, ru_maxrss
 * from wait4, is its own) and is timed by its CPU time (user + system):
 * the readers are single-threaded, so that is the time they take on one
 * core, whatever else the machine runs; wall time is printed too.
 *   read_floor_*:  the reader skipping every event section (each chunk is
 *                  still read, checksummed and decompressed): the floor.
 *   reader_loop_*: every event through cap_reader_next, self time summed
 *                  per name (the minimum a ranking does).
 *   reader_batch_*: the same through cap_reader_next_batch (256 a call):
 *                  the decoder with next to no model (every size, with
 *                  --realistic too).
 *   reader_records_*: the same through cap_reader_next_scopes (256 a
 *                  call; self time summed in ticks, nothing converted),
 *                  the batch call for the other events: what the reader
 *                  thread of a two-thread load does. read_2t_ceiling_*:
 *                  the ranking's CPU time over it, the most a second
 *                  thread can shorten the ranking while the reader thread
 *                  decodes (read_decode_share_*: its inverse, the
 *                  decoder's share of the ranking).
 *   read_frames_only_*: cap_reader_frames_only, the model's first pass
 *                  (frames only, each block decompressed as far as its
 *                  frames).
 *   read_*:        read_capture's ranking report (the default report);
 *                  read_split_* and read_over_time_* the same for --split
 *                  and --over-time, read_frames_csv_* for --frames
 *                  --csv. Targets: read_scopes_per_s at least 50
 *                  million/s, read_frames_csv_scopes_per_s 15 million/s,
 *                  read_peak_rss_mib at most 64.
 *   read_frames_csv_2t_*: --frames --csv as it runs by default (two
 *                  threads where the file is over 8 MiB and there are
 *                  two cores: its wall figure).
 *   capture_diff_*: capture_diff A A (2 N scopes read) with
 *                  CAP_READ_THREADS=1 (CPU time of the work);
 *                  capture_diff_2t_* as it runs by default (the files
 *                  loaded at once, a thread each: its wall figure).
 *                  Targets: 20 million scopes/s, at most 64 MiB. Every
 *                  size with --realistic, the smallest otherwise.
 *
 * With --realistic the captures come from the realistic generator
 * (bench_gen.h: 416 names, 4 to 7 deep, each name's times drawn around its
 * own mean), generated into real-<N>M-v2.cap; every figure's name then
 * ends in _realistic_<N>M, reader_loop and the one-vs-two-thread runs are
 * left out, and the figures to read are read*_peak_rss_mib_realistic_*
 * (issue 12: at most 64 MiB at 10, 100 and 300 M scopes).
 *
 * With --threads 1,N,... (issue 41) only the scaling figures are made:
 * the ranking, --tree, --split, --over-time and capture_diff A A, each
 * at every thread count (CAP_READ_THREADS), counts in turn within each of
 * --reps repetitions: scale_<report>_<N>t_wall_s (median),
 * _scopes_per_s (scopes read / wall s), _ratio (that rate over the
 * 1-thread rate of the same run), _cpu_s (median user + system time:
 * what the threads cost together), _peak_rss_mib and _identical (1: the
 * output is byte for byte the 1-thread one). On a machine other programs
 * keep busy the wall ratios say little: a session's threads share one
 * scheduler group (autogroup) there.
 *
 * Usage: bench_read [READ_CAPTURE [CAPTURE_DIFF]] [--scopes N | --sizes
 *                   M,M] [--dir DIR] [--reps R] [--realistic]
 *                   [--format-major 1|2|3|4] [--threads 1,N,...]
 *   --format-major: the format the captures are written in, 3.0 (the
 *   writer's default, SCOPES_E), 2.0 or 1.x, into files named ...-f3.cap,
 *   ...-v2.cap (the name 2.0 captures had when 2.0 was the default, so
 *   that files generated then are reused as what they are) or ...-f1.cap,
 *   or 4.0 (groups of blocks: each group's blocks one zstd stream) into
 *   ...-f4.cap,
 *   to compare the reader's speed on each encoding.
 *   READ_CAPTURE: path of the read_capture tool (meson passes it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <capture/cap_reader.h>
#include <capture/cap_writer.h>

#include "bench_common.h"
#include "bench_gen.h"

#define GEN_VERSION "read-v2" /* v2: written as format 2.0 */
#define PERIOD_NS 0.4

/* ---- the generated capture -------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Name ids: 1..5 systems, then parts, steps, leaves, each block dense. */
static uint32_t name_id(int level, uint32_t index)
{
    static const uint32_t base[4] = {1, 6, 26, 86};
    return base[level] + index;
}

static void name_text(int level, uint32_t index, char *buf, size_t n)
{
    static const char *sys[5] = {"update", "render", "physics", "audio", "ai"};
    static const char *lvl[4] = {"", "part", "step", "leaf"};
    if (level == 0)
        snprintf(buf, n, "%s", sys[index]);
    else
        snprintf(buf, n, "%s_%u", lvl[level], index);
}

static void check(cap_result r, const char *what)
{
    if (r != CAP_OK)
        BENCH_DIE("%s: %s", what, cap_result_message(r));
}

static unsigned format_major; /* --format-major: the captures' version */

static void generate(const char *path, uint64_t scopes)
{
    fprintf(stderr, "bench_read: generating %s (%llu scopes, once)\n", path,
            (unsigned long long)scopes);
    uint64_t t0 = bench_mono_ns();
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char count[32];
    snprintf(count, sizeof count, "%llu", (unsigned long long)scopes);
    cap_meta_kv meta[] = {{"program", "bench_read generator"},
                          {"bench_generator", GEN_VERSION},
                          {"bench_scopes", count}};
    cap_writer_options o = {.format_major = format_major};
    o.meta = meta;
    o.meta_count = 3;
    o.clock_source = "tsc";
    o.tick_period_ns = PERIOD_NS;
    o.origin_tick = 1000000;
    o.origin_mono_ns = 5000000000ull;
    cap_writer *w;
    check(cap_writer_open_path(&w, tmp, &o), "opening the generated capture");
    check(cap_writer_thread(w, 0, "main"), "thread");
    for (int level = 0; level < 4; level++) {
        static const uint32_t count_at[4] = {5, 20, 60, 120};
        for (uint32_t i = 0; i < count_at[level]; i++) {
            char buf[32];
            name_text(level, i, buf, sizeof buf);
            check(cap_writer_name(w, name_id(level, i), buf, "bench_read.c",
                                  (uint32_t)(100 + level)),
                  "name");
        }
    }
    uint64_t tick = o.origin_tick + 1000, next_sample = tick;
    uint64_t frames = scopes / BENCH_SCOPES_PER_FRAME;
    for (uint64_t f = 0; f < frames; f++) {
        uint64_t frame_begin = tick;
        for (uint32_t i = 0; i < BENCH_TREES_PER_FRAME; i++) {
            uint32_t s = i % 5, part = s * 4 + (i / 5) % 4;
            uint32_t step = part * 3 + (i / 20) % 3, leaf = step * 2 + rng(2);
            uint32_t ids[4] = {name_id(0, s), name_id(1, part),
                               name_id(2, step), name_id(3, leaf)};
            for (int d = 0; d < 4; d++) {
                tick += 20 + rng(60);
                check(cap_writer_scope_begin(w, 0, ids[d], tick), "begin");
            }
            tick += 50 + rng(i % 17 == 0 ? 20000 : 900);
            for (int d = 0; d < 4; d++) {
                tick += 10 + rng(40);
                check(cap_writer_scope_end(w, 0, tick), "end");
            }
        }
        tick += 100 + rng(2000);
        check(cap_writer_frame(w, f, frame_begin, tick), "frame");
        if (tick >= next_sample) {
            /* a clock sample every ~100 ms of capture time */
            uint64_t mono = o.origin_mono_ns +
                            (uint64_t)((double)(tick - o.origin_tick) *
                                       PERIOD_NS);
            check(cap_writer_clock_sample(w, tick, mono), "clock sample");
            next_sample = tick + (uint64_t)(1e8 / PERIOD_NS);
        }
    }
    check(cap_writer_close(w), "closing the generated capture");
    if (rename(tmp, path) != 0)
        BENCH_DIE("rename %s: %s", tmp, strerror(errno));
    fprintf(stderr, "bench_read: generated in %.1f s\n",
            (double)(bench_mono_ns() - t0) / 1e9);
}

#define GEN_REAL_VERSION "real-v2" /* v2: written as format 2.0 */

/* The realistic generator's capture of at least `scopes` scopes (whole
 * frames). */
static void generate_realistic(const char *path, uint64_t scopes)
{
    fprintf(stderr, "bench_read: generating %s (%llu scopes, realistic, "
                    "once)\n", path, (unsigned long long)scopes);
    uint64_t t0 = bench_mono_ns();
    char count[32];
    snprintf(count, sizeof count, "%llu", (unsigned long long)scopes);
    cap_meta_kv meta[] = {{"program", "bench_read realistic generator"},
                          {"bench_generator", GEN_REAL_VERSION},
                          {"bench_scopes", count}};
    static gen g;
    cap_writer_options o = {.format_major = format_major};
    o.meta = meta;
    o.meta_count = 3;
    if (gen_write_file(&g, path, scopes, o))
        BENCH_DIE("cannot write %s", path);
    fprintf(stderr, "bench_read: generated %llu scopes, %llu frames, in "
                    "%.1f s\n", (unsigned long long)g.scopes,
            (unsigned long long)g.frames,
            (double)(bench_mono_ns() - t0) / 1e9);
}

static int realistic; /* --realistic: the captures of bench_gen.h */

/* 1 when path is a complete capture from this generator version. */
static int usable(const char *path, uint64_t scopes)
{
    cap_reader *r;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        return 0;
    const char *v = cap_reader_meta_get(r, "bench_generator");
    const char *n = cap_reader_meta_get(r, "bench_scopes");
    unsigned vmaj = 0, vmin = 0;
    cap_reader_version(r, &vmaj, &vmin);
    int ok = v && n &&
             strcmp(v, realistic ? GEN_REAL_VERSION : GEN_VERSION) == 0 &&
             strtoull(n, NULL, 10) == scopes && vmaj == format_major &&
             (vmaj != 3 || vmin == 1); /* 3.1: the footer lists frames */
    if (ok && vmaj == 3) /* and its list is the one the reader takes */
        ok = bench_frames_listed(r);
    cap_reader_close(r);
    if (!ok)
        return 0;
    /* a footer: the trailer's magic ends the file */
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    char tail[8];
    off_t end = lseek(fd, 0, SEEK_END);
    ok = end > 8 && pread(fd, tail, 8, end - 8) == 8 &&
         memcmp(tail, "CAPEND\r\n", 8) == 0;
    close(fd);
    return ok;
}

/* ---- children ---------------------------------------------------------- */

typedef struct child_result {
    double cpu_s, wall_s, rss_mib;
    int status;
} child_result;

/* Run argv as a child: stdout to out_path (NULL: /dev/null; "" keeps it),
 * with CAP_READ_THREADS set to threads ("" leaves it alone). */
static child_result run_child_env(char *const argv[], const char *out_path,
                                  const char *threads);

static child_result run_child(char *const argv[], int quiet)
{
    return run_child_env(argv, quiet ? NULL : "", "");
}

static child_result run_child_env(char *const argv[], const char *out_path,
                                  const char *threads)
{
    int quiet = !out_path || out_path[0];
    child_result cr = {0};
    uint64_t t0 = bench_mono_ns();
    pid_t pid = fork();
    if (pid < 0)
        BENCH_DIE("fork: %s", strerror(errno));
    if (pid == 0) {
        if (threads[0])
            setenv("CAP_READ_THREADS", threads, 1);
        if (quiet) {
            int fd = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644)
                              : open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                close(fd);
            }
        }
        execv(argv[0], argv);
        fprintf(stderr, "bench: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        BENCH_DIE("wait4: %s", strerror(errno));
    cr.wall_s = (double)(bench_mono_ns() - t0) / 1e9;
    cr.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    cr.rss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    cr.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    return cr;
}

/* In the child: the reader loop (mode "loop") or the floor ("floor"). */
static int child_read(const char *mode, const char *path)
{
    cap_reader *r;
    char detail[256];
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK) {
        fprintf(stderr, "bench_read: %s: %s\n", path, detail);
        return 1;
    }
    int floor = strcmp(mode, "floor") == 0;
    if (strcmp(mode, "frames") == 0)
        cap_reader_frames_only(r);
    else if (floor)
        cap_reader_set_filter(r, (1u << CAP_EV_FRAME) | (1u << CAP_EV_SCOPE) |
                                     (1u << CAP_EV_GPU_SPAN) |
                                     (1u << CAP_EV_COUNTER));
    int64_t self[1024] = {0};
    uint64_t scopes = 0, frames = 0;
    static cap_event evs[256];
    static cap_scope_rec recs[256];
    static uint32_t stacks[8 * CAP_MAX_DEPTH];
    const int records = strcmp(mode, "records") == 0;
    size_t max = records || strcmp(mode, "batch") == 0 ? 256 : 1, n = 1;
    cap_result res;
    for (;;) {
        if (records) { /* as the reader thread: ticks, no conversion */
            cap_scope_run run;
            cap_reader_next_scopes(r, recs, max, &n, stacks,
                                   sizeof stacks / sizeof *stacks, &run);
            for (size_t i = 0; i < n; i++)
                self[recs[i].name & 1023] += recs[i].end - recs[i].begin -
                                             (int64_t)recs[i].children;
            scopes += n;
            if (n)
                continue;
        }
        /* one event at a time between runs of records, as the load */
        res = max > 1 ? cap_reader_next_batch(r, evs, records ? 1 : max, &n)
                      : cap_reader_next(r, evs);
        if (res == CAP_DONE)
            break;
        if (res != CAP_OK) {
            fprintf(stderr, "bench_read: %s\n", cap_reader_detail(r));
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            const cap_event *ev = &evs[i];
            if (ev->kind == CAP_EV_SCOPE) {
                self[ev->u.scope.name & 1023] +=
                    ev->u.scope.end_ns - ev->u.scope.begin_ns -
                    ev->u.scope.children_ns;
                scopes++;
            } else if (ev->kind == CAP_EV_FRAME) {
                frames++;
            }
        }
    }
    int64_t sum = 0;
    for (int i = 0; i < 1024; i++)
        sum += self[i];
    printf("scopes %llu frames %llu self %lld\n", (unsigned long long)scopes,
           (unsigned long long)frames, (long long)sum);
    cap_reader_close(r);
    return 0;
}

static void report(const char *prefix, child_result cr, uint64_t scopes,
                   double floor_s)
{
    char name[96];
    if (cr.status != 0)
        BENCH_DIE("%s: the child exited with %d", prefix, cr.status);
    snprintf(name, sizeof name, "%s_scopes_per_s", prefix);
    bench_put(name, (double)scopes / cr.cpu_s);
    snprintf(name, sizeof name, "%s_wall_scopes_per_s", prefix);
    bench_put(name, (double)scopes / cr.wall_s);
    snprintf(name, sizeof name, "%s_peak_rss_mib", prefix);
    bench_put(name, cr.rss_mib);
    if (floor_s > 0) {
        snprintf(name, sizeof name, "%s_ratio_to_floor", prefix);
        bench_put(name, cr.cpu_s / floor_s);
    }
}

static int same_file(const char *a, const char *b);

/* --threads: each report (the ranking, --tree, --split, --over-time, and
 * capture_diff A A when given) at each thread count (CAP_READ_THREADS),
 * the counts taken in turn within each repetition so that a machine's
 * load drifting touches them alike; the median wall time a count, its
 * rate (scopes read / wall s), its ratio to the 1-thread rate of this
 * same run, its peak RSS, and whether its output is byte for byte the
 * 1-thread one. */
static void scaling(const char *tool, const char *diff, const char *path,
                    const char *dir, uint64_t n, const char *tag,
                    const int *threads, int nthreads, int reps)
{
    static const char *modes[5][2] = {{"", NULL},
                                      {"_tree", "--tree"},
                                      {"_split", "--split"},
                                      {"_over_time", "--over-time"},
                                      {"", NULL}}; /* capture_diff */
    char name[128];
    for (int m = 0; m < 5; m++) {
        if (m == 4 && !diff)
            continue;
        double wall[16][16] = {{0}}, cpu[16][16] = {{0}}, rss[16] = {0};
        int same[16];
        for (int t = 0; t < nthreads; t++)
            same[t] = 1;
        char ref[600];
        snprintf(ref, sizeof ref, "%s/bench-scale-ref.txt", dir);
        for (int r = 0; r < reps; r++) {
            for (int t = 0; t < nthreads; t++) {
                char th[16], out[600];
                snprintf(th, sizeof th, "%d", threads[t]);
                snprintf(out, sizeof out, "%s/bench-scale-%d.txt", dir,
                         threads[t]);
                char *targv[5] = {(char *)(m == 4 ? diff : tool), NULL,
                                  NULL, NULL, NULL};
                int a = 1;
                if (modes[m][1])
                    targv[a++] = (char *)modes[m][1];
                targv[a++] = (char *)path;
                if (m == 4)
                    targv[a++] = (char *)path;
                child_result cr = run_child_env(targv, out, th);
                if (cr.status != 0)
                    BENCH_DIE("%s at %d threads exited with %d", targv[0],
                              threads[t], cr.status);
                wall[t][r] = cr.wall_s;
                cpu[t][r] = cr.cpu_s;
                if (cr.rss_mib > rss[t])
                    rss[t] = cr.rss_mib;
                if (r == 0 && t == 0 && rename(out, ref) != 0)
                    BENCH_DIE("rename %s: %s", out, strerror(errno));
                else if (r || t)
                    same[t] &= same_file(ref, out);
                unlink(out);
            }
        }
        unlink(ref);
        uint64_t scopes = m == 4 ? 2 * n : n;
        double rate1 = 0;
        for (int t = 0; t < nthreads; t++) {
            double w = bench_median(wall[t], (size_t)reps);
            double rate = (double)scopes / w;
            if (t == 0)
                rate1 = rate;
            const char *rep_name = m == 4 ? "capture_diff" : "read";
            snprintf(name, sizeof name, "scale_%s%s_%dt_wall_s%s", rep_name,
                     modes[m][0], threads[t], tag);
            bench_put(name, w);
            snprintf(name, sizeof name, "scale_%s%s_%dt_scopes_per_s%s",
                     rep_name, modes[m][0], threads[t], tag);
            bench_put(name, rate);
            snprintf(name, sizeof name, "scale_%s%s_%dt_ratio%s", rep_name,
                     modes[m][0], threads[t], tag);
            bench_put(name, rate / rate1);
            snprintf(name, sizeof name, "scale_%s%s_%dt_cpu_s%s", rep_name,
                     modes[m][0], threads[t], tag);
            bench_put(name, bench_median(cpu[t], (size_t)reps));
            snprintf(name, sizeof name, "scale_%s%s_%dt_peak_rss_mib%s",
                     rep_name, modes[m][0], threads[t], tag);
            bench_put(name, rss[t]);
            snprintf(name, sizeof name, "scale_%s%s_%dt_identical%s",
                     rep_name, modes[m][0], threads[t], tag);
            bench_put(name, same[t]);
        }
    }
}

static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int c = fgetc(x), d = fgetc(y);
        same = c == d;
        if (c == EOF)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child_read(argv[2], argv[3]);
    const char *tool = NULL, *diff = NULL, *dir = ".";
    uint64_t scopes = 100000000, sizes[8];
    int nsizes = 0, reps = 3, threads[16], nthreads = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc) {
            scopes = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            for (char *p = argv[++i]; *p && nsizes < 8;) {
                sizes[nsizes++] = (uint64_t)(strtod(p, &p) * 1e6);
                if (*p == ',')
                    p++;
                else
                    break;
            }
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--format-major") == 0 && i + 1 < argc) {
            format_major = (unsigned)atoi(argv[++i]);
            if (format_major < 1 || format_major > 4)
                BENCH_DIE("--format-major: 1, 2, 3 or 4");
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            for (char *p = argv[++i]; *p && nthreads < 16;) {
                threads[nthreads++] = (int)strtol(p, &p, 10);
                if (threads[nthreads - 1] < 1)
                    BENCH_DIE("--threads: counts of 1 or more");
                if (*p == ',')
                    p++;
                else
                    break;
            }
            if (threads[0] != 1)
                BENCH_DIE("--threads: the first count is 1 (the ratios' "
                          "base)");
        } else if (strcmp(argv[i], "--realistic") == 0) {
            realistic = 1;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && !tool) {
            tool = argv[i];
        } else if (argv[i][0] != '-' && !diff) {
            diff = argv[i];
        } else {
            BENCH_DIE("usage: bench_read [READ_CAPTURE [CAPTURE_DIFF]] "
                      "[--scopes N | --sizes M,M,...] [--dir DIR] [--reps R] "
                      "[--realistic] [--format-major 1|2|3] "
                      "[--threads 1,N,...]");
        }
    }
    if (!format_major)
        format_major = 3; /* the writer's default, named as such */
    if (!nsizes) {
        sizes[nsizes++] = scopes / 10;
        sizes[nsizes++] = scopes;
    }
    if (reps < 1)
        reps = 1;
    bench_put_machine();
    bench_put_load("start");
    bench_put("captures_format_major", format_major);

    char self_exe[4096];
    ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (k <= 0)
        BENCH_DIE("readlink /proc/self/exe failed");
    self_exe[k] = 0;

    for (int s = 0; s < nsizes; s++) {
        uint64_t n = sizes[s] / BENCH_SCOPES_PER_FRAME * BENCH_SCOPES_PER_FRAME;
        if (!n)
            BENCH_DIE("bad size");
        char path[512], tag[32];
        snprintf(path, sizeof path, "%s/%s-%lluM-v2%s.cap", dir,
                 realistic ? "real" : "read",
                 (unsigned long long)(n / 1000000),
                 format_major == 4   ? "-f4"
                 : format_major == 3 ? "-f3"
                 : format_major == 1 ? "-f1"
                                     : "");
        if (!usable(path, n))
            realistic ? generate_realistic(path, n) : generate(path, n);
        /* figures of the largest size carry no suffix (as before) */
        if (realistic)
            snprintf(tag, sizeof tag, "_realistic_%lluM",
                     (unsigned long long)(n / 1000000));
        else if (s == nsizes - 1)
            tag[0] = 0;
        else
            snprintf(tag, sizeof tag, "_%lluM", (unsigned long long)(n / 1000000));
        char prefix[64], name[96];
        snprintf(name, sizeof name, "read_scopes%s", tag);
        bench_put(name, (double)n);

        if (nthreads) { /* the scaling figures alone */
            if (!tool)
                BENCH_DIE("--threads needs READ_CAPTURE");
            scaling(tool, diff, path, dir, n, tag, threads, nthreads,
                    reps < 16 ? reps : 16);
            continue;
        }
        char *floor_argv[] = {self_exe, "--child", "floor", path, NULL};
        child_result fl = run_child(floor_argv, 1);
        snprintf(prefix, sizeof prefix, "read_floor%s", tag);
        report(prefix, fl, n, 0);

        char *fo_argv[] = {self_exe, "--child", "frames", path, NULL};
        child_result fo = run_child(fo_argv, 1);
        snprintf(prefix, sizeof prefix, "read_frames_only%s", tag);
        report(prefix, fo, n, fl.cpu_s);

        if (!realistic) {
            char *loop_argv[] = {self_exe, "--child", "loop", path, NULL};
            child_result lp = run_child(loop_argv, 1);
            snprintf(prefix, sizeof prefix, "reader_loop%s", tag);
            report(prefix, lp, n, fl.cpu_s);
        }
        /* the decoder with next to no model: what bounds one core, and
           the reader thread of a two-thread load */
        char *batch_argv[] = {self_exe, "--child", "batch", path, NULL};
        child_result bb = run_child(batch_argv, 1);
        snprintf(prefix, sizeof prefix, "reader_batch%s", tag);
        report(prefix, bb, n, fl.cpu_s);
        char *rec_argv[] = {self_exe, "--child", "records", path, NULL};
        child_result bt = run_child(rec_argv, 1);
        snprintf(prefix, sizeof prefix, "reader_records%s", tag);
        report(prefix, bt, n, fl.cpu_s);

        if (!tool) {
            fprintf(stderr, "bench_read: no read_capture given; its figures "
                            "are left out\n");
            continue;
        }
        /* one core: every report on one thread (CPU time) */
        static const char *modes[5][3] = {{"", NULL, NULL},
                                          {"_tree", "--tree", NULL},
                                          {"_split", "--split", NULL},
                                          {"_over_time", "--over-time", NULL},
                                          {"_frames_csv", "--frames", "--csv"}};
        for (int m = 0; m < 5; m++) {
            char *targv[5] = {(char *)tool, NULL, NULL, NULL, NULL};
            int a = 1;
            for (int j = 1; j < 3; j++)
                if (modes[m][j])
                    targv[a++] = (char *)modes[m][j];
            targv[a] = path;
            child_result tr = run_child_env(targv, NULL, "1");
            snprintf(prefix, sizeof prefix, "read%s%s", modes[m][0], tag);
            report(prefix, tr, n, fl.cpu_s);
            if (m == 0 && bt.cpu_s > 0 && tr.cpu_s > 0) {
                /* the ranking's time over the decoder's alone: a split
                   whose reader thread decodes cannot shorten the wall
                   time by more (the ceiling of read_2t_wall_ratio) */
                snprintf(name, sizeof name, "read_2t_ceiling%s", tag);
                bench_put(name, tr.cpu_s / bt.cpu_s);
                snprintf(name, sizeof name, "read_decode_share%s", tag);
                bench_put(name, bt.cpu_s / tr.cpu_s);
            }
        }
        {   /* --frames --csv as it runs by default (two threads for a file
               over 8 MiB on two cores: its wall figure) */
            char *targv[5] = {(char *)tool, "--frames", "--csv", path, NULL};
            child_result tr = run_child_env(targv, NULL, "");
            snprintf(prefix, sizeof prefix, "read_frames_csv_2t%s", tag);
            report(prefix, tr, n, fl.cpu_s);
        }
        if (diff && (realistic || s == 0)) {
            /* capture_diff A A (both inputs read, 2 n scopes): on one
             * thread (CPU time), then as it runs by default, the two
             * files loaded at once (wall time: both cores, when free) */
            char *dargv[4] = {(char *)diff, path, path, NULL};
            snprintf(name, sizeof name, "capture_diff_start%s", tag);
            bench_put_load(name);
            child_result d1 = run_child_env(dargv, NULL, "1");
            snprintf(prefix, sizeof prefix, "capture_diff%s", tag);
            report(prefix, d1, 2 * n, 0);
            child_result d2 = run_child_env(dargv, NULL, "");
            snprintf(prefix, sizeof prefix, "capture_diff_2t%s", tag);
            report(prefix, d2, 2 * n, 0);
            snprintf(name, sizeof name, "capture_diff_end%s", tag);
            bench_put_load(name);
        }
        if (realistic)
            continue;
        /* both cores: the default report on one thread and on two,
         * alternately, wall time; outputs compared byte for byte */
        double w1[16], w2[16], rss2 = 0, cpu2 = 0;
        int identical = 1, rr = reps < 16 ? reps : 16;
        char o1[600], o2[600];
        snprintf(o1, sizeof o1, "%s/bench-read-1t.txt", dir);
        snprintf(o2, sizeof o2, "%s/bench-read-2t.txt", dir);
        snprintf(name, sizeof name, "read_threads%s", tag);
        bench_put_load(name);
        for (int r = 0; r < rr; r++) {
            char *targv[3] = {(char *)tool, path, NULL};
            child_result a1 = run_child_env(targv, o1, "1");
            child_result a2 = run_child_env(targv, o2, "2");
            if (a1.status || a2.status)
                BENCH_DIE("read_capture failed (%d, %d)", a1.status,
                          a2.status);
            w1[r] = a1.wall_s;
            w2[r] = a2.wall_s;
            rss2 = a2.rss_mib > rss2 ? a2.rss_mib : rss2;
            cpu2 += a2.cpu_s / rr;
            identical &= same_file(o1, o2);
        }
        unlink(o1);
        unlink(o2);
        double m1 = bench_median(w1, (size_t)rr), m2 = bench_median(w2, (size_t)rr);
        snprintf(name, sizeof name, "read_1t_wall_s%s", tag);
        bench_put(name, m1);
        snprintf(name, sizeof name, "read_2t_wall_s%s", tag);
        bench_put(name, m2);
        snprintf(name, sizeof name, "read_2t_wall_ratio%s", tag);
        bench_put(name, m1 / m2);
        snprintf(name, sizeof name, "read_2t_cpu_s%s", tag);
        bench_put(name, cpu2);
        snprintf(name, sizeof name, "read_2t_peak_rss_mib%s", tag);
        bench_put(name, rss2);
        snprintf(name, sizeof name, "read_2t_identical%s", tag);
        bench_put(name, identical);
        snprintf(name, sizeof name, "read_threads_end%s", tag);
        bench_put_load(name);
    }
    bench_put("read_scopes_per_s_target", 50e6);
    bench_put("read_frames_csv_scopes_per_s_target", 15e6);
    bench_put("read_2t_wall_ratio_target", 1.6);
    bench_put("read_peak_rss_mib_target", 64);
    bench_put("capture_diff_wall_scopes_per_s_target", 20e6);
    bench_put("capture_diff_peak_rss_mib_target", 64);
    bench_put_load("end");
    return 0;
}
