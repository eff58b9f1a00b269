/* verdict.c - the --over-time rule table (verdict.h): each row's key,
 * figures and rule, a list of verdicts, and ratios. The decisions over an
 * over-time result are over_time_verdicts.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

static const struct {
    const char *key, *figures, *rule;
} rows[AN_V_COUNT] = {
#define AN__V_ROW(e, key, figs, rule) {key, figs, rule},
    AN_VERDICT_LIST(AN__V_ROW)
#undef AN__V_ROW
};

const char *an_verdict_key(an_verdict_kind k)
{
    return (unsigned)k < AN_V_COUNT ? rows[k].key : "?";
}

const char *an_verdict_figures(an_verdict_kind k)
{
    return (unsigned)k < AN_V_COUNT ? rows[k].figures : "?";
}

const char *an_verdict_rule(an_verdict_kind k)
{
    return (unsigned)k < AN_V_COUNT ? rows[k].rule : "?";
}

void an_verdicts_add(an_verdicts *vs, an_verdict v)
{
    if (vs->n < AN_VERDICTS_MAX)
        vs->v[vs->n++] = v;
}

int an_verdicts_has(const an_verdicts *vs, an_verdict_kind k)
{
    for (size_t i = 0; i < vs->n; i++)
        if (vs->v[i].kind == k)
            return 1;
    return 0;
}

an_ratio an_ratio_of(double num, double den, double zero)
{
    an_ratio r = {AN_RATIO_NO_DATA, NAN};
    if (isnan(num) || isnan(den))
        return r;
    if (isinf(num) || isinf(den)) { /* inf / inf would be nan */
        r.state = AN_RATIO_INFINITE;
        return r;
    }
    int nz = zero > 0 ? fabs(num) < zero : num == 0;
    int dz = zero > 0 ? fabs(den) < zero : den == 0;
    if (dz) {
        r.state = nz ? AN_RATIO_AT_ZERO : AN_RATIO_FROM_ZERO;
        return r;
    }
    r.state = AN_RATIO_VALUE;
    r.value = num / den;
    return r;
}
