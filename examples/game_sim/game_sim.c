/*
 * game_sim - a seedable multi-threaded game loop recorded with libcapture,
 * whose truth is known: every scope's nominal self time, which scopes are
 * waits, the GPU spans' durations.
 *
 * Threads: "main" (the game loop, one frame mark per frame), "render"
 * (renders frame N while main simulates N+1, fed through a one-slot
 * hand-off), "worker 0".."worker N-1" (jobs from a queue guarded by a mutex
 * and condition variables) and, with --outside-frames, "asset_loader"
 * (runs before the first frame only).
 *
 * Work is a busy wait on CLOCK_MONOTONIC until a deadline: a scope lasts
 * its nominal time even when the thread is preempted, unless the
 * preemption lands at its very end. Each scope's self time is drawn
 * uniformly within +-5 % of its mean (seeded), times --scale, the --slow
 * factor of that name, the --ramp factor of the moment and the --bimodal
 * factor of the frame. Waits block on a condition variable (or sleep, for
 * the frame cap) and have no nominal time. `game_sim --help` prints the
 * table; --truth-report prints, at the end, the spins that ended late (the
 * thread lost its CPU across the deadline) by scope. Exit status: 0
 * capture written, 1 recording failed (cap_open, cap_close, a thread), 2
 * usage error.
 */
#include <capture/capture.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the known truth: scope names, threads, nominal self times --------- */

enum { K_WORK, K_WAIT, K_GPU, K_ASSET };

/* X(enum, name, thread, mean self time in us at --scale 1, kind) */
#define SIM_SCOPES(X)                                                          \
    X(S_GAME_FRAME, "game_frame", "main", 60, K_WORK)                          \
    X(S_INPUT_POLL, "input_poll", "main", 200, K_WORK)                         \
    X(S_UPDATE, "update", "main", 100, K_WORK)                                 \
    X(S_SUBMIT_JOBS, "submit_jobs", "main", 50, K_WORK)                        \
    X(S_UPDATE_PHYSICS, "update_physics", "main", 120, K_WORK)                 \
    X(S_PHYSICS_BROADPHASE, "physics_broadphase", "main", 700, K_WORK)         \
    X(S_PHYSICS_NARROWPHASE, "physics_narrowphase", "main", 200, K_WORK)       \
    X(S_PHYSICS_CONTACTS, "physics_contacts", "main", 150, K_WORK)             \
    X(S_CONTACT_SOLVE, "contact_solve", "main", 400, K_WORK)                   \
    X(S_CONTACT_ISLAND, "contact_island", "main", 250, K_WORK)                 \
    X(S_PHYSICS_INTEGRATE, "physics_integrate", "main", 350, K_WORK)           \
    X(S_UPDATE_AI, "update_ai", "main", 100, K_WORK)                           \
    X(S_AI_PERCEPTION, "ai_perception", "main", 600, K_WORK)                   \
    X(S_AI_PATHFIND, "ai_pathfind", "main", 120, K_WORK)                       \
    X(S_PATH_ASTAR, "path_astar", "main", 500, K_WORK)                         \
    X(S_UPDATE_ANIMATION, "update_animation", "main", 100, K_WORK)             \
    X(S_ANIM_SAMPLE, "anim_sample", "main", 400, K_WORK)                       \
    X(S_ANIM_BLEND, "anim_blend", "main", 300, K_WORK)                         \
    X(S_STREAM_ASSETS, "stream_assets", "main", 30, K_WORK)                    \
    X(S_WAIT_JOBS, "wait_jobs", "main", 0, K_WAIT)                             \
    X(S_GATHER_RENDER_DATA, "gather_render_data", "main", 150, K_WORK)         \
    X(S_CULL, "cull", "main", 100, K_WORK)                                     \
    X(S_CULL_FRUSTUM, "cull_frustum", "main", 350, K_WORK)                     \
    X(S_CULL_OCCLUSION, "cull_occlusion", "main", 600, K_WORK)                 \
    X(S_WAIT_RENDER, "wait_render", "main", 0, K_WAIT)                         \
    X(S_HANDOFF, "handoff", "main", 40, K_WORK)                                \
    X(S_WAIT_FPS_CAP, "wait_fps_cap", "main", 0, K_WAIT)                       \
    X(S_RENDER_FRAME, "render_frame", "render", 40, K_WORK)                    \
    X(S_WAIT_FRAME_DATA, "wait_frame_data", "render", 0, K_WAIT)               \
    X(S_RENDER_BUILD, "render_build", "render", 50, K_WORK)                    \
    X(S_BUILD_SHADOWS, "build_shadows", "render", 60, K_WORK)                 \
    X(S_SHADOW_CASCADE, "shadow_cascade", "render", 400, K_WORK)               \
    X(S_BUILD_OPAQUE, "build_opaque", "render", 60, K_WORK)                   \
    X(S_OPAQUE_SORT, "opaque_sort", "render", 200, K_WORK)                     \
    X(S_OPAQUE_ENCODE, "opaque_encode", "render", 60, K_WORK)                 \
    X(S_ENCODE_MATERIAL, "encode_material", "render", 120, K_WORK)             \
    X(S_ENCODE_DRAWS, "encode_draws", "render", 450, K_WORK)                   \
    X(S_BUILD_TRANSPARENT, "build_transparent", "render", 250, K_WORK)         \
    X(S_BUILD_POST, "build_post", "render", 150, K_WORK)                       \
    X(S_RENDER_SUBMIT, "render_submit", "render", 40, K_WORK)                  \
    X(S_GPU_SUBMIT, "gpu_submit", "render", 200, K_WORK)                       \
    X(S_PRESENT, "present", "render", 120, K_WORK)                             \
    X(S_WORKER_WAIT, "worker_wait", "worker", 0, K_WAIT)                       \
    X(S_JOB_SKINNING, "job_skinning", "worker", 30, K_WORK)                    \
    X(S_SKIN_BONES, "skin_bones", "worker", 170, K_WORK)                       \
    X(S_JOB_PARTICLES, "job_particles", "worker", 30, K_WORK)                  \
    X(S_PARTICLES_SIMULATE, "particles_simulate", "worker", 100, K_WORK)       \
    X(S_PARTICLES_COLLIDE, "particles_collide", "worker", 70, K_WORK)         \
    X(S_JOB_VISIBILITY, "job_visibility", "worker", 120, K_WORK)               \
    X(S_VIS_RAYCAST, "vis_raycast", "worker", 80, K_WORK)                     \
    X(S_LOAD_LEVEL, "load_level", "main", 8000, K_WORK)                        \
    X(S_STREAM_ASSET, "stream_asset", "asset_loader", 1500, K_WORK)            \
    X(S_DECOMPRESS, "decompress", "asset_loader", 1000, K_WORK)                \
    X(S_SAVE_STATE, "save_state", "main", 3000, K_WORK)                        \
    X(S_RELEASE_RESOURCES, "release_resources", "main", 2000, K_WORK)          \
    X(S_ASSET, "asset_<name>", "main", 40, K_ASSET)                            \
    X(G_FRAME, "gpu_frame", "gpu", 100, K_GPU)                                 \
    X(G_SHADOWS, "gpu_shadows", "gpu", 600, K_GPU)                             \
    X(G_GBUFFER, "gpu_gbuffer", "gpu", 1500, K_GPU)                            \
    X(G_LIGHTING, "gpu_lighting", "gpu", 1200, K_GPU)                          \
    X(G_TRANSPARENT, "gpu_transparent", "gpu", 500, K_GPU)                     \
    X(G_POST, "gpu_post", "gpu", 400, K_GPU)

#define SIM_ENUM(e, n, t, m, k) e,
enum { SIM_SCOPES(SIM_ENUM) S_COUNT };
#define SIM_ROW(e, n, t, m, k) {n, t, m, k},
static const struct scope_def {
    const char *name;
    const char *thread;
    double mean_us;
    int kind;
} scope_defs[S_COUNT] = {SIM_SCOPES(SIM_ROW)};

#define JOBS_SKINNING 3
#define JOBS_PARTICLES 3
#define JOBS_VISIBILITY 2
#define JOBS_PER_FRAME (JOBS_SKINNING + JOBS_PARTICLES + JOBS_VISIBILITY)
#define ASSETS 90
#define ASSETS_PER_FRAME 3
#define BIMODAL_STRETCH 25 /* frames per light or heavy stretch */
#define BIMODAL_HEAVY 1.6  /* work factor of a heavy stretch */
#define JITTER 0.05        /* +-5 %, uniform */
#define LOADER_ASSETS 6

/* ---- options and shared state ----------------------------------------- */

/* How punctually the spins of each scope ended (what --truth-report prints):
 * spins, the time they were asked for, the spins that ended over LATE_NS past
 * their deadline and by how much in all. */
typedef struct punctuality {
    uint64_t spins[S_COUNT], spun_ns[S_COUNT], late[S_COUNT], late_ns[S_COUNT];
} punctuality;

/* A thread's own state: its jitter stream and its spins' punctuality. */
typedef struct lane {
    uint64_t rng;
    punctuality p;
} lane;

typedef struct job {
    int kind; /* S_JOB_SKINNING, S_JOB_PARTICLES, S_JOB_VISIBILITY */
    uint64_t ns[3]; /* self time of the job scope and its children */
} job;

typedef struct sim {
    /* options, read-only once the threads start */
    uint64_t seed;
    double seconds;
    uint64_t frames; /* 0: run for `seconds` */
    double fps_cap;
    double ramp; /* fraction: 0.3 for --ramp 30 */
    int bimodal, outside_frames, runtime_names;
    int heavy_frames; /* --bimodal: heavy frames in each 2 x BIMODAL_STRETCH */
    unsigned workers;
    double scale;
    double hitch_at, hitch_ms; /* --hitch-at (-1: none), --hitch-ms */
    unsigned format_major;     /* --format-major (0: the default) */
    double slow[S_COUNT]; /* factor per scope, 1.0 when not slowed */
    char assets[ASSETS][32];

    /* the job queue */
    pthread_mutex_t qlock;
    pthread_cond_t qwork, qdone;
    job queue[JOBS_PER_FRAME];
    unsigned q_head, q_n, q_unfinished;
    int q_stop;

    /* main -> render hand-off (one slot) */
    pthread_mutex_t hlock;
    pthread_cond_t hcond;
    int h_full, h_stop;
    uint64_t h_frame;
    double h_factor;
    unsigned h_draws;

    /* start barrier: threads record only once the first frame began */
    int go;

    /* every thread's spins, added when it ends (under qlock) */
    int truth_report;
    punctuality p;

    uint32_t gpu_track;
    uint32_t gpu_names[6];
} sim;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A spin that ends this far past its deadline lost the CPU across its end:
 * the scope's self time then holds that time too, not only its work. */
#define LATE_NS 20000

static void lane_done(sim *g, const lane *ln)
{
    pthread_mutex_lock(&g->qlock);
    for (int i = 0; i < S_COUNT; i++) {
        g->p.spins[i] += ln->p.spins[i];
        g->p.spun_ns[i] += ln->p.spun_ns[i];
        g->p.late[i] += ln->p.late[i];
        g->p.late_ns[i] += ln->p.late_ns[i];
    }
    pthread_mutex_unlock(&g->qlock);
}

/* Spin NS of scope IX's self time. */
static void spin_ns(lane *ln, int ix, uint64_t ns)
{
    uint64_t end = mono_ns() + ns, now;
    while ((now = mono_ns()) < end) {
    }
    ln->p.spins[ix]++;
    ln->p.spun_ns[ix] += ns;
    if (now - end > LATE_NS) {
        ln->p.late[ix]++;
        ln->p.late_ns[ix] += now - end;
    }
}

/* splitmix64: one stream per thread, derived from the seed */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Nominal self time of scope ix now, in ns. */
static uint64_t draw_ns(const sim *g, lane *ln, int ix, double factor)
{
    double j = 1.0 - JITTER + 2.0 * JITTER * rng_unit(&ln->rng);
    double ns = scope_defs[ix].mean_us * 1000.0 * g->scale * g->slow[ix] *
                factor * j;
    return ns < 1.0 ? 1 : (uint64_t)ns;
}

/* A work scope: open it, spin its self time; children follow in the block. */
#define SIM_WORK(ix, g, ln, f)                                                 \
    CAP_SCOPE(scope_defs[ix].name);                                            \
    spin_ns((ln), (ix), draw_ns((g), (ln), (ix), (f)))
#define SIM_WAIT(ix) CAP_WAIT_SCOPE(scope_defs[ix].name)

/* ---- workers ----------------------------------------------------------- */

typedef struct worker_arg {
    sim *g;
    unsigned index;
} worker_arg;

static void wait_for_go(sim *g)
{
    pthread_mutex_lock(&g->qlock);
    while (!g->go)
        pthread_cond_wait(&g->qwork, &g->qlock);
    pthread_mutex_unlock(&g->qlock);
}

/* One call site per name: a CAP_SCOPE site records one name (see
 * --runtime-names for the other case). */
static void run_job(lane *ln, const job *j)
{
    switch (j->kind) {
    case S_JOB_SKINNING: {
        CAP_SCOPE(scope_defs[S_JOB_SKINNING].name);
        spin_ns(ln, S_JOB_SKINNING, j->ns[0]);
        {
            CAP_SCOPE(scope_defs[S_SKIN_BONES].name);
            spin_ns(ln, S_SKIN_BONES, j->ns[1]);
        }
        break;
    }
    case S_JOB_PARTICLES: {
        CAP_SCOPE(scope_defs[S_JOB_PARTICLES].name);
        spin_ns(ln, S_JOB_PARTICLES, j->ns[0]);
        {
            CAP_SCOPE(scope_defs[S_PARTICLES_SIMULATE].name);
            spin_ns(ln, S_PARTICLES_SIMULATE, j->ns[1]);
            {
                CAP_SCOPE(scope_defs[S_PARTICLES_COLLIDE].name);
                spin_ns(ln, S_PARTICLES_COLLIDE, j->ns[2]);
            }
        }
        break;
    }
    default: {
        CAP_SCOPE(scope_defs[S_JOB_VISIBILITY].name);
        spin_ns(ln, S_JOB_VISIBILITY, j->ns[0]);
        {
            CAP_SCOPE(scope_defs[S_VIS_RAYCAST].name);
            spin_ns(ln, S_VIS_RAYCAST, j->ns[1]);
        }
        break;
    }
    }
}

static void *worker_main(void *arg)
{
    worker_arg *a = arg;
    sim *g = a->g;
    char name[32];
    snprintf(name, sizeof name, "worker %u", a->index);
    CAP_THREAD(name);
    wait_for_go(g);
    lane ln = {0};
    for (;;) {
        job j = {0};
        int have = 0;
        {
            SIM_WAIT(S_WORKER_WAIT);
            pthread_mutex_lock(&g->qlock);
            while (g->q_n == 0 && !g->q_stop)
                pthread_cond_wait(&g->qwork, &g->qlock);
            if (g->q_n > 0) {
                j = g->queue[g->q_head];
                g->q_head = (g->q_head + 1) % JOBS_PER_FRAME;
                g->q_n--;
                have = 1;
            }
            pthread_mutex_unlock(&g->qlock);
        }
        if (!have)
            break;
        run_job(&ln, &j);
        pthread_mutex_lock(&g->qlock);
        if (--g->q_unfinished == 0)
            pthread_cond_broadcast(&g->qdone);
        pthread_mutex_unlock(&g->qlock);
    }
    lane_done(g, &ln);
    cap_thread_unregister();
    return NULL;
}

/* ---- render ------------------------------------------------------------ */

static void record_gpu(sim *g, lane *ln, uint64_t frame, double f)
{
    cap_gpu_span sp[6];
    uint64_t t = mono_ns(); /* the simulated GPU clock is CLOCK_MONOTONIC */
    uint64_t root_self = draw_ns(g, ln, G_FRAME, f);
    uint64_t at = t + root_self / 2;
    for (int i = 1; i < 6; i++) {
        uint64_t d = draw_ns(g, ln, G_FRAME + i, f);
        sp[i] = (cap_gpu_span){.name = g->gpu_names[i], .parent = 0,
                               .begin_tick = at, .end_tick = at + d,
                               .measured = 1};
        at += d;
    }
    sp[0] = (cap_gpu_span){.name = g->gpu_names[0], .parent = -1,
                           .begin_tick = t, .end_tick = at + root_self -
                                                         root_self / 2,
                           .measured = 1};
    cap_gpu_frame(g->gpu_track, frame, sp, 6);
}

static void *render_main(void *arg)
{
    sim *g = arg;
    lane ln = {.rng = g->seed ^ 0x52454e444552ull};
    CAP_THREAD("render");
    wait_for_go(g);
    for (;;) {
        uint64_t frame = 0;
        double f = 1.0;
        int stop = 0;
        {
            SIM_WAIT(S_WAIT_FRAME_DATA);
            pthread_mutex_lock(&g->hlock);
            while (!g->h_full && !g->h_stop)
                pthread_cond_wait(&g->hcond, &g->hlock);
            if (g->h_full) {
                frame = g->h_frame;
                f = g->h_factor;
                g->h_full = 0;
                pthread_cond_broadcast(&g->hcond);
            } else {
                stop = 1;
            }
            pthread_mutex_unlock(&g->hlock);
        }
        if (stop)
            break;
        SIM_WORK(S_RENDER_FRAME, g, &ln, f);
        {
            SIM_WORK(S_RENDER_BUILD, g, &ln, f);
            {
                SIM_WORK(S_BUILD_SHADOWS, g, &ln, f);
                { SIM_WORK(S_SHADOW_CASCADE, g, &ln, f); }
            }
            {
                SIM_WORK(S_BUILD_OPAQUE, g, &ln, f);
                { SIM_WORK(S_OPAQUE_SORT, g, &ln, f); }
                {
                    SIM_WORK(S_OPAQUE_ENCODE, g, &ln, f);
                    {
                        SIM_WORK(S_ENCODE_MATERIAL, g, &ln, f);
                        { SIM_WORK(S_ENCODE_DRAWS, g, &ln, f); }
                    }
                }
            }
            { SIM_WORK(S_BUILD_TRANSPARENT, g, &ln, f); }
            { SIM_WORK(S_BUILD_POST, g, &ln, f); }
        }
        {
            SIM_WORK(S_RENDER_SUBMIT, g, &ln, f);
            {
                SIM_WORK(S_GPU_SUBMIT, g, &ln, f);
                record_gpu(g, &ln, frame, f);
            }
        }
        { SIM_WORK(S_PRESENT, g, &ln, f); }
    }
    lane_done(g, &ln);
    cap_thread_unregister();
    return NULL;
}

/* ---- outside the frames ------------------------------------------------ */

static void *loader_main(void *arg)
{
    sim *g = arg;
    lane ln = {.rng = g->seed ^ 0x4c4f41444552ull};
    CAP_THREAD("asset_loader");
    for (int i = 0; i < LOADER_ASSETS; i++) {
        SIM_WORK(S_STREAM_ASSET, g, &ln, 1.0);
        { SIM_WORK(S_DECOMPRESS, g, &ln, 1.0); }
    }
    lane_done(g, &ln);
    cap_thread_unregister();
    return NULL;
}

/* ---- main -------------------------------------------------------------- */

static double work_factor(const sim *g, uint64_t frame, uint64_t t0)
{
    double progress;
    if (g->frames)
        progress = g->frames > 1 ? (double)frame / (double)(g->frames - 1) : 0;
    else
        progress = (double)(mono_ns() - t0) / (g->seconds * 1e9);
    if (progress > 1)
        progress = 1;
    double f = 1.0 + g->ramp * progress;
    if (g->bimodal && frame % (2 * BIMODAL_STRETCH) >=
                          (uint64_t)(2 * BIMODAL_STRETCH - g->heavy_frames))
        f *= BIMODAL_HEAVY;
    return f;
}

static void submit_jobs(sim *g, lane *ln, double f)
{
    static const int kinds[JOBS_PER_FRAME] = {
        S_JOB_SKINNING,  S_JOB_PARTICLES, S_JOB_VISIBILITY, S_JOB_SKINNING,
        S_JOB_PARTICLES, S_JOB_VISIBILITY, S_JOB_SKINNING, S_JOB_PARTICLES};
    job jobs[JOBS_PER_FRAME];
    for (int i = 0; i < JOBS_PER_FRAME; i++) {
        job *j = &jobs[i];
        j->kind = kinds[i];
        j->ns[0] = draw_ns(g, ln, j->kind, f);
        j->ns[1] = draw_ns(g, ln, j->kind + 1, f);
        j->ns[2] = j->kind == S_JOB_PARTICLES ? draw_ns(g, ln, j->kind + 2, f)
                                              : 0;
    }
    pthread_mutex_lock(&g->qlock);
    for (int i = 0; i < JOBS_PER_FRAME; i++)
        g->queue[(g->q_head + g->q_n++) % JOBS_PER_FRAME] = jobs[i];
    g->q_unfinished += JOBS_PER_FRAME;
    pthread_cond_broadcast(&g->qwork);
    pthread_mutex_unlock(&g->qlock);
}

static void main_frame(sim *g, lane *ln, uint64_t frame, uint64_t cap_frame,
                       double f, uint64_t frame_start)
{
    SIM_WORK(S_GAME_FRAME, g, ln, f);
    { SIM_WORK(S_INPUT_POLL, g, ln, f); }
    {
        SIM_WORK(S_UPDATE, g, ln, f);
        {
            SIM_WORK(S_SUBMIT_JOBS, g, ln, f);
            submit_jobs(g, ln, f);
        }
        {
            SIM_WORK(S_UPDATE_PHYSICS, g, ln, f);
            { SIM_WORK(S_PHYSICS_BROADPHASE, g, ln, f); }
            {
                SIM_WORK(S_PHYSICS_NARROWPHASE, g, ln, f);
                {
                    SIM_WORK(S_PHYSICS_CONTACTS, g, ln, f);
                    {
                        SIM_WORK(S_CONTACT_SOLVE, g, ln, f);
                        { SIM_WORK(S_CONTACT_ISLAND, g, ln, f); }
                    }
                }
            }
            { SIM_WORK(S_PHYSICS_INTEGRATE, g, ln, f); }
        }
        {
            SIM_WORK(S_UPDATE_AI, g, ln, f);
            { SIM_WORK(S_AI_PERCEPTION, g, ln, f); }
            {
                SIM_WORK(S_AI_PATHFIND, g, ln, f);
                { SIM_WORK(S_PATH_ASTAR, g, ln, f); }
            }
        }
        {
            SIM_WORK(S_UPDATE_ANIMATION, g, ln, f);
            { SIM_WORK(S_ANIM_SAMPLE, g, ln, f); }
            { SIM_WORK(S_ANIM_BLEND, g, ln, f); }
        }
        if (g->runtime_names) {
            SIM_WORK(S_STREAM_ASSETS, g, ln, f);
            for (int k = 0; k < ASSETS_PER_FRAME; k++) {
                /* one call site, a different runtime string each time */
                const char *asset =
                    g->assets[(frame * ASSETS_PER_FRAME + (uint64_t)k) % ASSETS];
                CAP_SCOPE(asset);
                spin_ns(ln, S_ASSET, draw_ns(g, ln, S_ASSET, f));
            }
        }
        {
            SIM_WAIT(S_WAIT_JOBS);
            pthread_mutex_lock(&g->qlock);
            while (g->q_unfinished > 0)
                pthread_cond_wait(&g->qdone, &g->qlock);
            pthread_mutex_unlock(&g->qlock);
        }
    }
    {
        SIM_WORK(S_GATHER_RENDER_DATA, g, ln, f);
        {
            SIM_WORK(S_CULL, g, ln, f);
            { SIM_WORK(S_CULL_FRUSTUM, g, ln, f); }
            { SIM_WORK(S_CULL_OCCLUSION, g, ln, f); }
        }
    }
    {
        SIM_WAIT(S_WAIT_RENDER);
        pthread_mutex_lock(&g->hlock);
        while (g->h_full)
            pthread_cond_wait(&g->hcond, &g->hlock);
        pthread_mutex_unlock(&g->hlock);
    }
    {
        SIM_WORK(S_HANDOFF, g, ln, f);
        unsigned draws = 1800 + (unsigned)(rng_next(&ln->rng) % 400);
        pthread_mutex_lock(&g->hlock);
        g->h_full = 1;
        g->h_frame = cap_frame;
        g->h_factor = f;
        g->h_draws = draws;
        pthread_cond_broadcast(&g->hcond);
        pthread_mutex_unlock(&g->hlock);
        CAP_COUNTER("draw_calls", draws);
    }
    CAP_COUNTER("entities", 4000 + (double)(rng_next(&ln->rng) % 500));
    CAP_COUNTER("jobs_per_frame", JOBS_PER_FRAME);
    CAP_COUNTER("work_factor", f);
    if (g->fps_cap > 0) {
        SIM_WAIT(S_WAIT_FPS_CAP);
        uint64_t due = frame_start + (uint64_t)(1e9 / g->fps_cap);
        struct timespec ts = {(time_t)(due / 1000000000u),
                              (long)(due % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
               EINTR) {
        }
    }
}

/* --truth-report: the spins of all threads, then each scope with a late one
 * (scope, late spins, spins, ms late, ms spun), on stdout. */
static void truth_report(const punctuality *p)
{
    uint64_t spins = 0, spun = 0, late = 0, late_ns = 0;
    for (int i = 0; i < S_COUNT; i++) {
        spins += p->spins[i];
        spun += p->spun_ns[i];
        late += p->late[i];
        late_ns += p->late_ns[i];
    }
    printf("game_sim: %llu of %llu spins ended over %d us late, by %.3f ms in "
           "all (%.3f %% of the %.3f ms spun)\n",
           (unsigned long long)late, (unsigned long long)spins, LATE_NS / 1000,
           (double)late_ns / 1e6, spun ? 100.0 * (double)late_ns / (double)spun : 0,
           (double)spun / 1e6);
    for (int i = 0; i < S_COUNT; i++)
        if (p->late[i])
            printf("late %s %llu %llu %.3f %.3f\n", scope_defs[i].name,
                   (unsigned long long)p->late[i],
                   (unsigned long long)p->spins[i], (double)p->late_ns[i] / 1e6,
                   (double)p->spun_ns[i] / 1e6);
}

static void usage(FILE *out)
{
    fprintf(out,
        "usage: game_sim OUT.cap [--seed N] [--seconds S | --frames N]\n"
        "                [--fps-cap HZ] [--slow NAME:PCT] [--ramp PCT] [--bimodal]\n"
        "                [--heavy-frames N] [--outside-frames] [--workers N] [--scale F]\n"
        "                [--runtime-names] [--truth-report] [--hitch-at S]\n"
        "                [--hitch-ms MS] [--format-major N] [--help]\n"
        "\n"
        "A multi-threaded game loop recorded with libcapture into OUT.cap: a main\n"
        "thread (one frame mark per frame), a render thread fed by a one-slot\n"
        "hand-off, N job workers pulling %d jobs per frame from a queue, a\n"
        "simulated GPU track (ticks of 1 ns) and counters.\n"
        "\n"
        "  --seed N          jitter seed (default 1)\n"
        "  --seconds S       run about S seconds (default 3)\n"
        "  --frames N        run exactly N frames instead\n"
        "  --fps-cap HZ      hold each frame to 1/HZ by sleeping in wait_fps_cap\n"
        "  --slow NAME:PCT   make scope NAME's self time PCT %% longer\n"
        "  --ramp PCT        scale all work from 1.0 to 1+PCT/100 over the run\n"
        "                    (throttling); GPU spans too\n"
        "  --bimodal         alternate %d light and %d heavy frames (work x%.1f)\n"
        "  --heavy-frames N  with --bimodal, N of each %d frames heavy, the last\n"
        "                    ones (0..%d, default %d)\n"
        "  --outside-frames  record load_level and an asset_loader thread before\n"
        "                    the first frame, save_state after the last\n"
        "  --workers N       job worker threads, 1..64 (default 4)\n"
        "  --scale F         multiply every duration by F (default 1)\n"
        "  --runtime-names   each frame, stream_assets opens %d scopes named after\n"
        "                    assets (%d names: asset_00_rock ...) at one CAP_SCOPE\n"
        "                    call site\n"
        "  --hitch-at S      the first frame that begins S seconds into the run\n"
        "                    also busy-waits --hitch-ms in a scope \"hitch\" on\n"
        "                    main (says its frame on stderr)\n"
        "  --hitch-ms MS     how long that hitch lasts (default 300)\n"
        "  --format-major N  write capture format N (1: 1.1, 2: 2.0, 3: 3.1,\n"
        "                    4: 4.0, groups of blocks; default: the library's)\n"
        "  --truth-report    at the end, print how many spins (the work of a\n"
        "                    scope) ended over %d us past their deadline, and by\n"
        "                    how much in all: the time in which the machine, not\n"
        "                    the program, made the self times\n"
        "\n"
        "Exit status: 0 capture written, 1 recording failed, 2 usage error.\n"
        "\n"
        "Known truth: nominal self time per call at --scale 1, before --slow,\n"
        "--ramp and --bimodal; each call draws uniformly within +-%.0f %% of it.\n"
        "Waits block and have no nominal time. Thread \"worker\" is every worker.\n"
        "\n"
        "  %-22s %-13s %9s  %s\n",
        JOBS_PER_FRAME, BIMODAL_STRETCH, BIMODAL_STRETCH, BIMODAL_HEAVY,
        2 * BIMODAL_STRETCH, 2 * BIMODAL_STRETCH, BIMODAL_STRETCH,
        ASSETS_PER_FRAME, ASSETS, LATE_NS / 1000, JITTER * 100, "name", "thread", "self_us",
        "kind");
    static const char *kinds[] = {"work", "wait", "gpu", "work"};
    for (int i = 0; i < S_COUNT; i++) {
        const struct scope_def *d = &scope_defs[i];
        if (d->kind == K_WAIT)
            fprintf(out, "  %-22s %-13s %9s  %s\n", d->name, d->thread, "-",
                    kinds[d->kind]);
        else
            fprintf(out, "  %-22s %-13s %9.0f  %s\n", d->name, d->thread,
                    d->mean_us, kinds[d->kind]);
    }
    fprintf(out,
        "\n"
        "Jobs per frame: %d job_skinning, %d job_particles, %d job_visibility.\n"
        "gpu_frame is the root of the other gpu_ spans, which run back to back.\n"
        "Frames: game_frame on main is the whole frame but the frame mark.\n"
        "Counters: draw_calls, entities, jobs_per_frame, work_factor.\n",
        JOBS_SKINNING, JOBS_PARTICLES, JOBS_VISIBILITY);
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "game_sim: %s: '%s' (game_sim --help)\n", what, arg);
    return 2;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* ---- options: a row each --------------------------------------------- */

/* The options that take no value: each sets one int of sim to 1. */
static const struct {
    const char *name;
    size_t field; /* offsetof(sim, ...) of an int */
} flag_opts[] = {
    {"--bimodal", offsetof(sim, bimodal)},
    {"--outside-frames", offsetof(sim, outside_frames)},
    {"--runtime-names", offsetof(sim, runtime_names)},
    {"--truth-report", offsetof(sim, truth_report)},
};

static void set_seconds(sim *g, double d) { g->seconds = d; }
static void set_frames(sim *g, double d) { g->frames = (uint64_t)d; }
static void set_fps_cap(sim *g, double d) { g->fps_cap = d; }
static void set_ramp(sim *g, double d) { g->ramp = d / 100.0; }
static void set_heavy(sim *g, double d) { g->heavy_frames = (int)d; }
static void set_workers(sim *g, double d) { g->workers = (unsigned)d; }
static void set_hitch_at(sim *g, double d) { g->hitch_at = d; }
static void set_hitch_ms(sim *g, double d) { g->hitch_ms = d; }
static void set_format(sim *g, double d) { g->format_major = (unsigned)d; }
static void set_scale(sim *g, double d) { g->scale = d; }

/* The options that take a number in [lo, hi] (an integer where integer
 * is 1); `bad` is the error's text. */
static const struct {
    const char *name;
    double lo, hi;
    int integer;
    void (*set)(sim *g, double v);
    const char *bad;
} number_opts[] = {
    {"--seconds", 0.001, 86400, 0, set_seconds,
     "--seconds takes 0.001..86400"},
    {"--frames", 1, 1e9, 1, set_frames, "--frames takes an integer 1..1e9"},
    {"--fps-cap", 1, 10000, 0, set_fps_cap, "--fps-cap takes 1..10000 Hz"},
    {"--ramp", -90, 1000, 0, set_ramp,
     "--ramp takes a percentage -90..1000"},
    {"--heavy-frames", 0, 2 * BIMODAL_STRETCH, 1, set_heavy,
     "--heavy-frames takes an integer 0..50"},
    {"--workers", 1, 64, 1, set_workers, "--workers takes an integer 1..64"},
    {"--hitch-at", 0, 86400, 0, set_hitch_at,
     "--hitch-at takes 0..86400 seconds"},
    {"--hitch-ms", 0, 60000, 0, set_hitch_ms, "--hitch-ms takes 0..60000"},
    {"--format-major", 1, 4, 1, set_format,
     "--format-major takes 1, 2, 3 or 4"},
    {"--scale", 0.001, 1000, 0, set_scale, "--scale takes 0.001..1000"},
};

/* --slow NAME:PCT: every work scope named NAME takes PCT % more. -1 done,
 * 2 bad. */
static int parse_slow(sim *g, const char *v)
{
    double d;
    const char *colon = strrchr(v, ':');
    if (!colon || !parse_double(colon + 1, -90, 10000, &d))
        return bad("--slow takes NAME:PCT", v);
    size_t n = (size_t)(colon - v);
    int found = 0;
    for (int k = 0; k < S_COUNT; k++)
        if (scope_defs[k].kind != K_WAIT && strlen(scope_defs[k].name) == n &&
            strncmp(scope_defs[k].name, v, n) == 0) {
            g->slow[k] *= 1.0 + d / 100.0;
            found = 1;
        }
    return found ? -1 : bad("--slow names no work scope of --help", v);
}

/* Option a with its value v: -1 taken, 2 bad (said on stderr). */
static int parse_valued(sim *g, const char *a, const char *v)
{
    if (strcmp(a, "--seed") == 0) {
        char *end;
        errno = 0;
        g->seed = strtoull(v, &end, 10);
        return errno || end == v || *end ? bad("--seed takes an integer", v)
                                         : -1;
    }
    if (strcmp(a, "--slow") == 0)
        return parse_slow(g, v);
    for (size_t k = 0; k < sizeof number_opts / sizeof *number_opts; k++) {
        if (strcmp(a, number_opts[k].name) != 0)
            continue;
        double d;
        if (!parse_double(v, number_opts[k].lo, number_opts[k].hi, &d) ||
            (number_opts[k].integer && d != floor(d)))
            return bad(number_opts[k].bad, v);
        number_opts[k].set(g, d);
        return -1;
    }
    return bad("unknown option", a);
}

/* A flag option a: 1 set, 0 not a flag. */
static int parse_flag(sim *g, const char *a)
{
    for (size_t k = 0; k < sizeof flag_opts / sizeof *flag_opts; k++)
        if (strcmp(a, flag_opts[k].name) == 0) {
            *(int *)((char *)g + flag_opts[k].field) = 1;
            return 1;
        }
    return 0;
}

/* The command line into g and *out (the capture's path): -1 go on, 0
 * done (--help), 2 bad (said on stderr). */
static int parse_args(sim *g, int argc, char **argv, const char **out)
{
    int have_seconds = 0, have_frames = 0;
    *out = NULL;
    for (int i = 0; i < S_COUNT; i++)
        g->slow[i] = 1.0;
    g->heavy_frames = BIMODAL_STRETCH;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (parse_flag(g, a))
            continue;
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc)
                return bad("option needs a value", a);
            int rc = parse_valued(g, a, argv[++i]);
            if (rc != -1)
                return rc;
            have_seconds |= strcmp(a, "--seconds") == 0;
            have_frames |= strcmp(a, "--frames") == 0;
        } else if (!*out) {
            *out = a;
        } else {
            return bad("more than one output file", a);
        }
    }
    if (have_seconds && have_frames)
        return bad("give --seconds or --frames, not both", "--frames");
    if (!*out)
        return bad("no output file", "");
    return -1;
}

int main(int argc, char **argv)
{
    static sim g; /* large: the asset names */
    g.seed = 1;
    g.seconds = 3;
    g.workers = 4;
    g.scale = 1;
    g.hitch_at = -1;
    g.hitch_ms = 300;
    const char *out;
    int rc = parse_args(&g, argc, argv, &out);
    if (rc >= 0)
        return rc;
    static const char *kinds[] = {"rock", "tree", "crate", "door", "lamp",
                                  "barrel", "fence", "statue", "bush"};
    for (int i = 0; i < ASSETS; i++)
        snprintf(g.assets[i], sizeof g.assets[i], "asset_%02d_%s", i,
                 kinds[i % 9]);
    pthread_mutex_init(&g.qlock, NULL);
    pthread_cond_init(&g.qwork, NULL);
    pthread_cond_init(&g.qdone, NULL);
    pthread_mutex_init(&g.hlock, NULL);
    pthread_cond_init(&g.hcond, NULL);

    cap_meta_kv meta[] = {{"program", "game_sim"}};
    cap_capture_options opt = {.meta = meta, .meta_count = 1,
                               .format_major = g.format_major};
    cap_result r = cap_open(out, &opt);
    if (r != CAP_OK) {
        fprintf(stderr, "game_sim: cannot record into '%s': %s\n", out,
                cap_result_message(r));
        return 1;
    }
    CAP_THREAD("main");
    g.gpu_track = cap_gpu_track("gpu", 1.0);
    uint64_t now = mono_ns();
    cap_gpu_calibrate(g.gpu_track, now, now, 0);
    for (int i = 0; i < 6; i++)
        g.gpu_names[i] = cap_name_register(scope_defs[G_FRAME + i].name,
                                           __FILE__, __LINE__);
    lane ln = {.rng = g.seed};

    if (g.outside_frames) {
        SIM_WORK(S_LOAD_LEVEL, &g, &ln, 1.0);
        pthread_t loader;
        if (pthread_create(&loader, NULL, loader_main, &g) == 0)
            pthread_join(loader, NULL);
    }

    pthread_t render, workers[64];
    worker_arg wargs[64];
    int render_ok = pthread_create(&render, NULL, render_main, &g) == 0;
    int failed = !render_ok;
    unsigned started = 0;
    for (; !failed && started < g.workers; started++) {
        wargs[started] = (worker_arg){&g, started};
        if (pthread_create(&workers[started], NULL, worker_main,
                           &wargs[started]) != 0) {
            failed = 1;
            break;
        }
    }

    uint64_t t0 = mono_ns();
    uint64_t frame = 0;
    while (!failed) {
        uint64_t frame_start = mono_ns();
        CAP_FRAME_MARK();
        if (frame == 0) {
            pthread_mutex_lock(&g.qlock);
            g.go = 1;
            pthread_cond_broadcast(&g.qwork);
            pthread_mutex_unlock(&g.qlock);
        }
        double f = work_factor(&g, frame, t0);
        if (g.hitch_at >= 0 && frame_start - t0 >= (uint64_t)(g.hitch_at * 1e9)) {
            /* --hitch-at: this one frame also busy-waits --hitch-ms */
            g.hitch_at = -1;
            fprintf(stderr, "game_sim: hitch in frame %llu (%.0f ms)\n",
                    (unsigned long long)cap_frame_current(), g.hitch_ms);
            CAP_SCOPE("hitch");
            uint64_t until = mono_ns() + (uint64_t)(g.hitch_ms * 1e6);
            while (mono_ns() < until) {
            }
        }
        main_frame(&g, &ln, frame, cap_frame_current(), f, frame_start);
        frame++;
        if (g.frames ? frame >= g.frames
                     : mono_ns() - t0 >= (uint64_t)(g.seconds * 1e9))
            break;
    }
    /* the last frame lasts until render and workers are done with it */
    {
        SIM_WAIT(S_WAIT_RENDER);
        pthread_mutex_lock(&g.hlock);
        g.h_stop = 1;
        pthread_cond_broadcast(&g.hcond);
        pthread_mutex_unlock(&g.hlock);
        pthread_mutex_lock(&g.qlock);
        g.q_stop = 1;
        g.go = 1;
        pthread_cond_broadcast(&g.qwork);
        pthread_mutex_unlock(&g.qlock);
        if (render_ok)
            pthread_join(render, NULL);
        for (unsigned i = 0; i < started; i++)
            pthread_join(workers[i], NULL);
    }
    CAP_FRAME_END();

    if (g.outside_frames) {
        SIM_WORK(S_SAVE_STATE, &g, &ln, 1.0);
        { SIM_WORK(S_RELEASE_RESOURCES, &g, &ln, 1.0); }
    }
    lane_done(&g, &ln);
    r = cap_close();
    if (failed) {
        fprintf(stderr, "game_sim: cannot start a thread\n");
        return 1;
    }
    if (r != CAP_OK) {
        fprintf(stderr, "game_sim: recording into '%s' failed: %s\n", out,
                cap_result_message(r));
        return 1;
    }
    if (g.truth_report)
        truth_report(&g.p);
    return 0;
}
