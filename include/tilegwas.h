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

/** Bytes from an input file made fit to quote in a message, into @p buf (TG_ESC_SIZE bytes),
 * which is returned: control characters, DEL and bytes that are not UTF-8 as \xNN, and past
 * TG_ESC_CHARS characters the rest cut, with the value's length ("abc… (1048576 bytes)"). So a
 * message stays one readable line whatever the file holds. TG_ESC(s) gives a buffer of its own
 * to each use (valid to the end of the enclosing block). tg_error_set escapes control bytes
 * and bytes that are not UTF-8 in every message too; TG_ESC also bounds the length. */
#define TG_ESC_CHARS 60
#define TG_ESC_SIZE (4 * TG_ESC_CHARS + 40)
const char *tg_esc(const char *s, char *buf);
#define TG_ESC(s) tg_esc((s), (char[TG_ESC_SIZE]){0})

/** Bytes of host memory this process may still allocate: the least of the machine's
 * MemAvailable (/proc/meminfo), memory.max less memory.current of the process's cgroup and its
 * ancestors (v1: limit less usage), and the address-space limit (ulimit -v) less the address
 * space in use (VmSize);
 * @p what (may be NULL) names the bound that gave it. -1 when none can be read. For the
 * commands' estimates before they allocate. */
int64_t tg_mem_available(const char **what);

/** Allocation helpers that fill @p err on failure (return NULL then). */
void *tg_malloc(size_t size, tg_error *err);
void *tg_calloc(size_t n, size_t size, tg_error *err);
/** @p n1 × @p n2 × @p size bytes into *@p bytes, for every size that scales with the data
 * (samples, SNPs, phenotypes, tiles), so that it is checked where it is computed instead of
 * wrapping: a negative count, or a product past the address space (PTRDIFF_MAX, what malloc
 * can give), is TG_ERR_NOMEM with a message naming the factors (*@p bytes is left alone). */
tg_status tg_size_mul(int64_t n1, int64_t n2, size_t size, size_t *bytes, tg_error *err);
/** tg_malloc and tg_calloc of @p n1 × @p n2 × @p size bytes, checked by tg_size_mul. */
void *tg_malloc_n(int64_t n1, int64_t n2, size_t size, tg_error *err);
void *tg_calloc_n(int64_t n1, int64_t n2, size_t size, tg_error *err);
char *tg_strdup(const char *s, tg_error *err);
/** FNV-1a (64 bits) of @p n bytes, continuing @p h (TG_HASH_INIT to start): a cheap hash for
 * telling argument lists or files apart, not a checksum against tampering. */
#define TG_HASH_INIT 0xcbf29ce484222325ULL
uint64_t tg_hash(uint64_t h, const void *p, size_t n);
/** The size in bytes and the XXH64 of the content of the file @p path (as `xxhsum -H64` prints
 * it), read through a mapping: to tell copies of a file apart and to check a saved model's
 * files (not against tampering). A file that is not a regular one (a pipe, which cannot be read
 * twice) gets size −1 and hash 0. TG_ERR_IO naming the file when it cannot be opened or
 * mapped. */
tg_status tg_file_hash(const char *path, int64_t *bytes, uint64_t *hash, tg_error *err);

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

/** An open fileset: samples, SNPs and SNP-major 2-bit genotypes in the .bed's coding, whatever
 * the input's format. A .bed is memory-mapped, never read whole; a .pgen or VCF/BCF, or a
 * fileset left by selection and QC (tg_input_open), is held in memory built once. */
typedef struct {
    char *prefix;
    int64_t n_samples, n_snps;
    tg_sample *samples;
    tg_snp *snps;
    const uint8_t *geno; /**< first byte of SNP 0 (after the 3 magic bytes of a .bed) */
    size_t bytes_per_snp; /**< ceil(n_samples / 4) */
    void *map;
    size_t map_len;
    const char *format;             /**< "bed", "pgen", "vcf", "bcf"; NULL: a .bed */
    struct tg_fileset_store *store; /**< what a fileset built in memory owns (NULL: a .bed) */
} tg_bed;

/** Opens PREFIX.bed/.bim/.fam. Checks the magic bytes (0x6c 0x1b 0x01, SNP-major), that the
 * .bed size is 3 + n_snps·ceil(n_samples/4), and that sample IDs (FID+IID) are unique.
 * .fam/.bim: 6 whitespace-separated columns, CRLF accepted, blank lines skipped (line numbers
 * in messages are those of the file); a .fam sex other than 1 or 2 reads as 0. The .bed is
 * opened first, so a wrong prefix names PREFIX.bed. On failure @p bed is zeroed. The strings
 * of samples[] and snps[] belong to those arrays (one allocation each): never free them one by
 * one; tg_bed_close() frees everything. */
tg_status tg_bed_open(const char *prefix, tg_bed *bed, tg_error *err);
/** The SNPs named in @p path (IDs separated by spaces, tabs or lines; repeats count once) as
 * indices into @p bed's .bim, in the order first named (*set: free it). An ID not in the .bim is
 * TG_ERR_FORMAT naming the file, the line and the ID; a file without IDs is an error too. */
tg_status tg_snp_set_read(const char *path, const tg_bed *bed, int64_t **set, int64_t *n,
                          tg_error *err);
void tg_bed_close(tg_bed *bed);
/** Hashes of what a fileset holds, whatever format it was read from, to tell two copies apart
 * (not against tampering): its variant rows (chromosome, ID, cM, position, A1, A2), its sample
 * rows (FID, IID, parents, sex, phenotype) and its genotype bytes, these on every CPU at
 * several GB/s. */
typedef struct {
    uint64_t snps, samples, geno;
} tg_bed_hashes;
void tg_bed_hash(const tg_bed *bed, tg_bed_hashes *h);

/** Decodes samples [i0, i0+ni) × SNPs [j0, j0+nj) into column-major @p out (sample i of SNP j
 * at out[(i-i0) + (j-j0)·ld]): the count of A1 alleles 0/1/2, TG_GENO_MISSING when missing.
 * Any range is allowed (i0 need not be a multiple of 4); rows ni..ld-1 of @p out are not
 * touched. Thread-safe (reads the mapping only). */
void tg_bed_decode(const tg_bed *bed, int64_t i0, int64_t ni, int64_t j0, int64_t nj, int8_t *out,
                   int64_t ld);

/** tg_bed_decode of the samples rows[0..ni) (any order, repeats allowed) into rows 0..ni−1 of
 * @p out: scattered samples without decoding the rows between them. Thread-safe. */
void tg_bed_decode_rows(const tg_bed *bed, const int64_t *rows, int64_t ni, int64_t j0,
                        int64_t nj, int8_t *out, int64_t ld);

/** Checks that the samples rows[0..n) (NULL: the first n) are samples of @p bed; the error
 * names the first that is not. */
tg_status tg_bed_check_rows(const tg_bed *bed, const int64_t *rows, int64_t n, tg_error *err);

/** Per-SNP summary over non-missing calls. */
typedef struct {
    double freq;    /**< A1 allele frequency (NAN if every call is missing) */
    double missing; /**< missing-call rate */
    int64_t n_obs;  /**< non-missing calls */
} tg_snp_stats;

/** Fills stats[j] for every SNP (missing = missing calls / n_samples). */
void tg_bed_stats(const tg_bed *bed, tg_snp_stats *stats);

/** The A1 frequency of @p a1 A1 alleles in @p calls called genotypes, a1 / (2·calls), NAN
 * without a call: the one frequency rule of every statistic and workload. */
double tg_a1_freq(int64_t a1, int64_t calls);

/** The columns that start every output row about one SNP: plink2's .glm key, so that a row
 * joins back to the input by position and alleles when its ID is `.`. REF is A2 and ALT is A1
 * (every reader maps them so, as plink2 maps a .bim); A1 names the counted allele. */
#define TG_SNP_KEY_HEADER "#CHROM\tPOS\tID\tREF\tALT\tA1"
/** The columns tg_snp_stats_write writes after the key. */
#define TG_SNP_STATS_HEADER "\tA1_FREQ\tN"
/** Writes the TG_SNP_KEY_HEADER columns of @p s, tab-separated, without a tab or newline after. */
void tg_snp_key_write(FILE *f, const tg_snp *s);
/** Writes the TG_SNP_STATS_HEADER columns of @p s, each after a tab: the A1 frequency as plink2
 * writes its frequencies, 6 significant digits (NA without a call), and the non-missing calls. */
void tg_snp_stats_write(FILE *f, const tg_snp_stats *s);

/** Writes PREFIX.bed/.bim/.fam from column-major genotypes (A1 counts 0/1/2 or
 * TG_GENO_MISSING; sample i of SNP j at geno[i + j·ld]). The .bim and .fam are tab-separated,
 * numbers in the fewest digits that read back exactly, a NAN phenotype as -9. Every string
 * field must be non-empty without whitespace and every genotype in {-1, 0, 1, 2}
 * (TG_ERR_ARG otherwise); a file left half-written by an error is removed. */
tg_status tg_bed_write(const char *prefix, const tg_sample *samples, int64_t n_samples,
                       const tg_snp *snps, int64_t n_snps, const int8_t *geno, int64_t ld,
                       tg_error *err);

/** A fileset written SNP block by SNP block: tg_bed_write for genotypes never whole in
 * memory. No file is in place before tg_bed_out_close succeeds. */
typedef struct tg_bed_out tg_bed_out;
/** Opens PREFIX.bed/.bim/.fam (under temporary names) for @p n_samples samples. */
tg_status tg_bed_out_open(const char *prefix, int64_t n_samples, tg_bed_out **w, tg_error *err);
/** Appends @p nj SNPs: genotypes as tg_bed_write's (sample i of the block's SNP t at
 * geno[i + t·ld]), packed on every core; @p snps (the block's) are checked and name the SNP in
 * an error. */
tg_status tg_bed_out_put(tg_bed_out *w, const tg_snp *snps, int64_t nj, const int8_t *geno,
                         int64_t ld, tg_error *err);
/** Writes the .fam of @p samples and the .bim of the @p n_snps SNPs put (every one, in order),
 * then renames the three into place; on any error removes them. Frees @p w either way. */
tg_status tg_bed_out_close(tg_bed_out *w, const tg_sample *samples, const tg_snp *snps,
                           int64_t n_snps, tg_error *err);
/** Removes the files of @p w and frees it (the caller's error path; NULL is accepted). */
void tg_bed_out_discard(tg_bed_out *w);

/** Writes a random fileset PREFIX.bed/.bim/.fam for benchmarks and calibration: @p n samples
 * I0, I1, … (the first half controls, phenotype 1, the others cases, 2) × @p m SNPs snp0, … on
 * chromosome 1, each with an A1 frequency drawn uniformly in [0.05, 0.5] and Hardy-Weinberg
 * genotypes, no missing call; the same files for the same @p seed. Streams SNP by SNP. */
tg_status tg_bed_write_random(const char *prefix, int64_t n, int64_t m, uint64_t seed,
                              tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Genotype input (src/geno/input.c): any format, then plink2's selection and QC
 * Every command opens its genotypes through tg_input_open: a PLINK 1 fileset, a PLINK 2 fileset
 * or a VCF/BCF, read once into a tg_bed, then the selection and QC filters in plink2's order,
 * each step counted for the log. */
typedef enum { TG_INPUT_BED, TG_INPUT_PGEN, TG_INPUT_VCF, TG_INPUT_BCF } tg_input_format;

typedef struct {
    tg_input_format format;
    const char *path;    /**< PREFIX of .bed/.bim/.fam or .pgen/.pvar/.psam; the VCF/BCF file */
    char id_delim;       /**< VCF/BCF sample IDs: FID, delimiter, IID (plink2 --id-delim); 0:
                          * FID "0" and the whole ID as IID, as plink2 imports them */
    const char *tmp_dir; /**< folder where a fileset built in memory may spill (NULL: memory) */
    int threads;         /**< reader threads (0: the CPUs allowed) */
    /* selection (NULL / 0: none) */
    const char *keep, *remove;     /**< sample files: FID IID, or IID, per line (header allowed) */
    const char *extract, *exclude; /**< variant ID files; with *_range, CHR START END [NAME] */
    int extract_range, exclude_range;
    const char *chr;      /**< plink2 --chr: codes and ranges such as "1-4,22,X" */
    int autosome;         /**< plink2 --autosome: chromosomes 1-22 */
    int64_t from_bp, to_bp; /**< plink2 --from-bp/--to-bp (−1: none) */
    /* QC (NAN, or 0 for mac: off) */
    double mind, geno, hwe, maf, max_maf;
    int64_t mac;
} tg_input_opts;

/** Defaults: a .bed, no selection, no QC. */
void tg_input_opts_init(tg_input_opts *o);
/** Whether @p o asks for any selection or QC step. */
int tg_input_filters(const tg_input_opts *o);

/** One step of reading, selection or QC, for the log. */
typedef struct {
    char flag[32];                   /**< "--keep", "--mind", "multi-allelic", … */
    int64_t samples_removed, snps_removed;
    int64_t samples_left, snps_left; /**< after the step */
} tg_input_step;

typedef struct {
    int64_t samples_read, snps_read; /**< as the input held them */
    int nsteps;
    tg_input_step steps[24];
    int nnotes;
    char notes[8][256]; /**< what a reader did that the log should say (dosages, skips) */
} tg_input_report;

/** Opens @p o's genotypes into @p bed (tg_bed_close frees it) and applies the selection and QC;
 * @p rep (may be NULL) says what each step removed. An input left with no sample or no SNP is
 * TG_ERR_ARG naming the step that removed the last. On failure @p bed is zeroed. */
tg_status tg_input_open(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep,
                        tg_error *err);

/** Makes the SNPs of @p bed those of @p ref, in @p ref's order: a test cohort takes the training
 * cohort's variants after its selection and QC. A variant matches by chromosome, position and
 * ID, and must have the same A1 and A2 (TG_ERR_ARG naming it otherwise, or naming the first
 * variant of @p ref that @p bed lacks); *@p dropped receives how many of @p bed's SNPs were left
 * out. When nothing changes @p bed stays as it is; else it is replaced by a fileset built in
 * memory (@p tmp_dir as tg_input_opts.tmp_dir). */
tg_status tg_input_match_snps(const tg_bed *ref, tg_bed *bed, const char *tmp_dir,
                              int64_t *dropped, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Genotype sources (src/geno)
 * What the workloads read genotypes through: a format (a .bed today) and a selection of its
 * samples and SNPs, applied once. Every workload's frequencies and missing-call counts come from
 * one pass over a source (tg_geno_source_stats is that pass with nothing encoded). */
typedef struct tg_geno_source tg_geno_source;
/** A source over an open fileset (not copied: keep it open while the source is used). */
tg_status tg_geno_source_bed(const tg_bed *bed, tg_geno_source **out, tg_error *err);
/** A source over an n × m column-major int8 array (leading dimension ld ≥ n) of A1 counts or
 * TG_GENO_MISSING (not copied); its samples and SNPs have no ids. */
tg_status tg_geno_source_int8(const int8_t *g, int64_t n, int64_t m, int64_t ld,
                              tg_geno_source **out, tg_error *err);
/** Selects samples samples[0..n) and SNPs snps[0..m) of the input, in that order (indices into
 * the .fam / .bim, repeats allowed; NULL: the first n, or m), replacing any earlier selection.
 * An index outside the input is TG_ERR_ARG naming it. */
tg_status tg_geno_source_select(tg_geno_source *s, const int64_t *samples, int64_t n,
                                const int64_t *snps, int64_t m, tg_error *err);
void tg_geno_source_free(tg_geno_source *s);
/** Selected samples and SNPs. */
int64_t tg_geno_source_n(const tg_geno_source *s);
int64_t tg_geno_source_m(const tg_geno_source *s);
/** The .fam / .bim entry of selected sample @p i / SNP @p j (NULL for an int8 array). */
const tg_sample *tg_geno_source_sample(const tg_geno_source *s, int64_t i);
const tg_snp *tg_geno_source_snp(const tg_geno_source *s, int64_t j);
/** Decodes selected samples [i0, i0+ni) × selected SNPs [j0, j0+nj) into column-major @p out
 * (leading dimension ld ≥ ni), as tg_bed_decode. Thread-safe. */
void tg_geno_source_read(const tg_geno_source *s, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                         int8_t *out, int64_t ld);
/** stats[j] of every selected SNP over the selected samples (missing = missing calls / n), by
 * the one pass the workloads use; a value that is not a genotype is TG_ERR_ARG. */
tg_status tg_geno_source_stats(const tg_geno_source *s, tg_snp_stats *stats, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Phenotype and covariate files */
/** Columns of a PLINK-style file (FID IID then one or more columns), aligned to a sample list. */
typedef struct {
    int64_t n_samples; /**< rows: the samples of the .fam, in .fam order */
    int n_cols;
    char **names;   /**< column names (from the header, or PHENO1, PHENO2, ...) */
    double *values; /**< column-major n_samples × n_cols; NAN where missing or absent */
    int64_t n_skipped; /**< data lines of samples not in the sample list, skipped (as plink2 and
                            REGENIE do); the caller logs the count */
    /** With tg_pheno_opts.categorical: levels of each column (NULL when every column is
     * numeric). n_levels[c] = 0 for a numeric column; for a categorical one its levels, sorted
     * in natural order (strverscmp: "a2" before "a10"), are levels[c][0..n_levels[c]) and
     * values[] holds the level's index (NAN where missing). */
    int *n_levels;
    char ***levels;
} tg_pheno;

/** Which columns tg_pheno_read_opts() keeps; at most one of the two is set. */
typedef struct {
    /** plink2's --pheno-col-nums / --covar-col-nums: numbers and ranges such as "3-5,7"
     * (commas or spaces between), counting the file's columns from 1 with FID as column 1, so
     * that the first value column is 3, or 2 in a file with an IID-only header. NULL: all. */
    const char *col_nums;
    /** plink2's --pheno-name / --covar-name: header names such as "height,bmi", and ranges
     * "first-last" of consecutive columns (a name containing '-' is taken whole when it is one).
     * NULL: all. */
    const char *names;
    /** Covariate files: a column with a value that is neither a number nor a missing code is
     * categorical (tg_pheno.levels) instead of an error. */
    int categorical;
} tg_pheno_opts;

/** Options that keep every column. */
tg_pheno_opts tg_pheno_defaults(void);

/** Reads a phenotype/covariate file: whitespace-separated, plain, gzip or zstd (told by the
 * first bytes), with an optional header line. Headers: FID IID or #FID IID (any case), then
 * rows start with FID and IID; #IID or IID alone (plink2's .psam form), then rows start with the
 * IID only and are matched by IID. Rows are matched to @p samples; a row whose sample is not in
 * the list is skipped and counted in ph->n_skipped. Errors naming the file and line: a duplicate
 * row, an IID (IID-only header) that two samples of the list share, a non-numeric value (not with
 * tg_pheno_opts.categorical), a short or long line, a corrupt or truncated compressed file; and a file none of whose rows is in the
 * list. Samples absent from the file get NAN. Same as tg_pheno_read_opts() with all columns.
 * Details: without a header the columns are PHENO1..PHENOk; every line has the first line's
 * number of fields; missing codes are -9 (any value equal to -9, e.g. -9.0), NA and NaN in any
 * case, and '.'; infinities are refused; CRLF accepted, blank lines skipped, and so are lines
 * starting with '#' before the first line unless they start with #FID or #IID (plink2's comment
 * lines); an empty file, or a header without data lines, is an error. Matching is O(n) (a hash
 * map of FID+IID); the file is streamed (memory: the values and one line). On failure @p ph is
 * zeroed. */
tg_status tg_pheno_read(const char *path, const tg_sample *samples, int64_t n_samples,
                        tg_pheno *ph, tg_error *err);
/** tg_pheno_read() keeping the columns that @p opts selects, in the order given (a range in
 * file order); an unknown name, a number outside the value columns, a column chosen twice, names
 * without a header line, or both selections set, is TG_ERR_ARG naming the file and the choice. */
tg_status tg_pheno_read_opts(const char *path, const tg_sample *samples, int64_t n_samples,
                             const tg_pheno_opts *opts, tg_pheno *ph, tg_error *err);
void tg_pheno_free(tg_pheno *ph);
/** Writes a phenotype file with a header "FID IID name...", NA for missing values (tab-separated,
 * one line per sample in @p samples order, values in the fewest digits that read back
 * exactly). Column names must be non-empty without whitespace. */
tg_status tg_pheno_write(const char *path, const tg_sample *samples, const tg_pheno *ph,
                         tg_error *err);

/** Known relatives from a KING table (plink2 --make-king-table's .kin0) or a GCTA sparse GRM,
 * as pairs of samples for tg_assoc_opts. */
typedef struct {
    int64_t npairs;
    int64_t *pair_i, *pair_j; /**< the pair's samples, indices into the sample list */
    double *pair_k;           /**< relatedness: 2 × KINSHIP, or the GRM's value */
    int64_t below;            /**< pairs of listed samples under the cutoff */
    int64_t skipped;          /**< pairs naming a sample not in the list */
    char first_skipped[160];  /**< the first of these: "line L: ID" */
} tg_relatives;

/** Reads @p path (plain, gzip or zstd): a header line naming the columns IID1, IID2 and
 * KINSHIP (with FID1 and FID2: samples by FID IID; without: by IID alone), with or without
 * its leading '#', in any order among others (NSNP, HETHET, IBS0...); then a line per pair.
 * Keeps the pairs of samples of @p samples with KINSHIP ≥ @p min_kinship. TG_ERR_FORMAT,
 * naming the file and line, for: no such header, a line of another length, a KINSHIP that is
 * not a number or above 0.75 (2 × 0.75 = 1.5, more than identical inbred twins share), a
 * sample paired with itself, a pair listed twice (either order; among the pairs kept), an
 * IID of two samples of the list in a file without FIDs. */
tg_status tg_kin0_read(const char *path, const tg_sample *samples, int64_t n_samples,
                       double min_kinship, tg_relatives *k, tg_error *err);
/** Reads GCTA's sparse GRM (fastGWA's --grm-sparse): PREFIX.grm.id (FID IID a line, the
 * samples in the GRM's order) and PREFIX.grm.sp ("i j value" a line, 0-based rows of
 * .grm.id; diagonal entries ignored), plain, gzip or zstd. Keeps the pairs of samples of
 * @p samples with value ≥ @p min_grm, relatedness the value. TG_ERR_FORMAT naming the file
 * and line: a line of another length, an index not a row of .grm.id, a value not a number or
 * above 1.5, a pair listed twice (either order; among the pairs kept), a sample twice in
 * .grm.id. */
tg_status tg_grm_sparse_read(const char *prefix, const tg_sample *samples, int64_t n_samples,
                             double min_grm, tg_relatives *k, tg_error *err);
void tg_relatives_free(tg_relatives *k);

/** Prints a finite double in the fewest digits (15 or 17) that read back exactly, as every
 * numeric column of the library's and the commands' text outputs (NAN as "nan"). */
void tg_text_format_double(double x, char buf[32]);

/* ------------------------------------------------------------------------------------------ */
/** @name Dense matrices in text files (snpmm --matrix) */
/** Most value columns of a tg_values (tg_geno_mul multiplies at most 64 at once). */
#define TG_VALUES_MAX_COLS 64
/** A dense matrix read from a text file, one row per SNP or per sample of a fileset. */
typedef struct {
    int64_t rows; /**< the fileset's SNPs or samples */
    int k;        /**< value columns, 1 .. TG_VALUES_MAX_COLS */
    int nid;      /**< leading ID columns: 0, 1 or 2 (SNP or ID; FID IID or IID), or 6 or 8
                   * (the SNP key, then A1_FREQ N), checked against the fileset but the last 2 */
    char **names; /**< the k column names: the header's, or COL1..COLk */
    double *v;    /**< rows × k, column-major */
    int pieces;   /**< the data lines were read in this many pieces on every core; 0: line by
                   * line (a file the pieces could not read is read so, to name its error) */
} tg_values;

/** Reads @p path: whitespace-separated finite numbers, one line per SNP of @p bed in .bim
 * order (@p by_sample 0) or per sample in .fam order (1), every line with the same number of
 * fields. An optional header, a first line whose first field is not a number, names the
 * columns; its leading columns named SNP (or ID) for SNP rows, FID IID (or IID) for sample
 * rows (in any case, with an optional leading #) are IDs, which must match the .bim/.fam
 * line by line; so is the SNP key of the outputs (TG_SNP_KEY_HEADER, each column; then
 * A1_FREQ and N, skipped: they describe the samples of the run that wrote them). Without a
 * header every field is a value. CRLF accepted, blank lines skipped.
 * Errors name the file and the line (and the column of a value that is not a finite number).
 * On failure @p t is freed and zeroed. */
tg_status tg_values_read(const char *path, const tg_bed *bed, int by_sample, tg_values *t,
                         tg_error *err);
void tg_values_free(tg_values *t);

/* ------------------------------------------------------------------------------------------ */
/** @name Simulated cohorts with planted signals (the simulate command)
 * The model (src/algo/simulate.c): SNP j has A1 frequency p_j ~ U[maf_min, maf_max] and
 * Hardy-Weinberg genotypes; planted SNPs are distinct. Per phenotype: additive SNPs with
 * β ~ N(0, 1) on z = (g − 2p)/√(2p(1−p)), non-linear pairs (qt) with w = ±1 on z_a·z_b, both
 * rescaled together so that the genetic part has variance h2; epistatic sets of k SNPs of
 * frequency 0.5 acting through s = (−1)^(heterozygous SNPs in the set), with no effect below
 * order k. qt: y = G + e + E·s; cc: P(case) = Φ((G − t)/√(1−h2)) + E·s, t set so that the mean
 * is the prevalence. Missing calls are drawn last, completely at random, at a rate per SNP
 * (missing, or missing_snps_rate at a random fraction of the SNPs not planted). With K
 * populations, population q's genotypes are Hardy-Weinberg from p_qj ~ Beta(p_j(1−F)/F,
 * (1−p_j)(1−F)/F) (Balding–Nichols; epistatic SNPs stay at 0.5) while z keeps the ancestral
 * p_j. The same options give the same cohort. */
/** Largest sample and SNP counts (IDs F<i>, snp<j> are formatted for them). */
#define TG_SIM_MAX_DIM ((int64_t)1 << 25)
/** Largest n·m of tg_simulate, which holds the int8 genotypes whole (tg_simulate_stream has
 * no such limit). */
#define TG_SIM_MAX_GENOTYPES ((int64_t)1 << 33)
#define TG_SIM_MAX_PHENO 1000

typedef enum { TG_SIM_ADDITIVE = 0, TG_SIM_NONLINEAR, TG_SIM_EPISTASIS } tg_sim_kind;

typedef struct {
    int64_t n, m;           /**< samples, SNPs */
    int64_t n_pheno;        /**< phenotypes, each with its own planted effects */
    int64_t additive;       /**< additive SNPs per phenotype */
    int64_t nl_pairs;       /**< non-linear pairs per phenotype (qt only) */
    int64_t epi_sets[5];    /**< epistatic sets per phenotype by order k, at index k (2..4) */
    uint64_t seed;
    double maf_min, maf_max; /**< range of the A1 frequencies, 0 < maf_min ≤ maf_max ≤ 0.5 */
    double missing;          /**< rate of missing calls */
    /** A fraction of the SNPs not planted (rounded to a whole number of SNPs), chosen at
     * random, whose calls are missing at rate missing_snps_rate instead of `missing`
     * (0: none). */
    double missing_snps, missing_snps_rate;
    double h2;               /**< variance of the additive + non-linear part, in (0, 1) */
    double epi_effect;       /**< E, the effect of each epistatic set */
    double prevalence;       /**< cc: the expected fraction of cases */
    int qt;                  /**< 1: quantitative trait; 0: case-control (1 control, 2 case) */
    /** K populations (Balding–Nichols): sample i belongs to population i mod K; 1: one. */
    int64_t populations;
    /** F: each population's frequency of SNP j is Beta with mean p_j and variance
     * F·p_j(1 − p_j); in (0, 1) when populations > 1, else 0. */
    double fst;
} tg_sim_opts;

/** One planted effect of one phenotype. */
typedef struct {
    int pheno;
    tg_sim_kind kind;
    int nsnp;        /**< 1 (additive), 2 (non-linear), k (epistatic set) */
    int64_t snp[4];  /**< SNP indices, increasing */
    double effect;   /**< the rescaled coefficient (effect² = variance share), or E */
} tg_sim_effect;

/** A simulated cohort. */
typedef struct {
    int64_t n, m, n_pheno;
    tg_sample *samples;  /**< FID F<i> (pop<q+1> with populations > 1, q = i mod K), IID I<i>
                          * (i from 0), random sex, pheno = PHENO1 */
    tg_snp *snps;        /**< snp<j> (j from 0), chromosomes 1-22 in blocks, increasing positions */
    double *freq;        /**< the true (ancestral, with populations) A1 frequency of each
                          * SNP */
    int8_t *geno;        /**< n × m column-major: A1 counts, TG_GENO_MISSING */
    double *pheno;       /**< n × n_pheno column-major */
    char **pheno_names;  /**< PHENO1, PHENO2, ... */
    tg_sim_effect *eff;  /**< the planted effects, phenotype by phenotype */
    int64_t n_eff;
    double *threshold;   /**< per phenotype: the liability threshold t (cc with a genetic part)
                          * or NAN */
    int64_t n_missing;   /**< missing calls drawn */
    int64_t n_missing_snps; /**< SNPs drawn at the rate missing_snps_rate */
    char *sample_ids, *snp_ids; /**< storage of the ID strings */
} tg_sim;

/** Defaults: 1000 samples, 1 phenotype, seed 1, frequencies in [0.05, 0.5], no missing call,
 * h2 0.5, E 0.2, prevalence 0.5, case-control, no planted effect, one population (m must be
 * set). */
tg_sim_opts tg_sim_defaults(void);
/** Checks @p o (TG_ERR_ARG naming each field by its simulate option, e.g. --maf-min). */
tg_status tg_sim_check(const tg_sim_opts *o, tg_error *err);
/** Draws a cohort (tg_sim_check first; n·m ≤ TG_SIM_MAX_GENOTYPES); free it with
 * tg_sim_free. */
tg_status tg_simulate(const tg_sim_opts *o, tg_sim *s, tg_error *err);
/** Receives the genotypes of SNPs [j0, j0 + nj), n × nj column-major A1 counts or
 * TG_GENO_MISSING, in SNP order; an error stops the draw. */
typedef struct {
    tg_status (*put)(void *ctx, int64_t j0, int64_t nj, const int8_t *geno, tg_error *err);
    void *ctx;
} tg_sim_sink;
/** tg_simulate for any n·m: the genotypes go to @p sink block by block (≤ 64 MiB each) and
 * s->geno stays NULL; the same options give the same numbers as tg_simulate. */
tg_status tg_simulate_stream(const tg_sim_opts *o, const tg_sim_sink *sink, tg_sim *s,
                             tg_error *err);
void tg_sim_free(tg_sim *s);
/** "additive", "nonlinear", "epistasis2", "epistasis3" or "epistasis4". */
const char *tg_sim_kind_name(const tg_sim_effect *e);

/* ------------------------------------------------------------------------------------------ */
/** @name Runtime (StarPU, StarPU-MPI) */
typedef struct {
    const char *sched; /**< StarPU scheduler; NULL means "dmdas" */
    int ncpu;          /**< CPU workers; -1 = all cores not driving a GPU (with GPUs, one
                        * fewer: the core of the thread that submits tasks) */
    int ngpu;          /**< CUDA workers; -1 = all GPUs, 0 = none */
    /** With ncpu -1 and GPUs in use: 0 for workloads that CPU workers cannot help (they then
     * start none), 1 otherwise (the default) */
    int cpus_help_gpus;
    int grid_p, grid_q; /**< process grid of the matrices created with p = q = 0 (P·Q must be
                         * the rank count); 0, 0 = the squarest, P ≥ Q */
    /** With several GPUs in the process: 1 (the default) gives each tile of a matrix a home
     * GPU (2D block-cyclic over them) where its tasks run; 0 leaves them to the scheduler */
    int tile_homes;
} tg_runtime_opts;

/** Defaults: dmdas, all CPUs, all GPUs, CPU workers beside GPUs, the squarest process grid,
 * tiles on home GPUs. */
tg_runtime_opts tg_runtime_defaults(void);
/** Starts StarPU (and StarPU-MPI when built with MPI), creates the cuBLAS and cuBLASLt
 * handles of every CUDA worker. Fails clearly when more GPUs are asked for than exist. */
tg_status tg_runtime_start(const tg_runtime_opts *opts, tg_error *err);
void tg_runtime_stop(void);
/** Creates, on a thread of its own, the contexts of the CUDA devices that tg_runtime_start with
 * @p opts will use (tenths of a second at a process's first CUDA call), while the caller reads
 * its inputs; tg_runtime_start and tg_runtime_prepare_wait wait for it. Nothing with ngpu 0,
 * with STARPU_WORKERS_CUDAID set, under an MPI launcher (a rank's devices are chosen at its
 * start), once the runtime is started, or in a build without CUDA. */
void tg_runtime_prepare(const tg_runtime_opts *opts);
/** Waits for tg_runtime_prepare's thread (a program that ends without starting the runtime
 * calls it before it exits, so that the thread is not inside CUDA then). */
void tg_runtime_prepare_wait(void);
/** Initialises MPI in a build with MPI (MPI_THREAD_MULTIPLE, once per process, finalised at
 * exit) so that the rank and the rank count are known before the runtime starts; a program run
 * under mpiexec calls it first. tg_runtime_start() calls it too. Nothing without MPI, nor in a
 * process that no MPI launcher started (no PMI_RANK, PMIX_RANK or OMPI_COMM_WORLD_RANK in its
 * environment) unless the caller initialised MPI: such a process is one rank.
 * Collective at its first call with several ranks: they agree on the thread level MPI gives
 * (or gave the user who initialised it), and every rank fails with TG_ERR_RUNTIME when one
 * has less than MPI_THREAD_MULTIPLE. */
tg_status tg_runtime_init_mpi(tg_error *err);
/** This process's MPI rank and the number of ranks: 0 and 1 without MPI or before
 * tg_runtime_init_mpi(). */
int tg_runtime_rank(void);
int tg_runtime_nranks(void);
/** The process grid P × Q of matrices created with p = q = 0: the runtime's (tg_runtime_opts),
 * or before it starts the squarest with P ≥ Q (1 × 1 with one rank). */
void tg_runtime_grid(int *p, int *q);
/** Collective, before tg_runtime_start(): every rank's @p n values @p mine gathered into @p all
 * on every rank (nranks·n entries, rank r's from all[r·n]; with one rank a copy of @p mine),
 * and the lowest rank whose values differ from rank 0's, or −1 when every rank has the same
 * (always −1 with one rank). The ranks' check that they run the same command on the same
 * inputs (tilegwas's main, then each command's inputs). */
int tg_runtime_differing_rank(const uint64_t *mine, int n, uint64_t *all);
/** Ends every rank at once, with exit status @p code: MPI_Abort with several ranks (for a
 * failure on one rank while the others may wait for it in a collective), exit() with one. */
void tg_runtime_abort(int code) __attribute__((noreturn));
int tg_runtime_ncpu(void);
int tg_runtime_ngpu(void);
/** The memory StarPU may use on each of this rank's GPUs (the smallest, after
 * STARPU_LIMIT_CUDA_MEM and the share of ranks that share a GPU), in bytes; −1 without GPUs. */
int64_t tg_runtime_gpu_memory(void);
/** One line describing ranks, workers and devices, for the log. */
void tg_runtime_describe(char *buf, size_t len);
/** One line saying which codelets were probed since the runtime started: those that several
 * kinds of worker can run and that had no performance model on some of them (the probe gives
 * them one before their first task; docs/USER-GUIDE.md "Performance models"). */
void tg_probe_describe(char *buf, size_t len);
/** Collective: waits for every task and transfer, then writes on rank 0 one line with the
 * bytes StarPU-MPI has sent between the ranks since the runtime started, in all and by rank,
 * from its own count (STARPU_COMM_STATS, turned on unless the environment sets it; tilegwas
 * keeps StarPU-MPI from printing its table at shutdown then). Returns 0, writing nothing,
 * when nothing is counted (one rank, a build without MPI, or STARPU_COMM_STATS=0) and, on
 * rank 0, when nothing was sent (the ranks met only in sums and gathers). Transfers
 * of the StarPU-MPI data only: the library's own sums and gathers over MPI are not in it. */
int tg_runtime_describe_comm(char *buf, size_t len);
/** With several ranks, writes one line with the bytes this rank has passed to the library's
 * sums over the ranks (MPI reduce and broadcast, or allreduce: the CG's products, counts,
 * statistics) since the runtime started, and how many sums; the same on every rank, since
 * each sum is a collective with one count. What MPI moves for them is its algorithms' choice
 * (a binomial reduce and broadcast send 2·(R − 1) times it in all); gathers are not in it.
 * Returns 0, writing nothing, with one rank. */
int tg_runtime_describe_sums(char *buf, size_t len);
/** Waits for every submitted task (and MPI transfer): the library's calls submit tasks and
 * return; a caller timing a phase waits first. */
void tg_runtime_wait_all(void);
/** Host memory that GPUs reach by DMA (pinned when the started runtime has CUDA workers,
 * plain memory otherwise): buffers given to tg_geno_mul again and again, such as a solver's
 * vectors, then move at the bus's speed instead of through CUDA's staging of pageable memory.
 * Needs a started runtime; NULL (with the error set) when out of memory. Free with
 * tg_host_free before tg_runtime_stop. */
void *tg_host_alloc(size_t bytes, tg_error *err);
void tg_host_free(void *p);
/** Build features: "cuda", "mpi" flags. */
int tg_have_cuda(void);
int tg_have_mpi(void);
/** Debian's OpenBLAS falls back to slow generic kernels on CPUs it does not know: then
 * restarts the process once (execv) with OPENBLAS_CORETYPE set from the CPU's features and
 * TG_BLAS_RESTARTED naming the kernels OpenBLAS had chosen (the runtime's description says
 * both); returns otherwise. A program calls it first, before any thread starts. */
void tg_blas_restart_if_generic(char **argv);

/** Task traces (--trace): tg_trace_start records every task from then on (collective with
 * several MPI ranks: each records its own tasks); tg_trace_stop waits for every task, stops
 * recording, and on rank 0 writes PREFIX.trace.tsv (one row per task: kernel, worker, submit,
 * start and end times, prediction, work, predecessors) and PREFIX.gantt.png (a Gantt chart
 * titled "LABEL: N tasks in T s; " and the runtime's description). *ntasks receives the tasks
 * recorded. Call it before tg_runtime_stop (collective, as tg_trace_start). */
void tg_trace_start(void);
tg_status tg_trace_stop(const char *prefix, const char *label, size_t *ntasks, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Progress of long phases */
/** Receives the progress of a long phase: @p done of @p total @p unit. Phases and units:
 * "gram" and "kernel" (the KRR build, tg_kernel_gram and tg_kernel_apply; "op" integer
 * operations, "flop"), "xtx" (ZᵀZ + λI of tg_ridge_chol, "op"), "cholesky", "solve" and
 * "predict" (tg_cholesky's factorisation, tg_chol_solve, tg_krr_predict_tiles; "flop"), "snpmm"
 * (tg_geno_mul, "flop"), "grm" (tg_grm, "products"; tg_grm_rows, "blocks") and "genotypes"
 * (the one pass that reads, checks and encodes them, tg_geno_from_*, "SNPs"). Task phases
 * count the flops of their tasks as each ends (this rank's tasks with several MPI ranks, called
 * on every rank); "grm" and "genotypes" count on the host. Calls for a phase come in order:
 * a first one with total −1 as it starts (its total may still be counted as its tasks are
 * submitted), then at most about ten a second, the last one at its end (then done = total
 * unless the phase failed); never two at once;
 * they may come from a StarPU worker thread (from a task's callback), so the hook must be
 * quick and must not call the library. */
typedef void (*tg_progress_fn)(void *ctx, const char *phase, const char *unit, int64_t done,
                               int64_t total);
/** Sets the process-wide progress hook (NULL, the default: none, and no cost). One hook for
 * the whole library rather than a field in each function's options: the phases are spread over
 * calls most of which take no options, and progress is a sink, not a choice about the result
 * (docs/DESIGN-NOTES.md). The CG (tg_cg_opts.progress) and the epistasis search
 * (tg_epi_opts.progress) keep their own hooks, which carry their own figures. */
void tg_progress_set(tg_progress_fn fn, void *ctx);

/* ------------------------------------------------------------------------------------------ */
/** @name Calibration of the performance models (the calibrate command)
 * tg_calibrate runs every kernel of the chosen workloads over a range of sizes on each worker
 * kind of this machine (the CPUs, then the GPUs, each kind in a runtime of its own: under a
 * scheduler the GPUs would take nearly every task) until StarPU's models of them are
 * calibrated; makes each fitted model valid for every size (tg_perfmodels_finish); then runs
 * the kernels at sizes between those calibrated and reports, per kernel, worker kind and size,
 * the predicted and measured times. It starts and stops the runtime itself (none may be
 * running) and runs on one MPI rank. Models are kept where StarPU keeps them, under this
 * host's name, for every later run. */
/** Workloads whose kernels tg_calibrate runs (a bit set). */
enum {
    TG_CALIBRATE_KRR = 1,       /**< KRR build, tile Cholesky of every precision map, solve,
                                 * prediction */
    TG_CALIBRATE_RR = 2,        /**< RR's ZᵀZ by INT8 panels, FP64 and FP32 factors */
    TG_CALIBRATE_EPISTASIS = 4, /**< epistasis rounds of order 2, 3, 4 */
    TG_CALIBRATE_SNPMM = 8,     /**< genotype products, both orientations, FP64 and FP32 */
    TG_CALIBRATE_ALL = 15
};
typedef struct {
    tg_runtime_opts rt;  /**< the workers (ncpu 0: no CPU pass; ngpu 0: no GPU pass) */
    unsigned workloads;  /**< TG_CALIBRATE_* (default all) */
    int quick;           /**< small sizes only (a minute or two on 2 cores) */
    int reps;            /**< repetitions of each size (default 3) */
    int reset;           /**< forget the models calibrated so far (STARPU_CALIBRATE=2) */
    int bus;             /**< measure the bus again (STARPU_BUS_CALIBRATE=1) */
    const char *export_dir; /**< NULL, or an existing folder that receives the models as a
                             * profile (machine.txt and one file per model) */
    /** Receives each line of the run's account (may be NULL): the runtime, each size's time,
     * the models calibrated; @p detail: a line for a log file rather than a screen (StarPU's
     * bus bandwidths). */
    void (*log_line)(void *ctx, int detail, const char *line);
    void *log_ctx;
} tg_calibrate_opts;
/** Defaults: the runtime's defaults, every workload, 3 repetitions, no reset, no export. */
tg_calibrate_opts tg_calibrate_defaults(void);
/** Checks @p o (TG_ERR_ARG: an empty or unknown workload set, reps < 1, several MPI ranks). */
tg_status tg_calibrate_check(const tg_calibrate_opts *o, tg_error *err);

/** A kernel size checked: its tasks at that size on one worker kind. */
typedef struct {
    const char *kernel; /**< the model's symbol, e.g. "tg_gemm_fp16" (static) */
    const char *worker; /**< "cpu" or "cuda" */
    double work;        /**< the model's size: the task's flops, else its data bytes */
    int64_t tasks;
    double measured;    /**< mean seconds per task, measured */
    double predicted;   /**< mean seconds per task, predicted (NAN: no prediction) */
    double fastest;     /**< the fastest task's seconds */
} tg_calibrate_row;
/** What tg_calibrate measured; free with tg_calibrate_report_free (after an error too). */
typedef struct {
    tg_calibrate_row *rows; /**< sorted by kernel, worker and work */
    size_t nrows;
    int nmodels;            /**< models calibrated */
} tg_calibrate_report;
/** Calibrates (see the section's head); @p rep receives the check on sizes never run. */
tg_status tg_calibrate(const tg_calibrate_opts *o, tg_calibrate_report *rep, tg_error *err);
void tg_calibrate_report_free(tg_calibrate_report *rep);

/* ------------------------------------------------------------------------------------------ */
/** @name Tiled matrices */
/** Storage shape: general, or symmetric with only the lower tiles (i ≥ j) stored. */
typedef enum { TG_GENERAL = 0, TG_SYM_LOWER } tg_shape;

/** A tiled matrix: one StarPU data handle per tile, a precision and owner rank per tile.
 * Tiles are allocated by StarPU on first use (pinned, possibly on a GPU), never as one array. */
typedef struct tg_matrix tg_matrix;

/** The tile size @p nb of a tiled solver (krr, rr --solver cholesky, a saved model) for @p n
 * rows (0: not yet known), refused with a message naming @p opt and the bound: below
 * TG_TILE_MIN unless one tile holds every row (a task on a 16 × 16 tile, 8,192 flops, is over
 * in about a microsecond, what StarPU spends to schedule it: smaller tiles leave the workers
 * idle while the tasks, (n / nb)³ / 6 for the Cholesky, grow without bound), or more than
 * TG_TILES_MAX tiles a side (10⁸ Cholesky tasks: StarPU's own cost alone would take minutes). */
#define TG_TILE_MIN 16
#define TG_TILES_MAX 1024
tg_status tg_tile_check(const char *opt, int64_t n, int64_t nb, tg_error *err);

/** Creates an m × n matrix of mb × nb tiles (the last row/column of tiles may be smaller),
 * every tile of precision @p prec, owners 2D block-cyclic over a p × q grid (p·q must equal
 * the rank count; 0,0 means the runtime's grid, tg_runtime_grid). */
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
/** The rule behind every workload's default precisions (bit sets of 1u << tg_prec): @p with_gpus
 * when the started runtime has GPU workers, else @p cpu_only (fp16 and fp8 tiles save memory,
 * not time, on CPUs); @p why (may be NULL) receives the reason, for logs. */
unsigned tg_precisions_by_workers(unsigned with_gpus, unsigned cpu_only, const char **why);
/** The stored content of tile (i, j), which this rank owns, copied as it is (no rounding):
 * rows·cols elements of the tile's precision (tg_matrix_tile_prec; fp16 and fp8 as their bits)
 * holding value·scale (tg_matrix_tile_scale), column-major without padding, into @p buf of
 * rows·cols·tg_prec_size bytes. With tg_matrix_tile_write, saves and restores a matrix exactly
 * (krr --save-model: a Cholesky factor in its per-tile precisions). */
tg_status tg_matrix_tile_read(const tg_matrix *A, int i, int j, void *buf, tg_error *err);
/** Replaces stored tile (i, j) by @p buf as tg_matrix_tile_read gives it, of precision @p prec
 * (fp64, fp32, fp16 or fp8) and scale @p scale (a positive power of two). Like
 * tg_matrix_convert, called on every rank: each records the precision and scale, the owner
 * copies @p buf (read on the owner only; NULL elsewhere is fine). */
tg_status tg_matrix_tile_write(tg_matrix *A, int i, int j, tg_prec prec, double scale,
                               const void *buf, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Epistasis (exhaustive search of SNP pairs, triples, quads in case-control data) */
/** Score of a combination, higher is better: K2 as the natural log of the Bayes factor of
 * the combination's cells against no association over the same samples (K2 of the class
 * margins minus K2 of the table, so that combinations counted over different samples compare
 * fairly), mutual information between the genotype cell and the class (nats), or Pearson's χ²
 * of the 3^k × 2 table. */
typedef enum { TG_EPI_SCORE_K2 = 0, TG_EPI_SCORE_MI, TG_EPI_SCORE_CHI2 } tg_epi_score_kind;

/** Largest SNP count: SNP indices are 32-bit in the round tasks and the GPU kernel. */
#define TG_EPI_MAX_SNPS INT32_MAX
/** Largest top-k (the GPU selection keeps the best top-k of every 2048 candidates). */
#define TG_EPI_MAX_TOPK 1024

struct tg_epi_hit_info;

typedef struct {
    int order;                /**< 2, 3 or 4 */
    int topk;                 /**< hits reported, 1 .. TG_EPI_MAX_TOPK */
    tg_epi_score_kind score;
    int block;                /**< SNPs per block: a multiple of 8 in [8, 4096]; 0 = by order
                                   (2: 1024, 3: 256, 4: 64, or 128 with GPUs where that makes
                                   at least 8 rounds a GPU), shrunk to ceil(M/8)·8 for small M */
    /** 0: every round. Otherwise only the first max_rounds rounds (benchmarks on a part of a
     * large search): the report then counts the rounds and combinations of that part. */
    int64_t max_rounds;
    /** 0 or 1: every round. S > 1: only rounds 0, S, 2S, ... (of the first max_rounds when
     * set): a sample spread over the whole search, for benchmarks of searches too long to run
     * whole; the report counts the combinations of the rounds run, rounds stays the total, and
     * progress still counts against the whole search's combinations. */
    int64_t round_step;
    /** Called at most once a second from a worker thread (may be NULL): combinations done.
     * With several MPI ranks: this rank's count times the rank count (an estimate, kept below
     * the total), and at the end, on rank 0 only, the exact count of every rank's rounds. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /** In (0, 1] (mi and χ² only; one MPI rank): instead of the top-k (topk unused, hits left
     * empty), every combination with P ≤ p_threshold goes to emit, best score first (ties: SNP
     * indices), after the search. The rounds keep what passes a bound on the statistic, by
     * pages of TG_EPI_MAX_TOPK per round; the candidates wait in a temporary file, sorted in
     * runs of p_run and merged: memory is bounded by 24 bytes × p_run plus 96 KiB per run. */
    double p_threshold;
    int64_t p_run; /**< candidates sorted in memory per run; 0: 2^20 (24 MiB) */
    /** A SNP set (indices into the .bim, distinct, any order; NULL: none): only the
     * combinations holding at least one of its nset SNPs, each once, C(M, k) − C(M − nset, k)
     * of them. The set's SNPs come first in the planes, so only block tuples starting in the
     * set's blocks run; scores equal the exhaustive search's but for the last bits (a
     * combination's table is summed in the planes' SNP order, then reported in the .bim's). */
    const int64_t *set;
    int64_t nset;
    /** Called on the calling thread with each passing combination (its table recounted); a
     * status other than TG_OK ends the search with it. */
    tg_status (*emit)(void *ctx, const struct tg_epi_hit_info *h, tg_error *err);
    void *emit_ctx;
} tg_epi_opts;

/** One reported combination with its full contingency table. */
typedef struct tg_epi_hit_info {
    int64_t snp[4];       /**< SNP indices in the .bim, increasing; −1 past the order */
    double score;         /**< ln BF (K2), MI or χ² (as named by the score kind) */
    int64_t n;            /**< samples valid at every SNP of the combination */
    /** MI and χ²: the table's degrees of freedom, (non-empty cells − 1)·(non-empty classes −
     * 1); 0 for K2 */
    int df;
    /** χ²: Pearson's P; MI: the G-test's P (G = 2·n·MI is χ² with df degrees of freedom);
     * both from the χ² distribution's upper tail (0 below 1e-308). NAN for K2 (a score, not a
     * test). */
    double p;
    int64_t table[2][81]; /**< controls, cases: 3^k counts, cell g = Σ g_i·3^(k−1−i) (g_i the
                               A1 count at SNP i; first SNP most significant) */
} tg_epi_hit_info;

typedef struct {
    int order, block, complete; /**< complete: no genotype missing among the samples used */
    int64_t n_snps, n_controls, n_cases, n_excluded; /**< excluded: class −1 */
    double missing_rate;        /**< missing calls among the samples used */
    int64_t rounds;             /**< round tasks (block tuples b_1 ≤ … ≤ b_k) */
    uint64_t combinations;      /**< C(M, k), every one evaluated exactly once */
    uint64_t passed;            /**< p_threshold: the combinations given to emit */
    int64_t n_set;              /**< SNPs of the set (tg_epi_opts.set), 0 without one */
    /** seconds_search: the whole search, from before the planes (its first rounds start as
     * their blocks are built), so it includes seconds_planes */
    double seconds_planes, seconds_search;
    int nhit;
    tg_epi_hit_info *hits;      /**< best first (ties: lower SNP indices first) */
} tg_epi_report;

tg_epi_opts tg_epi_defaults(void);

/** Case-control classes from phenotype values (one per sample, NAN = missing) with PLINK's
 * coding: 1 control, 2 case, NAN missing, and 0 missing when every value is 0, 1, 2 or NAN
 * (class −1, excluded). Any other value makes the phenotype quantitative: TG_ERR_FORMAT naming
 * @p source, the first such sample and its value. Fails when there are no cases or no
 * controls. */
tg_status tg_epi_classes(const tg_sample *samples, const double *values, int64_t n,
                         const char *source, int8_t *cls, tg_error *err);
/** tg_epi_classes of the samples of @p bed (cls: n_samples entries) from column @p pheno_name
 * (NULL: the first) of the phenotype file @p pheno read against the .fam (tg_pheno_read), or
 * from the .fam's column 6 when @p pheno is NULL. An absent column is TG_ERR_ARG naming the
 * file. */
tg_status tg_epi_classes_bed(const tg_bed *bed, const char *pheno, const char *pheno_name,
                            int8_t *cls, tg_error *err);

/** Exhaustive search of every combination of opts->order SNPs of @p bed over the samples with
 * cls[i] ∈ {0 control, 1 case} (−1 excluded), as StarPU round tasks (runtime started). Missing
 * genotypes are excluded from the counts of the SNP they miss at. Fills @p rep (free it with
 * tg_epi_report_free). With several MPI ranks it is collective: every rank calls it with the
 * same input and runs every R-th round; rank 0 receives the hits, identical to one rank's, and
 * the counts of the whole search; on the other ranks nhit is 0 and `combinations` counts their
 * own rounds. A rank that fails returns before the ranks meet at the end: the caller must then
 * end every rank (tg_runtime_abort). */
tg_status tg_epistasis(const tg_bed *bed, const int8_t *cls, const tg_epi_opts *opts,
                       tg_epi_report *rep, tg_error *err);
/** What tg_epistasis with the same arguments will hold, in bytes: on the host (the genotype
 * planes, the score table, the rounds' results in flight), on each GPU in all (the planes and
 * the table) and for its largest task (one round's plane blocks, the table, its result). Needs
 * the started runtime (the rounds in flight follow its workers); an error as tg_epistasis's. */
tg_status tg_epistasis_memory(const tg_bed *bed, const int8_t *cls, const tg_epi_opts *opts,
                              double *host, double *gpu, double *task, tg_error *err);
void tg_epi_report_free(tg_epi_report *rep);

/* ------------------------------------------------------------------------------------------ */
/** @name Genotype matrix products (Z·Λ and Zᵀ·Λ̃ for the centered genotype matrix Z) */
/** Z_ij = x_ij − 2p_j (x the A1 count, p_j the A1 frequency over non-missing calls), 0 where
 * the call is missing (mean imputation), times 1/sqrt(2p_j(1−p_j)) with scaling. Monomorphic or
 * all-missing SNPs have a zero column. n and m must be below 2^31. Memory: two 5codes copies
 * (SNPs grouped by 5, samples grouped by 5), 0.4 bytes per genotype, plus 16 bytes per missing
 * call; a GPU holds the same.
 * Several MPI ranks: the samples are split evenly over the ranks in contiguous ranges
 * (tg_geno_local; at least one per rank), and each rank decodes and holds only its own rows:
 * 0.4 bytes per genotype of its samples, 16 per missing call among them, 32 bytes per SNP.
 * The constructors and the products are then collective (every rank calls them in the same
 * order with the same arguments); p is computed from integer counts summed over the ranks,
 * identical to one rank's. A rank that fails returns before the ranks meet: the caller must
 * then end every rank (tg_runtime_abort). */
typedef struct tg_geno tg_geno; /* a genotype matrix prepared for repeated products */
/* From a .bed (every sample, every SNP). scale: 1 to scale columns by 1/sqrt(2p(1-p)).
 * Monomorphic or all-missing SNPs get a zero column; their count is tg_geno_excluded(). */
tg_status tg_geno_from_bed(const tg_bed *bed, int scale, tg_geno **out, tg_error *err);
/** From the selected samples and SNPs of a genotype source (tg_geno_source_select), as
 * tg_geno_from_bed. */
tg_status tg_geno_from_source(const tg_geno_source *src, int scale, tg_geno **out, tg_error *err);
/* From an n×m column-major int8 array (0,1,2 = A1 counts, TG_GENO_MISSING = missing), leading
 * dimension ld >= n. */
tg_status tg_geno_from_int8(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                            tg_geno **out, tg_error *err);
/** Frees @p g (NULL accepted). Call it while the runtime that ran its products still runs. */
void tg_geno_free(tg_geno *g);
int64_t tg_geno_n(const tg_geno *g);
int64_t tg_geno_m(const tg_geno *g);
int64_t tg_geno_excluded(const tg_geno *g);
/** This rank's samples [*first, *first + *count) (every sample with one rank). */
void tg_geno_local(const tg_geno *g, int64_t *first, int64_t *count);
/* p_j, the A1 allele frequency over non-missing calls (array of m). */
const double *tg_geno_freq(const tg_geno *g);
/** Each SNP's A1 frequency, missing-call rate and calls over every sample (every rank's), as
 * tg_bed_stats gives them, from the counts the preparation made: stats[0 .. m). */
void tg_geno_stats(const tg_geno *g, tg_snp_stats *stats);
/* trans = 0: out (n×k) = Z·in (in is m×k); trans = 1: out (m×k) = Zᵀ·in (in is n×k).
 * Column-major, leading dimensions ldin / ldout; prec TG_FP64 (double arrays) or TG_FP32
 * (float arrays, FP32 accumulation). Needs a started runtime (tg_runtime_start); runs as
 * StarPU tasks on all workers; the genotypes stay on each device between calls. k must be in
 * 1..64; a NaN or infinite entry of @p in that the rank reads is TG_ERR_ARG naming its row and
 * column. Several MPI ranks (the same full-size arguments on every rank): trans 0 computes
 * each rank's rows, rank 0 receives all n rows and the other ranks hold their own; trans 1
 * sums the ranks' Z_rᵀ·in_r (each reads only its samples' rows of @p in) and every rank gets
 * the same sum, whose rounding depends on the rank count (the same from run to run). */
tg_status tg_geno_mul(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in,
                      int64_t ldin, void *out, int64_t ldout, tg_error *err);
/** What the products on @p n samples × @p m SNPs with @p k columns of @p es bytes (taken in
 * products of at most 64, tg_geno_mul's limit) keep on a GPU, in bytes: @p all (both 5codes
 * copies of the genotypes, and their 2-bit tiles where the GPUs make them; the columns read
 * and written; not the lists of missing calls) and @p task, the most one task reads and
 * writes (its block of genotypes, the columns). For the commands' estimates before they read
 * the genotypes, once the runtime has started. */
void tg_geno_device_bytes(int64_t n, int64_t m, int64_t k, size_t es, double *all,
                          double *task);

/* ------------------------------------------------------------------------------------------ */
/** @name Ridge regression by conjugate gradients (SNP-BLUP) and the GRM
 * Built on the genotype matrix products above; ZᵀZ is never formed. Model, per phenotype c with
 * observed samples O_c (n_c of them; a missing value is NAN):
 *   min over μ, β of Σ_{i∈O_c} (y_ic − μ − (Zβ)_i)² + λ‖β‖²,
 * the intercept μ not penalised. Eliminating μ centers y and the columns of Z over O_c:
 *   (Z̃ᵀZ̃ + λI)·β = Z̃ᵀ(y_c − ȳ_c),  Z̃ = Z with its columns centered over O_c, other rows 0.
 * All phenotypes share each product (Z·P for the block, centering per column, Zᵀ·). Without
 * missing phenotype values Z̃ = Z (Z is centered already).
 * Covariates (tg_cg_opts.covar) are fixed effects beside the intercept: with C = [1, covariates]
 * over O_c (a sample missing a covariate is left out of every phenotype),
 *   min over α, β of Σ_{i∈O_c} (y_ic − (Cα)_i − (Zβ)_i)² + λ‖β‖²,
 * solved as (ZᵀM_cZ + λI)β = ZᵀM_c y_c, M_c = I − Q_cQ_cᵀ, Q_c an orthonormal basis of C over O_c
 * (Frisch–Waugh–Lovell); M_c is applied between the two products. A design column constant, or
 * collinear with the columns before it, over O_c is left out of Q_c (tg_cg_pheno.n_fixed).
 * Several MPI ranks: every function below is collective, with a genotype matrix split over the
 * ranks (tg_geno_local) and the same full-size arguments on every rank (y whole everywhere);
 * the results over SNPs (β, the Jacobi diagonal, the report) are the same on every rank, those
 * over samples (fitted values, predictions, the GRM) are whole on rank 0 only. */
/** Per-phenotype outcome of tg_ridge_cg(). */
typedef struct {
    int64_t n_obs;      /**< observed samples n_c (with every covariate) */
    double mean;        /**< ȳ_c, the mean of the observed values */
    int n_fixed;        /**< fixed-effect columns kept, the intercept included */
    int iterations;     /**< CG iterations run for this phenotype */
    int converged;      /**< relres ≤ tol within max_iter */
    double relres;      /**< ‖r‖/‖b‖ of the CG recurrence at its last iteration (b = Z̃ᵀỹ) */
    double true_relres; /**< ‖b − (Z̃ᵀZ̃ + λI)β‖/‖b‖ recomputed from the returned β */
} tg_cg_pheno;

/** Report of tg_ridge_cg(); the caller provides @p pheno with one entry per phenotype. */
typedef struct {
    tg_cg_pheno *pheno;
    int iterations;          /**< block iterations (the most of any phenotype) */
    int64_t products;        /**< tg_geno_mul calls (each at most 64 columns) */
    double seconds;          /**< whole solve, the final residual check included */
    double seconds_products; /**< of which in tg_geno_mul */
} tg_cg_report;

/** Called after every iteration with the relative residual of each phenotype (NAN for one that
 * converged at an earlier iteration). */
typedef void (*tg_cg_progress_fn)(void *ctx, int iter, int64_t nphen, const double *relres);

typedef struct {
    double lambda;  /**< ridge parameter λ > 0 */
    double tol;     /**< stop a phenotype when ‖r‖/‖b‖ ≤ tol (default 1e-8) */
    int max_iter;   /**< default 1000 */
    /** Jacobi preconditioner: diag(Z̃ᵀZ̃) per phenotype (m × nphen, leading dimension ldj), as
     * tg_ridge_jacobi_bed/_int8 compute it; the solver adds λ. NULL: no preconditioner. */
    const double *jacobi;
    int64_t ldj;
    tg_cg_progress_fn progress; /**< may be NULL */
    void *ctx;
    /** Covariates, fixed effects beside the intercept: n × ncovar (leading dimension ldc, NAN =
     * missing), the rows of the genotype matrix. NULL with ncovar 0: the intercept alone. */
    const double *covar;
    int64_t ldc;
    int ncovar;
    /** λ_c of each phenotype (nphen values > 0), one solve for several ridge parameters (the
     * grid and folds of tg_assoc's step 1); NULL: @p lambda for every phenotype. */
    const double *lambdas;
    /** Per phenotype, a group of SNPs left out of its fit (their β held at 0: the ridge on the
     * other SNPs alone), the SNPs of group drop[c] ≥ 0 being those with chrom_of[j] ==
     * drop[c] (m values); drop[c] < 0 or drop NULL: every SNP (tg_assoc's LOCO refits). */
    const int *drop;
    const int *chrom_of;
} tg_cg_opts;

/** Defaults: λ 1, tol 1e-8, 1000 iterations, no preconditioner, no progress hook. */
tg_cg_opts tg_cg_defaults(void);

/** The exact Jacobi diagonal d[j + c·ldd] = Σ_{O_c} Z_ij² − (Σ_{O_c} Z_ij)²/n_c, from the
 * genotypes @p g was made from (a .bed, or the int8 array given to tg_geno_from_int8) and the
 * same @p scale; O_c from the NANs of column c of @p y (n × nphen). One pass over the genotypes,
 * by genotype counts per SNP. */
tg_status tg_ridge_jacobi_bed(const tg_bed *bed, const tg_geno *g, int scale, int64_t nphen,
                              const double *y, int64_t ldy, double *d, int64_t ldd,
                              tg_error *err);
tg_status tg_ridge_jacobi_int8(const int8_t *geno, int64_t ld, const tg_geno *g, int scale,
                               int64_t nphen, const double *y, int64_t ldy, double *d,
                               int64_t ldd, tg_error *err);

/** Solves the ridge systems of the @p nphen phenotypes (columns of @p y, n × nphen, NAN =
 * missing) by preconditioned conjugate gradients from β = 0; β is m × nphen (leading dimension
 * @p ldb). Needs a started runtime. Fewer than 2 observed values, or a non-finite one, is
 * TG_ERR_ARG. A phenotype not converged within max_iter is TG_ERR_NUMERIC naming it, with @p beta
 * holding the last iterates and @p rep filled for every phenotype. With several ranks every
 * rank runs the same iterations and returns the same β, report and status (the sums over the
 * ranks have the same bits on each); the progress hook is called on every rank. */
tg_status tg_ridge_cg(tg_geno *g, int64_t nphen, const double *y, int64_t ldy,
                      const tg_cg_opts *o, double *beta, int64_t ldb, tg_cg_report *rep,
                      tg_error *err);

/** In-sample fitted values ŷ_c = μ_c + Zβ_c (every sample, observed or not), μ_c the intercept
 * of the model: ȳ_c − mean over O_c of Zβ_c. @p pred is n × nphen (leading dimension ldp);
 * @p mu (nphen, may be NULL) receives the intercepts. Several ranks: rank 0 receives every row
 * of @p pred, the others their own rows; @p mu on every rank. */
tg_status tg_ridge_predict(tg_geno *g, int64_t nphen, const double *y, int64_t ldy,
                           const double *beta, int64_t ldb, double *pred, int64_t ldp, double *mu,
                           tg_error *err);
/** Predictions μ_c + Z_T β_c for another cohort @p test genotyped on the same SNPs in the same
 * order (the caller checks the IDs): Z_T its genotypes centered with the TRAINING frequencies
 * of @p train (scaled like it when @p scale), its missing calls imputed by the training mean
 * (0 after centering); @p mu the intercepts from tg_ridge_predict(). One product with the
 * cohort's own genotype matrix and one pass over its .bed. Several ranks: the cohort's samples
 * are split like the training ones, rank 0 receives every row of @p pred. */
tg_status tg_ridge_predict_bed(tg_geno *train, int scale, const tg_bed *test, int64_t nphen,
                               const double *beta, int64_t ldb, const double *mu, double *pred,
                               int64_t ldp, tg_error *err);

/** The genomic relationship matrix K = Z·Zᵀ/m (n × n, leading dimension ldk ≥ n), m counting
 * every SNP (zero columns too), through 2·⌈n/64⌉ products. With a scaled @p g this is plink2's
 * `--make-rel meanimpute`; unscaled, `--make-rel cov meanimpute`. Several ranks: K is filled on
 * rank 0 only, the other ranks pass any @p K (NULL too), and it equals one rank's. */
tg_status tg_grm(tg_geno *g, double *K, int64_t ldk, tg_error *err);

/** What a relationship matrix measures (tilegwas grm --grm-kind). With Z_ik = x_ik − 2p_k (x the
 * A1 count, p its frequency over the calls; a missing call 0, i.e. mean-imputed):
 * standardised Σ_k Z_ik Z_jk / (2p_k(1 − p_k)) (plink2 --make-rel, GCTA), centred Σ_k Z_ik Z_jk
 * (plink2 --make-rel cov), both divided by the SNPs both samples have called (or by every SNP
 * with meanimpute); vanraden Σ_k Z_ik Z_jk / Σ_k 2p_k(1 − p_k) (VanRaden 2008), the sum over
 * polymorphic SNPs. Monomorphic and all-missing SNPs add 0 and are counted. */
typedef enum { TG_GRM_STANDARDISED, TG_GRM_CENTRED, TG_GRM_VANRADEN } tg_grm_kind;

typedef struct {
    tg_grm_kind kind;
    int meanimpute; /**< divide by every SNP, not by those both samples have called */
    int square;     /**< compute whole rows (both triangles), not the lower triangle only */
    int counts;     /**< also give each pair's count of SNPs both samples have called */
    int nb;         /**< rows per block (0: the default, tg_grm_block_rows) */
    const int64_t *snps; /**< the SNPs to use, indices into the fileset's (NULL: every
                          * one), nsnps of them */
    int64_t nsnps;
} tg_grm_opts;

/** The rows per block tg_grm_rows uses with @p o in the started runtime: o->nb when given, else
 * 2,048 when there are CUDA workers (tiles big enough for a GPU), 512 otherwise. */
int tg_grm_block_rows(const tg_grm_opts *o);

/** What tg_grm_rows found and did. */
typedef struct {
    int64_t m;        /**< SNPs, every one counted */
    int64_t used;     /**< polymorphic SNPs (the others add 0) */
    int64_t missing;  /**< missing calls */
    double denom;     /**< the divisor when one serves every pair (0: pairwise counts) */
    int integer;      /**< the products were the exact INT8 Gram (else FP64 tiles) */
    double read_s, products_s; /**< seconds reading and encoding, and in the block loop */
} tg_grm_info;

/** Receives rows [r0, r1) of the matrix: row r at k + (r − r0)·ld, its entries 0..r (0..n − 1
 * with opts.square) valid; @p nobs the same rows of the pair counts (NULL unless opts.counts).
 * An error it returns stops tg_grm_rows. */
typedef tg_status (*tg_grm_rows_fn)(void *ctx, int64_t r0, int64_t r1, const double *k,
                                    const double *nobs, int64_t ld, tg_error *err);

/** The relationship matrix of every sample of @p bed (tg_grm_kind), computed a block of rows
 * at a time and handed to @p fn in row order, so that no more than a block is held. Without
 * missing calls, the centred and VanRaden kinds come from the exact INT8 Gram E·Eᵀ of
 * E = x − round(2p) (the KRR build's tile product) and exact rank-one corrections; the
 * standardised kind, and any kind with missing calls, from FP64 tile products of the scaled Z
 * (DSYRK, DGEMM). Pair counts are the INT8 Gram of the called-genotype indicators. Each tile
 * is a task on the CPU or CUDA workers of one MPI rank (the runtime must be started); a block
 * row is handed to @p fn while the next one computes. */
tg_status tg_grm_rows(const tg_bed *bed, const tg_grm_opts *o, tg_grm_rows_fn fn, void *ctx,
                      tg_grm_info *info, tg_error *err);

/** The lower triangle (entries K[i + j·ldk], i ≥ j; the upper one untouched) of tg_grm_rows's
 * matrix, in memory (n × n, ldk ≥ n); @p o's square and counts are not used. */
tg_status tg_grm_lower(const tg_bed *bed, const tg_grm_opts *o, double *K, int64_t ldk,
                       tg_grm_info *info, tg_error *err);

/** The name of a kind ("standardised", "centred", "vanraden") and its parser (the error lists
 * the valid names). */
const char *tg_grm_kind_name(tg_grm_kind k);
tg_status tg_grm_kind_parse(const char *name, tg_grm_kind *k, tg_error *err);

/** GRM files (tilegwas grm --grm-format): the layouts of plink2 --make-rel (triangle: row i
 * holds entries 0..i; square; square0: square with 0 above the diagonal) in text (6 significant
 * digits, tab-separated, as plink2 prints them), bin (float64) or bin4 (float32) to
 * PREFIX.rel[.bin]; or GCTA's PREFIX.grm.bin and PREFIX.grm.N.bin (float32 lower triangle with
 * the diagonal, row by row: the values and the pair counts). Rows arrive through
 * tg_grm_out_rows (a tg_grm_rows_fn) in order: a block is formatted on every core and written by
 * a thread of its own while the next block is computed. */
typedef enum { TG_GRM_TRIANGLE, TG_GRM_SQUARE, TG_GRM_SQUARE0 } tg_grm_shape;
typedef enum { TG_GRM_TEXT, TG_GRM_BIN, TG_GRM_BIN4, TG_GRM_GCTA } tg_grm_encoding;
typedef struct tg_grm_out tg_grm_out;
tg_status tg_grm_out_open(const char *prefix, tg_grm_shape shape, tg_grm_encoding enc, int64_t n,
                          tg_grm_out **out, tg_error *err);
tg_status tg_grm_out_rows(void *out, int64_t r0, int64_t r1, const double *k, const double *nobs,
                          int64_t ld, tg_error *err);
/** Finishes the files (every row must have come) and frees @p o; with @p abandon (an error
 * elsewhere), removes them instead. */
tg_status tg_grm_out_close(tg_grm_out *o, int abandon, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Tile Cholesky */
/** Options of tg_cholesky(). The adaptive map (Higham & Mary; the KRR paper, section V-B.2)
 * gives off-diagonal tile (i, j) the least accurate precision p of @p allowed ∪ {diag}, no more
 * accurate than @p diag, with u_p·‖A_ij‖_F ≤ eps·‖A‖_F/NT (NT tiles per side); FP8 only for
 * tiles whose sides are multiples of 16 (cuBLASLt), FP16 and FP8 only where no value of the
 * factorisation can leave FP16's range (bound: the tile's largest entry and √(d_i·d_j), d the
 * largest diagonal entries, at most 32,768). Diagonal tiles take @p diag.
 * With @p tol > 0 the map's eps follows from a tolerance on the solution instead:
 * eps = tol·shift/((NT + 1)·‖A‖_F), so that the map's first-order backward error,
 * ‖ΔA‖_F ≤ (NT + 1)·eps·‖A‖_F, changes the solution of A·x = b by at most tol relatively when
 * @p shift ≤ λ_min(A) (α for K + αI with K positive semi-definite): ‖(A + ΔA)⁻¹ − A⁻¹‖ ≲
 * ‖ΔA‖₂/λ_min (docs/DESIGN-NOTES.md, "Tile Cholesky"). */
typedef struct {
    double eps;       /**< target accuracy ε of the adaptive map (when tol is 0) */
    unsigned allowed; /**< bit set of precisions off-diagonal tiles may take: 1u << TG_FP16 | ... */
    tg_prec diag;     /**< diagonal tiles: TG_FP64 or TG_FP32 */
    double band;      /**< < 0: the adaptive map. Otherwise the paper's hand-tuned bands: tiles
                       * with i − j ≤ band·(NT − 1) take @p diag, the others the least accurate
                       * allowed precision (band 1: all @p diag, band 0: only the diagonal) */
    tg_prec *map_out; /**< NULL, or mt × nt entries receiving the precision map (column-major,
                       * tile (i, j) at i + j·mt; upper tiles get @p diag) */
    double tol;       /**< > 0: eps from this relative tolerance on the solution (above); 0: eps */
    double shift;     /**< a lower bound ≥ 0 on the smallest eigenvalue of A, for tol and for the
                       * report's bound (0: unknown, the bound is infinite) */
    int lower_diag;   /**< with tol, diag FP64 and FP32 allowed: the diagonal tiles become FP32
                       * (and the panel paths with them) when no off-diagonal tile is FP64 and
                       * Σ over tiles of (u_p·‖A_ij‖_F)², both triangles, stays within
                       * (eps·‖A‖_F)², what the rule's bound allows: the off-diagonal tiles
                       * take their equal shares of it, the diagonal what they leave */
    /** NULL, or a function that writes A's entries again after a failed factorisation: then a
     * diagonal tile that is not positive definite under a map with tiles less accurate than
     * FP64 is not an error. tg_cholesky raises the map (every tile as inaccurate as the least
     * accurate tile of the failed leading block goes up one precision, of allowed ∪ {diag};
     * when that block was all @p diag = FP32, every tile becomes FP64), gives the tiles back
     * the precisions and scales they had at the call (content undefined), calls refill, and
     * factors again; it returns TG_ERR_NUMERIC only when the failed block was all FP64. */
    tg_status (*refill)(void *ctx, tg_matrix *A, tg_error *err);
    void *refill_ctx;
    double max_bytes; /**< > 0: a map whose tiles would take more bytes than this (per rank, in
                       * their storage precisions) is refused with TG_ERR_NOMEM before any tile
                       * is converted or built, also after a raise */
} tg_chol_opts;

/** Defaults: eps 1e-8, diag FP64, allowed FP64|FP32|FP16|FP8, adaptive map, no tol, no shift,
 * diagonal kept, no refill. */
tg_chol_opts tg_chol_defaults(void);

/** At most this many refactorisations after a loss of positive definiteness: each raises the
 * least accurate precision of the failed block (FP8 → FP16 → FP32 → FP64). */
#define TG_CHOL_MAX_RETRIES 3

/** One recovery of tg_cholesky() from a diagonal tile that was not positive definite. */
typedef struct {
    int tile;                /**< the failed diagonal tile (k, k) */
    int64_t tiles[TG_NPREC]; /**< the map that failed: tiles per precision */
    tg_prec from, to;        /**< every tile of precision from (or less accurate) raised to to */
    int64_t raised;          /**< tiles raised */
} tg_chol_retry;

/** What tg_cholesky() did. */
typedef struct {
    int64_t tiles[TG_NPREC]; /**< stored tiles per precision after the map (diagonal included) */
    int64_t gemms[TG_NPREC]; /**< off-diagonal update (GEMM) tasks per precision */
    int64_t copies;          /**< lowered / raised panel-tile copies made (one per tile, panel
                              * and precision needed) */
    double map_seconds;      /**< tile statistics (tasks where the tiles are, or the
                              * statistics pass of tg_krr_build_factor) and conversion */
    double build_seconds;    /**< tg_krr_build_factor: the build in the map's precisions */
    double factor_seconds;   /**< the factorisation that succeeded, submission to completion */
    double retry_seconds;    /**< failed factorisations and refills */
    double norm;             /**< ‖A‖_F (from the tile statistics) */
    double eps;              /**< the eps the adaptive map was built with (from tol when set) */
    double eps_map;          /**< the final map's eps: √(Σ (u_p·‖A_ij‖_F)²)/‖A‖_F over every
                              * tile (both triangles, diagonal included), ≤ eps by the rule */
    double bound;            /**< (NT + 1)·eps_map·‖A‖_F/shift: first-order bound on the
                              * relative change of the solution (infinite with shift 0) */
    tg_prec diag;            /**< precision of the diagonal tiles of the factor */
    int retries;             /**< recoveries, described in retry[0 .. retries) */
    tg_chol_retry retry[TG_CHOL_MAX_RETRIES];
} tg_chol_report;

/** Factors a symmetric positive definite TG_SYM_LOWER matrix in place, A = L·Lᵀ, after
 * converting every tile to the precision of the map (tiles hold L afterwards, in those
 * precisions, except FP8 tiles, which are stored in FP16: their updates multiply FP8 copies of
 * the panel tiles, scaled by powers of two so values stay within ±448, and accumulate in FP16;
 * the strict upper part of diagonal tiles is zero). @p o NULL means tg_chol_defaults(); @p r
 * may be NULL.
 * When a diagonal tile is not positive definite (in its precision), recovers through
 * o->refill as its comment says, or else returns TG_ERR_NUMERIC naming tile (k, k) and the
 * global row, and A's content is undefined. One rank only for now
 * (TG_ERR_ARG with several). */
tg_status tg_cholesky(tg_matrix *A, const tg_chol_opts *o, tg_chol_report *r, tg_error *err);

/** Writes a precision map @p map (nt × nt, column-major, as tg_chol_opts.map_out) of an n × n
 * matrix in tiles of @p nb to @p path: with @p png a heat map of ⌊256/nt⌋ (at least 1) pixels
 * per tile, tile (0, 0) top left (fp64 dark red, fp32 light red, fp16 light blue, fp8 dark
 * blue, upper triangle white; the KRR paper's Fig. 4), axes above and left in tiles and
 * samples, a legend on the right; otherwise TSV lines (tile row, tile column, precision) of the
 * lower tiles. */
tg_status tg_precmap_write(const char *path, int png, const tg_prec *map, int nt, int64_t nb,
                           int64_t n, tg_error *err);

/** Solves L·Lᵀ·W = B in place for every column of @p B (TG_GENERAL, n × nrhs, the row tiling of
 * @p L, every tile FP64 or every tile FP32: the precision the solve runs in), L from
 * tg_cholesky(). Forward then backward substitution by tiles: triangular solves by the inverse
 * of the diagonal tiles, GEMM updates (lowered L tiles raised to B's precision). */
tg_status tg_chol_solve(const tg_matrix *L, tg_matrix *B, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Kernel ridge regression: Build (kernel matrix from genotypes) and Predict
 * The KRR paper's Algorithms 2, 4, 5. Genotypes are int8 "encodings" e (one vector per sample),
 * so that every kernel is a function of the integer dot products c_ij = e_i·e_j (INT8 inputs,
 * INT32 accumulation: cuBLAS INT8 tensor cores on GPU, integer code on CPU), the per-sample
 * terms s_i and the kernel's constants:
 *   gaussian: e = the A1 counts g (0/1/2), s_i = e_i·e_i, d_ij = s_i + s_j − 2c_ij = ‖g_i − g_j‖²
 *             plus ‖x_i − x_j‖² over the confounders x (real, as given, FP64);
 *             K_ij = exp(−γ·d_ij)
 *   ibs:      e = ([g ≥ 1], [g ≥ 2]) per SNP (2 entries), so s_i + s_j − 2c_ij = Σ|g_i − g_j|
 *             exactly; K_ij = 1 − Σ|g_i − g_j| / (2·N_S) (alleles shared IBS / 2N_S)
 *   linear:   e = g − r, r_k the integer nearest 2p_k, δ_k = 2p_k − r_k, s_i = Σ_k e_ik·δ_k;
 *             K_ij = (c_ij − s_i − s_j + Σ_k δ_k²) / (2Σ_k p_k(1−p_k))
 *             = (g_i − 2p)·(g_j − 2p) / (2Σp(1−p)) (VanRaden's first GRM). Centring by the
 *             integers r is exact, so floating point only adds terms of |δ| ≤ 1/2 (with e = g,
 *             c_ij, s_i and Σ4p² are ~N_S and cancel to ~√N_S: 10× the error at N_S = 157).
 * Missing calls are imputed by the nearest integer to the training mean 2p_k (halves up; the
 * encodings are integers); p_k is the A1 frequency over the training cohort's non-missing
 * calls, and a test cohort uses the training p. An SNP without training calls (p NAN) is 0 in
 * every sample of both cohorts: it adds nothing to any kernel (ibs still divides by 2·N_S
 * counting it) and is left out of Σp(1−p). */
typedef enum { TG_KERNEL_GAUSSIAN = 0, TG_KERNEL_IBS, TG_KERNEL_LINEAR } tg_kernel;

/** Name ("gaussian", "ibs", "linear") and parser (TG_ERR_ARG listing the names). */
const char *tg_kernel_name(tg_kernel k);
tg_status tg_kernel_parse(const char *name, tg_kernel *k, tg_error *err);

/** A cohort's genotypes prepared for kernel builds: int8 panels of nb samples (the encodings of
 * those samples, each a column, SNPs padded with zeros to a multiple of 16) plus per-sample
 * terms and confounders, each panel a StarPU handle. */
typedef struct tg_kgeno tg_kgeno;

/** Prepares the samples rows[0..n) of @p bed (rows NULL: every sample in .fam order) for kernel
 * @p kind in panels of @p nb samples. @p freq: the A1 frequencies (N_S) of the training cohort for
 * a test cohort (tg_kgeno_freq of the training one; NAN where it had no call, otherwise in
 * [0, 1]); NULL computes them over these samples (the training cohort). @p covar: n × ncov
 * column-major confounders (leading dimension ldc) of these samples, gaussian only (ncov 0 and
 * NULL otherwise); a NAN or infinity is TG_ERR_ARG naming the sample and column. Decodes the
 * .bed on every core. Needs a started runtime. Several MPI ranks: collective; panel p is decoded
 * and held by rank p mod R only (the others get it from StarPU-MPI when a tile needs it), the
 * frequencies come from integer counts summed over the ranks (one rank's bits), and
 * tg_kgeno_imputed counts every rank's. */
tg_status tg_kgeno_create(const tg_bed *bed, const int64_t *rows, int64_t n, tg_kernel kind,
                          const double *freq, const double *covar, int ncov, int64_t ldc, int nb,
                          tg_kgeno **out, tg_error *err);
void tg_kgeno_free(tg_kgeno *g);
int64_t tg_kgeno_n(const tg_kgeno *g);
/** A1 frequencies used (N_S of them). */
const double *tg_kgeno_freq(const tg_kgeno *g);
/** Missing calls imputed. */
int64_t tg_kgeno_imputed(const tg_kgeno *g);

/** The INT32 dot-product tiles c_ij of cohorts @p a (rows) and @p b (columns): a symmetric-lower
 * n_a × n_a matrix when a == b (only lower tiles are computed), general n_a × n_b otherwise;
 * tiles nb × nb of the panels. Both must be made for the same kernel, SNP count, panel size
 * and frequencies (a test cohort with the training cohort's): TG_ERR_ARG otherwise. @p ops
 * (may be NULL) receives the useful integer operations: 2·(pairs i ≥ j or all)·(encoding
 * length). Kept between kernels: several γ reuse it. */
tg_status tg_kernel_gram(const tg_kgeno *a, const tg_kgeno *b, tg_matrix **C, double *ops,
                         tg_error *err);
/** The useful integer operations of the dot products of @p a and @p b (as tg_kernel_gram's
 * @p ops), for rates of builds that do not keep them. */
double tg_kernel_ops(const tg_kgeno *a, const tg_kgeno *b);

/** K from the dot products @p C of tg_kernel_gram(a, b): the kernel function with @p gamma
 * (gaussian only; > 0), alpha added to the diagonal when a == b (K + αI), tiles of precision
 * @p prec (fp64 or fp32; the Cholesky lowers them afterwards), one fused task per tile.
 * @p C NULL: each task computes its dot products too, into scratch, so nothing but K is
 * allocated (a single build: with several γ or α, keep C and pay only the kernel function). */
tg_status tg_kernel_apply(const tg_matrix *C, const tg_kgeno *a, const tg_kgeno *b, double gamma,
                          double alpha, tg_prec prec, tg_matrix **K, tg_error *err);

/** The KRR paper's Associate phase on @p K = K + αI from tg_kernel_apply(C, g, g, gamma, alpha,
 * ...): tg_cholesky(K, o, r) with α as the map's shift (K is positive semi-definite, so
 * λ_min ≥ α: o->tol then bounds the weights' relative change), recovering from a loss of
 * positive definiteness under a lowered map by building K + αI again (from the dot products
 * @p C: the kernel function only; with C NULL the dot products are computed again) and
 * refactoring with a raised map (tg_chol_opts.refill; each recovery is in @p r). */
tg_status tg_krr_factor(tg_matrix *K, const tg_matrix *C, const tg_kgeno *g, double gamma,
                        double alpha, const tg_chol_opts *o, tg_chol_report *r, tg_error *err);

/** tg_kernel_apply(NULL, g, g, gamma, alpha, prec, K) and tg_krr_factor in one, with every tile
 * of K + αI built directly in the precision the map stores it in (FP16 for FP16 and FP8 tiles):
 * a first pass computes each tile in @p prec (fp64 or fp32) and keeps only its statistics for
 * the map, the second builds the tiles in the map's precisions, and a recovery builds them in
 * the raised map's. K in @p prec never exists, so N can reach what the map's storage fits (an
 * FP16 K needs a quarter of an FP64 one), at the price of a second pass of dot products. The map
 * is the one tg_krr_factor would make of tg_kernel_apply's K, and the stored entries are the
 * exact kernel rounded once to their precision. *K is created (NULL on error). */
tg_status tg_krr_build_factor(const tg_kgeno *g, double gamma, double alpha, tg_prec prec,
                              const tg_chol_opts *o, tg_matrix **K, tg_chol_report *r,
                              tg_error *err);

/** Predictions P = K_t·W: @p Kt the test-train kernel (general n_t × n), @p W the weights
 * (general n × nphen, fp64 or fp32 tiles, tg_chol_solve's output) as tile GEMMs in W's
 * precision; P is written to @p pred (n_t × nphen, leading dimension ldp). */
tg_status tg_krr_predict_tiles(const tg_matrix *Kt, const tg_matrix *W, double *pred,
                               int64_t ldp, tg_error *err);

/** Mean square prediction error and Pearson r of @p pred against @p y over the n rows where y
 * is not NAN (*nobs of them; r is NAN when either has zero variance or nobs < 2). */
void tg_pred_metrics(const double *y, const double *pred, int64_t n, double *mspe, double *r,
                     int64_t *nobs);

/* ------------------------------------------------------------------------------------------ */
/** @name Kernel ridge regression: the workflow (what `tilegwas krr` runs)
 * tg_krr_split chooses the samples; tg_krr_fit centres the phenotypes by their training means,
 * prepares the training genotypes and, for every (γ, α) of the grid, builds K + αI, factors it
 * under the precision map and solves for the weights W = (K + αI)⁻¹(Y − mean); tg_krr_predict
 * gives K_t·W + mean for a test cohort; a model is saved to a folder and loaded back
 * (tg_krr_model_save / _load: model.tsv, train.tsv, snps.tsv, pheno.tsv, weights.tsv,
 * factor.bin, described in docs/USER-GUIDE.md). Every call that submits tasks needs a started
 * runtime; with several MPI ranks they are collective and every rank gets the predictions
 * (saving and loading a model: one rank). */
typedef struct tg_krr_model tg_krr_model;

/** How tg_krr_fit builds each K + αI. DIAG: whole in the diagonal precision, then lowered by the
 * map (tg_kernel_apply, tg_krr_factor; the dot products kept for a grid). MAP: each tile
 * directly in its map precision after a statistics pass (tg_krr_build_factor: one more pass of
 * dot products per pair, none kept, a quarter of DIAG's memory with an FP64 diagonal and FP16
 * tiles). AUTO (0, the default): MAP when DIAG's K (and kept products) would take more than
 * 3/4 of the memory it lives in (the GPUs' together with GPUs, the host's available memory
 * otherwise, per rank), DIAG otherwise. */
typedef enum { TG_KRR_BUILD_AUTO, TG_KRR_BUILD_DIAG, TG_KRR_BUILD_MAP } tg_krr_build;

/** Options of tg_krr_fit(). */
typedef struct {
    tg_kernel kernel;     /**< default gaussian */
    const double *gamma;  /**< the γ grid, ngamma values > 0 (gaussian; the other kernels
                           * ignore it and make one pass) */
    int ngamma;
    const double *alpha;  /**< the α grid, nalpha values ≥ 0 (at least one) */
    int nalpha;
    const double *covar;  /**< covariates, sample rows[i]'s at covar[rows[i] + c·ldc] for c < ncov
                           * (NULL: none): fixed effects or kernel confounders, by @p fixed */
    int ncov;
    int64_t ldc;
    /** 1: the covariates are fixed effects beside the intercept (any kernel): with C = [1,
     * covariates] over the training samples, α = (CᵀC)⁻¹Cᵀy (columns constant or collinear
     * with earlier ones get 0) and the kernel fits y − Cα; predictions add C_t·α. 0: they are
     * gaussian-kernel confounders, standardised to mean 0 and variance 1 over the training
     * samples (the test cohort's with the training's mean and deviation), their squared
     * distance added to the genotypes'. */
    int fixed;
    int nb;               /**< tile size; 0 (default): by the workers, see tg_krr_tile() */
    double pred_tol;      /**< the map keeps the weights and predictions within this relative
                           * tolerance of an all-fp64 factorisation (tg_chol_opts.tol with α the
                           * shift; default 1e-3) */
    double accuracy;      /**< > 0: instead, this eps of the adaptive map (tg_chol_opts.eps) */
    unsigned allowed;     /**< precisions off-diagonal tiles may take (1u << TG_FP16 | ...); 0
                           * (default): by the workers, see tg_krr_precisions() */
    tg_prec diag;         /**< diagonal tiles, the kernels and the solve: fp64 (default) or fp32 */
    int diag_fixed;       /**< 0 (default): with pred_tol the map may lower an fp64 diagonal to
                           * fp32 (tg_chol_opts.lower_diag); 1: it keeps @p diag */
    double band;          /**< ≥ 0: the paper's bands instead of the adaptive map (tg_chol_opts) */
    int keep_factor;      /**< keep the factor in the model (one γ and one α): for
                           * tg_krr_model_save */
    tg_krr_build build;   /**< how K + αI is built: see tg_krr_build */
} tg_krr_opts;

/** Defaults: gaussian, no grid, no confounders, tile and precisions by the workers, pred_tol
 * 1e-3, diag fp64 (lowerable), adaptive map, factor not kept. */
tg_krr_opts tg_krr_defaults(void);

/** The tile size of a fit with @p n training samples on the started runtime's workers: 2048
 * with GPUs (4096 from 32,768 samples), 512 on CPUs only; @p why (may be NULL) receives the
 * reason, for logs. */
int tg_krr_tile(int64_t n, const char **why);
/** Whether tg_krr_fit with @p o builds K + αI in the map's precisions for @p n training samples
 * in tiles of @p nb (@p keep_gram: a grid, whose DIAG build keeps the dot products), with AUTO
 * decided as tg_krr_build says. @p why (AUTO's reason, else NULL), @p diag_bytes (what a DIAG
 * build holds per rank) and @p memory_bytes (the memory AUTO compares it with, -1: unknown) may
 * be NULL. Needs a started runtime. */
int tg_krr_in_map(const tg_krr_opts *o, int64_t n, int nb, int keep_gram, const char **why,
                  double *diag_bytes, double *memory_bytes);
/** The precisions off-diagonal tiles may take by default: fp32, fp16 and fp8 with GPUs, fp32 on
 * CPUs only; tg_precisions_by_workers() with those sets. */
unsigned tg_krr_precisions(const char **why);

/** Train/test split of @p n samples with @p k phenotypes (sample i's at y[i + c·ldy], NAN:
 * missing). @p test_frac in (0, 1): a seeded shuffle of the samples (tg_rng, @p seed), the first
 * round(test_frac·n) held out (test, in sample order); NAN: none held out (the test cohort is
 * another fileset). Training samples: the others with every phenotype observed, in order. */
typedef struct {
    int64_t *train, ntrain; /**< training samples */
    int64_t *test, ntest;   /**< held-out samples (NULL, 0 without test_frac) */
    int64_t candidates;     /**< samples not held out */
    int64_t dropped;        /**< candidates dropped: a phenotype missing */
    int empty_pheno;        /**< the first phenotype without a value among the candidates, or -1 */
} tg_krr_split;
tg_status tg_krr_split_make(int64_t n, int k, const double *y, int64_t ldy, double test_frac,
                            uint64_t seed, tg_krr_split *s, tg_error *err);
void tg_krr_split_free(tg_krr_split *s);

/** What one (γ, α) of a fit did. */
typedef struct {
    double gamma, alpha;
    int stage;             /**< 0 nothing, 1 kernel built, 2 map made (chol valid), 3 solved */
    int from_kept;         /**< the kernel came from the kept dot products */
    double kernel_seconds; /**< K + αI, waited for (built in the map's precisions: that build;
                            * the statistics pass is in chol.map_seconds) */
    double kernel_ops;     /**< its integer operations (0 from the kept products) */
    double solve_seconds;
    double seconds;        /**< the pair's phases: kernel, map, factor, solve */
    tg_chol_report chol;   /**< the factorisation (map, recoveries, times) */
} tg_krr_pair_report;

/** What tg_krr_fit() did; tg_krr_fit_report_free() frees it (filled as far as the fit went
 * when it fails). */
typedef struct {
    int nb;                   /**< the tile size used */
    const char *nb_why;       /**< NULL when given, else tg_krr_tile's reason */
    unsigned allowed;         /**< the precisions used */
    const char *allowed_why;  /**< NULL when given, else tg_krr_precisions' reason */
    int64_t imputed;          /**< missing calls imputed in the training genotypes */
    double panel_seconds;     /**< genotype panels */
    double gram_seconds;      /**< dot products kept for the grid (0: none kept) */
    double gram_ops;
    int in_map;               /**< each K + αI built in its map precisions: tg_krr_in_map's */
    const char *in_map_why;   /**<   reason (NULL when o->build was not AUTO), */
    double diag_bytes;        /**<   what a DIAG build holds per rank */
    double memory_bytes;      /**<   and the memory compared (-1: unknown) */
    int npairs;               /**< pairs reported, g-major: pair[g·nalpha + a] */
    tg_krr_pair_report *pair;
    tg_prec *map;             /**< the last factorisation's precision map, map_nt² entries,
                               * column-major (upper tiles: the diagonal's precision) */
    int map_nt;
} tg_krr_fit_report;
void tg_krr_fit_report_free(tg_krr_fit_report *r);

/** Fits KRR models of the @p k phenotypes for every (γ, α) of @p o's grid on the training
 * samples rows[0..n) of @p bed (NULL: the first n), sample rows[i]'s phenotype c at
 * y[rows[i] + c·ldy] (no NAN: tg_krr_split keeps the observed samples), @p names the
 * phenotypes' names (for saved models; copied). Genotypes as tg_kgeno_create says; the kernel
 * is built once per pair from dot products kept for the grid (a single pair computes them in
 * its tasks). The model keeps the training genotypes and @p bed, which must stay open while the
 * model is used. @p rep (may be NULL) tells what was done. An error names the pair. */
tg_status tg_krr_fit(const tg_bed *bed, const int64_t *rows, int64_t n, int k, const double *y,
                     int64_t ldy, const char *const *names, const tg_krr_opts *o,
                     tg_krr_model **model, tg_krr_fit_report *rep, tg_error *err);

/** TG_ERR_ARG unless @p test has the SNPs of @p train in the same order with the same A1 (the
 * message names the first that differs). */
tg_status tg_krr_check_test(const tg_bed *train, const tg_bed *test, tg_error *err);

/** What tg_krr_predict() did. */
typedef struct {
    int64_t imputed;        /**< missing calls imputed in the test genotypes */
    int64_t train_imputed;  /**< and in the training ones, when the predict prepared them (a
                             * loaded model) */
    double panel_seconds;   /**< genotype panels (the training ones too for a loaded model) */
    double gram_seconds, gram_ops; /**< test-train dot products kept for several γ (0: none) */
    int ngamma, nalpha;
    double *kernel_seconds; /**< per γ: the test-train kernel */
    double *kernel_ops;     /**< per γ: its integer operations (0 from the kept products) */
    double *seconds;        /**< per pair (g-major): K_t·W and the means */
} tg_krr_predict_report;
void tg_krr_predict_report_free(tg_krr_predict_report *r);

/** Predictions K_t·W + mean of the test samples rows[0..n) of @p test (NULL: the first n; the
 * same SNPs in the same order with the same A1 as the training fileset: TG_ERR_ARG otherwise),
 * imputed and encoded with the training frequencies; @p covar their confounders as
 * tg_krr_opts.covar (the model's ncov columns). Column (g·nalpha + a)·k + c of @p pred (n rows,
 * leading dimension ldp) is phenotype c under (γ_g, α_a). TG_ERR_NUMERIC when a prediction is
 * not finite (K + αI too ill-conditioned for the map), naming the pair. */
tg_status tg_krr_predict(tg_krr_model *m, const tg_bed *test, const int64_t *rows, int64_t n,
                         const double *covar, int64_t ldc, double *pred, int64_t ldp,
                         tg_krr_predict_report *rep, tg_error *err);

/** A model as fitted or loaded (pointers into the model, valid while it lives). */
typedef struct {
    tg_kernel kernel;
    const double *gamma, *alpha; /**< the grid (a loaded model: one pair; gamma 0 for ibs and
                                  * linear) */
    int ngamma, nalpha;
    int nb;
    tg_prec diag;                /**< precision of the kernels */
    int ncov;                    /**< kernel confounders */
    int nfixed;                  /**< fixed-effect covariates (beside the intercept) */
    const double *fixed_alpha;   /**< (1 + nfixed) × k: the intercept, then a column's effect
                                  * (NULL without fixed effects) */
    const tg_bed *bed;           /**< the training fileset */
    const char *bfile;           /**< as given to the fit (a loaded model: as saved) */
    const int64_t *rows;         /**< training samples (rows of bed) */
    int64_t n;
    int k;                       /**< phenotypes */
    const char *const *names;
    const double *mean;          /**< their training means (with fixed effects: the intercepts) */
} tg_krr_model_info;
const tg_krr_model_info *tg_krr_model_describe(const tg_krr_model *m);
/** The weights of pair (g, a) into @p w (n × k, leading dimension ldw). */
tg_status tg_krr_model_weights(const tg_krr_model *m, int g, int a, double *w, int64_t ldw,
                               tg_error *err);
void tg_krr_model_free(tg_krr_model *m);

/** --save-model's check before any work: an existing @p dir must be a folder holding nothing
 * or a model's files only (which a save replaces, never other files), and its parent folder
 * writable (the save writes beside it). */
tg_status tg_krr_model_check_dir(const char *dir, tg_error *err);
/** Saves a model with its factor (tg_krr_opts.keep_factor, or a loaded model after
 * tg_krr_model_solve) as @p dir: written into a new folder beside it (.DIR.tmp-XXXXXX), which
 * then takes DIR's place in one rename (or exchange, renameat2): DIR holds the old model or
 * the new one, whole, at every instant; of two saves at once the last stays. model.tsv holds
 * every file's checksum. @p factor_bytes (may be NULL) receives the factor's size. */
tg_status tg_krr_model_save(const tg_krr_model *m, const char *dir, int64_t *factor_bytes,
                            tg_error *err);
/** Reads and checks every file of the model in @p dir against its checksum and its sizes
 * against the training fileset before allocating by them (the factor's tiles are read, and
 * their checksum checked, by tg_krr_model_solve only) and reopens its training fileset, which
 * must be unchanged since the save (.bed size and time, hashes of the .bim and the .fam).
 * Needs no runtime. */
tg_status tg_krr_model_load(const char *dir, tg_krr_model **m, tg_error *err);

/** What tg_krr_model_solve() did. */
typedef struct {
    int64_t tiles[TG_NPREC]; /**< the saved factor's tiles per precision */
    int64_t bytes;           /**< and their bytes */
    double read_seconds, solve_seconds;
} tg_krr_solve_report;
/** New phenotypes of a loaded model's training samples (sample rows[i]'s phenotype c at
 * y[rows[i] + c·ldy], rows those of tg_krr_model_describe; each must be observed, TG_ERR_ARG
 * naming the sample otherwise), solved with the saved factor (read on first use; no
 * factorisation): they replace the model's phenotypes, means and weights. */
tg_status tg_krr_model_solve(tg_krr_model *m, int k, const double *y, int64_t ldy,
                             const char *const *names, tg_krr_solve_report *rep, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Ridge regression by the tile Cholesky (the KRR paper's RR baseline, Fig. 2)
 * The same model as tg_ridge_cg(), for phenotypes observed on every sample: ZᵀZ + λI formed by
 * INT8 dot products of SNP panels (exact integers; missing calls through a 0/1 mask panel so
 * that mean imputation stays exact), centered and scaled per tile in FP64, factored by
 * tg_cholesky(), Zᵀ(y − ȳ) by the genotype products, and solved with tg_chol_solve(). */
typedef struct {
    double lambda;    /**< > 0 */
    int nb;           /**< SNP tile size (default 1024) */
    tg_chol_opts chol; /**< precision map of the factorisation; chol.diag (fp64 or fp32) is
                        * also the precision of the solve */
    /** Covariates, fixed effects beside the intercept (as tg_cg_opts.covar, no NAN: the caller
     * keeps the samples with every covariate): (ZᵀMZ + λI)β = ZᵀMy, M projecting out
     * [1, covariates], by the factorisation of ZᵀZ + λI and a rank-(1 + ncovar) Woodbury
     * correction. NULL with ncovar 0: the intercept alone. */
    const double *covar;
    int64_t ldc;
    int ncovar;
} tg_ridge_chol_opts;
tg_ridge_chol_opts tg_ridge_chol_defaults(void);

/** Solves (ZᵀZ + λI)β = Zᵀ(y − ȳ) for the @p nphen columns of @p y (n × nphen, no NAN: the
 * caller keeps the samples observed for every phenotype), Z from @p geno (n × m column-major
 * int8, leading dimension ld, A1 counts or TG_GENO_MISSING) centered by the frequencies over
 * these n samples (scaled by 1/sqrt(2p(1−p)) with @p scale; monomorphic SNPs have zero columns
 * and β 0). β is m × nphen (leading dimension ldb); mu (nphen) the intercepts ȳ. @p rep (may be
 * NULL) receives the factorisation's report. Needs a started runtime.
 * Several MPI ranks: collective (every rank passes the whole input), every rank gets the same
 * β; each rank reads only its share of @p geno, as tg_ridge_chol_bed says. */
tg_status tg_ridge_chol(const int8_t *geno, int64_t n, int64_t m, int64_t ld, int scale,
                        int64_t nphen, const double *y, int64_t ldy, const tg_ridge_chol_opts *o,
                        double *beta, int64_t ldb, double *mu, tg_chol_report *rep,
                        tg_error *err);
/** tg_ridge_chol() on samples of a fileset, decoded from the memory-mapped .bed: sample i is
 * row rows[i] of @p bed (.fam order; @p rows NULL: the first @p n samples), y their phenotypes.
 * With R MPI ranks a rank decodes only its share of the n samples (tg_runtime_split) for every
 * SNP, from which the frequencies come (integer counts summed over the ranks: every rank's
 * equal one rank's, bit for bit) with its share of Zᵀy, and every sample of the SNPs of the
 * panels it fills (SNP panel J, @p o->nb SNPs, on rank J mod R). It holds 0.4 bytes per
 * genotype of its samples, its panels (n rounded up to 16, times its SNPs, twice with missing
 * calls) and the panels StarPU-MPI brings it during the build of ZᵀZ, then its share of the
 * factor; never the n × m genotypes. @p train (may be NULL) receives the genotype matrix of
 * these samples (frequencies for tg_ridge_predict_bed; free it with tg_geno_free), kept
 * through the factorisation; with NULL it is freed before. */
tg_status tg_ridge_chol_bed(const tg_bed *bed, const int64_t *rows, int64_t n, int scale,
                            int64_t nphen, const double *y, int64_t ldy,
                            const tg_ridge_chol_opts *o, double *beta, int64_t ldb, double *mu,
                            tg_chol_report *rep, tg_geno **train, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Covariates as fixed effects (rr, krr)
 * The design of a covariate file read with tg_pheno_opts.categorical: a numeric column as it
 * is; a categorical column with L levels as L − 1 indicator columns NAME=LEVEL, the first level
 * in natural order (tg_pheno.levels) the reference; then, over the samples with every
 * covariate and with the intercept first, the columns that are constant or collinear with the
 * columns before them (their residual at most 10⁻⁶ of their norm about their mean) are left
 * out, and named. A sample missing any covariate has a NAN row. */
typedef struct {
    int64_t n_samples;
    int n_cols;        /**< design columns kept (the intercept is not one of them) */
    char **names;      /**< NAME, or NAME=LEVEL for an indicator */
    double *values;    /**< n_samples × n_cols column-major; NAN rows: a covariate missing */
    int64_t n_missing; /**< samples missing a covariate */
    int n_dropped;
    char **dropped;    /**< the columns left out, each "NAME (why)" */
    int *src, *level;  /**< per column: its file column (in src_names) and level, or −1 */
    int n_src;         /**< the file columns, to build another cohort's design alike */
    char **src_names;
    int *src_nlevels;  /**< 0: numeric */
    char ***src_levels;
} tg_covar;

/** The design of the columns of @p ph (read from @p path, for messages). No sample with every
 * covariate is TG_ERR_ARG. */
tg_status tg_covar_make(const tg_pheno *ph, const char *path, tg_covar *cv, tg_error *err);
/** Another cohort's design (@p ph read from @p path) with the columns of @p like: its file
 * columns found by name (those of the columns kept), categorical values matched to @p like's levels by name (a level that
 * @p like lacks is TG_ERR_ARG naming the file, covariate and sample); nothing is left out. */
tg_status tg_covar_apply(const tg_covar *like, const tg_pheno *ph, const char *path, tg_covar *cv,
                         tg_error *err);
void tg_covar_free(tg_covar *cv);

/* ------------------------------------------------------------------------------------------ */
/** @name Ridge regression of a fileset's phenotypes, fit and predictions (the rr command) */
typedef enum {
    TG_RR_CG = 0,   /**< tg_ridge_cg: each phenotype on its own observed samples */
    TG_RR_CHOLESKY  /**< tg_ridge_chol_bed: on the samples observed for every phenotype, the
                     * frequencies over them */
} tg_rr_solver;

typedef struct {
    tg_rr_solver solver;
    double lambda;           /**< > 0 */
    int scale;               /**< SNPs scaled by 1/sqrt(2p(1-p)) */
    tg_cg_opts cg;           /**< TG_RR_CG: tol, max_iter, progress (lambda and the Jacobi
                              * preconditioner are set by the call) */
    tg_ridge_chol_opts chol; /**< TG_RR_CHOLESKY: tile size, precision map (lambda set) */
    /** Covariates, fixed effects beside the intercept (tg_covar_make builds them from a file):
     * the training samples' (n × ncovar, leading dimension ldc, NAN = missing: the sample is
     * left out of the fit and its fitted value is NAN) and, with a test cohort, its samples'
     * (test_covar, leading dimension ldt), the same columns. ncovar 0: the intercept alone. */
    const double *covar, *test_covar;
    int64_t ldc, ldt;
    int ncovar;
} tg_rr_opts;
/** Defaults: cg, λ 1, unscaled, tg_cg_defaults(), tg_ridge_chol_defaults(). */
tg_rr_opts tg_rr_defaults(void);

/** What tg_rr() computed; free with tg_rr_result_free (after an error too). */
typedef struct {
    double *beta;           /**< m × nphen, leading dimension m */
    double *alpha;          /**< the fixed effects, nalpha × nphen (leading dimension nalpha):
                             * the intercept, then one per covariate (0 for a column left out
                             * of a phenotype's fit, constant or collinear on its samples) */
    int nalpha;             /**< 1 + ncovar */
    double *mu;             /**< the nphen intercepts (alpha's first row) */
    double *pred;           /**< the predicted cohort's samples × nphen (leading dimension its
                             * sample count): whole on MPI rank 0 */
    tg_cg_pheno *pheno;     /**< cg: per phenotype; cholesky: its n_obs and mean */
    tg_cg_report cg;        /**< cg (its pheno is the array above) */
    tg_chol_report chol;    /**< cholesky */
    int64_t n_used;         /**< samples fitted: every one (cg), or those observed for every
                             * phenotype (cholesky) */
    tg_snp_stats *snps;     /**< each SNP's A1 frequency and calls over the samples fitted
                             * (those that centred Z) */
    int64_t excluded;       /**< monomorphic or all-missing SNPs: β 0 */
    int64_t local_rows;     /**< this rank's samples of the genotype matrix */
    double seconds_prepare; /**< cg: genotypes and the Jacobi preconditioner */
    double seconds_solve;   /**< cg: the solve; cholesky: genotypes, ZᵀZ, factorisation, solve */
    double seconds_predict;
} tg_rr_result;

/** Checks that @p test has the SNPs of @p train in the same order with the same A1 (the
 * error names --test-bfile). */
tg_status tg_rr_check_test(const tg_bed *train, const tg_bed *test, tg_error *err);
/** Fits the ridge regression of the @p nphen phenotypes @p y (n × nphen, leading dimension
 * ldy, NAN = missing; at least 2 observed values each) on every SNP of @p bed with the solver
 * of @p o, the intercept and the covariates of @p o as unpenalised fixed effects, then predicts
 * every sample of @p test (NULL: the in-sample fitted values Cα + Zβ of @p bed's samples) with
 * the training frequencies (tg_ridge_predict_bed). Needs a
 * started runtime; collective with several MPI ranks. A cg phenotype not converged is
 * TG_ERR_NUMERIC after every result is filled (@p r->pheno says which). */
tg_status tg_rr(const tg_bed *bed, int64_t nphen, const double *y, int64_t ldy,
                const tg_bed *test, const tg_rr_opts *o, tg_rr_result *r, tg_error *err);
void tg_rr_result_free(tg_rr_result *r);

/* ------------------------------------------------------------------------------------------ */
/** @name Association tests (the assoc command; src/algo/assoc.c)
 * REGENIE's two steps on the genotype products. Step 1: a whole-genome ridge (SNP-BLUP) of
 * each phenotype on the scaled SNPs (tg_ridge_cg, the intercept and covariates projected out),
 * λ = m(1 − h²)/h² for h² of a grid, in K folds (sample i in fold i mod K; every fold and h²
 * one column of one CG solve); per phenotype the h² of least held-out squared error, and each
 * sample's prediction from the model of its fold (out of sample, as REGENIE's level 1). The
 * prediction for chromosome c leaves c's own SNPs out of the fitted Zβ (LOCO: Zβ − Z_cβ_c, no
 * refit). Step 2: per SNP j on chromosome c and phenotype t, the score test of
 * r = M_t(y_t − LOCO_c) on g̃ = M_t g_j (g_j mean-imputed and centred, M_t the projection off
 * [1, covariates] on the phenotype's samples):
 *   U = g̃ᵀr, G = g̃ᵀg̃, σ² = rᵀr/(n_t − p_t), BETA = U/G, SE = σ/√G, CHISQ = U²/(σ²G),
 * p_t the fixed-effect columns kept; one product Zᵀ·[r per chromosome] per phenotype.
 * A case/control phenotype (tg_assoc_opts.binary): the null logistic model logit μ_c =
 * o_c + [1, covariates]α per chromosome (IRLS), offset o_c = LOCO_c/(ȳ(1 − ȳ)), then
 *   U = gᵀ(y − μ_c), V = Σ w_i g_i² − (CᵀWg)ᵀ(CᵀWC)⁻¹(CᵀWg), w = μ_c(1 − μ_c),
 *   BETA = U/V, SE = 1/√V, CHISQ = U²/V (no Firth or saddle-point correction). */
typedef struct {
    /** The heritabilities of step 1's grid (nh2 values in (0, 1)); nh2 0: no step 1, the
     * LOCO prediction is 0 (REGENIE's --ignore-pred: plain linear regression score tests). */
    const double *h2;
    int nh2;
    int folds;                  /**< K of the folds (≥ 2) when nh2 > 0 */
    double tol;                 /**< CG: relative residual (default 1e-6) */
    int max_iter;               /**< CG: iterations at most (default 1000) */
    tg_cg_progress_fn progress; /**< CG progress hook (may be NULL); nphen is the columns */
    void *ctx;
    /** Covariates, fixed effects beside the intercept (as tg_rr_opts'): n × ncovar, leading
     * dimension ldc, NAN = missing (the sample leaves every phenotype). */
    const double *covar;
    int64_t ldc;
    int ncovar;
    const char *const *names; /**< the phenotypes' names, for messages (NULL: their numbers) */
    /** Per phenotype, nonzero for a case/control one (y 0 = control, 1 = case, NAN missing):
     * step 1 unchanged (a linear ridge on the 0/1 values), step 2 a logistic score test with
     * the LOCO offset (src/algo/assoc.c). NULL: every phenotype quantitative. */
    const int *binary;
    /** Known relatives, a sparse relatedness (fastGWA's: pairs of GRM ≥ 0.05, the rest taken
     * as 0): pair p joins samples pair_i[p] and pair_j[p] (0-based rows of y, i ≠ j, each
     * unordered pair once) with relatedness pair_k[p] = 2 × kinship in (0, 1.5]. Every test
     * of phenotype t on chromosome c then takes the variance conditional on its residual r
     * (y − fixed effects − LOCO_c; y − μ_c for a case/control one), r's null SNP genotypes
     * being correlated as K among relatives: the variance times
     *   c_tc = 1 + Σ_{i≠i'} K_ii' r_i r_i' / Σ_i r_i²   (over the phenotype's samples),
     * SE × √c, CHISQ / c, BETA unchanged (tg_assoc_result.relate). npairs 0 (the default):
     * c = 1, every result as without relatives. */
    int64_t npairs;
    const int64_t *pair_i, *pair_j;
    const double *pair_k;
    /** Nonzero: LOCO_c is refitted, step 1 solved again without each chromosome c (its folds,
     * each phenotype's chosen λ: phenotypes × folds × chromosomes CG columns more), where by
     * default it is the whole-genome fit with c's part dropped. A fit with c's SNPs lets them
     * take part of what relatives share, and dropping it leaves that part in the tests of
     * c's SNPs (sibships: λ_GC 1.13–1.37 after step 1); with the refit the residual does not
     * depend on c's SNPs, as the relatives' factor above assumes (DESIGN-NOTES). */
    int loco_refit;
} tg_assoc_opts;
/** Defaults: the grid 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 5 folds, tol 1e-6, 1000 iterations. */
tg_assoc_opts tg_assoc_defaults(void);

/** What tg_assoc() computed; free with tg_assoc_result_free (after an error too). */
typedef struct {
    int64_t nphen, m, n;
    int nchrom;
    const char **chroms;   /**< the chromosomes in order of first appearance (the .bim's) */
    int *chrom_of;         /**< m: the index into chroms of each SNP */
    /** m × nphen (leading dimension m): per SNP and phenotype; NAN where no test is made (a
     * SNP monomorphic over the fileset or constant on the phenotype's samples once the
     * covariates are projected out) */
    double *beta, *se, *chisq, *log10p;
    tg_snp_stats *stats;   /**< m × nphen: A1_FREQ and N over each phenotype's samples */
    double *h2, *lambda;   /**< per phenotype, the chosen h² and its λ (NAN without step 1) */
    double *cv_mse;        /**< nh2 × nphen: held-out mean squared error of each h² */
    double *lambda_gc;     /**< per phenotype: median CHISQ / 0.4549364 (the χ²₁ median) */
    double *sigma2;        /**< nchrom × nphen: σ² of each chromosome's LOCO residual (NAN
                            * for a case/control phenotype) */
    double *loco;          /**< n × nchrom × nphen: LOCO prediction of sample i for chromosome
                            * c and phenotype t at loco[i + n·(c + nchrom·t)], the polygenic
                            * part Zβ − Z_cβ_c of its fold's model alone (0 without step 1) */
    int64_t *nobs;         /**< per phenotype: samples with the value and every covariate */
    int *nfixed;           /**< per phenotype: fixed-effect columns kept, the intercept's too */
    int64_t *ncases;       /**< per phenotype: its cases (y = 1) if case/control, else −1 */
    tg_cg_report cg;       /**< step 1's solve (its pheno: one entry per column) */
    int64_t cg_columns;    /**< step 1's CG columns: phenotypes × h² × folds */
    int64_t excluded;      /**< SNPs monomorphic or all-missing over the fileset */
    double seconds_step1, seconds_step2;
    /** nchrom × nphen: c_tc at relate[c + nchrom·t], the factor of the variance of phenotype
     * t's tests on chromosome c for the relatives of tg_assoc_opts (1 without pairs) */
    double *relate;
    int64_t refit_columns; /**< the CG columns of loco_refit's solve (0 without it) */
} tg_assoc_result;

/** Association tests of the @p nphen phenotypes @p y (n × nphen, leading dimension ldy, NAN =
 * missing; 0/1 for a case/control one) on every SNP of @p bed. Needs a started runtime, one
 * MPI rank.
 * TG_ERR_ARG for: a phenotype with fewer observed values than its fixed effects plus 2, or
 * with no variance once they are projected out; an h² outside (0, 1); fewer than 2 folds, or a
 * fold without samples of a phenotype or with too few left to fit; a case/control value other
 * than 0 and 1; a relatives' pair with a sample out of range, i = j, or a relatedness not in
 * (0, 1.5]. A CG column not converged, a null logistic model that separates or does not
 * converge (50 Newton steps), or relatives' pairs giving c_tc ≤ 0 (a sparse relatedness that
 * is not positive definite) is TG_ERR_NUMERIC naming the phenotype and chromosome. */
tg_status tg_assoc(const tg_bed *bed, int64_t nphen, const double *y, int64_t ldy,
                   const tg_assoc_opts *o, tg_assoc_result *r, tg_error *err);
void tg_assoc_result_free(tg_assoc_result *r);

/** The Manhattan plot of @p log10p (m values, NAN skipped) over the SNPs of @p bed, chromosomes
 * side by side in alternating colours (each SNP at its position along its chromosome), a
 * dashed line at −log10(5e-8), the title above; written as PNG to @p path. */
tg_status tg_manhattan_png(const char *path, const tg_bed *bed, const double *log10p,
                           const char *title, tg_error *err);
/** The QQ plot of @p m values @p log10p (NAN skipped): observed against expected −log10 P of
 * uniform P values, the diagonal, the title and its λ_GC; written as PNG to @p path. */
tg_status tg_qq_png(const char *path, const double *log10p, int64_t m, const char *title,
                    double lambda_gc, tg_error *err);

/* ------------------------------------------------------------------------------------------ */
/** @name Principal components (the pca command; src/algo/pca.c)
 * The top eigenpairs of the standardised GRM K = Z·Zᵀ/m (tg_grm's), as plink2 --pca
 * meanimpute computes them: exactly from K, or by block Krylov on the genotype products. */
/** Samples above which TG_PCA_AUTO takes the approximation (plink2 recommends --pca approx
 * only above 5000; forming K costs n²·m and 8·n² bytes). */
#define TG_PCA_EXACT_MAX 5000
/** Exact mode: block Krylov on K is taken when every residual ‖K·v − λ·v‖ of the top k is at
 * most this times λ₁ (rounding level: the vectors then agree with dsyevr's to ~tol/gap) ... */
#define TG_PCA_EXACT_TOL 1e-12
/** ... within at most this many blocks (and n/4 columns); otherwise LAPACK dsyevr. */
#define TG_PCA_EXACT_BLOCKS 30

typedef enum { TG_PCA_AUTO, TG_PCA_EXACT, TG_PCA_APPROX } tg_pca_mode;

typedef struct {
    int k;            /**< PCs wanted, 1 ≤ k ≤ n */
    tg_pca_mode mode; /**< exact (K, then LAPACK dsyevr), approx, or by n (TG_PCA_EXACT_MAX) */
    uint64_t seed;    /**< approx: the random start block */
    double tol;       /**< approx: stop at ‖K·v − λ·v‖ ≤ tol·λ₁ for each of the top k */
    int max_blocks;   /**< approx: at most this many Krylov blocks */
} tg_pca_opts;

/** k 10 (plink2's default count), TG_PCA_AUTO, seed 1, tol 1e-6, 24 blocks. */
tg_pca_opts tg_pca_defaults(void);

typedef struct {
    int approx;        /**< 1: block Krylov on the genotype products was run */
    int block, blocks; /**< block Krylov's block width and blocks in the basis (exact: on K) */
    int converged;     /**< approx: every one of the top k met tol (exact: 1) */
    int lapack;        /**< exact: Krylov on K did not converge, dsyevr gave the pairs */
    double residual;   /**< the largest ‖K·v − λ·v‖/λ₁ of the top k in Krylov's basis */
    int64_t products;  /**< approx: genotype products (calls of at most 64 columns) */
    double seconds_products; /**< approx: the products; exact: forming K (tg_grm) */
    double seconds_dense;    /**< the dense algebra: Krylov's (exact: and dsyevr's, if run) */
    double seconds_krylov;   /**< exact: Krylov on K (part of seconds_dense) */
} tg_pca_report;

/** The SNPs plink2 --pca takes from @p bed, those on chromosomes 1-22: *@p snps (malloc'd,
 * ascending indices, *@p m of them); *@p dropped counts the others. TG_ERR_ARG naming the
 * fileset when none is autosomal. */
tg_status tg_pca_snps(const tg_bed *bed, int64_t **snps, int64_t *m, int64_t *dropped,
                      tg_error *err);

/** The genotype matrix plink2 --pca takes from @p bed: scaled (tg_geno_from_bed with scale),
 * of tg_pca_snps's SNPs. Collective as tg_geno_from_bed. */
tg_status tg_pca_geno(const tg_bed *bed, tg_geno **out, int64_t *dropped, tg_error *err);

/** The top k eigenvalues @p val (descending) and unit eigenvectors @p vec (n × k, leading
 * dimension n) of the symmetric @p K (n × n, lower triangle read, overwritten), on every core
 * (the runtime's workers paused, if it runs): block Krylov on K (DSYMM products, blocks as
 * tg_pca's approx, seed 1) to TG_PCA_EXACT_TOL, else LAPACK dsyevr; @p rep (may be NULL) says
 * which and how long. */
tg_status tg_pca_eig(double *K, int64_t n, int k, double *vec, double *val, tg_pca_report *rep,
                     tg_error *err);

/** The top k eigenvalues @p val (descending) and unit eigenvectors @p vec (n × k,
 * column-major, leading dimension n) of K = Z·Zᵀ/m for the scaled genotypes @p g (m counts
 * every SNP of @p g, zero columns too). Exact: K formed by tg_grm (the genotype products, on
 * any number of ranks), then tg_pca_eig. (With one rank, tg_grm_lower on tg_pca_snps's SNPs,
 * standardised and mean-imputed, forms the same K from tiles, with a quarter of the flops:
 * what the pca command does.) Approx: randomized block Krylov (blocks of 2k columns, at least
 * k + 10; each block's K·Y by two genotype products, K never formed; Rayleigh-Ritz on the
 * whole basis after each block, until the residuals meet tol or max_blocks; @p rep says
 * which). Needs a started
 * runtime. Several ranks: collective; @p vec and @p val are filled on rank 0 only (NULL
 * elsewhere accepted). */
tg_status tg_pca(tg_geno *g, const tg_pca_opts *o, double *vec, double *val, tg_pca_report *rep,
                 tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
