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
#include "chrome_in.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>


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
    int rc = parse_file(m, in);
    if (rc)
        goto done;
    report_ignored(m);
    rc = chrome_build_threads(m);
    if (rc)
        goto done;
    rc = chrome_write_capture(m, in, out);
done:
    if (rc == CAP_E_NOMEM)
        cvt_error(&m->d, "out of memory");
    cvt_warn_summary(&m->d);
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
