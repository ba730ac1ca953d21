/* Genotype matrix products on the CPU: the 5codes kernel (Freudenberg et al. 2023, section
 * 2.2.2), its codelet table and tg_insert_fivecodes. See codelets/fivecodes.h for the layout.
 *
 * For each group g of five table rows the kernel builds the 243 possible dot products
 * tab[code] = base + Σ_t d_t(code)·A_t (A_t = w_t·in_t: a row of Λ, k values as 256-bit vectors)
 * and adds tab[code] to the accumulator of every output row: one vector add per (row, group)
 * instead of 5k multiply-adds. Two groups are applied per pass over the rows, so each
 * accumulator row is loaded and stored once per ten table rows; rows are processed in chunks
 * whose accumulators stay in L2. One kernel for double and float (a macro over the type). */
#include "codelets/fivecodes.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

struct starpu_codelet tg_cl_fivecodes[2][2];
static struct starpu_perfmodel fc_models[2][2];
static const char *const fc_symbols[2][2] = {{"tg_fivecodes_zl_fp64", "tg_fivecodes_zl_fp32"},
                                             {"tg_fivecodes_ztl_fp64", "tg_fivecodes_ztl_fp32"}};

/* Accumulator bytes per row chunk: well inside a 1 MiB L2 next to two tables. */
#define FC_ACC_BYTES (512 * 1024)

#define FC_DEFINE(T, SFX)                                                                          \
    typedef T fc_vec_##SFX __attribute__((vector_size(32)));                                       \
    enum { FC_L_##SFX = 32 / sizeof(T) };                                                          \
                                                                                                   \
    /* tab[c] = base + sum_t d_t(c)*A_t, adding one base-3 digit at a time (242 vector adds) */    \
    static inline __attribute__((always_inline)) void fc_table_##SFX(                              \
        fc_vec_##SFX *tab, int nv, const fc_vec_##SFX *base, const fc_vec_##SFX *A) {              \
        for (int v = 0; v < nv; v++) tab[v] = base[v];                                             \
        for (int t = 0, p = 1; t < 5; t++, p *= 3)                                                 \
            for (int c = 0; c < p; c++)                                                            \
                for (int v = 0; v < nv; v++) {                                                     \
                    fc_vec_##SFX x = tab[c * nv + v] + A[t * nv + v];                              \
                    tab[(c + p) * nv + v] = x;                                                     \
                    tab[(c + 2 * p) * nv + v] = x + A[t * nv + v];                                 \
                }                                                                                  \
    }                                                                                              \
                                                                                                   \
    /* A_t (scaled rows of in, 0 past the end), base (trans 0: -sum_t c_t*in_t) of group g */      \
    static inline __attribute__((always_inline)) void fc_group_##SFX(                              \
        const struct tg_fivecodes_arg *a, size_t g, const T *in, size_t nt, size_t ldin,           \
        const double *coef, int nv, fc_vec_##SFX *A, fc_vec_##SFX *base) {                         \
        T s[6][TG_FC_MAXK] __attribute__((aligned(32)));                                           \
        memset(s, 0, sizeof s);                                                                    \
        for (int t = 0; t < 5; t++) {                                                              \
            size_t row = 5 * g + (size_t)t;                                                        \
            if (row >= nt) break;                                                                  \
            T w = a->trans ? (T)1 : (T)coef[2 * row], c = a->trans ? (T)0 : (T)coef[2 * row + 1];  \
            for (int col = 0; col < a->k; col++) {                                                 \
                T x = in[row + (size_t)col * ldin];                                                \
                s[t][col] = w * x;                                                                 \
                s[5][col] -= c * x;                                                                \
            }                                                                                      \
        }                                                                                          \
        for (int t = 0; t < 5; t++) memcpy(A + t * nv, s[t], (size_t)nv * sizeof *A);              \
        memcpy(base, s[5], (size_t)nv * sizeof *A);                                                \
    }                                                                                              \
                                                                                                   \
    /* builds the tables of groups g (and g+1 when two), then                                      \
     * acc[r] += tab0[code of row r in group g] (+ tab1[code of row r in group g+1]) */            \
    static inline __attribute__((always_inline)) void fc_pair_##SFX(                               \
        fc_vec_##SFX *acc, fc_vec_##SFX *tab, fc_vec_##SFX(*A)[5 * TG_FC_MAXK / FC_L_##SFX],       \
        fc_vec_##SFX(*base)[TG_FC_MAXK / FC_L_##SFX], const uint8_t *c0, size_t ldc, size_t nr,    \
        int nv, int two) {                                                                         \
        for (int q = 0; q <= two; q++)                                                             \
            fc_table_##SFX(tab + (size_t)q * TG_FC_NCODES * nv, nv, base[q], A[q]);                \
        const uint8_t *c1 = c0 + ldc;                                                              \
        const fc_vec_##SFX *tab1 = tab + (size_t)TG_FC_NCODES * nv;                                \
        if (two)                                                                                   \
            for (size_t r = 0; r < nr; r++) {                                                      \
                const fc_vec_##SFX *t0 = tab + (size_t)c0[r] * nv,                                 \
                                   *t1 = tab1 + (size_t)c1[r] * nv;                                \
                fc_vec_##SFX *o = acc + r * (size_t)nv;                                            \
                for (int v = 0; v < nv; v++) o[v] += t0[v] + t1[v];                                \
            }                                                                                      \
        else                                                                                       \
            for (size_t r = 0; r < nr; r++) {                                                      \
                const fc_vec_##SFX *t0 = tab + (size_t)c0[r] * nv;                                 \
                fc_vec_##SFX *o = acc + r * (size_t)nv;                                            \
                for (int v = 0; v < nv; v++) o[v] += t0[v];                                        \
            }                                                                                      \
    }                                                                                              \
                                                                                                   \
    __attribute__((target_clones("avx2", "default"))) static void fc_block_##SFX(                  \
        const struct tg_fivecodes_arg *a, const uint8_t *codes, size_t rows, size_t groups,        \
        size_t ldc, const T *in, size_t nt, size_t ldin, const double *coef, const int32_t *miss,  \
        T *out, size_t ldout) {                                                                    \
        typedef fc_vec_##SFX V;                                                                    \
        const int k = a->k, nv = (k + FC_L_##SFX - 1) / FC_L_##SFX;                                \
        size_t rb = FC_ACC_BYTES / ((size_t)nv * sizeof(V));                                       \
        if (rb > rows) rb = rows;                                                                  \
        V *tab = aligned_alloc(32, 2 * TG_FC_NCODES * (size_t)nv * sizeof(V));                     \
        V *acc = aligned_alloc(32, rb * (size_t)nv * sizeof(V));                                   \
        V A[2][5 * TG_FC_MAXK / FC_L_##SFX], base[2][TG_FC_MAXK / FC_L_##SFX];                     \
        STARPU_ASSERT_MSG(tab &&acc, "out of memory in the 5codes kernel");                        \
        for (size_t r0 = 0; r0 < rows; r0 += rb) {                                                 \
            size_t nr = rows - r0 < rb ? rows - r0 : rb;                                           \
            memset(acc, 0, nr *(size_t)nv * sizeof(V));                                            \
            for (size_t g = 0; g < groups; g += 2) {                                               \
                int two = groups - g >= 2;                                                         \
                for (int q = 0; q <= two; q++)                                                     \
                    fc_group_##SFX(a, g + (size_t)q, in, nt, ldin, coef, nv, A[q], base[q]);       \
                const uint8_t *c0 = codes + g * ldc + r0;                                          \
                /* a constant vector count for the usual k (<= 16 doubles): unrolled loops */      \
                switch (nv) {                                                                      \
                case 1: fc_pair_##SFX(acc, tab, A, base, c0, ldc, nr, 1, two); break;              \
                case 2: fc_pair_##SFX(acc, tab, A, base, c0, ldc, nr, 2, two); break;              \
                case 3: fc_pair_##SFX(acc, tab, A, base, c0, ldc, nr, 3, two); break;              \
                case 4: fc_pair_##SFX(acc, tab, A, base, c0, ldc, nr, 4, two); break;              \
                default: fc_pair_##SFX(acc, tab, A, base, c0, ldc, nr, nv, two);                   \
                }                                                                                  \
            }                                                                                      \
            for (size_t r = 0; r < nr; r++) {                                                      \
                T x[TG_FC_MAXK] __attribute__((aligned(32)));                                      \
                memcpy(x, acc + r * (size_t)nv, (size_t)nv * sizeof(V));                           \
                int64_t j = a->r0 + (int64_t)(r0 + r);                                             \
                T w = a->trans ? (T)coef[2 * j] : (T)1, c = a->trans ? (T)coef[2 * j + 1] : (T)0;  \
                for (int col = 0; col < k; col++)                                                  \
                    out[r0 + r + (size_t)col * ldout] =                                            \
                        a->trans ? w * x[col] - c * (T)a->offset[col] : x[col];                    \
            }                                                                                      \
        }                                                                                          \
        /* missing calls: add back the centering term c_j*in_t they received as d = 0 */           \
        const int32_t *tl = miss + rows + 1;                                                       \
        for (size_t r = 0; r < rows; r++)                                                          \
            for (int32_t e = miss[r]; e < miss[r + 1]; e++) {                                      \
                size_t t = (size_t)tl[e];                                                          \
                int64_t j = a->trans ? a->r0 + (int64_t)r : (int64_t)t;                            \
                T c = (T)coef[2 * j + 1];                                                          \
                for (int col = 0; col < k; col++)                                                  \
                    out[r + (size_t)col * ldout] += c * in[t + (size_t)col * ldin];                \
            }                                                                                      \
        free(tab);                                                                                 \
        free(acc);                                                                                 \
    }

FC_DEFINE(double, fp64)
FC_DEFINE(float, fp32)

void tg_fivecodes_cpu(void *buffers[], void *cl_arg) {
    struct tg_fivecodes_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const uint8_t *codes = (const uint8_t *)STARPU_MATRIX_GET_PTR(buffers[0]);
    size_t rows = STARPU_MATRIX_GET_NX(buffers[0]), groups = STARPU_MATRIX_GET_NY(buffers[0]),
           ldc = STARPU_MATRIX_GET_LD(buffers[0]);
    const void *in = (const void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t nt = STARPU_MATRIX_GET_NX(buffers[1]), ldin = STARPU_MATRIX_GET_LD(buffers[1]);
    const double *coef = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    const int32_t *miss = (const int32_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    void *out = (void *)STARPU_MATRIX_GET_PTR(buffers[4]);
    size_t ldout = STARPU_MATRIX_GET_LD(buffers[4]);
    if (a.prec == TG_FP64)
        fc_block_fp64(&a, codes, rows, groups, ldc, in, nt, ldin, coef, miss, out, ldout);
    else
        fc_block_fp32(&a, codes, rows, groups, ldc, in, nt, ldin, coef, miss, out, ldout);
}

void tg_fivecodes_init(void) {
    static const enum starpu_data_access_mode modes[5] = {STARPU_R, STARPU_R, STARPU_R, STARPU_R,
                                                          STARPU_W};
    for (int t = 0; t < 2; t++)
        for (int p = 0; p < 2; p++)
            tg_codelet_fill(&tg_cl_fivecodes[t][p], &fc_models[t][p], fc_symbols[t][p],
                            tg_fivecodes_cpu, TG_CUDA_FN(tg_fivecodes_cuda), 5, modes,
                            (struct tg_codelet_hints){TG_B_GENO, 0});
}

int tg_insert_fivecodes(const struct tg_fivecodes_arg *a, starpu_data_handle_t codes,
                        starpu_data_handle_t in, starpu_data_handle_t coef,
                        starpu_data_handle_t miss, starpu_data_handle_t out, double flops,
                        int worker, void (*done)(void *), void *done_arg) {
    /* plain StarPU even with several MPI ranks: a genotype matrix is node-local, each rank
     * that holds one computes its products on its own workers */
    struct starpu_task *t = starpu_task_build(&tg_cl_fivecodes[a->trans][a->prec == TG_FP32],
                                              STARPU_R, codes, STARPU_R, in, STARPU_R, coef,
                                              STARPU_R, miss, STARPU_W, out, STARPU_VALUE, a,
                                              sizeof *a, STARPU_FLOPS, flops, 0);
    if (t && worker >= 0) {
        t->execute_on_a_specific_worker = 1;
        t->workerid = (unsigned)worker;
    }
    if (t && done) {
        t->callback_func = done;
        t->callback_arg = done_arg;
    }
    return tg_task_submit(t);
}
