/*
 * chrome_in.h - the Chrome JSON importer's shared state (internal to
 * chrome_in.c, the JSON walk, and chrome_build.c, nesting and writing).
 * See chrome_in.c for the format summary.
 */
#ifndef CHROME_IN_H
#define CHROME_IN_H

#include "cvt.h"
#include "cvt_util.h"

#include <stddef.h>
#include <stdint.h>

/* warning kinds (each rate-limited on its own) */
enum {
    W_PHASE, W_NONAME, W_NOTS, W_NODUR, W_E_UNMATCHED, W_E_DEEPER,
    W_UNCLOSED, W_CLIP, W_DEPTH, W_NAMECUT, W_COUNTER, W_NONOBJECT,
    W_TRUNC, W_FRAME, W_GPU, W_NEGATIVE, W_CLIPSUM, W_OTHER
};

/* ---- buffered data ----------------------------------------------------- */

#define DUR_UNFINISHED INT64_MIN /* an X event without dur */

typedef struct rec {    /* one B, E or X event of a thread */
    int64_t ts;         /* ns */
    int64_t dur;        /* ns, X only; DUR_UNFINISHED: ends with the thread */
    uint64_t seq;       /* file order */
    uint32_t name;      /* interned id, 0: no name */
    uint8_t ph;         /* 'B', 'E', 'X' */
} rec;

typedef struct node {   /* one nested scope, in pre-order */
    int64_t begin, end;
    uint32_t name;
    uint32_t depth;
} node;

typedef struct thread {
    uint32_t pid;       /* id in the pid table */
    const char *tid_txt;
    const char *pid_txt;
    char *tname;        /* thread_name metadata, or NULL */
    rec *r;
    size_t nr, cap;
    size_t frame_events;/* libcapture.frame events seen on it */
    node *nodes;
    size_t nnodes;
    int64_t last_ts;    /* latest B/E ts or X end */
    int any_ts;
    uint32_t out_tid;   /* dense id in the capture */
    int declared;
    int gpu_track;      /* >= 0: imported as that GPU track (--gpu-thread) */
} thread;

typedef struct counter_rec {
    int64_t ts;
    uint64_t seq;       /* arrival order (ties keep it) */
    uint32_t name;
    double value;
} counter_rec;

typedef struct frame_rec {
    int64_t begin, end;
    uint64_t index;
    uint64_t seq;
} frame_rec;

/* ---- the event being parsed ------------------------------------------- */

#define MAX_ARGS 256

typedef struct arg {
    size_t key, klen;   /* offsets in ev.buf */
    size_t val, vlen;
    int is_num, is_str;
} arg;

typedef struct cur_event {
    char *buf;          /* names, keys and values of this event */
    size_t len, cap;
    size_t name, name_len; int has_name;
    size_t cat, cat_len; int has_cat;
    size_t pid, pid_len; int has_pid;
    size_t tid, tid_len; int has_tid;
    char ph; int ph_ok;
    int64_t ts; int ts_state;     /* 0 absent, 1 ok, -1 not a number */
    int64_t dur; int dur_state;
    arg args[MAX_ARGS];
    size_t nargs;
    int args_dropped;
} cur_event;

/* ---- parser state ------------------------------------------------------ */

enum st { ST_TOP, ST_ROOT, ST_EVENTS, ST_EVENT, ST_ARGS };

typedef struct imp {
    const cvt_options *o;
    cvt_diag d;
    /* parse */
    enum st st[8];
    int sp;
    unsigned long skip;
    char key[256]; int key_ok; size_t key_len;  /* current member name */
    int seen_events, events_closed, root_done;
    char *dtu;                    /* displayTimeUnit */
    cur_event ev;
    uint64_t seq;
    int fail;                     /* out of memory or a fatal problem */
    char failmsg[200];
    unsigned long phase_count[128];
    unsigned long nonobject;
    int sampled;                  /* "samples" or "stackFrames" present */
    /* tables */
    cvt_strtab names;             /* scope, end and counter names */
    cvt_strtab thread_keys;       /* "pid\x1ftid" -> thread index + 1 */
    cvt_strtab pids;              /* canonical pid text */
    char **pname;                 /* process_name by pid id - 1 */
    size_t npname;
    thread *th;
    size_t nth, thcap;
    counter_rec *ctr;
    size_t nctr, ctrcap;
    frame_rec *fr;
    size_t nfr, frcap;
    uint64_t unnamed_events;
    char namebuf[CVT_NAME_MAX + 1];
} imp;

/* Nest every thread's events (B/E matched, then with the X events) into
 * m->th[i].nodes, with every repair warned about. Returns 0, or
 * CAP_E_NOMEM (no message yet). */
int chrome_build_threads(imp *m);

/* Write the nested threads, frames, counters and GPU tracks to the capture
 * out. Returns 0, CAP_E_NOMEM (no message yet), or another cap_result
 * error after one line. */
int chrome_write_capture(imp *m, const char *in, const char *out);

#endif
