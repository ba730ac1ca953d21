/**
 * @file tilegwas.h
 * @brief Public C API of tilegwas: errors, precisions, PLINK 1 I/O, phenotypes, the runtime and
 * the tiled matrix. Library functions return a ::tg_status and fill a ::tg_error; they never
 * print. Only the command-line tool prints.
 */
#ifndef TILEGWAS_H
#define TILEGWAS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/** @name Errors */
/** Status codes; TG_OK is 0 so `if (st)` tests for failure. */
typedef enum {
    TG_OK = 0,
    TG_ERR_ARG,     /**< invalid argument or option */
    TG_ERR_IO,      /**< file cannot be opened, read or written */
    TG_ERR_FORMAT,  /**< file content is malformed */
    TG_ERR_NOMEM,   /**< allocation failed */
    TG_ERR_RUNTIME, /**< StarPU / MPI failure */
    TG_ERR_DEVICE,  /**< CUDA / cuBLAS failure or missing device */
    TG_ERR_NUMERIC  /**< numerical failure (e.g. matrix not positive definite) */
} tg_status;

/** An error: the status and one line saying what went wrong and where (file, line, SNP). */
typedef struct {
    tg_status status;
    char msg[1024];
} tg_error;

/** Sets @p err (may be NULL) to @p st with a printf-style message; returns @p st. */
tg_status tg_error_set(tg_error *err, tg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Allocation helpers that fill @p err on failure (return NULL then). */
void *tg_malloc(size_t size, tg_error *err);
void *tg_calloc(size_t n, size_t size, tg_error *err);
char *tg_strdup(const char *s, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Precisions */
/** Storage precision of a tile. The order is the table index of every per-precision codelet. */
typedef enum {
    TG_FP64 = 0,
    TG_FP32,
    TG_FP16,     /**< IEEE 754 binary16 */
    TG_FP8_E4M3, /**< OCP FP8 E4M3: bias 7, no infinities, max 448, NaN = S.1111.111 */
    TG_INT8,
    TG_INT32,
    TG_NPREC
} tg_prec;

/** Bytes per element (0 for a value outside the enum). */
size_t tg_prec_size(tg_prec p);
/** Lower-case name ("fp64", "fp32", "fp16", "fp8", "int8", "int32"; "invalid" outside the enum). */
const char *tg_prec_name(tg_prec p);
/** Parses a name as printed by tg_prec_name(), in any case, or the aliases "fp8_e4m3" and
 * "e4m3" for fp8; returns TG_ERR_ARG for an unknown one, with a message listing the valid names. */
tg_status tg_prec_parse(const char *name, tg_prec *p, tg_error *err);
/** Unit roundoff u = 2^-t of a floating-point precision with t significand bits: 2^-53, 2^-24,
 * 2^-11, 2^-4 (0 for integer ones, NaN outside the enum). */
double tg_prec_unit_roundoff(tg_prec p);

/** Scalar conversions, the CPU reference. One rounding directly from the double, to nearest,
 * ties to even, subnormals included. FP16: |x| ≥ 65520 gives ±inf; NaN gives the quiet NaN
 * 0x7e00 with the sign of x (payload dropped). FP8 E4M3 saturates like the OCP spec's
 * saturating mode: finite values and infinities beyond the largest finite value map to ±448;
 * NaN maps to NaN (0x7f / 0xff by its sign bit). The *_to_double functions are exact. */
uint16_t tg_fp16_from_double(double x);
double tg_fp16_to_double(uint16_t h);
uint8_t tg_fp8_from_double(double x);
double tg_fp8_to_double(uint8_t b);
/** Reads element @p i of an array of precision @p p as a double (exact for every precision). */
double tg_prec_load(tg_prec p, const void *a, size_t i);
/** Stores @p x rounded to precision @p p into element @p i (fp64 double, fp32 float, fp16
 * uint16_t bits, fp8 uint8_t bits, int8 int8_t, int32 int32_t). Integers: round to nearest
 * even, saturating to the type's range; NaN stores 0. */
void tg_prec_store(tg_prec p, void *a, size_t i, double x);

/* ------------------------------------------------------------------------------------------ */
/** @name PLINK 1 binary filesets (.bed/.bim/.fam) */
/** Genotype value of a missing call after decoding. */
#define TG_GENO_MISSING ((int8_t)-1)

/** One line of a .fam file. */
typedef struct {
    char *fid, *iid, *father, *mother;
    int sex;      /**< 1 male, 2 female, 0 unknown */
    double pheno; /**< column 6 as read; NAN when missing: -9 (any value equal to it), NA or
                   * NaN (any case), and 0 when the column is case/control, i.e. when every
                   * non-missing value is 0, 1 or 2 (PLINK's rule; 1 = control, 2 = case) */
} tg_sample;

/** One line of a .bim file. */
typedef struct {
    char *chrom, *id;
    double cm;
    int64_t pos;
    char *a1, *a2; /**< A1 (counted allele, "alt" in PLINK 2 terms) and A2 */
} tg_snp;

/** An open fileset; the .bed is memory-mapped, never read whole. */
typedef struct {
    char *prefix;
    int64_t n_samples, n_snps;
    tg_sample *samples;
    tg_snp *snps;
    const uint8_t *geno; /**< first byte of SNP 0 (after the 3 magic bytes) */
    size_t bytes_per_snp; /**< ceil(n_samples / 4) */
    void *map;
    size_t map_len;
} tg_bed;

/** Opens PREFIX.bed/.bim/.fam. Checks the magic bytes (0x6c 0x1b 0x01, SNP-major), that the
 * .bed size is 3 + n_snps·ceil(n_samples/4), and that sample IDs (FID+IID) are unique.
 * .fam/.bim: 6 whitespace-separated columns, CRLF accepted, blank lines skipped (line numbers
 * in messages are those of the file); a .fam sex other than 1 or 2 reads as 0. The .bed is
 * opened first, so a wrong prefix names PREFIX.bed. On failure @p bed is zeroed. The strings
 * of samples[] and snps[] belong to those arrays (one allocation each): never free them one by
 * one; tg_bed_close() frees everything. */
tg_status tg_bed_open(const char *prefix, tg_bed *bed, tg_error *err);
void tg_bed_close(tg_bed *bed);

/** Decodes samples [i0, i0+ni) × SNPs [j0, j0+nj) into column-major @p out (sample i of SNP j
 * at out[(i-i0) + (j-j0)·ld]): the count of A1 alleles 0/1/2, TG_GENO_MISSING when missing.
 * Any range is allowed (i0 need not be a multiple of 4); rows ni..ld-1 of @p out are not
 * touched. Thread-safe (reads the mapping only). */
void tg_bed_decode(const tg_bed *bed, int64_t i0, int64_t ni, int64_t j0, int64_t nj, int8_t *out,
                   int64_t ld);

/** Per-SNP summary over non-missing calls. */
typedef struct {
    double freq;    /**< A1 allele frequency (NAN if every call is missing) */
    double missing; /**< missing-call rate */
    int64_t n_obs;  /**< non-missing calls */
} tg_snp_stats;

/** Fills stats[j] for every SNP (missing = missing calls / n_samples). */
void tg_bed_stats(const tg_bed *bed, tg_snp_stats *stats);

/** Writes PREFIX.bed/.bim/.fam from column-major genotypes (A1 counts 0/1/2 or
 * TG_GENO_MISSING; sample i of SNP j at geno[i + j·ld]). The .bim and .fam are tab-separated,
 * numbers in the fewest digits that read back exactly, a NAN phenotype as -9. Every string
 * field must be non-empty without whitespace and every genotype in {-1, 0, 1, 2}
 * (TG_ERR_ARG otherwise); a file left half-written by an error is removed. */
tg_status tg_bed_write(const char *prefix, const tg_sample *samples, int64_t n_samples,
                       const tg_snp *snps, int64_t n_snps, const int8_t *geno, int64_t ld,
                       tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Phenotype and covariate files */
/** Columns of a PLINK-style file (FID IID then one or more columns), aligned to a sample list. */
typedef struct {
    int64_t n_samples; /**< rows: the samples of the .fam, in .fam order */
    int n_cols;
    char **names;   /**< column names (from the header, or PHENO1, PHENO2, ...) */
    double *values; /**< column-major n_samples × n_cols; NAN where missing or absent */
} tg_pheno;

/** Reads a phenotype/covariate file: whitespace-separated, optional header line starting with
 * FID IID (or #FID IID), missing as -9 or NA. Rows are matched to @p samples by FID+IID; an ID
 * not in the sample list, a duplicate ID, a non-numeric value or a short line is an error naming
 * the file and line. Samples absent from the file get NAN.
 * Details: without a header the columns are PHENO1..PHENOk; every line has the first line's
 * number of fields; missing codes are -9 (any value equal to -9, e.g. -9.0), NA and NaN in any
 * case; infinities are refused; CRLF accepted, blank lines skipped; an empty file, or a header
 * without data lines, is an error. Matching is O(n) (a hash map of FID+IID). On failure @p ph
 * is zeroed. */
tg_status tg_pheno_read(const char *path, const tg_sample *samples, int64_t n_samples,
                        tg_pheno *ph, tg_error *err);
void tg_pheno_free(tg_pheno *ph);
/** Writes a phenotype file with a header "FID IID name...", NA for missing values (tab-separated,
 * one line per sample in @p samples order, values in the fewest digits that read back
 * exactly). Column names must be non-empty without whitespace. */
tg_status tg_pheno_write(const char *path, const tg_sample *samples, const tg_pheno *ph,
                         tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Runtime (StarPU, StarPU-MPI) */
typedef struct {
    const char *sched; /**< StarPU scheduler; NULL means "dmda" */
    int ncpu;          /**< CPU workers; -1 = all cores not driving a GPU */
    int ngpu;          /**< CUDA workers; -1 = all GPUs, 0 = none */
} tg_runtime_opts;

/** Defaults: dmda, all CPUs, all GPUs. */
tg_runtime_opts tg_runtime_defaults(void);
/** Starts StarPU (and StarPU-MPI when built with MPI), creates the cuBLAS and cuBLASLt
 * handles of every CUDA worker. Fails clearly when more GPUs are asked for than exist. */
tg_status tg_runtime_start(const tg_runtime_opts *opts, tg_error *err);
void tg_runtime_stop(void);
int tg_runtime_rank(void);
int tg_runtime_nranks(void);
int tg_runtime_ncpu(void);
int tg_runtime_ngpu(void);
/** One line describing ranks, workers and devices, for the log. */
void tg_runtime_describe(char *buf, size_t len);
/** Build features: "cuda", "mpi" flags. */
int tg_have_cuda(void);
int tg_have_mpi(void);

/* ------------------------------------------------------------------------------------------ */
/** @name Tiled matrices */
/** Storage shape: general, or symmetric with only the lower tiles (i ≥ j) stored. */
typedef enum { TG_GENERAL = 0, TG_SYM_LOWER } tg_shape;

/** A tiled matrix: one StarPU data handle per tile, a precision and owner rank per tile.
 * Tiles are allocated by StarPU on first use (pinned, possibly on a GPU), never as one array. */
typedef struct tg_matrix tg_matrix;

/** Creates an m × n matrix of mb × nb tiles (the last row/column of tiles may be smaller),
 * every tile of precision @p prec, owners 2D block-cyclic over a p × q grid (p·q must equal
 * the rank count; 0,0 means the squarest grid). */
tg_status tg_matrix_create(tg_matrix **A, int64_t m, int64_t n, int mb, int nb, tg_shape shape,
                           tg_prec prec, int p, int q, tg_error *err);
void tg_matrix_destroy(tg_matrix *A);
void tg_matrix_size(const tg_matrix *A, int64_t *m, int64_t *n, int *mt, int *nt);
/** Whether tile (i, j) is stored (always for general shape, i ≥ j for symmetric-lower). */
int tg_matrix_has_tile(const tg_matrix *A, int i, int j);
tg_prec tg_matrix_tile_prec(const tg_matrix *A, int i, int j);
/** Rows and columns of tile (i, j). */
void tg_matrix_tile_dims(const tg_matrix *A, int i, int j, int *rows, int *cols);
int tg_matrix_tile_owner(const tg_matrix *A, int i, int j);
/** Scale factor of tile (i, j): the tile holds value·scale (1 unless set for FP8 tiles). */
double tg_matrix_tile_scale(const tg_matrix *A, int i, int j);

/** Fills the tiles this rank owns from a dense column-major m × n array (lda ≥ m), rounding to
 * each tile's precision and scale. For symmetric-lower, only the lower triangle of tiles is read. */
tg_status tg_matrix_from_dense(tg_matrix *A, const double *a, int64_t lda, tg_error *err);
/** Copies the stored tiles to a dense column-major array (values divided by the tile scale).
 * With several ranks the whole matrix is gathered on every rank. Tiles not stored (upper part
 * of a symmetric-lower matrix) are left untouched. */
tg_status tg_matrix_to_dense(const tg_matrix *A, double *a, int64_t lda, tg_error *err);
/** Converts every stored tile to the precision given by map[i + j·mt] (a per-tile precision
 * map) and the scale scale[i + j·mt] (a positive power of two, so scaling is exact; NULL for
 * 1) as StarPU tasks on any worker. */
tg_status tg_matrix_convert(tg_matrix *A, const tg_prec *map, const double *scale, tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
