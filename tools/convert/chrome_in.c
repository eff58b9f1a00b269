/*
 * chrome_in.c - Chrome Trace Event JSON -> capture (cvt_chrome_to_cap).
 *
 * Format summary (what this importer reads; docs/CHROME-TRACE.md has the
 * whole mapping and every repair):
 *   file     JSON, optionally gzip'd (zlib's gzread reads both). Either an
 *            array of events, or an object whose "traceEvents" member is
 *            that array ("displayTimeUnit" is kept as metadata; other
 *            members are skipped). An array cut short (no closing bracket,
 *            maybe a trailing comma or half an event) is accepted with a
 *            warning: every complete event before the cut is imported.
 *   event    an object: ph (phase), name, cat, ts and dur (microseconds,
 *            numbers or numeric strings), pid and tid (numbers or strings),
 *            args (an object; only its scalar members are looked at).
 *   phases   B/E (begin/end of a scope), X (complete scope: ts + dur),
 *            M (thread_name / process_name metadata), C (counter samples:
 *            one series per numeric member of args). Every other phase is
 *            counted and reported in one warning line per phase.
 *
 * Streaming: yajl calls back for each token, one event object is held at a
 * time, and per thread only compact 32-byte records are buffered (scopes
 * must be sorted per thread before they can be nested). Never a DOM.
 *
 * Per thread, in order:
 *   1. B/E events, sorted by (ts, file order), are matched with a stack
 *      (repairs in resolve_be) into intervals;
 *   2. those intervals and the X events are sorted by (start, longer first,
 *      file order) and nested with a stack (repairs in nest());
 *   3. the nested scopes are written to the capture, all threads merged in
 *      time order together with frames, counters and GPU spans.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_writer.h>

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

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

static void oom(imp *m)
{
    if (!m->fail) {
        m->fail = 1;
        snprintf(m->failmsg, sizeof m->failmsg, "out of memory");
    }
}

/* ---- current event buffer --------------------------------------------- */

static size_t ev_put(imp *m, const char *s, size_t len)
{
    cur_event *e = &m->ev;
    if (cvt_grow((void **)&e->buf, &e->cap, e->len + len + 1, 1)) {
        oom(m);
        return 0;
    }
    size_t at = e->len;
    memcpy(e->buf + at, s, len);
    e->buf[at + len] = '\0';
    e->len += len + 1;
    return at;
}

static void ev_reset(cur_event *e)
{
    e->len = 0;
    e->has_name = e->has_cat = e->has_pid = e->has_tid = 0;
    e->ph_ok = 0;
    e->ts_state = e->dur_state = 0;
    e->nargs = 0;
    e->args_dropped = 0;
}

/* ---- tables ------------------------------------------------------------ */

/* Canonical text of a pid/tid: integers without sign noise or leading
 * zeros, anything else as written. Writes into out (size 64) or returns s. */
static const char *canon_id(const char *s, size_t len, char *out, size_t *olen)
{
    size_t i = 0;
    int neg = 0;
    if (len && s[0] == '-')
        neg = 1, i = 1;
    if (i < len && len - i <= 18) {
        long long v = 0;
        size_t j = i;
        for (; j < len && s[j] >= '0' && s[j] <= '9'; j++)
            v = v * 10 + (s[j] - '0');
        if (j == len && j > i) {
            *olen = (size_t)snprintf(out, 64, "%lld", neg ? -v : v);
            return out;
        }
    }
    *olen = len;
    return s;
}

static uint32_t pid_of(imp *m, const char *s, size_t len)
{
    char tmp[64];
    size_t n;
    const char *c = canon_id(s, len, tmp, &n);
    uint32_t id = cvt_strtab_intern(&m->pids, c, n);
    if (!id) {
        oom(m);
        return 0;
    }
    if (id > m->npname) {
        size_t cap = m->npname;
        if (cvt_grow((void **)&m->pname, &cap, id, sizeof *m->pname)) {
            oom(m);
            return 0;
        }
        memset(m->pname + m->npname, 0, (cap - m->npname) * sizeof *m->pname);
        m->npname = cap;
    }
    return id;
}

/* The thread of the current event, created on first use. */
static thread *thread_of(imp *m)
{
    cur_event *e = &m->ev;
    char pt[64], tt[64], key[160];
    size_t pn, tn;
    const char *p = e->has_pid ? canon_id(e->buf + e->pid, e->pid_len, pt, &pn)
                               : (pn = 1, "0");
    const char *t = e->has_tid ? canon_id(e->buf + e->tid, e->tid_len, tt, &tn)
                               : (tn = 1, "0");
    char *k = key;
    char *heap = NULL;
    if (pn + tn + 1 > sizeof key) {
        heap = malloc(pn + tn + 1);
        if (!heap) {
            oom(m);
            return NULL;
        }
        k = heap;
    }
    memcpy(k, p, pn);
    k[pn] = '\x1f';
    memcpy(k + pn + 1, t, tn);
    size_t before = m->thread_keys.n;
    uint32_t id = cvt_strtab_intern(&m->thread_keys, k, pn + tn + 1);
    free(heap);
    if (!id) {
        oom(m);
        return NULL;
    }
    if (m->thread_keys.n == before)
        return &m->th[id - 1];
    if (cvt_grow((void **)&m->th, &m->thcap, m->nth + 1, sizeof *m->th)) {
        oom(m);
        return NULL;
    }
    thread *th = &m->th[m->nth++];
    memset(th, 0, sizeof *th);
    th->pid = pid_of(m, p, pn);
    const char *full = cvt_strtab_get(&m->thread_keys, id);
    th->pid_txt = cvt_strtab_get(&m->pids, th->pid);
    th->tid_txt = full + pn + 1;
    return m->fail ? NULL : th;
}

static uint32_t intern_name(imp *m, const char *s, size_t len, const char *what)
{
    int cut;
    size_t n = cvt_name_clean(m->namebuf, s, len, &cut);
    if (cut)
        cvt_warn(&m->d, W_NAMECUT,
                 "%s name cut to %zu bytes (at a NUL byte or the format's "
                 "limit of %u bytes)", what, n, CVT_NAME_MAX);
    uint32_t id = cvt_strtab_intern(&m->names, m->namebuf, n);
    if (!id)
        oom(m);
    return id;
}

/* ---- event dispatch ---------------------------------------------------- */

static const arg *find_arg(const cur_event *e, const char *k)
{
    size_t kl = strlen(k);
    for (size_t i = 0; i < e->nargs; i++)
        if (e->args[i].klen == kl && memcmp(e->buf + e->args[i].key, k, kl) == 0)
            return &e->args[i];
    return NULL;
}

static int cat_is(const cur_event *e, const char *c)
{
    return e->has_cat && e->cat_len == strlen(c) &&
           memcmp(e->buf + e->cat, c, e->cat_len) == 0;
}

static void put_rec(imp *m, thread *th, char ph, int64_t ts, int64_t dur,
                    uint32_t name)
{
    if (cvt_grow((void **)&th->r, &th->cap, th->nr + 1, sizeof *th->r)) {
        oom(m);
        return;
    }
    th->r[th->nr++] = (rec){ts, dur, m->seq, name, (uint8_t)ph};
    int64_t last = ph == 'X' && dur != DUR_UNFINISHED ? ts + dur : ts;
    if (!th->any_ts || last > th->last_ts)
        th->last_ts = last;
    th->any_ts = 1;
}

static void on_metadata(imp *m)
{
    cur_event *e = &m->ev;
    const char *n = e->has_name ? e->buf + e->name : "";
    int is_thread = strcmp(n, "thread_name") == 0;
    int is_process = strcmp(n, "process_name") == 0;
    if (!is_thread && !is_process)
        return; /* sort indices, labels...: nothing to keep */
    const arg *a = find_arg(e, "name");
    if (!a || !a->is_str)
        return;
    int cut;
    size_t len = cvt_name_clean(m->namebuf, e->buf + a->val, a->vlen, &cut);
    char *copy = malloc(len + 1);
    if (!copy) {
        oom(m);
        return;
    }
    memcpy(copy, m->namebuf, len + 1);
    if (is_thread) {
        thread *th = thread_of(m);
        if (!th) {
            free(copy);
            return;
        }
        free(th->tname);
        th->tname = copy;
    } else {
        const char *p = e->has_pid ? e->buf + e->pid : "0";
        uint32_t pid = pid_of(m, p, e->has_pid ? e->pid_len : 1);
        if (!pid) {
            free(copy);
            return;
        }
        free(m->pname[pid - 1]);
        m->pname[pid - 1] = copy;
    }
}

static void on_counter(imp *m)
{
    cur_event *e = &m->ev;
    const char *n = e->has_name ? e->buf + e->name : "";
    if (e->ts_state != 1) {
        cvt_warn(&m->d, W_NOTS, "counter '%s' has no valid ts; skipped", n);
        return;
    }
    size_t numeric = 0;
    for (size_t i = 0; i < e->nargs; i++)
        numeric += e->args[i].is_num;
    if (!numeric) {
        cvt_warn(&m->d, W_COUNTER,
                 "counter '%s' at ts %.3f us has no numeric args; skipped", n,
                 (double)e->ts / 1000.0);
        return;
    }
    for (size_t i = 0; i < e->nargs; i++) {
        const arg *a = &e->args[i];
        if (!a->is_num)
            continue;
        uint32_t id;
        if (numeric == 1) {
            id = intern_name(m, n, strlen(n), "counter");
        } else {
            size_t nl = strlen(n);
            char *full = malloc(nl + 1 + a->klen + 1);
            if (!full) {
                oom(m);
                return;
            }
            memcpy(full, n, nl);
            full[nl] = '.';
            memcpy(full + nl + 1, e->buf + a->key, a->klen);
            id = intern_name(m, full, nl + 1 + a->klen, "counter");
            free(full);
        }
        if (!id)
            return;
        double v = strtod(e->buf + a->val, NULL);
        if (cvt_grow((void **)&m->ctr, &m->ctrcap, m->nctr + 1,
                     sizeof *m->ctr)) {
            oom(m);
            return;
        }
        m->ctr[m->nctr] = (counter_rec){e->ts, m->nctr, id, v};
        m->nctr++;
    }
}

static void on_frame_event(imp *m)
{
    cur_event *e = &m->ev;
    if (e->ts_state != 1 || e->dur_state != 1 || e->dur < 0) {
        cvt_warn(&m->d, W_FRAME,
                 "libcapture.frame event without a valid ts and dur; "
                 "skipped");
        return;
    }
    thread *th = thread_of(m);
    if (!th)
        return;
    th->frame_events++;
    const arg *a = find_arg(e, "index");
    uint64_t index = m->nfr ? m->fr[m->nfr - 1].index + 1 : 0;
    if (a && a->is_num) {
        char *end;
        unsigned long long v = strtoull(e->buf + a->val, &end, 10);
        if (*end == '\0' && e->buf[a->val] != '-')
            index = v;
    }
    if (cvt_grow((void **)&m->fr, &m->frcap, m->nfr + 1, sizeof *m->fr)) {
        oom(m);
        return;
    }
    m->fr[m->nfr++] = (frame_rec){e->ts, e->ts + e->dur, index, m->seq};
}

static void on_event(imp *m)
{
    cur_event *e = &m->ev;
    m->seq++;
    if (!e->ph_ok) {
        m->phase_count[0]++;
        return;
    }
    char ph = e->ph;
    if (ph == 'M') {
        on_metadata(m);
        return;
    }
    if (ph == 'C') {
        on_counter(m);
        return;
    }
    if (ph != 'B' && ph != 'E' && ph != 'X') {
        unsigned char c = (unsigned char)ph;
        m->phase_count[c > 32 && c < 127 ? c : 0]++;
        return;
    }
    const char *nm = e->has_name ? e->buf + e->name : NULL;
    if (e->ts_state != 1) {
        cvt_warn(&m->d, W_NOTS, "%c event '%s' has %s ts; skipped", ph,
                 nm ? nm : "(no name)", e->ts_state ? "a non-numeric" : "no");
        return;
    }
    if (ph == 'X' && cat_is(e, "libcapture.frame")) {
        on_frame_event(m);
        return;
    }
    int64_t dur = 0;
    if (ph == 'X') {
        if (e->dur_state == 1) {
            dur = e->dur;
            if (dur < 0) {
                cvt_warn(&m->d, W_NODUR,
                         "X event '%s' at %.3f us has a negative dur; "
                         "imported with zero duration", nm ? nm : "(no name)",
                         (double)e->ts / 1000.0);
                dur = 0;
            }
        } else {
            dur = DUR_UNFINISHED;
            cvt_warn(&m->d, W_NODUR,
                     "X event '%s' at %.3f us has %s dur (it had not "
                     "finished when the trace ended); closed at the thread's "
                     "last timestamp", nm ? nm : "(no name)",
                     (double)e->ts / 1000.0,
                     e->dur_state ? "a non-numeric" : "no");
        }
    }
    uint32_t name = 0;
    if (nm && e->name_len > 0) {
        name = intern_name(m, nm, e->name_len, "scope");
        if (!name)
            return;
    } else if (ph != 'E') {
        m->unnamed_events++;
        cvt_warn(&m->d, W_NONAME,
                 "%c event at %.3f us has no name; imported as an unnamed "
                 "scope", ph, (double)e->ts / 1000.0);
    }
    thread *th = thread_of(m);
    if (th)
        put_rec(m, th, ph, e->ts, dur, name);
}

/* ---- yajl callbacks ---------------------------------------------------- */

#define TOP(m) ((m)->st[(m)->sp])

static int push(imp *m, enum st s)
{
    if (m->sp + 1 >= (int)(sizeof m->st / sizeof m->st[0]))
        return 0;
    m->st[++m->sp] = s;
    return 1;
}

static int key_is(const imp *m, const char *k)
{
    return m->key_ok && m->key_len == strlen(k) && memcmp(m->key, k, m->key_len) == 0;
}

/* A scalar (kind 'n' number, 's' string, 'b' bool, 'z' null) arrived. */
static int scalar(imp *m, char kind, const char *s, size_t len)
{
    if (m->skip)
        return 1;
    cur_event *e = &m->ev;
    switch (TOP(m)) {
    case ST_TOP:
        snprintf(m->failmsg, sizeof m->failmsg,
                 "not a Chrome trace: the JSON is a single value, not an "
                 "array or an object with \"traceEvents\"");
        m->fail = 2;
        return 0;
    case ST_ROOT:
        if (key_is(m, "displayTimeUnit") && kind == 's') {
            free(m->dtu);
            m->dtu = strndup(s, len);
            if (!m->dtu)
                oom(m);
        }
        return !m->fail;
    case ST_EVENTS:
        m->nonobject++;
        return 1;
    case ST_EVENT:
        if (!m->key_ok)
            return 1;
        if (key_is(m, "ph")) {
            e->ph_ok = kind == 's' && len == 1;
            e->ph = len ? s[0] : 0;
        } else if (key_is(m, "name")) {
            if (kind == 's' || kind == 'n') {
                e->name = ev_put(m, s, len);
                e->name_len = len;
                e->has_name = 1;
            } else {
                e->has_name = 0;
            }
        } else if (key_is(m, "cat")) {
            if (kind == 's') {
                e->cat = ev_put(m, s, len);
                e->cat_len = len;
                e->has_cat = 1;
            }
        } else if (key_is(m, "pid") || key_is(m, "tid")) {
            if (kind == 's' || kind == 'n') {
                size_t at = ev_put(m, s, len);
                if (m->key[0] == 'p')
                    e->pid = at, e->pid_len = len, e->has_pid = 1;
                else
                    e->tid = at, e->tid_len = len, e->has_tid = 1;
            }
        } else if (key_is(m, "ts") || key_is(m, "dur")) {
            int64_t v = 0;
            int st = (kind == 's' || kind == 'n') && cvt_parse_us(s, len, &v) == 0
                         ? 1 : -1;
            if (m->key[0] == 't')
                e->ts = v, e->ts_state = st;
            else
                e->dur = v, e->dur_state = st;
        }
        return !m->fail;
    case ST_ARGS:
        if (!m->key_ok || (kind != 's' && kind != 'n'))
            return 1;
        if (e->nargs >= MAX_ARGS) {
            e->args_dropped = 1;
            return 1;
        }
        {
            arg *a = &e->args[e->nargs];
            a->key = ev_put(m, m->key, m->key_len);
            a->klen = m->key_len;
            a->val = ev_put(m, s, len);
            a->vlen = len;
            a->is_str = kind == 's';
            a->is_num = kind == 'n';
            if (kind == 's') { /* a counter given as a numeric string */
                int64_t dummy;
                a->is_num = len > 0 && cvt_parse_us(s, len, &dummy) == 0;
            }
            e->nargs++;
        }
        return !m->fail;
    }
    return 1;
}

static int cb_null(void *u)
{
    return scalar(u, 'z', "", 0);
}

static int cb_bool(void *u, int b)
{
    return scalar(u, 'b', b ? "true" : "false", b ? 4 : 5);
}

static int cb_number(void *u, const char *s, size_t len)
{
    return scalar(u, 'n', s, len);
}

static int cb_string(void *u, const unsigned char *s, size_t len)
{
    return scalar(u, 's', (const char *)s, len);
}

static int cb_key(void *u, const unsigned char *s, size_t len)
{
    imp *m = u;
    if (m->skip)
        return 1;
    m->key_ok = len < sizeof m->key;
    if (m->key_ok) {
        memcpy(m->key, s, len);
        m->key[len] = '\0';
        m->key_len = len;
    }
    return 1;
}

static int cb_start_map(void *u)
{
    imp *m = u;
    if (m->skip) {
        m->skip++;
        return 1;
    }
    switch (TOP(m)) {
    case ST_TOP:
        push(m, ST_ROOT);
        m->key_ok = 0;
        return 1;
    case ST_EVENTS:
        push(m, ST_EVENT);
        ev_reset(&m->ev);
        m->key_ok = 0;
        return 1;
    case ST_EVENT:
        if (key_is(m, "args")) {
            push(m, ST_ARGS);
            m->key_ok = 0;
            return 1;
        }
        m->skip = 1;
        return 1;
    case ST_ROOT:
        if (key_is(m, "stackFrames") || key_is(m, "samples"))
            m->sampled = 1;
        m->skip = 1;
        return 1;
    default:
        m->skip = 1;
        return 1;
    }
}

static int cb_start_array(void *u)
{
    imp *m = u;
    if (m->skip) {
        m->skip++;
        return 1;
    }
    if (TOP(m) == ST_TOP ||
        (TOP(m) == ST_ROOT && key_is(m, "traceEvents") && !m->seen_events)) {
        push(m, ST_EVENTS);
        m->seen_events = 1;
        return 1;
    }
    if (TOP(m) == ST_EVENTS)
        m->nonobject++;
    if (TOP(m) == ST_ROOT && (key_is(m, "samples") || key_is(m, "stackFrames")))
        m->sampled = 1;
    m->skip = 1;
    return 1;
}

static int cb_end(void *u)
{
    imp *m = u;
    if (m->skip) {
        m->skip--;
        return 1;
    }
    enum st s = TOP(m);
    if (m->sp > 0)
        m->sp--;
    if (s == ST_EVENT)
        on_event(m);
    else if (s == ST_EVENTS)
        m->events_closed = 1;
    else if (s == ST_ROOT)
        m->root_done = 1;
    if (s == ST_EVENTS && TOP(m) == ST_TOP)
        m->root_done = 1;
    m->key_ok = 0;
    return !m->fail;
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* ---- nesting ----------------------------------------------------------- */

typedef struct ival {
    int64_t start, end;  /* end as given (or repaired for B/E) */
    uint64_t seq;        /* file order of the B or X event */
    uint64_t open_ord, close_ord; /* B/E only: order of the stack moves */
    uint32_t name;
    uint8_t be;          /* from a B/E pair */
} ival;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *nm(const imp *m, uint32_t id)
{
    const char *s = cvt_strtab_get(&m->names, id);
    return s ? s : "(unnamed)";
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

typedef struct be_ctx {
    imp *m;
    const char *tname;
    ival *iv;            /* intervals of the thread being resolved */
    size_t niv, ivcap;
    size_t *stack;       /* indices into iv of open B events */
    size_t nstack, stcap;
    uint64_t ord;
} be_ctx;

static void be_close_top(be_ctx *c, int64_t ts)
{
    ival *v = &c->iv[c->stack[--c->nstack]];
    v->end = ts;
    v->close_ord = c->ord++;
}

/* Match one E event against the open B events (see the repairs in
 * docs/CHROME-TRACE.md): a nameless E or one naming the innermost scope
 * closes it; one naming a scope deeper in the stack closes every scope
 * above that one too; one naming no open scope is ignored. */
static void be_end(be_ctx *c, const rec *e)
{
    imp *m = c->m;
    if (!c->nstack) {
        cvt_warn(&m->d, W_E_UNMATCHED,
                 "thread '%s': E event '%s' at %.3f us has no open B event; "
                 "ignored", c->tname, e->name ? nm(m, e->name) : "",
                 us(e->ts));
        return;
    }
    if (!e->name || c->iv[c->stack[c->nstack - 1]].name == e->name) {
        be_close_top(c, e->ts);
        return;
    }
    size_t k = c->nstack;
    while (k > 0 && c->iv[c->stack[k - 1]].name != e->name)
        k--;
    if (k == 0) {
        cvt_warn(&m->d, W_E_UNMATCHED,
                 "thread '%s': E event '%s' at %.3f us matches no open scope "
                 "(innermost is '%s'); ignored", c->tname, nm(m, e->name),
                 us(e->ts), nm(m, c->iv[c->stack[c->nstack - 1]].name));
        return;
    }
    cvt_warn(&m->d, W_E_DEEPER,
             "thread '%s': E event '%s' at %.3f us ends a scope that is not "
             "the innermost; %zu scope(s) above it ('%s' innermost) closed "
             "at the same time", c->tname, nm(m, e->name), us(e->ts),
             c->nstack - k, nm(m, c->iv[c->stack[c->nstack - 1]].name));
    while (c->nstack >= k)
        be_close_top(c, e->ts);
}

/* Turn the thread's B/E records (sorted) into intervals in c->iv. */
static int resolve_be(be_ctx *c, thread *th)
{
    rec *r = th->r;
    size_t n = th->nr;
    for (size_t i = 0; i < n;) {
        if (r[i].ph == 'B') {
            if (cvt_grow((void **)&c->iv, &c->ivcap, c->niv + 1, sizeof *c->iv) ||
                cvt_grow((void **)&c->stack, &c->stcap, c->nstack + 1,
                         sizeof *c->stack))
                return -1;
            c->iv[c->niv] = (ival){r[i].ts, r[i].ts, r[i].seq, c->ord++, 0,
                                   r[i].name, 1};
            c->stack[c->nstack++] = c->niv++;
            i++;
            continue;
        }
        if (r[i].ph != 'E') {
            i++;
            continue;
        }
        /* a run of E events at one timestamp closes scopes in stack order,
         * each taking the E that names it if there is one */
        size_t j = i;
        while (j < n && r[j].ph == 'E' && r[j].ts == r[i].ts)
            j++;
        size_t left = j - i;
        rec *run = r + i; /* reordered in place */
        while (left) {
            size_t pick = 0;
            if (c->nstack) {
                uint32_t top = c->iv[c->stack[c->nstack - 1]].name;
                size_t named = left, nameless = left;
                for (size_t q = 0; q < left; q++) {
                    if (run[q].name == top && top) {
                        named = q;
                        break;
                    }
                    if (!run[q].name && nameless == left)
                        nameless = q;
                }
                pick = named < left ? named : nameless < left ? nameless : 0;
            }
            rec e = run[pick];
            memmove(run + pick, run + pick + 1, (left - pick - 1) * sizeof *run);
            left--;
            be_end(c, &e);
        }
        i = j;
    }
    if (c->nstack) {
        cvt_warn(&c->m->d, W_UNCLOSED,
                 "thread '%s': %zu B event(s) never ended ('%s' innermost); "
                 "closed at the thread's last timestamp %.3f us",
                 c->tname, c->nstack, nm(c->m, c->iv[c->stack[c->nstack - 1]].name),
                 us(th->last_ts));
        while (c->nstack)
            be_close_top(c, th->last_ts);
    }
    return 0;
}

static int cmp_x(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* longer first */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Nest the thread's intervals into th->nodes (pre-order, with depth).
 * Order: the B/E intervals stay in the order they were opened (their stack
 * order); the X intervals are sorted by (start, longer first, file order);
 * the two lists are merged by the same rule, B/E first on a full tie only
 * when it came first in the file. */
static int nest(be_ctx *c, thread *th)
{
    imp *m = c->m;
    size_t nb = c->niv;
    for (size_t i = 0; i < th->nr; i++) {
        const rec *r = &th->r[i];
        if (r->ph != 'X')
            continue;
        if (cvt_grow((void **)&c->iv, &c->ivcap, c->niv + 1, sizeof *c->iv))
            return -1;
        int64_t end = r->dur != DUR_UNFINISHED ? r->ts + r->dur
                      : th->last_ts > r->ts ? th->last_ts : r->ts;
        c->iv[c->niv++] = (ival){r->ts, end, r->seq, 0, 0, r->name, 0};
    }
    if (c->niv > nb) /* c->iv is NULL when the thread has no interval */
        cvt_sort(c->iv + nb, c->niv - nb, sizeof *c->iv, cmp_x);
    size_t *order = malloc((c->niv ? c->niv : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0, a = 0, b = nb; i < c->niv; i++) {
        if (a < nb && (b >= c->niv || cmp_x(&c->iv[a], &c->iv[b]) <= 0))
            order[i] = a++;
        else
            order[i] = b++;
    }
    th->nodes = malloc((c->niv ? c->niv : 1) * sizeof *th->nodes);
    if (!th->nodes) {
        free(order);
        return -1;
    }
    /* the stack holds indices into iv; iv[].end is clipped in place */
    c->nstack = 0;
    if (cvt_grow((void **)&c->stack, &c->stcap, c->niv + 1, sizeof *c->stack))
        return -1;
    size_t out = 0;
    uint64_t deep = 0, clipped = 0;
    int64_t clipped_ns = 0;
    for (size_t oi = 0; oi < c->niv; oi++) {
        size_t i = order[oi];
        ival *v = &c->iv[i];
        while (c->nstack) {
            const ival *t = &c->iv[c->stack[c->nstack - 1]];
            if (v->start < t->end)
                break;
            if (v->start == t->end && v->be && t->be &&
                t->open_ord < v->open_ord && v->close_ord < t->close_ord)
                break; /* an empty B/E pair at the very end of its parent */
            c->nstack--;
        }
        if (c->nstack) {
            const ival *t = &c->iv[c->stack[c->nstack - 1]];
            if (v->end > t->end) {
                cvt_warn(&m->d, W_CLIP,
                         "thread '%s': '%s' [%.3f, %.3f] us overlaps the end "
                         "of its parent '%s' at %.3f us; clipped to end "
                         "there", c->tname, nm(m, v->name), us(v->start),
                         us(v->end), nm(m, t->name), us(t->end));
                clipped++;
                if (__builtin_add_overflow(clipped_ns, v->end - t->end,
                                           &clipped_ns))
                    clipped_ns = INT64_MAX;
                v->end = t->end;
            }
        }
        if (c->nstack >= CAP_MAX_DEPTH) {
            deep++;
            continue;
        }
        th->nodes[out++] = (node){v->start, v->end, v->name,
                                  (uint32_t)c->nstack};
        c->stack[c->nstack++] = i;
    }
    free(order);
    if (clipped)
        cvt_warn(&m->d, W_CLIPSUM,
                 "thread '%s': %llu overlapping scope(s) clipped, %.3f ms "
                 "of their time removed in all", c->tname,
                 (unsigned long long)clipped, (double)clipped_ns / 1e6);
    if (deep)
        cvt_warn(&m->d, W_DEPTH,
                 "thread '%s': %llu scope(s) nested deeper than %u levels "
                 "left out", c->tname, (unsigned long long)deep,
                 CAP_MAX_DEPTH);
    th->nnodes = out;
    return 0;
}

/* ---- thread names ------------------------------------------------------ */

/* "process/thread" from metadata; see docs/CHROME-TRACE.md. */
static char *display_name(const imp *m, const thread *th)
{
    const char *pn = m->pname[th->pid - 1];
    const char *tn = th->tname && th->tname[0] ? th->tname : NULL;
    if (pn && !pn[0])
        pn = NULL; /* an empty name is no name: the pid and tid are kept */
    size_t len = (pn ? strlen(pn) : strlen(th->pid_txt)) +
                 (tn ? strlen(tn) : strlen(th->tid_txt)) + 2;
    char *s = malloc(len);
    if (!s)
        return NULL;
    if (pn && tn)
        snprintf(s, len, "%s/%s", pn, tn);
    else if (tn)
        snprintf(s, len, "%s", tn);
    else
        snprintf(s, len, "%s/%s", pn ? pn : th->pid_txt, th->tid_txt);
    if (strlen(s) > CVT_NAME_MAX) {
        int cut;
        char *c = malloc(CVT_NAME_MAX + 1);
        if (!c) {
            free(s);
            return NULL;
        }
        cvt_name_clean(c, s, strlen(s), &cut);
        free(s);
        s = c;
    }
    return s;
}

/* ---- writing ----------------------------------------------------------- */

typedef struct cursor {  /* walks one thread's nodes as begin/end events */
    const thread *th;
    size_t next;         /* next node to begin */
    size_t *open;        /* indices of open nodes */
    size_t nopen, cap;
} cursor;

/* time and class of the cursor's next event; class 0 end, 4 begin */
static int cursor_peek(const cursor *c, int64_t *t, int *cls)
{
    const node *nd = c->th->nodes;
    if (c->nopen &&
        (c->next >= c->th->nnodes || nd[c->next].depth < c->nopen)) {
        *t = nd[c->open[c->nopen - 1]].end;
        *cls = 0;
        return 1;
    }
    if (c->next < c->th->nnodes) {
        *t = nd[c->next].begin;
        *cls = 4;
        return 1;
    }
    return 0;
}

typedef struct heap_ent {
    int64_t t;
    int cls;
    uint32_t idx;
} heap_ent;

static int heap_less(const heap_ent *a, const heap_ent *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->cls != b->cls)
        return a->cls < b->cls;
    return a->idx < b->idx;
}

static void heap_push(heap_ent *h, size_t *n, heap_ent e)
{
    size_t i = (*n)++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!heap_less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static heap_ent heap_pop(heap_ent *h, size_t *n)
{
    heap_ent top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        const heap_ent *best = &last;
        if (l < *n && heap_less(&h[l], best))
            s = l, best = &h[l];
        if (r < *n && heap_less(&h[r], best))
            s = r;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*n)
        h[i] = last;
    return top;
}

static int cmp_counter(const void *a, const void *b)
{
    const counter_rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_frame(const void *a, const void *b)
{
    const frame_rec *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct gpu_batch {
    uint32_t track;      /* index in wctx.gpus */
    size_t first, n;     /* nodes of that GPU thread */
    uint64_t frame;
    int64_t t;
} gpu_batch;

typedef struct wctx {
    imp *m;
    cap_writer *w;
    const char *out;
    uint32_t *remap;     /* interned id -> capture id (0: unused) */
    uint32_t unnamed;    /* the capture id of nameless scopes */
    int64_t shift;       /* added to every time (0 unless some ts < 0) */
    thread *gpus[16];    /* --gpu-thread threads, track = index */
    size_t ngpu;
    gpu_batch *gb;
    size_t ngb;
    frame_rec *frames;   /* the frames to write */
    size_t nframes;
    cap_gpu_span *spans;
} wctx;

static int wfail(wctx *x, cap_result r, const char *what)
{
    if (r == CAP_E_IO || r == CAP_E_STOPPED)
        cvt_error(&x->m->d, "cannot write %s: %s (%s)", x->out,
                  strerror(cap_writer_errno(x->w) ? cap_writer_errno(x->w) : EIO),
                  what);
    else
        cvt_error(&x->m->d, "cannot write %s: %s (%s)", x->out,
                  cap_result_message(r), what);
    return CAP_E_IO;
}

static uint32_t out_name(const wctx *x, uint32_t id)
{
    return id ? x->remap[id] : x->unnamed;
}

static uint64_t tick(const wctx *x, int64_t ns)
{
    return (uint64_t)(ns + x->shift);
}

static int write_gpu_batch(wctx *x, const gpu_batch *b)
{
    const node *nd = x->gpus[b->track]->nodes + b->first;
    int32_t parent_at[CAP_MAX_DEPTH];
    for (size_t i = 0; i < b->n; i++) {
        uint32_t d = nd[i].depth;
        x->spans[i] = (cap_gpu_span){out_name(x, nd[i].name),
                                     d ? parent_at[d - 1] : -1,
                                     tick(x, nd[i].begin), tick(x, nd[i].end),
                                     1};
        parent_at[d] = (int32_t)i;
    }
    cap_result r = cap_writer_gpu_frame(x->w, b->track, b->frame, x->spans,
                                        b->n);
    return r == CAP_OK ? 0 : wfail(x, r, "GPU spans");
}

/* The index of the frame in progress at t (the last one begun), 0 when
 * there are no frames; *f is a cursor that only moves forward. */
static uint64_t frame_at(const wctx *x, size_t *f, int64_t t)
{
    if (!x->nframes)
        return 0;
    while (*f + 1 < x->nframes && x->frames[*f + 1].begin <= t)
        (*f)++;
    return x->frames[*f].index;
}

/* Split the GPU thread's nodes into batches: whole span trees, one CPU
 * frame per batch (the frame in progress when the tree's root began), at
 * most CAP_MAX_GPU_SPANS spans each. A single tree larger than that is cut,
 * and the spans after the cut lose their parents (with a warning). */
/* GPU batches of several tracks in the order they are written: by time,
 * then track, then position (each track's own order is kept). */
static int cmp_batch(const void *a, const void *b)
{
    const gpu_batch *p = a, *q = b;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    if (p->track != q->track)
        return p->track < q->track ? -1 : 1;
    return p->first < q->first ? -1 : p->first > q->first;
}

static int plan_gpu(wctx *x, uint32_t track, size_t *cap)
{
    thread *g = x->gpus[track];
    size_t f = 0;
    for (size_t i = 0; i < g->nnodes;) {
        uint64_t frame = frame_at(x, &f, g->nodes[i].begin);
        size_t j = i;
        while (j < g->nnodes) {
            size_t e = j + 1; /* the tree rooted at j is [j, e) */
            while (e < g->nnodes && g->nodes[e].depth > 0)
                e++;
            if (j > i) {
                size_t f2 = f;
                if (frame_at(x, &f2, g->nodes[j].begin) != frame ||
                    e - i > CAP_MAX_GPU_SPANS)
                    break;
            } else if (e - j > CAP_MAX_GPU_SPANS) {
                cvt_warn(&x->m->d, W_GPU,
                         "GPU thread: a span tree holds more than %u spans; "
                         "it is cut and the spans after the cut lose their "
                         "parents", CAP_MAX_GPU_SPANS);
                e = j + CAP_MAX_GPU_SPANS;
                uint32_t base = g->nodes[e].depth;
                for (size_t k = e; k < g->nnodes && g->nodes[k].depth > 0; k++) {
                    if (g->nodes[k].depth < base)
                        base = g->nodes[k].depth;
                    g->nodes[k].depth -= base;
                }
                j = e;
                break;
            }
            j = e;
        }
        /* written once its last span and its CPU frame have ended, as a
         * live producer would */
        int64_t t = g->nodes[i].begin;
        for (size_t k = i; k < j; k++)
            if (g->nodes[k].end > t)
                t = g->nodes[k].end;
        if (x->nframes && x->frames[f].index == frame && x->frames[f].end > t)
            t = x->frames[f].end;
        if (cvt_grow((void **)&x->gb, cap, x->ngb + 1, sizeof *x->gb))
            return -1;
        x->gb[x->ngb++] = (gpu_batch){track, i, j - i, frame, t};
        i = j;
    }
    return 0;
}

static int write_all(wctx *x)
{
    imp *m = x->m;
    size_t nth = 0;
    for (size_t i = 0; i < m->nth; i++)
        nth += m->th[i].declared;
    cursor *cur = calloc(nth ? nth : 1, sizeof *cur);
    heap_ent *heap = malloc((nth ? nth : 1) * sizeof *heap);
    size_t nh = 0;
    int rc = 0;
    if (!cur || !heap) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    for (size_t i = 0, k = 0; i < m->nth; i++) {
        if (!m->th[i].declared)
            continue;
        cur[k].th = &m->th[i];
        int64_t t;
        int cls;
        if (cursor_peek(&cur[k], &t, &cls))
            heap_push(heap, &nh, (heap_ent){t, cls, (uint32_t)k});
        k++;
    }
    size_t fi = 0, ci = 0, gi = 0;
    for (;;) {
        /* candidates: heap top, next frame (at its end, class 1), next GPU
         * batch (class 2), next counter (class 3) */
        heap_ent best = {0, 99, 0};
        int src = -1;
        if (nh)
            best = heap[0], src = 0;
        heap_ent c;
        if (fi < x->nframes) {
            c = (heap_ent){x->frames[fi].end, 1, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 1;
        }
        if (gi < x->ngb) {
            c = (heap_ent){x->gb[gi].t, 2, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 2;
        }
        if (ci < m->nctr) {
            c = (heap_ent){m->ctr[ci].ts, 3, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 3;
        }
        if (src < 0)
            break;
        cap_result r = CAP_OK;
        if (src == 1) {
            const frame_rec *f = &x->frames[fi++];
            r = cap_writer_frame(x->w, f->index, tick(x, f->begin),
                                 tick(x, f->end));
            if (r != CAP_OK) {
                rc = wfail(x, r, "frame");
                goto done;
            }
        } else if (src == 2) {
            if ((rc = write_gpu_batch(x, &x->gb[gi++])) != 0)
                goto done;
        } else if (src == 3) {
            const counter_rec *k = &m->ctr[ci++];
            r = cap_writer_counter(x->w, out_name(x, k->name), tick(x, k->ts),
                                   k->value);
            if (r != CAP_OK) {
                rc = wfail(x, r, "counter");
                goto done;
            }
        } else {
            heap_ent e = heap_pop(heap, &nh);
            cursor *cu = &cur[e.idx];
            const node *nd = cu->th->nodes;
            uint32_t tid = cu->th->out_tid;
            if (e.cls == 0) {
                cu->nopen--;
                r = cap_writer_scope_end(x->w, tid, tick(x, e.t));
            } else {
                if (cvt_grow((void **)&cu->open, &cu->cap, cu->nopen + 1,
                             sizeof *cu->open)) {
                    rc = CAP_E_NOMEM;
                    goto done;
                }
                cu->open[cu->nopen++] = cu->next;
                r = cap_writer_scope_begin(x->w, tid,
                                           out_name(x, nd[cu->next].name),
                                           tick(x, e.t));
                cu->next++;
            }
            if (r != CAP_OK) {
                rc = wfail(x, r, "scope");
                goto done;
            }
            int64_t t;
            int cls;
            if (cursor_peek(cu, &t, &cls))
                heap_push(heap, &nh, (heap_ent){t, cls, e.idx});
        }
    }
done:
    if (cur)
        for (size_t i = 0; i < nth; i++)
            free(cur[i].open);
    free(cur);
    free(heap);
    return rc;
}

/* Choose the frames: --frame-scope NAME wins over libcapture.frame events. */
static int plan_frames(wctx *x)
{
    imp *m = x->m;
    const char *fs = m->o ? m->o->frame_scope : NULL;
    if (!fs) {
        cvt_sort(m->fr, m->nfr, sizeof *m->fr, cmp_frame);
        size_t k = 0;
        for (size_t i = 0; i < m->nfr; i++) {
            if (k && m->fr[i].index == m->fr[k - 1].index) {
                cvt_warn(&m->d, W_FRAME, "frame %llu given twice; the second "
                         "is ignored", (unsigned long long)m->fr[i].index);
                continue;
            }
            m->fr[k++] = m->fr[i];
        }
        x->frames = m->fr;
        x->nframes = k;
        return 0;
    }
    if (m->nfr)
        cvt_warn(&m->d, W_FRAME, "%zu libcapture.frame event(s) ignored: "
                 "--frame-scope gives the frames", m->nfr);
    /* which names are frames: NAME exactly, or every name the glob NAME
     * matches (numbered steps such as ProfilerStep#12) */
    int cut;
    size_t fl = cvt_name_clean(m->namebuf, fs, strlen(fs), &cut);
    uint32_t exact = cvt_strtab_find(&m->names, m->namebuf, fl);
    unsigned char *is_frame = calloc(m->names.n + 1, 1);
    if (!is_frame)
        return -1;
    size_t nmatch = 0;
    for (uint32_t id = 1; id <= m->names.n; id++)
        if (id == exact || fnmatch(fs, m->names.str[id - 1], 0) == 0)
            is_frame[id] = 1, nmatch++;
#define IS_FRAME(id) ((id) != 0 && is_frame[(id)])
    size_t best = SIZE_MAX, bestn = 0, total = 0;
    for (size_t i = 0; nmatch && i < m->nth; i++) {
        const thread *th = &m->th[i];
        if (!th->declared)
            continue;
        size_t n = 0;
        long inside = -1;
        for (size_t k = 0; k < th->nnodes; k++) {
            if (inside >= 0 && th->nodes[k].depth <= (uint32_t)inside)
                inside = -1;
            if (inside < 0 && IS_FRAME(th->nodes[k].name)) {
                n++;
                inside = th->nodes[k].depth;
            }
        }
        total += n;
        if (n > bestn)
            best = i, bestn = n;
    }
    if (!bestn) {
        free(is_frame);
        cvt_warn(&m->d, W_FRAME, "no scope named '%s' on a CPU thread; the "
                 "capture has no frames", fs);
        x->nframes = 0;
        return 0;
    }
    const thread *th = &m->th[best];
    free(m->fr);
    m->fr = malloc(bestn * sizeof *m->fr);
    if (!m->fr) {
        free(is_frame);
        return -1;
    }
    m->frcap = bestn;
    size_t n = 0;
    long inside = -1;
    for (size_t k = 0; k < th->nnodes; k++) {
        const node *nd = &th->nodes[k];
        if (inside >= 0 && nd->depth <= (uint32_t)inside)
            inside = -1;
        if (inside < 0 && IS_FRAME(nd->name)) {
            m->fr[n] = (frame_rec){nd->begin, nd->end, n, 0};
            n++;
            inside = nd->depth;
        }
    }
#undef IS_FRAME
    free(is_frame);
    m->nfr = n;
    x->frames = m->fr;
    x->nframes = n;
    if (total > bestn) {
        char *dn = display_name(m, th);
        cvt_warn(&m->d, W_FRAME, "'%s' occurs on several threads: frames "
                 "taken from thread '%s' (%zu occurrences), %zu elsewhere "
                 "ignored", fs, dn ? dn : "?", bestn, total - bestn);
        free(dn);
    }
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int write_capture(imp *m, const char *in, const char *out)
{
    wctx x = {0};
    x.m = m;
    x.out = out;
    int rc = 0;
    cap_result r;
    char **dn = calloc(m->nth ? m->nth : 1, sizeof *dn);
    if (!dn)
        return CAP_E_NOMEM;

    /* which threads become what */
    for (size_t i = 0; i < m->nth; i++) {
        m->th[i].gpu_track = -1;
        dn[i] = display_name(m, &m->th[i]);
        if (!dn[i]) {
            rc = CAP_E_NOMEM;
            goto done;
        }
    }
    size_t ngname = m->o ? m->o->n_gpu_threads : 0;
    for (size_t g = 0; g < ngname && g < sizeof x.gpus / sizeof *x.gpus; g++) {
        const char *gname = m->o->gpu_threads[g];
        thread *found = NULL;
        for (size_t i = 0; i < m->nth && !found; i++)
            if (strcmp(dn[i], gname) == 0 ||
                (m->th[i].tname && strcmp(m->th[i].tname, gname) == 0))
                found = &m->th[i];
        if (!found) {
            cvt_error(&m->d, "no thread named '%s' for --gpu-thread", gname);
            rc = CAP_E_MISUSE;
            goto done;
        }
        if (found->gpu_track >= 0) {
            cvt_error(&m->d, "--gpu-thread '%s' names the same thread as "
                      "an earlier --gpu-thread", gname);
            rc = CAP_E_MISUSE;
            goto done;
        }
        found->gpu_track = (int)x.ngpu;
        x.gpus[x.ngpu++] = found;
    }
    uint32_t ntid = 0;
    for (size_t i = 0; i < m->nth; i++) {
        thread *th = &m->th[i];
        if (th->gpu_track >= 0 || (th->frame_events && !th->nr))
            continue;
        if (ntid >= CAP_MAX_THREADS) {
            cvt_error(&m->d, "more than %u threads: the capture format "
                      "cannot hold them", CAP_MAX_THREADS);
            rc = CAP_E_LIMIT;
            goto done;
        }
        th->declared = 1;
        th->out_tid = ntid++;
    }
    if (plan_frames(&x) != 0) {
        rc = CAP_E_NOMEM;
        goto done;
    }

    /* names: dense ids for the names in use, one more for nameless scopes */
    x.remap = calloc(m->names.n + 1, sizeof *x.remap);
    if (!x.remap) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    int64_t tmin = 0;
    int any_unnamed = 0;
    for (size_t i = 0; i < m->nth; i++) {
        const thread *th = &m->th[i];
        if (!th->declared && th->gpu_track < 0)
            continue;
        for (size_t k = 0; k < th->nnodes; k++) {
            if (th->nodes[k].name)
                x.remap[th->nodes[k].name] = 1;
            else
                any_unnamed = 1;
            if (th->nodes[k].begin < tmin)
                tmin = th->nodes[k].begin;
        }
    }
    for (size_t i = 0; i < m->nctr; i++) {
        x.remap[m->ctr[i].name] = 1;
        if (m->ctr[i].ts < tmin)
            tmin = m->ctr[i].ts;
    }
    for (size_t i = 0; i < x.nframes; i++)
        if (x.frames[i].begin < tmin)
            tmin = x.frames[i].begin;
    if (tmin < 0) {
        x.shift = -tmin;
        cvt_warn(&m->d, W_NEGATIVE, "timestamps before 0 us: every time is "
                 "shifted by %.3f us so that the earliest is 0", us(x.shift));
    }
    uint32_t nid = 0;
    for (size_t i = 1; i <= m->names.n; i++)
        if (x.remap[i])
            x.remap[i] = ++nid;
    x.unnamed = any_unnamed ? nid + 1 : 0;

    cap_meta_kv meta[4];
    size_t nmeta = 0;
    meta[nmeta++] = (cap_meta_kv){"source", "chrome-trace"};
    meta[nmeta++] = (cap_meta_kv){"source_file", base_name(in)};
    if (m->dtu)
        meta[nmeta++] = (cap_meta_kv){"chrome.displayTimeUnit", m->dtu};
    cap_writer_options wo = {0};
    wo.meta = meta;
    wo.meta_count = nmeta;
    wo.clock_source = "imported";
    wo.tick_period_ns = 1.0;
    wo.format_major = m->o ? m->o->format_major : 0;
    wo.format_minor = wo.format_major == 1; /* 1.1: name flags */
    wo.no_frame_list = m->o ? m->o->no_frame_list : 0;
    r = cap_writer_open_path(&x.w, out, &wo);
    if (r != CAP_OK) {
        cvt_error(&m->d, "cannot write %s: %s", out,
                  r == CAP_E_IO ? strerror(errno) : cap_result_message(r));
        rc = CAP_E_IO;
        goto done;
    }
    for (size_t i = 1; i <= m->names.n; i++) {
        if (!x.remap[i])
            continue;
        if ((r = cap_writer_name(x.w, x.remap[i], m->names.str[i - 1], NULL,
                                 0)) != CAP_OK) {
            rc = wfail(&x, r, "names");
            goto done;
        }
    }
    for (size_t i = 0; i < m->nth; i++) {
        if (!m->th[i].declared)
            continue;
        if ((r = cap_writer_thread(x.w, m->th[i].out_tid, dn[i])) != CAP_OK) {
            rc = wfail(&x, r, "threads");
            goto done;
        }
    }
    if (x.ngpu) {
        x.spans = malloc(CAP_MAX_GPU_SPANS * sizeof *x.spans);
        if (!x.spans) {
            rc = CAP_E_NOMEM;
            goto done;
        }
    }
    size_t gbcap = 0;
    for (uint32_t g = 0; g < x.ngpu; g++) {
        thread *gt = x.gpus[g];
        size_t gi = (size_t)(gt - m->th);
        if ((r = cap_writer_gpu_track(x.w, g, dn[gi], 1.0)) != CAP_OK ||
            (r = cap_writer_gpu_calibration(x.w, g, 0, 0, 0)) != CAP_OK) {
            rc = wfail(&x, r, "GPU track");
            goto done;
        }
        size_t zero = 0, longer = 0;
        for (size_t k = 0; k < gt->nnodes; k++) {
            node *nd = &gt->nodes[k];
            if (nd->end <= nd->begin) {
                /* a kernel shorter than the trace's resolution: the
                 * format's shortest measured span is one tick (1 ns) */
                nd->end = nd->begin + 1;
                zero++;
            } else if (nd->end - nd->begin > 1000000000) {
                longer++;
            }
        }
        if (zero)
            cvt_warn(&m->d, W_GPU, "GPU thread '%s': %zu span(s) of zero "
                     "length (shorter than the trace's resolution) are "
                     "recorded as 1 ns", dn[gi], zero);
        if (longer)
            cvt_warn(&m->d, W_GPU, "GPU thread '%s': %zu span(s) longer "
                     "than 1 s are dropped by the capture format (counted "
                     "as invalid)", dn[gi], longer);
        if (plan_gpu(&x, g, &gbcap) != 0) {
            rc = CAP_E_NOMEM;
            goto done;
        }
    }
    if (x.ngpu > 1)
        cvt_sort(x.gb, x.ngb, sizeof *x.gb, cmp_batch);
    cvt_sort(m->ctr, m->nctr, sizeof *m->ctr, cmp_counter);
    rc = write_all(&x);
    if (rc == 0) {
        r = cap_writer_close(x.w);
        x.w = NULL;
        if (r != CAP_OK) {
            cvt_error(&m->d, "cannot write %s: %s", out,
                      r == CAP_E_IO ? "write failed" : cap_result_message(r));
            rc = CAP_E_IO;
        }
    }
done:
    if (x.w)
        cap_writer_abandon(x.w);
    for (size_t i = 0; i < m->nth; i++)
        free(dn[i]);
    free(dn);
    free(x.remap);
    free(x.gb);
    free(x.spans);
    return rc;
}

/* ---- the whole import -------------------------------------------------- */

/* zlib's message without the "PATH: " it puts in front (every diagnostic
 * names the file already). */
static const char *gz_message(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (msg && strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg ? msg : "unknown error";
}

static int parse_file(imp *m, const char *in)
{
    gzFile gz = gzopen(in, "rb");
    if (!gz) {
        cvt_error(&m->d, "cannot open: %s", errno ? strerror(errno) : "gzopen failed");
        return CAP_E_IO;
    }
    gzbuffer(gz, 1 << 17);
    yajl_handle h = yajl_alloc(&callbacks, NULL, m);
    if (!h) {
        gzclose(gz);
        return CAP_E_NOMEM;
    }
    yajl_config(h, yajl_dont_validate_strings, 1);
    unsigned char *buf = malloc(1 << 16);
    int rc = 0;
    uint64_t total = 0, before = 0; /* bytes of JSON, and before the chunk
                                       being parsed */
    yajl_status st = yajl_status_ok;
    if (!buf) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    for (;;) {
        int n = gzread(gz, buf, 1 << 16);
        if (n < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            if (zerr == Z_ERRNO)
                cvt_error(&m->d, "cannot read: %s", strerror(errno));
            else
                cvt_error(&m->d, "gzip error after %llu bytes of JSON: %s",
                          (unsigned long long)total, gz_message(msg, in));
            rc = zerr == Z_ERRNO ? CAP_E_IO : CAP_E_CORRUPT;
            goto done;
        }
        if (n == 0)
            break;
        before = total;
        total += (uint64_t)n;
        st = yajl_parse(h, buf, (size_t)n);
        if (st != yajl_status_ok)
            break;
    }
    {
        /* zlib reports a gzip stream cut short only through gzerror */
        int zerr = Z_OK;
        const char *msg = gzerror(gz, &zerr);
        if (zerr == Z_BUF_ERROR)
            cvt_warn(&m->d, W_OTHER, "gzip: %s: the compressed file is cut "
                     "short after %llu bytes of JSON", gz_message(msg, in),
                     (unsigned long long)total);
    }
    if (m->fail == 1) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    if (m->fail == 2) {
        cvt_error(&m->d, "%s", m->failmsg);
        rc = CAP_E_NOT_CAPTURE;
        goto done;
    }
    int in_chunk = st != yajl_status_ok; /* failed inside yajl_parse */
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (m->fail == 1) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    if (total == 0) {
        cvt_error(&m->d, "not a Chrome trace: the file is empty");
        rc = CAP_E_NOT_CAPTURE;
        goto done;
    }
    if (st != yajl_status_ok) {
        unsigned char *e = yajl_get_error(h, 0, NULL, 0);
        char msg[160];
        snprintf(msg, sizeof msg, "%s", e ? (const char *)e : "parse error");
        if (e)
            yajl_free_error(h, e);
        for (char *p = msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        size_t l = strlen(msg);
        while (l && msg[l - 1] == ' ')
            msg[--l] = '\0';
        /* a premature end inside the event array: a trace cut short */
        int at_eof = m->seen_events && !m->events_closed &&
                     (strstr(msg, "premature EOF") != NULL);
        if (at_eof) {
            cvt_warn(&m->d, W_TRUNC, "the trace is cut short (no closing "
                     "bracket); the %llu complete events before the cut are "
                     "imported", (unsigned long long)m->seq);
        } else if (m->seen_events && m->events_closed &&
                   strstr(msg, "premature EOF")) {
            cvt_warn(&m->d, W_TRUNC, "the trace object is cut short after "
                     "its event array; every event is imported");
        } else {
            /* yajl counts bytes within the chunk it was given */
            unsigned long long at = in_chunk
                ? (unsigned long long)(before + yajl_get_bytes_consumed(h))
                : (unsigned long long)total;
            if (m->seen_events)
                cvt_error(&m->d, "invalid JSON near byte %llu of the "
                          "trace (%s), after %llu events: the file is "
                          "damaged", at, msg, (unsigned long long)m->seq);
            else
                cvt_error(&m->d, "not a Chrome trace: invalid JSON near "
                          "byte %llu (%s)", at, msg);
            rc = CAP_E_CORRUPT;
            goto done;
        }
    }
    if (!m->seen_events) {
        cvt_error(&m->d, "not a Chrome trace: no event array (an array, or "
                  "an object with \"traceEvents\")");
        rc = CAP_E_NOT_CAPTURE;
    }
done:
    free(buf);
    yajl_free(h);
    gzclose(gz);
    return rc;
}

static void report_ignored(imp *m)
{
    static const char *const what[128] = {
        ['I'] = "instant", ['i'] = "instant", ['b'] = "async begin",
        ['e'] = "async end", ['n'] = "async instant", ['S'] = "async begin",
        ['F'] = "async end", ['T'] = "async step", ['p'] = "async step",
        ['s'] = "flow start", ['t'] = "flow step", ['f'] = "flow end",
        ['P'] = "sample", ['N'] = "object created", ['O'] = "object snapshot",
        ['D'] = "object destroyed", ['R'] = "mark", ['c'] = "clock sync",
    };
    for (int p = 33; p < 127; p++)
        if (m->phase_count[p])
            cvt_warn(&m->d, W_PHASE, "%lu event(s) of phase '%c' (%s) not "
                     "imported", m->phase_count[p], p,
                     what[p] ? what[p] : "unknown phase");
    if (m->phase_count[0])
        cvt_warn(&m->d, W_PHASE, "%lu event(s) without a valid \"ph\" not "
                 "imported", m->phase_count[0]);
    if (m->sampled)
        cvt_warn(&m->d, W_PHASE, "sampled stacks (\"samples\", "
                 "\"stackFrames\") are not imported: only trace events are");
    if (m->nonobject)
        cvt_warn(&m->d, W_NONOBJECT, "%lu entries of the event array are "
                 "not objects; ignored", m->nonobject);
}

cap_result cvt_chrome_to_cap(const char *in, const char *out,
                             const cvt_options *o)
{
    imp *m = calloc(1, sizeof *m);
    if (!m) {
        if (o && o->diag)
            fprintf(o->diag, "error: %s: out of memory\n", in);
        return CAP_E_NOMEM;
    }
    m->o = o;
    m->d.out = o ? o->diag : NULL;
    m->d.file = in;
    be_ctx c = {0};
    c.m = m;
    int rc = parse_file(m, in);
    if (rc)
        goto done;
    report_ignored(m);
    for (size_t i = 0; i < m->nth; i++) {
        thread *th = &m->th[i];
        char *dn = display_name(m, th);
        if (!dn) {
            rc = CAP_E_NOMEM;
            goto done;
        }
        c.tname = dn;
        c.niv = c.nstack = 0;
        c.ord = 0;
        /* B/E first (X are kept in th->r and picked up by nest) */
        cvt_sort(th->r, th->nr, sizeof *th->r, cmp_rec);
        int r = resolve_be(&c, th);
        if (!r)
            r = nest(&c, th);
        free(dn);
        free(th->r);
        th->r = NULL;
        if (r) {
            rc = CAP_E_NOMEM;
            goto done;
        }
    }
    rc = write_capture(m, in, out);
done:
    if (rc == CAP_E_NOMEM)
        cvt_error(&m->d, "out of memory");
    cvt_warn_summary(&m->d);
    free(c.iv);
    free(c.stack);
    for (size_t i = 0; i < m->nth; i++) {
        free(m->th[i].r);
        free(m->th[i].tname);
        free(m->th[i].nodes);
    }
    for (size_t i = 0; i < m->npname; i++)
        free(m->pname[i]);
    free(m->pname);
    free(m->th);
    free(m->ctr);
    free(m->fr);
    free(m->dtu);
    free(m->ev.buf);
    cvt_strtab_free(&m->names);
    cvt_strtab_free(&m->thread_keys);
    cvt_strtab_free(&m->pids);
    free(m);
    return rc;
}
