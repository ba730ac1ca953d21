/* INT8 dot-product ("gram") tiles: C (m × n, INT32) = Aᵀ·B for int8 panels A (k × m) and
 * B (k × n), column-major, k a multiple of 16 (zero padding adds nothing). The one integer
 * GEMM behind the KRR Build phase (A, B: sample panels, columns = samples) and the RR
 * baseline's ZᵀZ (A, B: SNP panels, columns = SNPs). CPU in distance.c (AVX-512 VNNI, or
 * exact float GEMMs over chunks of 1024 entries, summed in int32), CUDA in distance_cuda.cu (cublasGemmEx CUDA_R_8I → CUDA_R_32I, TN: the layout
 * INT8 tensor cores take). Exact: |c| ≤ 4k < 2^31. */
#ifndef TG_CODELETS_DISTANCE_H
#define TG_CODELETS_DISTANCE_H
#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* buffers: A (R, matrix int8 k × m), B (R, matrix int8 k × n), C (W, matrix int32 m × n).
 * With A == B (the same handle: diagonal tiles) pass the handle once: tg_cl_gram_sym, buffers
 * A (R), C (W), which may compute only the lower triangle plus a mirror. */
extern struct starpu_codelet tg_cl_gram, tg_cl_gram_sym;
void tg_gram_cpu(void *buffers[], void *cl_arg);
void tg_gram_cuda(void *buffers[], void *cl_arg);
void tg_gram_sym_cpu(void *buffers[], void *cl_arg);
void tg_gram_sym_cuda(void *buffers[], void *cl_arg);
/* The tile products behind the codelets, on plain pointers, for fused codelets (kernelfn.h):
 * on the CPU, with sym only the lower triangle is computed (A == B) and mirrored; on the GPU,
 * on the calling worker's cuBLAS handle and stream. */
void tg_gram_tile(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k, int32_t *c,
                  size_t ldc, size_t m, size_t n, int sym);
/* Its two methods (distance.c), which tg_gram_tile picks by the CPU (tests call both): AVX-512
 * VNNI when the CPU has it (elsewhere it is the other), exact float GEMMs of OpenBLAS. */
void tg_gram_tile_vnni(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                       int32_t *c, size_t ldc, size_t m, size_t n, int sym);
void tg_gram_tile_sgemm(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                        int32_t *c, size_t ldc, size_t m, size_t n, int sym);
int tg_gram_tile_has_vnni(void);
void tg_gram_tile_cuda(const int8_t *a, int lda, const int8_t *b, int ldb, int k, int32_t *c,
                       int ldc, int m, int n);
/* Inserts C = Aᵀ·B (a == b: the symmetric form). */
int tg_insert_gram(starpu_data_handle_t a, starpu_data_handle_t b, starpu_data_handle_t c,
                   int priority);

void tg_distance_codelets_init(void);

#ifdef __cplusplus
}
#endif
#endif
