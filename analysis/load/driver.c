/*
 * driver.c - chunks on N threads, merged in order (driver.h).
 */
#include "driver.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct drive {
    const cap_chunk_plan *plan;
    const an_driver_ops *ops;
    void *ctx;
    int fd;
    size_t window;      /* chunks ahead of the merge, at most */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_run, next_merge;
    void **result;      /* plan->n slots */
    unsigned char *done;
    int stop;           /* 0, or the drive's return value */
    an_drive_prof *prof; /* NULL: nothing timed */
} drive;

/* Seconds on clock c (CLOCK_MONOTONIC or CLOCK_THREAD_CPUTIME_ID). */
static double secs(clockid_t c)
{
    struct timespec t;
    if (clock_gettime(c, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* pthread_cond_wait, its wall time added to *acc when profiled. */
static void wait_timed(drive *d, double *acc)
{
    double t0 = d->prof ? secs(CLOCK_MONOTONIC) : 0;
    pthread_cond_wait(&d->cv, &d->mu);
    if (d->prof)
        *acc += secs(CLOCK_MONOTONIC) - t0;
}

int an_driver_threads(int asked)
{
    if (asked >= 1)
        return asked;
    const char *e = getenv("CAP_READ_THREADS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == 0 && v >= 1 && v <= 1024)
            return (int)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)(n > 1024 ? 1024 : n) : 1;
}

/* Under d->mu: the next chunk to run, or plan->n when none may start. */
static size_t take(drive *d)
{
    if (d->stop || d->next_run >= d->plan->n ||
        d->next_run >= d->next_merge + d->window)
        return d->plan->n;
    return d->next_run++;
}

/* Run chunk i with d->mu released, then file its result (under d->mu). */
static void run_one(drive *d, size_t i)
{
    pthread_mutex_unlock(&d->mu);
    double w0 = 0, c0 = 0;
    if (d->prof) {
        w0 = secs(CLOCK_MONOTONIC);
        c0 = secs(CLOCK_THREAD_CPUTIME_ID);
    }
    void *r = d->ops->chunk(d->ctx, i, &d->plan->chunks[i], d->fd);
    double w1 = 0, c1 = 0;
    if (d->prof) {
        w1 = secs(CLOCK_MONOTONIC);
        c1 = secs(CLOCK_THREAD_CPUTIME_ID);
    }
    pthread_mutex_lock(&d->mu);
    if (d->prof) {
        d->prof->busy_s += w1 - w0;
        d->prof->busy_cpu_s += c1 - c0;
    }
    if (!r && !d->stop)
        d->stop = -1;
    d->result[i] = r;
    d->done[i] = 1;
    pthread_cond_broadcast(&d->cv);
}

static void *worker(void *arg)
{
    drive *d = arg;
    pthread_mutex_lock(&d->mu);
    while (!d->stop && d->next_run < d->plan->n) {
        size_t i = take(d);
        if (i < d->plan->n)
            run_one(d, i);
        else if (d->prof)
            wait_timed(d, &d->prof->ahead_s);
        else
            pthread_cond_wait(&d->cv, &d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* The calling thread: merges in order, runs chunks while it waits. */
static void lead(drive *d)
{
    pthread_mutex_lock(&d->mu);
    while (!d->stop && d->next_merge < d->plan->n) {
        size_t m = d->next_merge;
        if (d->done[m]) {
            void *r = d->result[m];
            d->result[m] = NULL;
            pthread_mutex_unlock(&d->mu);
            double w0 = 0, c0 = 0;
            if (d->prof) {
                w0 = secs(CLOCK_MONOTONIC);
                c0 = secs(CLOCK_THREAD_CPUTIME_ID);
            }
            int rc = d->ops->merge(d->ctx, m, r);
            if (d->prof) {
                d->prof->merge_s += secs(CLOCK_MONOTONIC) - w0;
                d->prof->merge_cpu_s += secs(CLOCK_THREAD_CPUTIME_ID) - c0;
            }
            pthread_mutex_lock(&d->mu);
            d->next_merge++;
            if (rc && !d->stop)
                d->stop = rc;
            pthread_cond_broadcast(&d->cv);
            continue;
        }
        size_t i = take(d);
        if (i < d->plan->n)
            run_one(d, i);
        else if (d->prof)
            wait_timed(d, &d->prof->wait_s);
        else
            pthread_cond_wait(&d->cv, &d->mu);
    }
    if (d->stop)
        pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

int an_drive(int fd, const cap_chunk_plan *plan, int threads,
             const an_driver_ops *ops, void *ctx)
{
    return an_drive_profiled(fd, plan, threads, ops, ctx, NULL);
}

int an_drive_profiled(int fd, const cap_chunk_plan *plan, int threads,
                      const an_driver_ops *ops, void *ctx,
                      an_drive_prof *prof)
{
    if (prof)
        memset(prof, 0, sizeof *prof);
    if (!plan || !plan->n || !ops || threads < 1)
        return -1;
    drive d = {.plan = plan, .ops = ops, .ctx = ctx, .fd = fd, .prof = prof};
    double t0 = prof ? secs(CLOCK_MONOTONIC) : 0;
    /* a chunk result holds its frames' exact values until merged: one
       ahead per thread bounds memory by threads, not by the file */
    d.window = (size_t)threads;
    d.result = calloc(plan->n, sizeof *d.result);
    d.done = calloc(plan->n, 1);
    if (!d.result || !d.done) {
        free(d.result);
        free(d.done);
        return -1;
    }
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    size_t extra = (size_t)threads - 1;
    if (extra > plan->n - 1)
        extra = plan->n - 1;
    pthread_t *tid = calloc(extra ? extra : 1, sizeof *tid);
    size_t started = 0;
    for (; tid && started < extra; started++)
        if (pthread_create(&tid[started], NULL, worker, &d) != 0)
            break;
    /* a thread that could not be started leaves its chunks to the
       others: the same result, later */
    lead(&d);
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (prof) {
        prof->wall_s = secs(CLOCK_MONOTONIC) - t0;
        prof->chunks = plan->n;
        prof->threads = (int)started + 1;
    }
    for (size_t i = 0; i < plan->n; i++)
        if (d.result[i])
            ops->discard(ctx, d.result[i]);
    free(tid);
    free(d.result);
    free(d.done);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    return d.stop;
}
