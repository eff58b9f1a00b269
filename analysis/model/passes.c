/* passes.c - the load passes' table and the loader's two calls into it
 * (pass.h). */
#include "model_int.h"
#include "pass.h"

/* In the order they run: --wait's flags before --over-time checks its
 * sums against them. */
static const ml_pass *const passes[] = {
    &ml_pass_split,
    &ml_pass_waits,
    &ml_pass_over_time,
};

int ml_passes_frames(loader *L)
{
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
        if (passes[i]->frames && passes[i]->wanted(L) &&
            passes[i]->frames(L) != 0)
            return -1;
    return 0;
}

int ml_passes_finish(loader *L)
{
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
        if (passes[i]->finish && passes[i]->wanted(L) &&
            passes[i]->finish(L) != 0)
            return -1;
    return 0;
}
