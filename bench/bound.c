/* Lower bounds on the makespan: the area bound (exact for two worker kinds) and the critical
 * path (bound.h). */
#include "bench/bound.h"

#include <math.h>
#include <stdlib.h>

struct flex {
    double a, b, n; /* seconds on kind 0 and 1, count */
};

/* by b/a descending: the types that save kind 1 the most time per second of kind 0 first */
static int by_ratio(const void *x, const void *y) {
    const struct flex *p = x, *q = y;
    double l = p->b * q->a, r = q->b * p->a; /* b_p/a_p > b_q/a_q without dividing by 0 */
    return (l < r) - (l > r);
}

/* Loads L0 = Σ n·a on kind 0 and L1 = Σ n·b on kind 1 are feasible for T when L0 ≤ p·T and
 * L1 ≤ q·T. Moving a fraction of type t from kind 1 to kind 0 trades n·b for n·a, so for a
 * given L0 the least L1 comes from the greedy by b/a (a fractional knapsack): L1 is a convex,
 * non-increasing, piecewise linear function of L0 whose pieces follow that order. T(L0) =
 * max(L0/p, L1(L0)/q) is smallest where the two cross, found piece by piece. */
double tg_area_bound(int ntypes, const double *count, const double (*time)[2],
                     const int nworkers[2]) {
    double p = nworkers[0], q = nworkers[1], fixed0 = 0, fixed1 = 0;
    struct flex *f = malloc((size_t)(ntypes > 0 ? ntypes : 1) * sizeof *f);
    if (!f) return NAN;
    int nf = 0;
    for (int t = 0; t < ntypes; t++) {
        double a = p > 0 ? time[t][0] : INFINITY, b = q > 0 ? time[t][1] : INFINITY;
        if (count[t] <= 0) continue;
        if (isinf(a) && isinf(b)) {
            free(f);
            return INFINITY;
        }
        if (isinf(b)) fixed0 += count[t] * a;
        else if (isinf(a)) fixed1 += count[t] * b;
        else f[nf++] = (struct flex){a, b, count[t]};
    }
    if (!nf && !fixed0 && !fixed1) {
        free(f);
        return 0;
    }
    qsort(f, (size_t)nf, sizeof *f, by_ratio);
    /* start with every flexible type on kind 1 */
    double l0 = fixed0, l1 = fixed1;
    for (int i = 0; i < nf; i++) l1 += f[i].n * f[i].b;
    double T = NAN;
    if (p == 0) T = l1 / q;
    else if (q == 0) {
        for (int i = 0; i < nf; i++) l0 += f[i].n * f[i].a;
        T = l0 / p;
    }
    for (int i = 0; isnan(T) && i <= nf; i++) {
        if (l0 / p >= l1 / q || i == nf) { /* crossed at the start of this piece, or never */
            T = fmax(l0 / p, l1 / q);
            break;
        }
        double e0 = l0 + f[i].n * f[i].a, e1 = l1 - f[i].n * f[i].b;
        if (e0 / p >= e1 / q) {
            /* within: L0/p = (l1 − s·(L0 − l0))/q with slope s = b/a (a > 0 here: a piece of
             * length 0 has e0 = l0 and crossed at its start) */
            double s = f[i].b / f[i].a;
            T = f[i].a > 0 ? (l1 + s * l0) / (q + p * s) : l0 / p;
            break;
        }
        l0 = e0;
        l1 = e1;
    }
    free(f);
    return T;
}

double tg_critical_path(const tg_task_record *r, size_t n, const double *cost) {
    if (!n) return 0;
    int64_t top = r[n - 1].id + 1;
    double *finish = malloc((size_t)top * sizeof *finish);
    if (!finish) return NAN;
    for (int64_t i = 0; i < top; i++) finish[i] = 0; /* ids not recorded add nothing */
    double cp = 0;
    /* predecessors have lower ids: one pass in id order */
    for (size_t i = 0; i < n; i++) {
        double start = 0;
        for (int k = 0; k < r[i].npred; k++)
            if (r[i].pred[k] >= 0 && r[i].pred[k] < top) start = fmax(start, finish[r[i].pred[k]]);
        finish[r[i].id] = start + cost[i];
        cp = fmax(cp, finish[r[i].id]);
    }
    free(finish);
    return cp;
}
