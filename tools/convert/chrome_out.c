/*
 * chrome_out.c - capture -> Chrome Trace Event JSON (cvt_cap_to_chrome).
 *
 * Output: the object form, streamed as the capture is read:
 *   {"traceEvents":[ ...events... ],
 *    "displayTimeUnit":"ns",
 *    "otherData":{ capture metadata }}
 * pid 1 holds the CPU threads (tid = the capture's thread id) and the
 * "Frames" thread (tid 65536, frames as X events named "frame", category
 * "libcapture.frame", args.index the frame index); pid 2, named "GPU",
 * holds one thread per GPU track (tid = track id). Scopes and GPU spans are
 * X events with ts and dur in microseconds, three decimals (exact
 * nanoseconds). Counters are C events of pid 1 with args {"value": v}.
 *
 * Scopes arrive from the reader children first; each thread's scopes are
 * held until their root closes and written parents first, so that a
 * parent and a child with the same start and duration keep their order
 * (Chrome nests equal X events in file order). See docs/CHROME-TRACE.md.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_reader.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CPU_PID 1
#define GPU_PID 2
#define FRAMES_TID 65536u

enum { W_DAMAGE, W_UNNAMED, W_GPU, W_COUNTER, W_ORPHAN };

/* A name's text as a JSON string, quotes included, made at its first
 * event (cvt_json_string once a name, not once an event). */
typedef struct json_name {
    char *s; /* NULL: not made yet */
    size_t n;
} json_name;

typedef struct out_ctx {
    cvt_diag d;
    cap_reader *r;
    FILE *f;
    int first;            /* no event written yet */
    uint64_t unnamed;     /* scopes whose name id has no text */
    uint64_t gpu_uncal, gpu_unmeasured, bad_counters;
    json_name *names;     /* by name id */
    size_t names_cap;
} out_ctx;

static void sep(out_ctx *c)
{
    fputs(c->first ? "\n" : ",\n", c->f);
    c->first = 0;
}

/* The JSON string of name id `name` with text s, from the cache; NULL
 * when out of memory (the caller writes it the slow way). */
static const json_name *name_json(out_ctx *c, uint32_t name, const char *s)
{
    if (name >= c->names_cap) {
        size_t old = c->names_cap;
        if (cvt_grow((void **)&c->names, &c->names_cap, (size_t)name + 1,
                     sizeof *c->names) != 0)
            return NULL;
        memset(c->names + old, 0, (c->names_cap - old) * sizeof *c->names);
    }
    json_name *j = &c->names[name];
    if (!j->s) {
        FILE *m = open_memstream(&j->s, &j->n);
        if (!m)
            return NULL;
        cvt_json_string(m, s);
        if (fclose(m) != 0) {
            free(j->s);
            j->s = NULL;
            return NULL;
        }
    }
    return j;
}

static char *put(char *d, const char *s, size_t n)
{
    memcpy(d, s, n);
    return d + n;
}

#define PUT(d, lit) put(d, lit, sizeof lit - 1)

static void x_event(out_ctx *c, int pid, uint32_t tid, uint32_t name,
                    const char *cat, int64_t begin, int64_t dur)
{
    const char *s = cap_reader_name(c->r, name);
    const json_name *j = s ? name_json(c, name, s) : NULL;
    /* the event formatted here and written at once: fprintf and a stdio
       call a field were most of the export's time */
    char b[512], *d = b;
    d = c->first ? PUT(d, "\n") : PUT(d, ",\n");
    c->first = 0;
    d = PUT(d, "{\"name\":");
    if (j && j->n <= 256) {
        d = put(d, j->s, j->n);
    } else { /* a long name, or no memory for it */
        fwrite(b, 1, (size_t)(d - b), c->f);
        d = b;
        cvt_json_string(c->f, s ? s : "");
    }
    if (cat) {
        fwrite(b, 1, (size_t)(d - b), c->f);
        d = b;
        fputs(",\"cat\":", c->f);
        cvt_json_string(c->f, cat);
    }
    d = PUT(d, ",\"ph\":\"X\",\"pid\":");
    if (pid < 0)
        *d++ = '-';
    d = cvt_fmt_u64(d, pid < 0 ? (uint64_t)0 - (uint64_t)pid : (uint64_t)pid);
    d = PUT(d, ",\"tid\":");
    d = cvt_fmt_u64(d, tid);
    d = PUT(d, ",\"ts\":");
    d = cvt_fmt_us(d, begin);
    d = PUT(d, ",\"dur\":");
    d = cvt_fmt_us(d, dur);
    if (!s) {
        c->unnamed++;
        d = PUT(d, ",\"args\":{\"unnamed_id\":");
        d = cvt_fmt_u64(d, name);
        *d++ = '}';
    }
    *d++ = '}';
    fwrite(b, 1, (size_t)(d - b), c->f);
}

static int emit_scopes(void *user, uint32_t tid, const cvt_scope *s, size_t n)
{
    out_ctx *c = user;
    for (size_t i = 0; i < n; i++)
        x_event(c, CPU_PID, tid, s[i].name, NULL, s[i].begin,
                cap_duration_ns(s[i].begin, s[i].end));
    return 0;
}

static void thread_meta(out_ctx *c, int pid, uint32_t tid, const char *name)
{
    sep(c);
    fprintf(c->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                  "\"tid\":%u,\"args\":{\"name\":", pid, tid);
    cvt_json_string(c->f, name);
    fputs("}}", c->f);
}

static void process_meta(out_ctx *c, int pid, const char *name)
{
    sep(c);
    fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                  "\"tid\":0,\"args\":{\"name\":", pid);
    cvt_json_string(c->f, name);
    fputs("}}", c->f);
}

cap_result cvt_cap_to_chrome(const char *in, const char *out, const cvt_options *o)
{
    out_ctx c = {0};
    c.d.out = o ? o->diag : NULL;
    c.d.file = in;
    c.first = 1;
    char detail[256] = "";
    cap_result res = cap_reader_open(&c.r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&c.d, "%s", detail[0] ? detail : cap_result_message(res));
        return res;
    }
    int to_stdout = strcmp(out, "-") == 0;
    c.f = to_stdout ? stdout : fopen(out, "w");
    if (!c.f) {
        c.d.file = out;
        cvt_error(&c.d, "cannot create: %s", strerror(errno));
        cap_reader_close(c.r);
        return CAP_E_IO;
    }
    cvt_preorder pre;
    cvt_preorder_init(&pre, emit_scopes, &c);
    cap_result rc = CAP_OK;
    int frames_named = 0, gpu_named = 0;
    fputs("{\"traceEvents\":[", c.f);
    for (;;) {
        cap_event ev;
        res = cvt_next_event(&c.d, c.r, &ev, W_DAMAGE, "exporting");
        if (res == CAP_DONE)
            break;
        if (res != CAP_OK) {
            rc = res;
            break;
        }
        switch (ev.kind) {
        case CAP_EV_THREAD: {
            char tmp[32];
            const char *n = ev.u.thread.name;
            if (!n) {
                snprintf(tmp, sizeof tmp, "thread %u", ev.u.thread.tid);
                n = tmp;
            }
            thread_meta(&c, CPU_PID, ev.u.thread.tid, n);
            break;
        }
        case CAP_EV_GPU_TRACK: {
            char tmp[32];
            const char *n = ev.u.gpu_track.name;
            if (!n) {
                snprintf(tmp, sizeof tmp, "GPU track %u", ev.u.gpu_track.track);
                n = tmp;
            }
            if (!gpu_named)
                process_meta(&c, GPU_PID, "GPU");
            gpu_named = 1;
            thread_meta(&c, GPU_PID, ev.u.gpu_track.track, n);
            break;
        }
        case CAP_EV_FRAME:
            if (!frames_named)
                thread_meta(&c, CPU_PID, FRAMES_TID, "Frames");
            frames_named = 1;
            sep(&c);
            fprintf(c.f, "{\"name\":\"frame\",\"cat\":\"libcapture.frame\","
                         "\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":",
                    CPU_PID, FRAMES_TID);
            cvt_json_us(c.f, ev.u.frame.begin_ns);
            fputs(",\"dur\":", c.f);
            cvt_json_us(c.f, cap_duration_ns(ev.u.frame.begin_ns, ev.u.frame.end_ns));
            fprintf(c.f, ",\"args\":{\"index\":%llu}}",
                    (unsigned long long)ev.u.frame.index);
            break;
        case CAP_EV_SCOPE: {
            const cap_ev_scope *s = &ev.u.scope;
            if (cvt_preorder_add(&pre, s->tid, s->begin_ns, s->end_ns, s->name,
                                 s->depth) != 0) {
                cvt_error(&c.d, "out of memory");
                rc = CAP_E_NOMEM;
            }
            break;
        }
        case CAP_EV_GPU_SPAN: {
            const cap_ev_gpu_span *g = &ev.u.gpu_span;
            if (!g->measured) {
                c.gpu_unmeasured++;
                break;
            }
            if (!g->calibrated) {
                c.gpu_uncal++;
                break;
            }
            x_event(&c, GPU_PID, g->track, g->name, "libcapture.gpu",
                    g->begin_ns, g->duration_ns);
            break;
        }
        case CAP_EV_COUNTER: {
            const cap_ev_counter *k = &ev.u.counter;
            if (!isfinite(k->value)) {
                c.bad_counters++;
                break;
            }
            const char *n = cap_reader_name(c.r, k->name);
            sep(&c);
            fputs("{\"name\":", c.f);
            cvt_json_string(c.f, n ? n : "");
            fprintf(c.f, ",\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"ts\":", CPU_PID);
            cvt_json_us(c.f, k->time_ns);
            fprintf(c.f, ",\"args\":{\"value\":%.17g}}", k->value);
            break;
        }
        }
        if (rc)
            break;
    }
    if (rc == CAP_OK) {
        uint64_t orphans = 0;
        cvt_preorder_finish(&pre, &orphans);
        if (orphans)
            cvt_warn(&c.d, W_ORPHAN, "%llu scope(s) whose enclosing scope "
                     "never closed (a truncated capture) are exported without "
                     "it", (unsigned long long)orphans);
        fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{", c.f);
        size_t nm = cap_reader_meta_count(c.r);
        for (size_t i = 0; i < nm; i++) {
            if (i)
                fputc(',', c.f);
            cvt_json_string(c.f, cap_reader_meta_key(c.r, i));
            fputc(':', c.f);
            cvt_json_string(c.f, cap_reader_meta_value(c.r, i));
        }
        fputs("}}\n", c.f);
        if (c.unnamed)
            cvt_warn(&c.d, W_UNNAMED, "%llu scope(s) use name ids that the "
                     "capture never named (a damaged or foreign capture); "
                     "exported with an empty name and args.unnamed_id",
                     (unsigned long long)c.unnamed);
        if (c.gpu_uncal)
            cvt_warn(&c.d, W_GPU, "%llu GPU span(s) of tracks without a "
                     "calibration to the CPU clock left out (their position "
                     "is unknown)", (unsigned long long)c.gpu_uncal);
        if (c.gpu_unmeasured)
            cvt_warn(&c.d, W_GPU, "%llu GPU span(s) not measured left out",
                     (unsigned long long)c.gpu_unmeasured);
        if (c.bad_counters)
            cvt_warn(&c.d, W_COUNTER, "%llu counter sample(s) that are not "
                     "finite numbers left out (JSON cannot hold them)",
                     (unsigned long long)c.bad_counters);
    }
    cvt_preorder_free(&pre);
    cap_reader_close(c.r);
    for (size_t i = 0; i < c.names_cap; i++)
        free(c.names[i].s);
    free(c.names);
    int werr = ferror(c.f) != 0;
    if (!to_stdout) {
        if (fclose(c.f) != 0)
            werr = 1;
    } else if (fflush(c.f) != 0) {
        werr = 1;
    }
    if (werr && rc == CAP_OK) {
        c.d.file = out;
        cvt_error(&c.d, "write failed: %s", strerror(errno));
        rc = CAP_E_IO;
    }
    cvt_warn_summary(&c.d);
    return rc;
}
