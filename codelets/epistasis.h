/* Epistasis round codelets: the interface between the search (src/algo/epistasis.c), the CPU
 * reference (codelets/epistasis.c) and the CUDA kernel (codelets/epistasis_cuda.cu).
 *
 * Plane block: one StarPU vector of uint64_t holding B consecutive SNPs (block b = SNPs b·B ..
 * b·B+B-1), laid out [class c: 0 controls, 1 cases][snp s][plane p][word w]: plane 0 = genotype 0
 * (A1 count 0), plane 1 = genotype 1, plane 2 = valid (not missing); bit i of word w is sample
 * 64w+i of the class, in .fam order. words[c] = 4·ceil(n_c/256), one 256-bit step of the binary
 * tensor-core mma; padding bits are 0 in every plane, SNPs past M have all planes 0. Genotype 2 is
 * not stored: it is valid ∧ ¬g0 ∧ ¬g1.
 *
 * Cells: g = Σ g_i·3^(k−i) over genotypes g_i of the k SNPs (first SNP most significant); r0_g,
 * r1_g count controls / cases valid at all k SNPs. From E(x_1..x_k), x_i ∈ {g0, g1, V}, the
 * popcount of the AND of the chosen planes, the table follows by applying along every SNP
 * [N0, N1, N2] = [E0, E1, EV − E0 − E1]. With complete data an entry with V at SNP i is the count
 * of the same combination without SNP i, so only the 2^k entries without V are per-combination
 * work (the paper's derivation of the remaining cells from lower-order tables).
 *
 * Scores are sums over cells of table lookups, evaluated in one fixed order (see
 * tg_epi_round_arg), so the CPU and CUDA paths give bit-identical keys. */
#ifndef TG_CODELETS_EPISTASIS_H
#define TG_CODELETS_EPISTASIS_H
#include <stdint.h>

#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_EPI_MAX_ORDER 4

enum tg_epi_score { TG_EPI_K2, TG_EPI_MI, TG_EPI_CHI2 };

/* cl_arg of one round task, passed as is (STARPU_CL_ARGS with a heap copy that StarPU frees;
 * not STARPU_VALUE, which packs it), so both codelets read it by a cast.
 * Buffers: `order` plane blocks (R) for blocks b_1 ≤ … ≤ b_order (a handle may repeat), the
 * score table (vector of double, R), the result (vector of bytes, tg_epi_result_size(topk), W).
 * The round evaluates every s_1 < … < s_order with s_i in block b_i (s_i < first[i] + nsnp[i])
 * and s_1 < first_end (a SNP set's scan: the set's SNPs come first in the planes).
 * Key (lower is better; R = R0 + R1 samples valid at all k SNPs; R == 0 gives +INFINITY), with
 * t the score table: three partial sums a_d, d = 0, 1, 2 (the genotype of the first SNP), each
 * starting at 0 and looping over its cells g = d·3^(k−1) .. (d+1)·3^(k−1) − 1 in order, then
 * a = (a_0 + a_1) + a_2:
 *   K2  (t[i] = lgamma(i+1)): a_d = a_d + ((t[r_g+1] − t[r0_g]) − t[r1_g]);
 *                             key = a − ((t[R+1] − t[R0]) − t[R1]) (the K2 of the table minus
 *                             that of its class margins over the same R samples: −ln BF)
 *   MI  (t[i] = i·log i):     a_d = a_d + t[r0_g]; a_d = a_d + t[r1_g]; a_d = a_d − t[r_g];
 *                             key = −((((a − t[R0]) − t[R1]) + t[R]) / R)
 *   χ²  (t unused):           for r_g > 0, c = 0, 1 with R_c > 0:
 *                             a_d = a_d + (double)(rc_g·rc_g) / (double)(r_g·R_c) (64-bit
 *                             products); key = −((a − 1)·R)
 * (The CUDA path gives each genotype of the first SNP its own lane.)
 * Pass mode (pass = 1; MI and χ², tg_epi_opts.p_threshold): instead of the best topk of all
 * combinations, the round keeps the best topk of those that pass, counting them all in
 * `passing`: a combination passes when its statistic (χ²: −key; MI: G = −key·(2.0·R)) is at
 * least pass_stat[df], df = (non-empty cells − 1)·(non-empty classes − 1), and, when has_after,
 * it comes after (after_key, after_snp) in the hit order (the next page of a round that had more
 * than topk). */
struct tg_epi_round_arg {
    int32_t order;    /* 2..4 */
    int32_t block;    /* B, SNPs per plane block */
    int32_t complete; /* 1: no genotype missing in the round's blocks (valid planes all ones on real
                       * samples); see block_missing */
    int32_t score;    /* enum tg_epi_score */
    int32_t topk;
    int32_t nsnp[TG_EPI_MAX_ORDER];   /* real SNPs in each of the round's blocks (≤ B) */
    int64_t words[2];                 /* words per plane: controls, cases */
    int64_t n[2];                     /* samples per class */
    int64_t first[TG_EPI_MAX_ORDER];  /* global index of the first SNP of each block */
    int64_t search; /* the search the round belongs to (a GPU worker keeps a threshold per search) */
    int64_t first_end; /* bound on the first SNP (the SNPs in the planes without a set) */
    int32_t pass, has_after;          /* pass mode, and its page cursor */
    int32_t after_snp[TG_EPI_MAX_ORDER];
    double after_key;
    double pass_stat[81]; /* by df (0 .. 3^k − 1) */
    /* per plane block (first[i] / block), 1 where a sample used has a missing call; NULL:
     * `complete` as given. A search submits its first rounds before their blocks are built
     * and writes each block's flag before the block's handle is released, so the round reads
     * them when it runs (tg_epi_round_complete). */
    const char *block_missing;
};

/* Whether the round's blocks hold no missing call: a->complete, or from a->block_missing. */
static inline int tg_epi_round_complete(const struct tg_epi_round_arg *a) {
    if (!a->block_missing) return a->complete;
    for (int i = 0; i < a->order; i++)
        if (a->block_missing[a->first[i] / a->block]) return 0;
    return 1;
}

struct tg_epi_hit {
    double key;
    int32_t snp[TG_EPI_MAX_ORDER]; /* global SNP indices, −1 past the order */
};

/* A round's result: its best hits sorted by (key, snp[] lexicographic). nhit = min(topk,
 * evaluated) on the CPU; a GPU worker may leave out hits worse than the topk-th best it has
 * already reported in the same search (which cannot make the search's top k), so nhit can be
 * lower there. Pass mode: nhit = min(topk, passing) on every worker. */
struct tg_epi_result {
    uint64_t evaluated;
    uint64_t passing; /* pass mode: the combinations that pass (after the cursor) */
    int32_t nhit;
    int32_t pad;
    struct tg_epi_hit hit[];
};

static inline size_t tg_epi_result_size(int topk) {
    return sizeof(struct tg_epi_result) + (size_t)topk * sizeof(struct tg_epi_hit);
}

void tg_epi_round_cpu(void *buffers[], void *cl_arg);
void tg_epi_round_cuda(void *buffers[], void *cl_arg);

/* ---- added with the CPU side (codelets/epistasis.c) */

/** Round codelets by order − 2 (perfmodels tg_epi_round_o2 .. _o4); filled by
 * tg_epi_codelets_init(), called from tg_codelets_init(). */
extern struct starpu_codelet tg_cl_epi_round[TG_EPI_MAX_ORDER - 1];
void tg_epi_codelets_init(void);
/** Inserts a round of order a->order on the plane blocks @p blk[0 .. order−1] and the score
 * table @p table, writing @p result, as this rank's own work (TG_INSERT_LOCAL: the rounds a rank
 * runs and their handles are its own); @p work: the perfmodel's size; done(done_arg) once it
 * has run. 0, or a negative errno (−ENOMEM: no memory for the task's copy of @p a). */
int tg_insert_epi_round(const struct tg_epi_round_arg *a, const starpu_data_handle_t blk[],
                        starpu_data_handle_t table, starpu_data_handle_t result, double work,
                        void (*done)(void *), void *done_arg);

/** Fills the score table t (length n0 + n1 + 2) of a score kind (zeros for χ²). */
void tg_epi_score_table(enum tg_epi_score score, int64_t n, double *t);
/** The key of one table (r0, r1: 3^k counts in cell order), in the documented order. */
double tg_epi_key(enum tg_epi_score score, int order, const int64_t *r0, const int64_t *r1,
                  const double *t);
/** Pass mode: whether a table (r0, r1: 3^k counts) with key @p key passes pass_stat (the
 * documented rule, without the cursor). */
int tg_epi_passes(const struct tg_epi_round_arg *a, const int64_t *r0, const int64_t *r1,
                  double key);
/** Orders hits: by key, then snp[] lexicographically (negative, 0, positive). */
int tg_epi_hit_cmp(const struct tg_epi_hit *a, const struct tg_epi_hit *b);
/** Adds @p h to the sorted best list hits[0 .. *n) of at most @p topk entries. */
void tg_epi_keep(struct tg_epi_hit *hits, int32_t *n, int topk, const struct tg_epi_hit *h);

/** Offset in words of plane p of SNP s of class c inside a plane block. */
static inline int64_t tg_epi_plane_offset(int block, const int64_t words[2], int c, int s, int p) {
    return (c ? 3 * (int64_t)block * words[0] : 0) + (3 * (int64_t)s + p) * words[c];
}

/** Contingency table of one combination by AND + popcount with the valid planes (exact with
 * or without missing genotypes): blk[i] is the plane block holding SNP local index s[i]. */
void tg_epi_table(int order, int block, const int64_t words[2], const uint64_t *const blk[],
                  const int32_t s[], int64_t r0[], int64_t r1[]);

/** The rounds' counts against runs of SNPs with the selected popcount kernel: out[(j·nx + i)·Q
 * + q] = popcount(x[i] AND plane q of y SNP j) over nw words (a multiple of 4), for x planes
 * x[0 .. nx) and planes q < Q (Q = 2 or 3) of ny y SNPs, their planes nw words apart and the
 * SNPs @p stride words apart (3·nw in a plane block). */
void tg_epi_pair_counts(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q,
                        int64_t nw, int64_t stride, int64_t *out);

/** Selects the CPU popcount kernel: "scalar" (64-bit popcnt), "avx2", "avx512" (VPOPCNTDQ), or
 * NULL for the best this CPU supports. Returns the name now in use, or NULL when the named one
 * is not supported here (the choice is then unchanged). Not thread-safe: call while no round
 * runs (tests use it to run every kernel). */
const char *tg_epi_popc_select(const char *name);

#ifdef __cplusplus
}
#endif
#endif
