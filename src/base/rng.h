/* Seeded pseudo-random numbers (xoshiro256**, seeded by splitmix64): one stream per object, so
 * simulations and tests are reproducible from a printed seed. */
#ifndef TG_RNG_H
#define TG_RNG_H
#include <stdint.h>

typedef struct {
    uint64_t s[4];
    int has_spare;
    double spare;
} tg_rng;

void tg_rng_seed(tg_rng *r, uint64_t seed);
uint64_t tg_rng_u64(tg_rng *r);
/** Uniform in [0, 1) with 53 random bits. */
double tg_rng_uniform(tg_rng *r);
/** Uniform integer in [0, n). */
uint64_t tg_rng_below(tg_rng *r, uint64_t n);
/** Standard normal (Marsaglia polar method). */
double tg_rng_normal(tg_rng *r);
/** Beta(a, b) for any a, b > 0, in [0, 1]: X/(X + Y) of two Gamma draws (Marsaglia–Tsang),
 * taken in logs so that tiny shapes give values near 0 or 1, never NaN. */
double tg_rng_beta(tg_rng *r, double a, double b);
/** The linear map of a number of steps of the generator's state (xoshiro's update is linear
 * over GF(2)): column k is the image of state bit k. 8 KiB. */
typedef struct {
    uint64_t col[256][4];
} tg_rng_jump;
/** Sets @p j to @p steps calls of tg_rng_u64 (so that one stream can be cut into pieces drawn
 * in parallel and still give the numbers one thread would). Milliseconds: make it once. */
void tg_rng_jump_init(tg_rng_jump *j, uint64_t steps);
/** Moves @p r on as j's steps of tg_rng_u64 would (its spare normal deviate is dropped). */
void tg_rng_jump_apply(const tg_rng_jump *j, tg_rng *r);
/** A seed from the clock and process id, for tests that print the seed they use. */
uint64_t tg_rng_fresh_seed(void);
#endif
