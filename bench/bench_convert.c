/*
 * bench_convert - capture_convert's exports of a realistic capture: the
 * Perfetto trace beside the Chrome JSON (issue 45).
 *
 *   bench_convert CAPTURE_CONVERT [--sizes M,M] [--dir DIR] [--keep]
 *
 * For each size (millions of scopes, default 10) the realistic generator
 * (bench_gen.h, as bench_read --realistic) writes convert-<M>M.cap into DIR
 * (default: the current directory) once; capture_convert then exports it
 * to .pftrace and to .json, each in a child process, whose wall time, CPU
 * time (user + system) and peak RSS (ru_maxrss from wait4) are its own.
 * Prints name=value lines:
 *   convert_scopes_<M>M, convert_cap_bytes_per_scope_<M>M,
 *   convert_{perfetto,json}_{seconds,cpu_seconds,peak_rss_mib,
 *   bytes_per_scope}_<M>M, convert_json_over_perfetto_<M>M (size ratio).
 * Targets (issue 45): perfetto bytes a scope <= 30 and peak RSS <= 64 MiB.
 * The outputs are removed after measuring (the JSON of 10 M scopes is
 * about 840 MB) unless --keep.
 */
#include "bench_common.h"
#include "bench_gen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GEN_CONVERT_VERSION "convert-v1"

typedef struct run_result {
    double wall_s, cpu_s, rss_mib;
} run_result;

/* Run argv in a child (stdout and stderr to /dev/null); dies unless it
 * exits 0. */
static run_result run(char *const argv[])
{
    uint64_t t0 = bench_mono_ns();
    pid_t pid = fork();
    if (pid < 0)
        BENCH_DIE("fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        BENCH_DIE("wait4: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        BENCH_DIE("%s %s %s failed (status %d)", argv[0], argv[1], argv[2],
                  status);
    run_result r;
    r.wall_s = (double)(bench_mono_ns() - t0) / 1e9;
    r.cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
              (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    r.rss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    return r;
}

/* 1 when path is a complete capture of this generator and size. */
static int usable(const char *path, uint64_t scopes)
{
    cap_reader *r;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        return 0;
    const char *v = cap_reader_meta_get(r, "bench_generator");
    const char *n = cap_reader_meta_get(r, "bench_scopes");
    int ok = v && n && strcmp(v, GEN_CONVERT_VERSION) == 0 &&
             strtoull(n, NULL, 10) == scopes;
    cap_reader_close(r);
    return ok;
}

static uint64_t scopes_in(const char *path)
{
    cap_reader *r;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        BENCH_DIE("cannot open %s", path);
    cap_event ev;
    uint64_t n = 0;
    while (cap_reader_next(r, &ev) == CAP_OK)
        n += ev.kind == CAP_EV_SCOPE;
    cap_reader_close(r);
    return n;
}

static double file_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        BENCH_DIE("%s: %s", path, strerror(errno));
    return (double)st.st_size;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        BENCH_DIE("usage: bench_convert CAPTURE_CONVERT [--sizes M,M] "
                  "[--dir DIR] [--keep]");
    char *tool = argv[1];
    const char *sizes = "10", *dir = ".";
    int keep = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else
            BENCH_DIE("unknown argument '%s'", argv[i]);
    }
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        unsigned long m = strtoul(tok, NULL, 10);
        if (!m)
            BENCH_DIE("--sizes: '%s'", tok);
        uint64_t want = (uint64_t)m * 1000000u;
        char cap[512], pf[520], js[520];
        snprintf(cap, sizeof cap, "%s/convert-%luM.cap", dir, m);
        snprintf(pf, sizeof pf, "%s/convert-%luM.pftrace", dir, m);
        snprintf(js, sizeof js, "%s/convert-%luM.json", dir, m);
        if (!usable(cap, want)) {
            fprintf(stderr, "bench_convert: generating %s (once)\n", cap);
            char count[32];
            snprintf(count, sizeof count, "%llu", (unsigned long long)want);
            cap_meta_kv meta[] = {{"program", "bench_convert generator"},
                                  {"bench_generator", GEN_CONVERT_VERSION},
                                  {"bench_scopes", count}};
            static gen g;
            cap_writer_options o = {0};
            o.meta = meta;
            o.meta_count = 3;
            if (gen_write_file(&g, cap, want, o))
                BENCH_DIE("cannot write %s", cap);
        }
        uint64_t n = scopes_in(cap);
        printf("convert_scopes_%luM=%llu\n", m, (unsigned long long)n);
        printf("convert_cap_bytes_per_scope_%luM=%.2f\n", m,
               file_bytes(cap) / (double)n);
        const char *what[2] = {"perfetto", "json"};
        char *outs[2] = {pf, js};
        double bytes[2];
        for (int k = 0; k < 2; k++) {
            char *args[] = {tool, cap, outs[k], NULL};
            run_result r = run(args);
            bytes[k] = file_bytes(outs[k]);
            printf("convert_%s_seconds_%luM=%.2f\n", what[k], m, r.wall_s);
            printf("convert_%s_cpu_seconds_%luM=%.2f\n", what[k], m, r.cpu_s);
            printf("convert_%s_peak_rss_mib_%luM=%.1f\n", what[k], m,
                   r.rss_mib);
            printf("convert_%s_bytes_per_scope_%luM=%.2f\n", what[k], m,
                   bytes[k] / (double)n);
            fflush(stdout);
            if (!keep)
                unlink(outs[k]);
        }
        printf("convert_json_over_perfetto_%luM=%.2f\n", m,
               bytes[1] / bytes[0]);
    }
    return 0;
}
