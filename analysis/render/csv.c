/* csv.c - RFC 4180 CSV through libcsv: renders report.h's results. */
#include <csv.h>
#include <math.h>
#include <string.h>

#include "render/render.h"

#define MS(ns) ((double)(ns) / 1e6)

void an_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") || (s[0] == ' ') ||
        (s[0] && s[strlen(s) - 1] == ' '))
        csv_fwrite(f, s, strlen(s));
    else
        fputs(s, f);
}

static void num(FILE *f, double v)
{
    if (isnan(v))
        return; /* empty field */
    fprintf(f, "%.6f", v);
}

/* num(f, MS(ns)) for a whole number of ns, without printf for the usual
 * sizes: below 2^52 ns, ns / 1e6 as a double lies within half a unit of
 * the 6th decimal of ns / 10^6 exactly, so "%.6f" prints ns's digits; the
 * same bytes (issue 12: one such field per row of --frames). */
static void num_ns(FILE *f, int64_t ns)
{
    if (ns <= -(INT64_C(1) << 52) || ns >= (INT64_C(1) << 52)) {
        num(f, MS(ns));
        return;
    }
    char buf[32], *p = buf + sizeof buf;
    uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
    for (int i = 0; i < 6; i++, a /= 10)
        *--p = (char)('0' + a % 10);
    *--p = '.';
    do {
        *--p = (char)('0' + a % 10);
        a /= 10;
    } while (a);
    if (ns < 0)
        *--p = '-';
    fwrite(p, 1, (size_t)(buf + sizeof buf - p), f);
}

static void ratio(FILE *f, an_ratio r)
{
    if (r.state == AN_RATIO_VALUE)
        num(f, r.value);
}

static const char *kind_name(an_kind k)
{
    return k == AN_CPU ? "cpu" : "gpu";
}

void an_csv_ranking(FILE *out, const an_ranking *r)
{
    fputs("track,name,calls,total_ms,self_ms,self_ms_per_frame_mean,"
          "self_ms_per_frame_p95,share_pct\n",
          out);
    for (size_t i = 0; i < r->n; i++) {
        const an_rank_row *row = &r->rows[i];
        const an_scope *s = row->scope;
        fprintf(out, "%s,", kind_name(s->kind));
        an_csv_field(out, s->name);
        fprintf(out, ",%llu,", (unsigned long long)s->calls);
        num(out, MS(s->total_ns));
        fputc(',', out);
        num(out, MS(s->self_ns));
        fputc(',', out);
        num(out, row->pf_mean);
        fputc(',', out);
        num(out, row->pf_p95);
        fputc(',', out);
        num(out, row->share_pct);
        fputc('\n', out);
    }
}

void an_csv_tree(FILE *out, const an_tree *t)
{
    fputs("path,depth,track,calls,total_ms,self_ms,share_pct\n", out);
    for (size_t i = 0; i < t->n; i++) {
        const an_tree_row *r = &t->rows[i];
        if (r->depth < 0)
            continue;
        an_csv_field(out, t->paths + r->path_off);
        fprintf(out, ",%d,%s,%llu,", r->depth, kind_name(r->node->kind),
                (unsigned long long)r->node->calls);
        num(out, MS(r->node->total_ns));
        fputc(',', out);
        num(out, MS(r->node->self_ns));
        fputc(',', out);
        num(out, r->share_pct);
        fputc('\n', out);
    }
}

static void summary3(FILE *out, const an_summary *s)
{
    num(out, s->mean);
    fputc(',', out);
    num(out, s->median);
    fputc(',', out);
    num(out, s->p95);
    fputc('\n', out);
}

void an_csv_split(FILE *out, const an_split *s)
{
    static const char *pop_name[2] = {"fast", "slow"};
    fputs("population,kind,track,name,frames,mean_ms,median_ms,p95_ms\n", out);
    if (!s->quarter)
        return;
    for (int p = 0; p < 2; p++) {
        fprintf(out, "%s,frame,,(frame),%zu,", pop_name[p], s->quarter);
        summary3(out, &s->frame[p]);
        fprintf(out, "%s,frame_gpu_ratio,gpu,(frame/gpu),%zu,", pop_name[p],
                s->ratio[p].n);
        summary3(out, &s->ratio[p]);
        for (size_t k = 0; k < s->nscopes; k++) {
            const an_split_scope *x = &s->scopes[k];
            fprintf(out, "%s,scope,%s,", pop_name[p],
                    kind_name(x->scope->kind));
            an_csv_field(out, x->scope->name);
            fprintf(out, ",%zu,", s->quarter);
            summary3(out, &x->pop[p]);
        }
    }
}

void an_csv_over_time(FILE *out, const an_over_time *ot)
{
    fputs("bin,start_s,end_s,kind,track,name,frames,median_ms,p95_ms,mean,"
          "growth\n",
          out);
    for (int b = 0; b < ot->nbins; b++) {
        const an_ot_bin *B = &ot->bins[b];
        fprintf(out, "%d,%.6f,%.6f,frame,,(frame),%zu,", b, B->start_s,
                B->end_s, B->frames);
        num(out, B->frame.median);
        fputc(',', out);
        num(out, B->frame.p95);
        fputc(',', out);
        num(out, B->frame.mean);
        fputc(',', out);
        ratio(out, B->growth);
        fputc('\n', out);
        for (size_t j = 0; j < ot->nscopes; j++) {
            const an_ot_scope *S = &ot->scopes[j];
            fprintf(out, "%d,%.6f,%.6f,scope,%s,", b, B->start_s, B->end_s,
                    kind_name(S->scope->kind));
            an_csv_field(out, S->scope->name);
            fprintf(out, ",%zu,", B->frames);
            num(out, S->median[b]);
            fputc(',', out);
            num(out, S->p95[b]);
            fputs(",,", out);
            /* growth of this bin over the reference */
            ratio(out, an_ratio_of(S->median[b], S->median[ot->ref],
                                   AN_OT_ZERO_MS));
            fputc('\n', out);
        }
        for (size_t c = 0; c < ot->ncounters; c++) {
            const an_ot_counter *C = &ot->counters[c];
            fprintf(out, "%d,%.6f,%.6f,counter,,", b, B->start_s, B->end_s);
            an_csv_field(out, C->name);
            fprintf(out, ",%zu,,,", C->samples[b]);
            num(out, C->mean[b]);
            fputc(',', out);
            ratio(out, an_ratio_of(C->mean[b], C->mean[ot->ref], 0));
            fputc('\n', out);
        }
    }
}

/* A --frames row's first four fields (frame, start_s, frame_ms, gpu_ms) */
static void frame_prefix(FILE *out, const an_frame *fr, int64_t t0)
{
    fprintf(out, "%llu,%.6f,", (unsigned long long)fr->index,
            an_elapsed_ns(t0, fr->begin_ns) / 1e9);
    num(out, MS(an_frame_ns(fr)));
    fputc(',', out);
    num(out, fr->has_gpu ? MS(fr->gpu_ns) : NAN);
}

void an_csv_frames(FILE *out, const an_capture *m, an_frames *f,
                   const an_frame_counters *fc)
{
    fputs("frame,start_s,frame_ms,gpu_ms,track,name,self_ms\n", out);
    size_t n = m->nframes;
    int64_t t0 = n ? m->frames[0].begin_ns : 0;
    /* walk every scope's sparse per-frame list in frame order */
    size_t ns = m->nscopes;
    size_t *cur = f->cursor;
    memset(cur, 0, (ns ? ns : 1) * sizeof *cur);
    /* a frame's first four fields, formatted once per frame (issue 12) */
    char pre[256];
    size_t pre_n = 0;
    FILE *pf = fmemopen(pre, sizeof pre, "w");
    for (size_t fi = 0; fi < n; fi++) {
        const an_frame *fr = &m->frames[fi];
        pre_n = 0;
        if (pf) {
            rewind(pf);
            frame_prefix(pf, fr, t0);
            fflush(pf);
            long at = ftell(pf);
            pre_n = at > 0 && (size_t)at < sizeof pre ? (size_t)at : 0;
        }
        for (size_t s = 0; s < ns; s++) {
            const an_scope *sc = &m->scopes[s];
            if (f->only && sc != f->only)
                continue;
            int64_t v = 0;
            int present = 0;
            while (cur[s] < sc->pf_n && sc->pf_frame[cur[s]] < fi)
                cur[s]++;
            if (cur[s] < sc->pf_n && sc->pf_frame[cur[s]] == fi) {
                v = sc->pf_self[cur[s]];
                present = 1;
            }
            if (!present && !f->only)
                continue;
            if (pre_n)
                fwrite(pre, 1, pre_n, out);
            else
                frame_prefix(out, fr, t0);
            fprintf(out, ",%s,", kind_name(sc->kind));
            an_csv_field(out, sc->name);
            fputc(',', out);
            num_ns(out, v);
            fputc('\n', out);
        }
        /* the counters: the frame's value, in the counter's own unit */
        for (size_t k = 0; fc && k < fc->n; k++) {
            const an_frame_counter *c = &fc->c[k];
            if (c->state[fi] == AN_FC_NONE)
                continue;
            if (pre_n)
                fwrite(pre, 1, pre_n, out);
            else
                frame_prefix(out, fr, t0);
            fputs(c->state[fi] == AN_FC_CARRIED ? ",counter-carried,"
                                                : ",counter,",
                  out);
            an_csv_field(out, c->name);
            fputc(',', out);
            num(out, c->value[fi]);
            fputc('\n', out);
        }
    }
    if (pf)
        fclose(pf);
}
