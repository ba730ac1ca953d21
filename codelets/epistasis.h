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

/* cl_arg of one round task. Buffers: `order` plane blocks (R) for blocks b_1 ≤ … ≤ b_order (a
 * handle may repeat), the score table (vector of double, R), the result (vector of bytes,
 * tg_epi_result_size(topk), W). The round evaluates every s_1 < … < s_order with s_i in block b_i
 * (s_i < first[i] + nsnp[i]).
 * Key (lower is better; R = R0 + R1 samples valid at all k SNPs; R == 0 gives +INFINITY), with
 * the loop over g = 0 .. 3^k−1 and t the score table:
 *   K2  (t[i] = lgamma(i+1)): acc = acc + ((t[r_g+1] − t[r0_g]) − t[r1_g]); key = acc
 *   MI  (t[i] = i·log i):     a = a + t[r0_g]; a = a + t[r1_g]; a = a − t[r_g];
 *                             key = −((((a − t[R0]) − t[R1]) + t[R]) / R)
 *   χ²  (t unused):           for r_g > 0, c = 0, 1 with R_c > 0:
 *                             a = a + (double)(rc_g·rc_g) / (double)(r_g·R_c) (64-bit products);
 *                             key = −((a − 1)·R) */
struct tg_epi_round_arg {
    int32_t order;    /* 2..4 */
    int32_t block;    /* B, SNPs per plane block */
    int32_t complete; /* 1: no genotype missing anywhere (valid planes all ones on real samples) */
    int32_t score;    /* enum tg_epi_score */
    int32_t topk;
    int32_t nsnp[TG_EPI_MAX_ORDER];   /* real SNPs in each of the round's blocks (≤ B) */
    int64_t words[2];                 /* words per plane: controls, cases */
    int64_t n[2];                     /* samples per class */
    int64_t first[TG_EPI_MAX_ORDER];  /* global index of the first SNP of each block */
};

struct tg_epi_hit {
    double key;
    int32_t snp[TG_EPI_MAX_ORDER]; /* global SNP indices, −1 past the order */
};

/* A round's result: its best hits sorted by (key, snp[] lexicographic), nhit = min(topk,
 * evaluated). */
struct tg_epi_result {
    uint64_t evaluated;
    int32_t nhit;
    int32_t pad;
    struct tg_epi_hit hit[];
};

static inline size_t tg_epi_result_size(int topk) {
    return sizeof(struct tg_epi_result) + (size_t)topk * sizeof(struct tg_epi_hit);
}

void tg_epi_round_cpu(void *buffers[], void *cl_arg);
void tg_epi_round_cuda(void *buffers[], void *cl_arg);

#ifdef __cplusplus
}
#endif
#endif
