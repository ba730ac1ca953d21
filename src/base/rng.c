/* xoshiro256** (Blackman & Vigna) seeded through splitmix64; normal deviates by the polar method,
 * Beta deviates from two Gamma deviates (Marsaglia & Tsang). */
#include "base/rng.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tg_rng_seed(tg_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
    r->has_spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline void step(uint64_t s[4]) {
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
}

uint64_t tg_rng_u64(tg_rng *r) {
    uint64_t out = rotl(r->s[1] * 5, 7) * 9;
    step(r->s);
    return out;
}

/* out = the map applied to the state x: the XOR of the columns of x's set bits */
static void map_apply(const tg_rng_jump *j, const uint64_t x[4], uint64_t out[4]) {
    uint64_t y[4] = {0};
    for (int k = 0; k < 256; k++)
        if (x[k >> 6] >> (k & 63) & 1)
            for (int w = 0; w < 4; w++) y[w] ^= j->col[k][w];
    for (int w = 0; w < 4; w++) out[w] = y[w];
}

/* a = b∘a: the map a, then b */
static void map_then(tg_rng_jump *a, const tg_rng_jump *b) {
    for (int k = 0; k < 256; k++) map_apply(b, a->col[k], a->col[k]);
}

void tg_rng_jump_init(tg_rng_jump *j, uint64_t steps) {
    tg_rng_jump pow2, sq; /* the map of 2^b steps, b the bit of steps at hand */
    for (int k = 0; k < 256; k++) {
        for (int w = 0; w < 4; w++) j->col[k][w] = pow2.col[k][w] = 0;
        j->col[k][k >> 6] = pow2.col[k][k >> 6] = (uint64_t)1 << (k & 63);
        step(pow2.col[k]);
    }
    for (; steps; steps >>= 1) {
        if (steps & 1) map_then(j, &pow2);
        if (steps > 1) {
            sq = pow2;
            map_then(&pow2, &sq);
        }
    }
}

void tg_rng_jump_apply(const tg_rng_jump *j, tg_rng *r) {
    map_apply(j, r->s, r->s);
    r->has_spare = 0;
}

double tg_rng_uniform(tg_rng *r) { return (double)(tg_rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t tg_rng_below(tg_rng *r, uint64_t n) {
    /* rejection keeps it unbiased */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
    do x = tg_rng_u64(r);
    while (x >= lim);
    return x % n;
}

double tg_rng_normal(tg_rng *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u, v, s;
    do {
        u = 2 * tg_rng_uniform(r) - 1;
        v = 2 * tg_rng_uniform(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    s = sqrt(-2 * log(s) / s);
    r->spare = v * s;
    r->has_spare = 1;
    return u * s;
}

/* log of a Gamma(a, 1) deviate: Marsaglia & Tsang (2000), "A simple method for generating
 * gamma variables", for a ≥ 1; for a < 1 their boost Gamma(a) = Gamma(a + 1)·U^(1/a) (section
 * 6), whose U^(1/a) underflows for small a unless kept as a log. */
static double log_gamma_deviate(tg_rng *r, double a) {
    double boost = 0;
    if (a < 1) {
        boost = log(1 - tg_rng_uniform(r)) / a; /* U in (0, 1]: a finite log */
        a += 1;
    }
    const double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = tg_rng_normal(r), v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = 1 - tg_rng_uniform(r);
        if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return log(d * v) + boost;
    }
}

double tg_rng_beta(tg_rng *r, double a, double b) {
    double lx = log_gamma_deviate(r, a), ly = log_gamma_deviate(r, b);
    return 1 / (1 + exp(ly - lx)); /* X/(X + Y); exp overflows to inf, giving 0, never NaN */
}

uint64_t tg_rng_fresh_seed(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
    return splitmix64(&x);
}
