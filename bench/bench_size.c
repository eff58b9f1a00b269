/*
 * bench_size.c - bytes per scope on disk, against Chrome trace JSON.
 *
 * Workload (issue 7, item 3): the recording workload (10 million scopes
 * nested four deep, a frame every 1,000 scopes) recorded by the producer
 * into a file with the default encoding (1 MiB blocks, zstd level 3), with
 * a pool large enough that nothing is dropped. Figure: the file's size
 * divided by the scopes it holds (target: at most 2 bytes per scope).
 *
 * Baseline: the same events (read back from that file: every scope, frame
 * and thread name) written as Chrome trace JSON, the most compact form the
 * format has ("X" complete events with ts and dur in microseconds to the
 * nanosecond, pid, tid), compressed with libzstd at level 3 as `zstd -3`
 * would, in the same run. json_zstd_ratio is the compressed JSON's size
 * over the capture's (target: at least 10).
 *
 * The realistic generator's captures (bench_gen.h) are written as the
 * writer writes by default, format 3.0, whose SCOPES_E sections range-code
 * each tick's residual from a per-name prediction and the scope names
 * (bytes_per_scope_realistic, at the producer's zstd level 1, and _zstd3),
 * as format 2.0 (_format2), whose SCOPES_R sections store the same
 * residuals as bytes (the default until 2026-12-01), and as format 1.x
 * (_format1), whose plain SCOPES sections were the only encoding before
 * 2.0, so all are printed in one run.
 *
 * Writing and decoding each encoding cost differently: the 3.0 and 2.0
 * realistic captures (zstd level 1) are written in this thread, timed by
 * its CPU time (write_ns_per_scope_realistic and _format2, the
 * generator's own work included), and read back through
 * cap_reader_next_batch (256 a call, each scope's self time summed), the
 * fastest of three reads timed by this thread's CPU time:
 * reader_batch_scopes_per_s_realistic (3.0), _format2 (2.0) and
 * reader_batch_cpu_ratio_realistic_format3, 3.0's time over 2.0's.
 *
 * Block size: the generator's frames last 0.6 ms (645 k scopes a second
 * of recorded time), so the producer's 100 ms blocks would hold 64 k
 * scopes each, near the 1 MiB blocks of the figures above. A game at
 * 60 fps with the same 392 scopes a frame fills a 100 ms block with 6
 * frames (2,349 scopes), and each block pays its sections' tables again:
 * the same events written with a block every 6 frames (cap_writer_flush,
 * as the producer's writer thread does every flush_interval_ms) give
 * bytes_per_scope_realistic_60fps_format3 (3.1), _60fps_format2 (2.0) and
 * their json_zstd_ratio_realistic_60fps_*; the writer's time a scope in
 * those blocks too (write_ns_per_scope_realistic_60fps_format3, _format2),
 * and 3.0's
 * over 2.0's in both block sizes (write_ns_ratio_format3_realistic,
 * _60fps), measured one after the other in this run.
 *
 * Where a 100 ms block's bytes go: every block declares the text of each
 * name it uses (format-spec "Declarations": a block decodes on its own),
 * and this generator's 416 names each run about once a frame, so six
 * frames pay each name's text, its two predictions and the tables for
 * six scopes. The same 60 fps events written with their names left
 * without text (NAMES sections then empty; the events and every other
 * section the same) give bytes_per_scope_realistic_60fps_format3_no_text,
 * and the difference, names_text_bytes_per_scope_realistic_60fps_format3,
 * is what the names' text costs there (after zstd). The same events in 1 s blocks
 * (flush_interval_ms = 1000, 60 frames a block) give
 * bytes_per_scope_realistic_60fps_1s and its json_zstd_ratio: what a
 * program that can wait a second for its data on disk gets back.
 *
 * Groups of blocks (format 4.0, the producer's default, issue 43): the
 * same 60 fps events in 100 ms blocks grouped (names, threads and tracks
 * listed once a group of up to 4 s, each group's blocks one zstd frame
 * flushed at every block, SCOPES_E's name lists and tables kept for the
 * group) give bytes_per_scope_realistic_60fps, what a 60 fps game gets at
 * the producer's defaults (target: _target), its _no_text and
 * names_text_bytes_per_scope_realistic_60fps (what the names' text still
 * costs there), and in large blocks bytes_per_scope_realistic_format4.
 * Both 100 ms-block files are read back with the batch reader:
 * reader_batch_scopes_per_s_realistic_60fps (4.0), _60fps_format3 (3.1)
 * and reader_batch_cpu_ratio_realistic_60fps_format4, 4.0's CPU time over
 * 3.1's (issue 43: reading no slower a core).
 * The generator's frames last 0.6 ms of its clock, so for these two the
 * clock's period is set to make a frame last 1/60 s: the writer's groups
 * (at most 4 s of frames) then hold 40 blocks, as in a 60 fps game (else
 * its 64-block limit applies).
 * Their json_zstd ratio is against times 28 times as long.
 *
 * Usage: bench_size [--scopes N] [--zstd-level L] [--keep]
 *   --zstd-level L: the capture's zstd level (default: the producer's)
 */
#include <unistd.h>
#include <zstd.h>

#include <capture/cap_reader.h>

#include "bench_common.h"
#include "bench_gen.h"

/* Frames of a 60 fps game in the producer's default 100 ms block
 * (flush_interval_ms), and in 1 s blocks */
#define GAME_FRAMES_PER_BLOCK 6
#define GAME_FRAMES_PER_1S_BLOCK 60

#define BUF_EVENTS (1u << 20)

/* JSON goes through a zstd stream; only sizes are kept. */
typedef struct json_out {
    ZSTD_CCtx *cc;
    char in[1 << 20];
    size_t in_n;
    uint8_t out[1 << 18];
    uint64_t raw_bytes, zst_bytes;
} json_out;

static void json_pump(json_out *j, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {j->in, j->in_n, 0};
    for (;;) {
        ZSTD_outBuffer out = {j->out, sizeof j->out, 0};
        size_t left = ZSTD_compressStream2(j->cc, &out, &in, mode);
        if (ZSTD_isError(left))
            BENCH_DIE("zstd: %s", ZSTD_getErrorName(left));
        j->zst_bytes += out.pos;
        if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
            break;
    }
    j->raw_bytes += j->in_n;
    j->in_n = 0;
}

static void json_put(json_out *j, const char *s, size_t n)
{
    if (j->in_n + n > sizeof j->in)
        json_pump(j, ZSTD_e_continue);
    memcpy(j->in + j->in_n, s, n);
    j->in_n += n;
}

/* ns as microseconds with three decimals: 1234567 -> "1234.567". */
static size_t fmt_us(char *p, int64_t ns)
{
    char tmp[32];
    size_t n = 0;
    int neg = ns < 0;
    uint64_t v = neg ? (uint64_t)-ns : (uint64_t)ns;
    for (int i = 0; i < 3; i++) {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    }
    tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        tmp[n++] = '-';
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

static void json_event(json_out *j, const char *name, int64_t begin_ns,
                       int64_t dur_ns, uint32_t tid, int *first)
{
    char buf[512];
    size_t n = 0;
    n += (size_t)snprintf(buf, sizeof buf, "%s{\"name\":\"%.200s\",\"ph\":\"X\",\"ts\":",
                          *first ? "" : ",\n", name);
    *first = 0;
    n += fmt_us(buf + n, begin_ns);
    memcpy(buf + n, ",\"dur\":", 7);
    n += 7;
    n += fmt_us(buf + n, dur_ns);
    n += (size_t)snprintf(buf + n, sizeof buf - n, ",\"pid\":1,\"tid\":%u}", tid);
    json_put(j, buf, n);
}

/* The CPU seconds (this thread's) of the fastest of three reads of the
 * capture at path through cap_reader_next_batch, 256 events a call, each
 * scope's self time summed (so that every field is used); *n: the scopes
 * read. */
static double batch_read_cpu_s(const char *path, uint64_t *n)
{
    static cap_event evs[256];
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        cap_reader *r;
        char detail[256];
        if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK)
            BENCH_DIE("%s: %s", path, detail);
        uint64_t scopes = 0;
        int64_t self = 0;
        size_t got;
        cap_result res;
        uint64_t t0 = bench_thread_cpu_ns();
        while ((res = cap_reader_next_batch(r, evs, 256, &got)) != CAP_DONE) {
            if (res != CAP_OK)
                BENCH_DIE("%s: %s", path, cap_reader_detail(r));
            for (size_t i = 0; i < got; i++)
                if (evs[i].kind == CAP_EV_SCOPE) {
                    const cap_ev_scope *sc = &evs[i].u.scope;
                    self += sc->end_ns - sc->begin_ns - sc->children_ns;
                    scopes++;
                }
        }
        double cpu = (double)(bench_thread_cpu_ns() - t0) / 1e9;
        cap_reader_close(r);
        if (self < 0)
            BENCH_DIE("%s: negative self time", path);
        *n = scopes;
        if (rep == 0 || cpu < best)
            best = cpu;
    }
    return best;
}

/* The events of the capture at path as compact Chrome trace JSON, through
 * zstd -3: sets *json_raw and *json_zst (bytes), returns the scopes read. */
static uint64_t json_of(const char *path, uint64_t *json_raw,
                        uint64_t *json_zst, uint64_t *file_bytes_out)
{
    /* read the file back, write its events as JSON */
    cap_reader *r;
    char detail[256];
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK)
        BENCH_DIE("cannot read %s: %s", path, detail);
    uint64_t file_bytes = cap_reader_file_size(r);
    json_out *j = calloc(1, sizeof *j);
    if (!j || !(j->cc = ZSTD_createCCtx()))
        BENCH_DIE("out of memory");
    ZSTD_CCtx_setParameter(j->cc, ZSTD_c_compressionLevel, 3);
    json_put(j, "{\"traceEvents\":[\n", 17);
    int first = 1;
    uint64_t n_scopes = 0;
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res != CAP_OK)
            BENCH_DIE("reading %s: %s", path, cap_reader_detail(r));
        char buf[256];
        switch (ev.kind) {
        case CAP_EV_THREAD: {
            int n = snprintf(buf, sizeof buf,
                             "%s{\"name\":\"thread_name\",\"ph\":\"M\","
                             "\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"%.100s\"}}",
                             first ? "" : ",\n", ev.u.thread.tid,
                             ev.u.thread.name ? ev.u.thread.name : "");
            first = 0;
            json_put(j, buf, (size_t)n);
            break;
        }
        case CAP_EV_FRAME:
            json_event(j, "frame", ev.u.frame.begin_ns,
                       ev.u.frame.end_ns - ev.u.frame.begin_ns, 0, &first);
            break;
        case CAP_EV_SCOPE: {
            const char *name = cap_reader_name(r, ev.u.scope.name);
            json_event(j, name ? name : "?", ev.u.scope.begin_ns,
                       ev.u.scope.end_ns - ev.u.scope.begin_ns,
                       ev.u.scope.tid, &first);
            n_scopes++;
            break;
        }
        default:
            break;
        }
    }
    cap_reader_close(r);
    json_put(j, "\n]}\n", 4);
    json_pump(j, ZSTD_e_end);

    *json_raw = j->raw_bytes;
    *json_zst = j->zst_bytes;
    *file_bytes_out = file_bytes;
    ZSTD_freeCCtx(j->cc);
    free(j);
    return n_scopes;
}

static void wait_drained(uint64_t events)
{
    for (int i = 0; i < 60000; i++) {
        cap_producer_stats s;
        cap_get_stats(&s);
        if (s.events >= events)
            return;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    BENCH_DIE("the writer did not drain");
}

int main(int argc, char **argv)
{
    uint64_t scopes = 10000000;
    int keep = 0, level = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc)
            scopes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--zstd-level") == 0 && i + 1 < argc)
            level = atoi(argv[++i]);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else
            BENCH_DIE("usage: bench_size [--scopes N] [--zstd-level L] [--keep]");
    }
    uint64_t frames = scopes / BENCH_SCOPES_PER_FRAME;
    if (frames < 1)
        BENCH_DIE("bad --scopes");
    scopes = frames * BENCH_SCOPES_PER_FRAME;
    const char *path = "bench-size.cap";
    bench_put_machine();
    bench_put_load("start");

    cap_capture_options o = {0};
    o.buffer_events = BUF_EVENTS;
    o.buffers_per_thread = (unsigned)(2 * scopes / BUF_EVENTS + 2);
    o.zstd_level = level;
    if (cap_open(path, &o) != CAP_OK)
        BENCH_DIE("cannot open %s", path);
    CAP_THREAD("main");
    bench_record_frames(frames, 1);
    CAP_FRAME_END();
    wait_drained(2 * scopes);
    cap_thread_unregister();
    if (cap_close() != CAP_OK)
        BENCH_DIE("cap_close failed");
    cap_producer_stats st;
    cap_get_stats(&st);
    if (st.dropped_scopes)
        BENCH_DIE("%llu scopes dropped", (unsigned long long)st.dropped_scopes);

    uint64_t json_raw, json_zst, file_bytes;
    uint64_t n_scopes = json_of(path, &json_raw, &json_zst, &file_bytes);
    if (n_scopes != scopes)
        BENCH_DIE("the file holds %llu scopes, expected %llu",
                  (unsigned long long)n_scopes, (unsigned long long)scopes);
    /* the trivial loop: four names, near-constant durations */
    double bps = (double)file_bytes / (double)scopes;
    bench_put_str("workload", "trivial_loop (4 names, nested 4 deep, "
                              "near-constant durations)");
    bench_put("scopes", (double)scopes);
    bench_put("capture_bytes", (double)file_bytes);
    bench_put("bytes_per_scope", bps);
    bench_put("json_bytes_per_scope", (double)json_raw / (double)scopes);
    bench_put("json_zstd_bytes_per_scope", (double)json_zst / (double)scopes);
    bench_put("json_zstd_ratio", (double)json_zst / (double)file_bytes);
    if (!keep)
        unlink(path);

    /* the realistic generator (bench_gen.h), through cap_writer at the
     * producer's default zstd level (1), then at the writer's (3), then
     * as format 1.x (SCOPES without predictions) at the producer's level:
     * the figures of the format before 2.0, beside the new ones; then as
     * format 2.0 (SCOPES_R, the default before 3.0) at the producer's
     * level */
    double batch_s_v3 = 0; /* pass 0's decoding, for 3.0's ratio */
    double wns[11] = {0};  /* each pass's write_ns */
    double rb60 = 0;       /* pass 4's bytes a scope */
    double rb60_4 = 0;     /* pass 8's */
    double batch_s_60_3 = 1; /* pass 4's file read (CPU s) */
    double frame_ticks = 0; /* pass 0's mean frame, in ticks */
    for (int pass = 0; pass < 11; pass++) {
        int lvl = pass == 1 ? 3 : (level ? level : 1);
        /* passes 4 and 5: 3.0 and 2.0 in a 60 fps game's 100 ms blocks;
           6: 3.0 there, its names without text; 7: 3.0 in 1 s blocks */
        /* 8: 4.0 (groups of blocks) in 100 ms blocks; 9: the same, its
           names without text; 10: 4.0 in large blocks */
        const uint64_t block_frames = pass == 7    ? GAME_FRAMES_PER_1S_BLOCK
                                      : pass == 10 ? 0
                                      : pass >= 4  ? GAME_FRAMES_PER_BLOCK
                                                   : 0;
        const int name_text = pass != 6 && pass != 9;
        const char *rpath = "bench-size-realistic.cap";
        static gen g;
        uint32_t names = gen_init(&g, 1000000);
        if (names < 200)
            BENCH_DIE("the generator made %u names, fewer than 200", names);
        cap_writer_options wo = {0};
        wo.clock_source = "tsc";
        wo.tick_period_ns = GEN_PERIOD_NS;
        /* 4.0 in 100 ms blocks: the clock slowed so that a frame lasts
           1/60 s, so that the writer's groups (at most 1 s) hold the 10
           blocks they hold in a 60 fps game (the bytes but the ORIGIN's
           period do not depend on it) */
        if ((pass == 8 || pass == 9) && frame_ticks > 0)
            wo.tick_period_ns = 1e9 / 60 / frame_ticks;
        wo.origin_tick = 1000000;
        wo.zstd_level = lvl;
        wo.format_major = pass == 2                 ? 1
                          : pass == 3 || pass == 5  ? 2
                          : pass >= 8               ? 4
                                                    : 0;
        cap_writer *w;
        if (cap_writer_open_path(&w, rpath, &wo) != CAP_OK ||
            (name_text ? gen_declare(&g, w)
                       : cap_writer_thread(w, 0, "main")) != CAP_OK)
            BENCH_DIE("cannot write %s", rpath);
        uint64_t wt0 = bench_thread_cpu_ns();
        while (g.scopes < scopes)
            if (gen_frame(&g, w) != CAP_OK ||
                (block_frames && g.frames % block_frames == 0 &&
                 cap_writer_flush(w) != CAP_OK))
                BENCH_DIE("writing %s failed", rpath);
        if (cap_writer_close(w) != CAP_OK)
            BENCH_DIE("closing %s failed", rpath);
        if (pass == 0)
            frame_ticks = (double)(g.tick - wo.origin_tick) / (double)g.frames;
        double write_ns = (double)(bench_thread_cpu_ns() - wt0) /
                          (double)g.scopes;
        wns[pass] = write_ns;
        uint64_t rs = json_of(rpath, &json_raw, &json_zst, &file_bytes);
        if (rs != g.scopes)
            BENCH_DIE("%s holds %llu scopes, expected %llu", rpath,
                      (unsigned long long)rs, (unsigned long long)g.scopes);
        double rb = (double)file_bytes / (double)rs;
        double fl = gen_floor_bytes_per_scope(&g);
        if (pass == 0) {
            bench_put_str("workload_realistic",
                          "bench_gen.h (names, depth, jitter below)");
            bench_put("realistic_names", names);
            bench_put("realistic_max_depth", gen_max_depth(&g));
            bench_put("realistic_jitter", GEN_JITTER);
            bench_put("realistic_scopes", (double)rs);
            bench_put("realistic_scopes_per_frame",
                      (double)rs / (double)g.frames);
            bench_put("realistic_zstd_level", lvl);
            bench_put("bytes_per_scope_realistic", rb);
            bench_put("bytes_per_scope_realistic_target", 2.0);
            bench_put("entropy_floor_bytes_per_scope_realistic", fl);
            bench_put("realistic_ratio_to_floor", rb / fl);
            bench_put("json_zstd_bytes_per_scope_realistic",
                      (double)json_zst / (double)rs);
            bench_put("json_zstd_ratio_realistic",
                      (double)json_zst / (double)file_bytes);
            bench_put("json_zstd_ratio_realistic_target", 6.0);
            bench_put("write_ns_per_scope_realistic", write_ns);
            uint64_t nb;
            batch_s_v3 = batch_read_cpu_s(rpath, &nb);
            bench_put("reader_batch_scopes_per_s_realistic",
                      (double)nb / batch_s_v3);
        } else if (pass == 1) {
            bench_put("bytes_per_scope_realistic_zstd3", rb);
            bench_put("json_zstd_ratio_realistic_zstd3",
                      (double)json_zst / (double)file_bytes);
        } else if (pass == 2) {
            bench_put("bytes_per_scope_realistic_format1", rb);
            bench_put("json_zstd_ratio_realistic_format1",
                      (double)json_zst / (double)file_bytes);
        } else if (pass == 4) {
            rb60 = rb;
            bench_put("realistic_60fps_scopes_per_block",
                      (double)(block_frames * rs) / (double)g.frames);
            bench_put("bytes_per_scope_realistic_60fps_format3", rb);
            bench_put("write_ns_per_scope_realistic_60fps_format3", write_ns);
            bench_put("json_zstd_ratio_realistic_60fps_format3",
                      (double)json_zst / (double)file_bytes);
            uint64_t nb;
            batch_s_60_3 = batch_read_cpu_s(rpath, &nb);
            bench_put("reader_batch_scopes_per_s_realistic_60fps_format3",
                      (double)nb / batch_s_60_3);
        } else if (pass == 5) {
            bench_put("bytes_per_scope_realistic_60fps_format2", rb);
            bench_put("write_ns_per_scope_realistic_60fps_format2", write_ns);
            bench_put("write_ns_ratio_format3_realistic_60fps",
                      wns[4] / write_ns);
            bench_put("json_zstd_ratio_realistic_60fps_format2",
                      (double)json_zst / (double)file_bytes);
        } else if (pass == 6) {
            bench_put("bytes_per_scope_realistic_60fps_format3_no_text", rb);
            bench_put("names_text_bytes_per_scope_realistic_60fps_format3",
                      rb60 - rb);
        } else if (pass == 7) {
            bench_put("realistic_60fps_1s_scopes_per_block",
                      (double)(block_frames * rs) / (double)g.frames);
            bench_put("bytes_per_scope_realistic_60fps_1s", rb);
            bench_put("json_zstd_ratio_realistic_60fps_1s",
                      (double)json_zst / (double)file_bytes);
        } else if (pass == 8) {
            rb60_4 = rb;
            bench_put("bytes_per_scope_realistic_60fps", rb);
            bench_put("bytes_per_scope_realistic_60fps_target", 2.0);
            bench_put("write_ns_per_scope_realistic_60fps", write_ns);
            bench_put("json_zstd_ratio_realistic_60fps",
                      (double)json_zst / (double)file_bytes);
            uint64_t nb;
            double bs = batch_read_cpu_s(rpath, &nb);
            bench_put("reader_batch_scopes_per_s_realistic_60fps",
                      (double)nb / bs);
            bench_put("reader_batch_cpu_ratio_realistic_60fps_format4",
                      bs / batch_s_60_3);
        } else if (pass == 9) {
            bench_put("bytes_per_scope_realistic_60fps_no_text", rb);
            bench_put("names_text_bytes_per_scope_realistic_60fps",
                      rb60_4 - rb);
        } else if (pass == 10) {
            bench_put("bytes_per_scope_realistic_format4", rb);
        } else {
            bench_put("bytes_per_scope_realistic_format2", rb);
            bench_put("realistic_ratio_to_floor_format2", rb / fl);
            bench_put("json_zstd_ratio_realistic_format2",
                      (double)json_zst / (double)file_bytes);
            bench_put("write_ns_per_scope_realistic_format2", write_ns);
            bench_put("write_ns_ratio_format3_realistic", wns[0] / write_ns);
            uint64_t nb;
            double bs = batch_read_cpu_s(rpath, &nb);
            bench_put("reader_batch_scopes_per_s_realistic_format2",
                      (double)nb / bs);
            bench_put("reader_batch_cpu_ratio_realistic_format3",
                      batch_s_v3 / bs);
        }
        if (!keep)
            unlink(rpath);
    }
    return 0;
}
