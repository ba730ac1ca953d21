/* The 5codes encoding of genotypes (genotype-matmul-5codes paper; layout in
 * codelets/fivecodes.h): the container tg_geno that the products (algo/snpmm.c), the CG, the GRM
 * and the ridge regressions read, built here from a genotype source through the one pass
 * (geno/pass.h). Its runtime handles are registered by the products on first use. */
#ifndef TG_GENO_CODES5_H
#define TG_GENO_CODES5_H
#include "runtime/runtime.h"
#include "tilegwas.h"

/* The missing calls of one block by output row, the layout the codelets read
 * (codelets/fivecodes.h): rows + 1 offsets, then the table rows of each row in ascending order. */
typedef struct {
    int32_t *a;
    size_t len;
} miss_rows;

/* A cut of rows into blocks of whole units (the last unit shorter): block b holds rows
 * [start[b], start[b + 1]), unit u = rows [u·unit, (u + 1)·unit) is in block of_unit[u]. */
typedef struct {
    int64_t count, unit, *start;
    int32_t *of_unit;
} blocks;

struct tg_geno {
    int64_t n, m, excluded;
    int64_t i0, nl; /* this rank's samples [i0, i0 + nl): the rows of its blocks */
    double *freq;   /* m; NAN for an all-missing SNP */
    int64_t *obs;   /* m: called genotypes, every rank's */
    double *coef;   /* 2m: w_j, c_j = 2p_j·w_j */
    blocks rbl, sbl;            /* blocks of this rank's samples (Z·Λ), of SNPs (Zᵀ·Λ̃) */
    uint8_t **rcodes, **tcodes; /* per block: block_ld × ceil(m/5), block_ld × ceil(n/5) */
    miss_rows *rmiss, *tmiss;
    int registered;
    tg_handle hcoef, *hr, *ht, *hrm, *htm;
    int64_t part_rows; /* a product's table rows per part (tg_geno_set_part_rows); 0: default */
    uint64_t tiles; /* the serial under which GPUs keep 2-bit tiles of the blocks; 0: none */
};

/* Whether the GPUs keep 2-bit tiles of genotypes of @p n samples (this rank's) × @p m SNPs
 * beside their 5codes (codelets/fivecodes_cuda.cu): only where both orientations' 5codes and
 * tiles (0.9 bytes a genotype) fit in half of the smallest GPU's memory, since StarPU does not
 * count the tiles and must never have to push the codes out for them. */
int tg_geno_gpu_tiles_fit(int64_t n, int64_t m);

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t block_len(const blocks *bl, int64_t b) {
    return bl->start[b + 1] - bl->start[b];
}
/* The leading dimension of block b's codes: its rows padded to 16 (zero codes past the rows),
 * so that the GPU kernels copy each group's rows in 16-byte pieces: a block of rows not a
 * multiple of 16 took their byte-by-byte path, about 4× slower (docs/PERFORMANCE.md). */
static inline int64_t block_ld(const blocks *bl, int64_t b) {
    return (block_len(bl, b) + 15) & ~(int64_t)15;
}
static inline int64_t block_of(const blocks *bl, int64_t row) {
    return bl->of_unit[row / bl->unit];
}

/** The 5codes of the selected samples × SNPs of @p s (this rank's share of the samples with
 * several ranks: collective, as tg_geno_from_bed), @p rows_per_block samples per Z·Λ task and
 * @p snps_per_block SNPs per Zᵀ·Λ̃ task (0: the defaults, src/algo/snpmm.c's header comment). */
tg_status tg_geno_from_source_blocks(const tg_geno_source *s, int scale, int64_t rows_per_block,
                                     int64_t snps_per_block, tg_geno **out, tg_error *err);
/** tg_geno_from_int8 with the block sizes of tg_geno_from_source_blocks. */
tg_status tg_geno_from_int8_blocks(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                                   int64_t rows_per_block, int64_t snps_per_block, tg_geno **out,
                                   tg_error *err);
/** Frees what the encoding allocated (not the StarPU handles: tg_geno_free unregisters them
 * first). */
void tg_geno_codes_release(tg_geno *g);
#endif
