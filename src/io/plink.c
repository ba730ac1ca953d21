/* PLINK 1 binary filesets: parsing .fam and .bim, the memory-mapped SNP-major .bed, genotype
 * decoding and per-SNP statistics by byte lookup tables, and writing a fileset.
 *
 * Memory: the strings of the .fam (.bim) live in the same allocation as bed->samples
 * (bed->snps): the file is read whole into a block that starts with the entry array, and the
 * fields are cut in place, so a fileset of millions of lines costs two allocations, not one per
 * string; tg_bed_close() frees the two arrays and nothing else. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/parallel.h"
#include "io/fileset.h"
#include "io/idmap.h"
#include "io/lines.h"
#include "io/out.h"
#include "base/rng.h"
#include "tilegwas.h"

/* The .bed bit invariant. After the magic bytes 6c 1b 01, SNP j takes bps = ceil(n/4) bytes,
 * and sample i of SNP j is the 2-bit code
 *     c = (geno[j·bps + i/4] >> 2·(i mod 4)) & 3      (sample 0 in the two lowest bits),
 * c = 00: homozygous A1 → 2 A1 alleles;  01: missing;  10: heterozygous → 1;
 *     11: homozygous A2 → 0.  (For non-missing codes the A1 count is 2 − popcount(c).)
 * The 4·bps − n padding codes of a SNP's last byte are unspecified (PLINK writes 00, which
 * would read as homozygous A1): decoding never reads them, and the statistics force them to
 * 11, which adds no A1 allele and no missing call. */
/* clang-format off */
#define CODE_VALUE(c) ((c) == 0 ? 2 : (c) == 1 ? -1 : (c) == 2 ? 1 : 0)
#define CODE_A1(c) ((c) == 1 ? 0 : CODE_VALUE(c))
#define CODE_MISS(c) ((c) == 1)
#define SAMPLE(b, k) ((b) >> (2 * (k)) & 3) /* code of the k-th sample of byte b */
#define SUM4(F, b) (F(SAMPLE(b, 0)) + F(SAMPLE(b, 1)) + F(SAMPLE(b, 2)) + F(SAMPLE(b, 3)))
#define DEC_ENTRY(b) {CODE_VALUE(SAMPLE(b, 0)), CODE_VALUE(SAMPLE(b, 1)), \
                      CODE_VALUE(SAMPLE(b, 2)), CODE_VALUE(SAMPLE(b, 3))}
#define A1_ENTRY(b) SUM4(CODE_A1, b)
#define MISS_ENTRY(b) SUM4(CODE_MISS, b)

/* T256(E) expands E(b) for b = 0..255, so the byte tables are compile-time constants. */
#define T4(E, b) E(b), E((b) + 1), E((b) + 2), E((b) + 3)
#define T16(E, b) T4(E, b), T4(E, (b) + 4), T4(E, (b) + 8), T4(E, (b) + 12)
#define T64(E, b) T16(E, b), T16(E, (b) + 16), T16(E, (b) + 32), T16(E, (b) + 48)
#define T256(E) T64(E, 0), T64(E, 64), T64(E, 128), T64(E, 192)
/* clang-format on */

/* byte → the 4 decoded values of its samples, in sample order */
static const int8_t dec_table[256][4] = {T256(DEC_ENTRY)};
/* byte → A1 alleles / missing calls among its 4 samples */
static const uint8_t a1_table[256] = {T256(A1_ENTRY)};
static const uint8_t miss_table[256] = {T256(MISS_ENTRY)};
/* A1 count + 1 (−1 = missing, 0, 1, 2) → code */
static const uint8_t enc_table[4] = {1, 3, 2, 0};

static const uint8_t bed_magic[3] = {0x6c, 0x1b, 0x01};

static char *path_of(const char *prefix, const char *ext, tg_error *err) {
    size_t len = strlen(prefix) + strlen(ext) + 1;
    char *p = tg_malloc(len, err);
    if (p) snprintf(p, len, "%s%s", prefix, ext);
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

/* Reads @p path and makes room for @p n entries of @p size bytes in front of its text;
 * *n receives the number of non-blank lines (an empty file is an error saying what a line
 * should hold). */
static tg_status read_table(tg_text *t, const char *path, size_t size, int64_t *n, const char *what,
                            tg_error *err) {
    tg_status st = tg_text_read(t, path, err);
    if (st) return st;
    *n = tg_text_count_lines(t);
    if (*n == 0) return tg_error_set(err, TG_ERR_FORMAT, "%s is empty: expected %s", path, what);
    return tg_text_reserve_front(t, (size_t)*n * size, err);
}

/* .fam: FID IID father mother sex phenotype. Sex other than 1 or 2 is unknown (0), as in PLINK.
 * Phenotype: -9, NA and NaN are missing; if every other value is 0, 1 or 2 the column is
 * case/control (1 = control, 2 = case) and 0 is missing too (PLINK's rule), else quantitative. */
static tg_status read_fam(const char *path, tg_bed *b, tg_error *err) {
    tg_text t;
    tg_idmap map = {0};
    int64_t n = 0, *line_of = NULL;
    tg_status st = read_table(&t, path, sizeof(tg_sample), &n,
                              "one line per sample: FID IID father mother sex phenotype", err);
    if (st) goto cleanup;
    tg_sample *s = (tg_sample *)(void *)t.base;
    line_of = tg_malloc_n(n, 1, sizeof *line_of, err);
    if (!line_of || (st = tg_idmap_init(&map, s, n, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    char *line, *f[6];
    int64_t i = 0; /* the lines read without error */
    for (; (line = tg_text_next_line(&t)); i++) {
        int k = tg_text_split(line, f, 6);
        if (k != 6) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: expected 6 columns (FID IID father mother sex "
                              "phenotype), found %d",
                              path, (long long)t.line_no, k);
            break;
        }
        s[i] = (tg_sample){.fid = f[0], .iid = f[1], .father = f[2], .mother = f[3]};
        s[i].sex = strcmp(f[4], "1") == 0 ? 1 : strcmp(f[4], "2") == 0 ? 2 : 0;
        if (!tg_text_parse_value(f[5], &s[i].pheno)) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: phenotype '%s' (column 6) is not a number or a "
                              "missing code (-9, NA)",
                              path, (long long)t.line_no, TG_ESC(f[5]));
            break;
        }
        line_of[i] = t.line_no;
    }
    /* a repeated ID before the first bad line is the first error */
    if ((st = tg_idmap_add_lines(&map, i, line_of, path, st, err))) goto cleanup;
    tg_fam_case_control(s, n);
    b->samples = s;
    b->n_samples = n;
    t.base = NULL; /* the block now belongs to b->samples */
cleanup:
    tg_text_free(&t);
    tg_idmap_free(&map);
    free(line_of);
    return st;
}

/* .bim: chromosome, SNP ID, position in cM, base-pair position, A1, A2. */
static tg_status read_bim(const char *path, tg_bed *b, tg_error *err) {
    tg_text t;
    int64_t n = 0;
    tg_status st = read_table(&t, path, sizeof(tg_snp), &n,
                              "one line per SNP: chromosome SNP-ID cM position A1 A2", err);
    if (st) goto cleanup;
    tg_snp *s = (tg_snp *)(void *)t.base;
    char *line, *f[6];
    for (int64_t j = 0; (line = tg_text_next_line(&t)); j++) {
        int k = tg_text_split(line, f, 6);
        if (k != 6) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: expected 6 columns (chromosome SNP-ID cM position "
                              "A1 A2), found %d",
                              path, (long long)t.line_no, k);
            goto cleanup;
        }
        s[j] = (tg_snp){.chrom = f[0], .id = f[1], .a1 = f[4], .a2 = f[5]};
        if (!tg_text_parse_double(f[2], &s[j].cm)) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: genetic distance '%s' (column 3) is not a number",
                              path, (long long)t.line_no, TG_ESC(f[2]));
            goto cleanup;
        }
        if (!tg_text_parse_int64(f[3], &s[j].pos)) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: position '%s' (column 4) is not an integer", path,
                              (long long)t.line_no, TG_ESC(f[3]));
            goto cleanup;
        }
    }
    b->snps = s;
    b->n_snps = n;
    t.base = NULL; /* the block now belongs to b->snps */
cleanup:
    tg_text_free(&t);
    return st;
}

/* Opens the .bed and checks its magic bytes; *fd and *size are set even on failure. */
static tg_status open_bed(const char *path, int *fd, long long *size, tg_error *err) {
    struct stat sb;
    uint8_t m[3];
    tg_status st = tg_file_open(path, fd, err);
    if (st) return st;
    if (fstat(*fd, &sb) != 0)
        return tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    *size = (long long)sb.st_size;
    if (*size < 3)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: %lld bytes, too short for the magic bytes 6c 1b 01 of a .bed",
                            path, *size);
    if (pread(*fd, m, 3, 0) != 3)
        return tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (m[0] == 0x6c && m[1] == 0x1b && m[2] == 0x00)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s is an old sample-major .bed (magic bytes 6c 1b 00), which "
                            "tilegwas does not read: convert it to SNP-major with plink --bfile "
                            "PREFIX --make-bed --out NEWPREFIX",
                            path);
    if (memcmp(m, bed_magic, 3) != 0)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: magic bytes %02x %02x %02x, expected 6c 1b 01 (a PLINK 1 "
                            "SNP-major .bed)",
                            path, m[0], m[1], m[2]);
    return TG_OK;
}

/* Maps the .bed after checking its size against the .fam and the .bim. */
static tg_status map_bed(int fd, long long size, const char *path, const char *fam, const char *bim,
                         tg_bed *b, tg_error *err) {
    size_t geno = 0; /* a product past the address space matches no file */
    if (tg_size_mul(b->n_snps, (int64_t)b->bytes_per_snp, 1, &geno, NULL) ||
        size - 3 != (long long)geno)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: %lld bytes, expected %.0f = 3 + %lld SNPs (lines of %s) × %zu "
                            "bytes (%lld samples, lines of %s, 4 per byte)",
                            path, size, 3 + (double)b->n_snps * (double)b->bytes_per_snp,
                            (long long)b->n_snps, bim, b->bytes_per_snp, (long long)b->n_samples,
                            fam);
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return tg_error_set(err, TG_ERR_IO, "cannot map %s: %s", path, strerror(errno));
    b->map = map;
    b->map_len = (size_t)size;
    b->geno = (const uint8_t *)map + 3;
    return TG_OK;
}

tg_status tg_bed_open(const char *prefix, tg_bed *bed, tg_error *err) {
    tg_bed b = {0};
    int fd = -1;
    long long size = 0;
    char *fam = path_of(prefix, ".fam", err), *bim = path_of(prefix, ".bim", err),
         *bedp = path_of(prefix, ".bed", err);
    b.prefix = tg_strdup(prefix, err);
    b.format = "bed";
    tg_status st = TG_ERR_NOMEM;
    if (!fam || !bim || !bedp || !b.prefix) goto cleanup;
    /* the .bed first: a wrong prefix or a wrong file is reported before a long .bim is parsed */
    if ((st = open_bed(bedp, &fd, &size, err)) || (st = read_fam(fam, &b, err)) ||
        (st = read_bim(bim, &b, err)))
        goto cleanup;
    b.bytes_per_snp = (size_t)(b.n_samples + 3) / 4;
    st = map_bed(fd, size, bedp, fam, bim, &b, err);
cleanup:
    if (fd >= 0) close(fd); /* the mapping stays valid */
    if (st) tg_bed_close(&b);
    *bed = b;
    free(fam);
    free(bim);
    free(bedp);
    return st;
}

void tg_bed_close(tg_bed *bed) {
    if (bed->map) munmap(bed->map, bed->map_len);
    free(bed->samples);
    free(bed->snps);
    free(bed->prefix);
    tg_fileset_free(bed);
    memset(bed, 0, sizeof *bed);
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding and statistics */

void tg_bed_decode(const tg_bed *bed, int64_t i0, int64_t ni, int64_t j0, int64_t nj, int8_t *out,
                   int64_t ld) {
    assert(i0 >= 0 && ni >= 0 && i0 + ni <= bed->n_samples && ld >= ni);
    assert(j0 >= 0 && nj >= 0 && j0 + nj <= bed->n_snps);
    const int64_t i1 = i0 + ni, head_end = (i0 + 3) & ~(int64_t)3;
    for (int64_t j = 0; j < nj; j++) {
        const uint8_t *col = bed->geno + (size_t)(j0 + j) * bed->bytes_per_snp;
        int8_t *o = out + j * ld;
        int64_t i = i0;
        /* a range starting mid-byte: samples one at a time up to the next byte boundary */
        for (; i < i1 && i < head_end; i++) *o++ = dec_table[col[i >> 2]][i & 3];
        /* whole bytes: 4 values per lookup */
        const uint8_t *p = col + (i >> 2);
        int64_t nb = (i1 - i) >> 2;
        for (int64_t k = 0; k < nb; k++) memcpy(o + 4 * k, dec_table[p[k]], 4);
        o += 4 * nb;
        /* the last partial byte: only its samples inside the range, never the padding */
        for (i += 4 * nb; i < i1; i++) *o++ = dec_table[col[i >> 2]][i & 3];
    }
}

void tg_bed_decode_rows(const tg_bed *bed, const int64_t *rows, int64_t ni, int64_t j0,
                        int64_t nj, int8_t *out, int64_t ld) {
    for (int64_t j = 0; j < nj; j++) {
        const uint8_t *col = bed->geno + (size_t)(j0 + j) * bed->bytes_per_snp;
        int8_t *o = out + j * ld;
        for (int64_t i = 0; i < ni; i++) o[i] = dec_table[col[rows[i] >> 2]][rows[i] & 3];
    }
}

double tg_a1_freq(int64_t a1, int64_t calls) {
    return calls ? (double)a1 / (2.0 * (double)calls) : NAN;
}

/* SNPs of tg_bed_stats a loop iteration */
enum { STATS_SNPS = 64 };
typedef struct {
    const tg_bed *bed;
    tg_snp_stats *stats;
} stats_job;

static void stats_chunk(void *ctx, int64_t c) {
    const stats_job *jb = ctx;
    const tg_bed *bed = jb->bed;
    const int64_t n = bed->n_samples, full = n / 4,
                  j1 = (c + 1) * STATS_SNPS < bed->n_snps ? (c + 1) * STATS_SNPS : bed->n_snps;
    const int rem = (int)(n % 4);
    /* ones in the padding codes of the last byte: they read as 11, adding nothing */
    const uint8_t pad = rem ? (uint8_t)(0xff << (2 * rem)) : 0;
    for (int64_t j = c * STATS_SNPS; j < j1; j++) {
        const uint8_t *p = bed->geno + (size_t)j * bed->bytes_per_snp;
        uint64_t a1 = 0, miss = 0;
        for (int64_t k = 0; k < full; k++) {
            a1 += a1_table[p[k]];
            miss += miss_table[p[k]];
        }
        if (rem) {
            uint8_t last = p[full] | pad;
            a1 += a1_table[last];
            miss += miss_table[last];
        }
        int64_t obs = n - (int64_t)miss;
        jb->stats[j].n_obs = obs;
        jb->stats[j].freq = tg_a1_freq((int64_t)a1, obs);
        jb->stats[j].missing = (double)miss / (double)n;
    }
}

/* On every thread: a pass over the whole .bed, as long as the products' own at large sizes. */
void tg_bed_stats(const tg_bed *bed, tg_snp_stats *stats) {
    stats_job jb = {bed, stats};
    tg_parallel_for((bed->n_snps + STATS_SNPS - 1) / STATS_SNPS, stats_chunk, &jb);
}

void tg_snp_key_write(FILE *f, const tg_snp *s) {
    fprintf(f, "%s\t%lld\t%s\t%s\t%s\t%s", s->chrom, (long long)s->pos, s->id, s->a2, s->a1,
            s->a1);
}

void tg_snp_stats_write(FILE *f, const tg_snp_stats *s) {
    /* descriptive, not read back: plink2's digits, so that the column equals its .afreq's */
    if (isnan(s->freq))
        fprintf(f, "\tNA\t%lld", (long long)s->n_obs);
    else
        fprintf(f, "\t%.6g\t%lld", s->freq, (long long)s->n_obs);
}

/* ---------------------------------------------------------------------------------------- */
/* Writing */

static tg_status check_tokens(const char *prefix, const char *what, int64_t idx,
                              const char *const *tok, const char *const *names, int ntok,
                              tg_error *err) {
    /* a field with whitespace (or an empty one) would shift the columns of the file */
    for (int k = 0; k < ntok; k++)
        if (!tg_text_is_token(tok[k]))
            return tg_error_set(err, TG_ERR_ARG,
                                "writing %s: %s %lld: %s '%s' is empty or contains whitespace",
                                prefix, what, (long long)idx, names[k], TG_ESC(tok[k]));
    return TG_OK;
}

static void write_fam(FILE *f, const tg_sample *s, int64_t n) {
    char pheno[32];
    for (int64_t i = 0; i < n; i++) {
        if (isnan(s[i].pheno))
            strcpy(pheno, "-9");
        else
            tg_text_format_double(s[i].pheno, pheno);
        fprintf(f, "%s\t%s\t%s\t%s\t%d\t%s\n", s[i].fid, s[i].iid, s[i].father, s[i].mother,
                s[i].sex, pheno);
    }
}

static void write_bim(FILE *f, const tg_snp *s, int64_t m) {
    char cm[32];
    for (int64_t j = 0; j < m; j++) {
        tg_text_format_double(s[j].cm, cm);
        fprintf(f, "%s\t%s\t%s\t%lld\t%s\t%s\n", s[j].chrom, s[j].id, cm, (long long)s[j].pos,
                s[j].a1, s[j].a2);
    }
}

struct tg_bed_out {
    char *prefix;
    FILE *f[3]; /* .fam, .bim, .bed */
    char *path[3];
    int64_t n, m; /* samples, SNPs put so far */
};

static const char *const fileset_ext[3] = {".fam", ".bim", ".bed"};

tg_status tg_bed_out_open(const char *prefix, int64_t n_samples, tg_bed_out **out,
                          tg_error *err) {
    *out = NULL;
    if (n_samples < 1)
        return tg_error_set(err, TG_ERR_ARG, "writing %s: need n_samples ≥ 1 (got %lld)",
                            prefix, (long long)n_samples);
    tg_bed_out *w = tg_calloc_n(1, 1, sizeof *w, err);
    if (!w) return TG_ERR_NOMEM;
    w->n = n_samples;
    tg_status st = (w->prefix = tg_strdup(prefix, err)) ? TG_OK : TG_ERR_NOMEM;
    for (int k = 0; k < 3 && !st; k++)
        st = tg_out_open(prefix, fileset_ext[k], &w->f[k], &w->path[k], err);
    if (st) {
        tg_bed_out_discard(w);
        return st;
    }
    fwrite(bed_magic, 1, 3, w->f[2]);
    *out = w;
    return TG_OK;
}

typedef struct {
    const int8_t *geno;
    int64_t ld, n;
    size_t bps;
    uint8_t *out;
    int64_t *bad; /* per SNP: the first sample whose genotype is not 0, 1, 2 or -1, or -1 */
} pack_job;

static void pack_snp(void *ctx, int64_t t) {
    const pack_job *p = ctx;
    const int8_t *g = p->geno + t * p->ld;
    uint8_t *o = p->out + (size_t)t * p->bps;
    memset(o, 0, p->bps); /* padding codes 00, as PLINK writes them */
    p->bad[t] = -1;
    for (int64_t i = 0; i < p->n; i++) {
        if (g[i] < -1 || g[i] > 2) {
            p->bad[t] = i;
            return;
        }
        o[i >> 2] |= (uint8_t)(enc_table[g[i] + 1] << (2 * (i & 3)));
    }
}

tg_status tg_bed_out_put(tg_bed_out *w, const tg_snp *snps, int64_t nj, const int8_t *geno,
                         int64_t ld, tg_error *err) {
    static const char *const snp_cols[4] = {"chromosome", "SNP ID", "A1", "A2"};
    if (ld < w->n)
        return tg_error_set(err, TG_ERR_ARG, "writing %s: ld %lld is below n_samples %lld",
                            w->prefix, (long long)ld, (long long)w->n);
    tg_status st = TG_OK;
    for (int64_t j = 0; j < nj && !st; j++) {
        const char *tok[4] = {snps[j].chrom, snps[j].id, snps[j].a1, snps[j].a2};
        st = check_tokens(w->prefix, "SNP", w->m + j, tok, snp_cols, 4, err);
    }
    if (st || nj < 1) return st;
    pack_job p = {.ld = ld, .n = w->n, .bps = (size_t)(w->n + 3) / 4};
    int64_t block = (int64_t)((1u << 26) / p.bps) + 1; /* ≤ 64 MiB packed at a time */
    if (block > nj) block = nj;
    if (!(p.out = tg_malloc_n(block, (int64_t)p.bps, 1, err)) ||
        !(p.bad = tg_malloc_n(block, 1, sizeof *p.bad, err))) {
        free(p.out);
        return TG_ERR_NOMEM;
    }
    for (int64_t j0 = 0; j0 < nj && !st; j0 += block) {
        const int64_t nb = j0 + block <= nj ? block : nj - j0;
        p.geno = geno + j0 * ld;
        tg_parallel_for(nb, pack_snp, &p);
        for (int64_t t = 0; t < nb && !st; t++)
            if (p.bad[t] >= 0)
                st = tg_error_set(err, TG_ERR_ARG,
                                  "writing %s: genotype %d of sample %lld, SNP %lld (%s) is not "
                                  "0, 1, 2 or missing (-1)",
                                  w->path[2], p.geno[p.bad[t] + t * ld], (long long)p.bad[t],
                                  (long long)(w->m + j0 + t), snps[j0 + t].id);
        if (!st) fwrite(p.out, p.bps, (size_t)nb, w->f[2]);
    }
    w->m += nj;
    free(p.bad);
    free(p.out);
    return st;
}

tg_status tg_bed_out_close(tg_bed_out *w, const tg_sample *samples, const tg_snp *snps,
                           int64_t n_snps, tg_error *err) {
    static const char *const sample_cols[4] = {"FID", "IID", "father", "mother"};
    tg_status st = TG_OK;
    if (n_snps != w->m || n_snps < 1)
        st = tg_error_set(err, TG_ERR_ARG, "writing %s: %lld SNPs named, %lld written",
                          w->prefix, (long long)n_snps, (long long)w->m);
    for (int64_t i = 0; i < w->n && !st; i++) {
        const tg_sample *s = &samples[i];
        const char *tok[4] = {s->fid, s->iid, s->father, s->mother};
        st = check_tokens(w->prefix, "sample", i, tok, sample_cols, 4, err);
    }
    if (!st) {
        write_fam(w->f[0], samples, w->n);
        write_bim(w->f[1], snps, n_snps);
    }
    /* the .bed first, the likeliest to fail: on any error none of the three is renamed into
     * place, so that no fileset mixes the files of two writes */
    for (int k = 2; k >= 0; k--) {
        if (st)
            tg_out_discard(w->f[k]);
        else
            st = tg_out_close(w->f[k], w->path[k], err);
        w->f[k] = NULL;
    }
    tg_bed_out_discard(w);
    return st;
}

void tg_bed_out_discard(tg_bed_out *w) {
    if (!w) return;
    for (int k = 0; k < 3; k++) {
        if (w->f[k]) tg_out_discard(w->f[k]);
        free(w->path[k]);
    }
    free(w->prefix);
    free(w);
}

tg_status tg_bed_write(const char *prefix, const tg_sample *samples, int64_t n_samples,
                       const tg_snp *snps, int64_t n_snps, const int8_t *geno, int64_t ld,
                       tg_error *err) {
    if (n_samples < 1 || n_snps < 1 || ld < n_samples)
        return tg_error_set(err, TG_ERR_ARG,
                            "writing %s: need n_samples ≥ 1, n_snps ≥ 1 and ld ≥ n_samples "
                            "(got %lld, %lld, %lld)",
                            prefix, (long long)n_samples, (long long)n_snps, (long long)ld);
    tg_bed_out *w;
    tg_status st = tg_bed_out_open(prefix, n_samples, &w, err);
    if (st) return st;
    if ((st = tg_bed_out_put(w, snps, n_snps, geno, ld, err))) {
        tg_bed_out_discard(w);
        return st;
    }
    return tg_bed_out_close(w, samples, snps, n_snps, err);
}

tg_status tg_bed_write_random(const char *prefix, int64_t n, int64_t m, uint64_t seed,
                              tg_error *err) {
    static const char *const ext[3] = {".fam", ".bim", ".bed"};
    if (n < 1 || m < 1)
        return tg_error_set(err, TG_ERR_ARG, "writing %s: need n ≥ 1 and m ≥ 1 (got %lld, %lld)",
                            prefix, (long long)n, (long long)m);
    size_t bps = (size_t)(n + 3) / 4;
    unsigned char *row = tg_malloc(bps, err);
    if (!row) return TG_ERR_NOMEM;
    tg_rng rng;
    tg_rng_seed(&rng, seed);
    tg_status st = TG_OK;
    for (int k = 0; k < 3 && !st; k++) {
        char *path;
        FILE *f;
        if ((st = tg_out_open(prefix, ext[k], &f, &path, err))) break;
        for (int64_t i = 0; k == 0 && i < n; i++)
            fprintf(f, "I%lld\tI%lld\t0\t0\t0\t%d\n", (long long)i, (long long)i, i < n / 2 ? 1 : 2);
        for (int64_t j = 0; k == 1 && j < m; j++)
            fprintf(f, "1\tsnp%lld\t0\t%lld\tA\tG\n", (long long)j, (long long)j + 1);
        if (k == 2) fwrite("\x6c\x1b\x01", 1, 3, f);
        for (int64_t j = 0; k == 2 && j < m; j++) {
            /* Hardy-Weinberg genotypes: two 16-bit uniforms below p per call */
            uint32_t thr = (uint32_t)((0.05 + 0.45 * tg_rng_uniform(&rng)) * 65536);
            memset(row, 0, bps);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = tg_rng_u64(&rng);
                int g = ((r & 0xffff) < thr) + (((r >> 16) & 0xffff) < thr);
                /* .bed codes of 0, 1, 2 A1 alleles: 11, 10, 00 */
                row[i / 4] |= (unsigned char)((g == 0 ? 3u : g == 1 ? 2u : 0u) << (2 * (i % 4)));
            }
            fwrite(row, 1, bps, f);
        }
        st = tg_out_close(f, path, err);
        free(path);
    }
    free(row);
    return st;
}

tg_status tg_bed_check_rows(const tg_bed *bed, const int64_t *rows, int64_t n, tg_error *err) {
    if (!rows && n > bed->n_samples)
        return tg_error_set(err, TG_ERR_ARG, "%s: %lld samples asked, the .fam has %lld",
                            bed->prefix, (long long)n, (long long)bed->n_samples);
    for (int64_t r = 0; rows && r < n; r++)
        if (rows[r] < 0 || rows[r] >= bed->n_samples)
            return tg_error_set(err, TG_ERR_ARG, "%s: sample index %lld (row %lld) is outside the "
                                ".fam (%lld samples)", bed->prefix, (long long)rows[r],
                                (long long)r, (long long)bed->n_samples);
    return TG_OK;
}
