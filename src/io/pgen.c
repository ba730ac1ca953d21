/* PLINK 2 filesets (.pgen/.pvar/.psam) into a fileset built in memory (io/fileset.h), holding
 * what `plink2 --pfile PREFIX --make-bed` writes: the .fam's columns from the .psam, the .bim's
 * from the .pvar (A1 = ALT, the counted allele; A2 = REF), and the hard calls in the .bed's
 * coding. The .pgen is read once, through pgenlib (io/pgen_read.cc), by one reader per thread
 * over blocks of variants, each call converted word by word straight into the fileset's
 * mapping (a file in o->tmp_dir when given), so memory holds no second copy of the genotypes.
 * Multi-allelic variants are skipped and counted; dosages are not read (their hard calls are). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "io/fileset.h"
#include "io/idmap.h"
#include "io/lines.h"
#include "io/pgen.h"
#include "io/pgen_read.h"

static char *path_of(const char *prefix, const char *ext, tg_error *err) {
    size_t len = strlen(prefix) + strlen(ext) + 1;
    char *p = tg_malloc(len, err);
    if (p) snprintf(p, len, "%s%s", prefix, ext);
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* .pgen header: the magic bytes 6c 1b, a storage mode, and for the modes that carry them the
 * variant and sample counts (little-endian uint32 at bytes 3 and 7). Checked here so that a
 * wrong file, or a .pvar/.psam of other data, is named as such before pgenlib opens it. */

typedef struct {
    int64_t variants, samples; /* −1: not in this file's header (a .bed, or an external index) */
} pgen_counts;

static tg_status pgen_header(const char *path, pgen_counts *c, tg_error *err) {
    unsigned char h[11];
    tg_status st = TG_OK;
    *c = (pgen_counts){-1, -1};
    int fd;
    if ((st = tg_file_open(path, &fd, err))) return st;
    ssize_t got = read(fd, h, sizeof h);
    if (got < 0) {
        st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        goto done;
    }
    /* modes: 01 a PLINK 1 .bed, 02-04 fixed-width, 10-11 variable-width, 20-21 external index */
    int mode = got >= 3 ? h[2] : -1;
    if (got < 3 || h[0] != 0x6c || h[1] != 0x1b ||
        !(mode == 1 || (mode >= 2 && mode <= 4) || mode == 0x10 || mode == 0x11 ||
          mode == 0x20 || mode == 0x21)) {
        st = tg_error_set(err, TG_ERR_FORMAT,
                          "%s is not a .pgen: its first bytes are not 6c 1b followed by a storage "
                          "mode of PLINK 2 (01-04, 10, 11, 20, 21)",
                          path);
        goto done;
    }
    if (mode != 1 && mode < 0x20) {
        if (got < 11) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s: %zd bytes, too short for a .pgen header",
                              path, got);
            goto done;
        }
        c->variants = h[3] | (int64_t)h[4] << 8 | (int64_t)h[5] << 16 | (int64_t)h[6] << 24;
        c->samples = h[7] | (int64_t)h[8] << 8 | (int64_t)h[9] << 16 | (int64_t)h[10] << 24;
    }
done:
    close(fd);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* .psam: an optional "#FID IID ..." or "#IID ..." header (lines of "##" before it skipped);
 * without one, the .fam's six columns. FID "0" when there is no FID column, PAT/MAT "0" when
 * absent, SEX 1/M/m male, 2/F/f female, else unknown; the phenotype is the first column other
 * than FID IID SID PAT MAT SEX whose every value is a number or a missing code (plink2 skips
 * categorical ones the same way), read by the .fam's rules. */

typedef struct {
    int ncol, fid, iid, pat, mat, sex, pheno; /* column indices, −1: absent */
    int64_t n;                                /* samples */
    int64_t header_line;                      /* 0: none (a .fam) */
    int64_t data_line;                        /* the first sample's line */
} psam_cols;

enum { MAX_PHENO_SCAN = 64 }; /* columns tried as the phenotype */

static tg_status psam_header(char *line, const char *path, int64_t line_no, psam_cols *c,
                             int *candidate, int *ncand, tg_error *err) {
    char *f[256];
    int k = tg_text_split(line, f, 256);
    *c = (psam_cols){.ncol = k, .fid = -1, .iid = -1, .pat = -1, .mat = -1, .sex = -1,
                     .pheno = -1, .header_line = line_no};
    *ncand = 0;
    for (int i = 0; i < k && i < 256; i++) {
        const char *name = i == 0 ? f[0] + 1 : f[i]; /* "#FID" / "#IID" */
        if (!strcmp(name, "FID") && i == 0) c->fid = i;
        else if (!strcmp(name, "IID")) c->iid = i;
        else if (!strcmp(name, "PAT")) c->pat = i;
        else if (!strcmp(name, "MAT")) c->mat = i;
        else if (!strcmp(name, "SEX")) c->sex = i;
        else if (strcmp(name, "SID") && *ncand < MAX_PHENO_SCAN) candidate[(*ncand)++] = i;
    }
    if (c->iid < 0 || (c->fid < 0 && c->iid != 0))
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s line %lld: a .psam header starts with #FID IID or #IID, found "
                            "'%s'",
                            path, (long long)line_no, TG_ESC(f[0]));
    return TG_OK;
}

/* First pass: the header, the number of samples, and which column is the phenotype. */
static tg_status scan_psam(const char *path, psam_cols *c, tg_error *err) {
    tg_text t;
    int candidate[MAX_PHENO_SCAN], numeric[MAX_PHENO_SCAN], ncand = 0;
    char *line, *f[256];
    tg_status st = tg_text_read(&t, path, err);
    if (st) return st;
    while ((line = tg_text_next_line(&t)) && line[0] == '#' && line[1] == '#') continue;
    if (line && line[0] == '#') {
        if ((st = psam_header(line, path, t.line_no, c, candidate, &ncand, err))) goto done;
        line = tg_text_next_line(&t);
    } else { /* a .fam */
        *c = (psam_cols){.ncol = 6, .fid = 0, .iid = 1, .pat = 2, .mat = 3, .sex = 4, .pheno = 5};
    }
    c->data_line = line ? t.line_no : 0;
    for (int k = 0; k < ncand; k++) numeric[k] = 1;
    for (c->n = 0; line; line = tg_text_next_line(&t), c->n++) {
        int k = tg_text_split(line, f, 256);
        if (k < c->ncol) {
            st = c->header_line
                     ? tg_error_set(err, TG_ERR_FORMAT,
                                    "%s line %lld: expected %d columns, as the header on line "
                                    "%lld, found %d",
                                    path, (long long)t.line_no, c->ncol,
                                    (long long)c->header_line, k)
                     : tg_error_set(err, TG_ERR_FORMAT,
                                    "%s line %lld: expected 6 columns (FID IID father mother sex "
                                    "phenotype: without a #FID or #IID header a .psam is read as "
                                    "a .fam), found %d",
                                    path, (long long)t.line_no, k);
            goto done;
        }
        double v;
        for (int q = 0; q < ncand; q++)
            if (numeric[q] && !tg_text_parse_value(f[candidate[q]], &v)) numeric[q] = 0;
    }
    for (int q = 0; q < ncand && c->pheno < 0; q++)
        if (numeric[q]) c->pheno = candidate[q];
    if (c->n == 0) st = tg_error_set(err, TG_ERR_FORMAT, "%s lists no sample", path);
done:
    tg_text_free(&t);
    return st;
}

static int psam_sex(const char *s) {
    if (!strcmp(s, "1") || !strcmp(s, "M") || !strcmp(s, "m")) return 1;
    if (!strcmp(s, "2") || !strcmp(s, "F") || !strcmp(s, "f")) return 2;
    return 0;
}

/* Second pass: the samples, into b (started with c->n samples). */
static tg_status fill_psam(const char *path, const psam_cols *c, tg_bed *b, tg_error *err) {
    tg_text t;
    tg_idmap map = {0};
    int64_t *line_of = NULL;
    char *line, *f[256];
    const char *zero = NULL;
    tg_status st = tg_text_read(&t, path, err);
    if (st) return st;
    st = TG_ERR_NOMEM;
    if (!(line_of = tg_malloc_n(c->n, 1, sizeof *line_of, err)) ||
        tg_idmap_init(&map, b->samples, c->n, err) || !(zero = tg_fileset_str(b, "0", 1, err)))
        goto done;
    st = TG_OK;
    while ((line = tg_text_next_line(&t)) && t.line_no < c->data_line) continue;
    int64_t i = 0; /* the lines read without error */
    for (; line; line = tg_text_next_line(&t), i++) {
        tg_text_split(line, f, 256);
        tg_sample *s = &b->samples[i];
#define FIELD(col) ((col) < 0 ? zero : tg_fileset_str(b, f[col], strlen(f[col]), err))
        if (!(s->fid = (char *)FIELD(c->fid)) || !(s->iid = (char *)FIELD(c->iid)) ||
            !(s->father = (char *)FIELD(c->pat)) || !(s->mother = (char *)FIELD(c->mat))) {
            st = TG_ERR_NOMEM;
            goto done;
        }
#undef FIELD
        s->sex = c->sex < 0 ? 0 : psam_sex(f[c->sex]);
        s->pheno = NAN;
        if (c->pheno >= 0 && !tg_text_parse_value(f[c->pheno], &s->pheno)) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: phenotype '%s' (column %d) is not a number or a "
                              "missing code (-9, NA)",
                              path, (long long)t.line_no, TG_ESC(f[c->pheno]), c->pheno + 1);
            break;
        }
        line_of[i] = t.line_no;
    }
    /* a repeated ID before the first bad line is the first error */
    if (!(st = tg_idmap_add_lines(&map, i, line_of, path, st, err)))
        tg_fam_case_control(b->samples, c->n);
done:
    tg_text_free(&t);
    tg_idmap_free(&map);
    free(line_of);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* .pvar: "##" lines, then a "#CHROM ..." header naming POS ID REF ALT and optionally CM in any
 * order after #CHROM; without a header, the .bim's six columns (CHROM ID CM POS ALT REF). A
 * variant whose ALT lists several alleles is skipped (its allele count is kept for pgenlib,
 * which must step over its record). Streams through io/lines.h, so a .pvar.zst reads too. */

typedef struct {
    int ncol, chrom, pos, id, ref, alt, cm; /* column indices, cm −1: absent */
    int64_t header_line;                    /* 0: none */
} pvar_cols;

typedef struct {
    int64_t n;           /* variants in the .pvar (skipped ones included) */
    int64_t n_multi;     /* of which multi-allelic */
    uint32_t *vidx;      /* .pgen index of each SNP kept */
    uint32_t *allele_ct; /* alleles of each variant; NULL when every one has 2 */
    int64_t cap;         /* room in vidx */
    int64_t multi_cap;   /* room in allele_ct */
} pvar_read;

static tg_status pvar_header(char *line, const char *path, int64_t line_no, pvar_cols *c,
                             tg_error *err) {
    char *f[256];
    int k = tg_text_split(line, f, 256);
    *c = (pvar_cols){.ncol = k, .chrom = 0, .pos = -1, .id = -1, .ref = -1, .alt = -1, .cm = -1,
                     .header_line = line_no};
    for (int i = 1; i < k && i < 256; i++) {
        if (!strcmp(f[i], "POS")) c->pos = i;
        else if (!strcmp(f[i], "ID")) c->id = i;
        else if (!strcmp(f[i], "REF")) c->ref = i;
        else if (!strcmp(f[i], "ALT")) c->alt = i;
        else if (!strcmp(f[i], "CM")) c->cm = i;
    }
    if (strcmp(f[0], "#CHROM") || c->pos < 0 || c->id < 0 || c->ref < 0 || c->alt < 0)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s line %lld: a .pvar header is #CHROM followed by POS ID REF ALT "
                            "(any order; QUAL FILTER INFO CM optional), found '%s' with %d "
                            "columns",
                            path, (long long)line_no, TG_ESC(f[0]), k);
    return TG_OK;
}

/* Grows the arrays of @p pv to hold variant @p v (allele counts only once one is needed). */
static tg_status pvar_grow(pvar_read *pv, int64_t kept, int64_t v, int need_alleles,
                           tg_error *err) {
    if (kept >= pv->cap) {
        int64_t cap = pv->cap ? 2 * pv->cap : 4096;
        uint32_t *p = realloc(pv->vidx, (size_t)cap * sizeof *p);
        if (!p) return tg_error_set(err, TG_ERR_NOMEM, "cannot allocate room for %lld SNPs",
                                    (long long)cap);
        pv->vidx = p;
        pv->cap = cap;
    }
    if ((need_alleles || pv->allele_ct) && v >= pv->multi_cap) {
        int64_t cap = 2 * v + 4096;
        uint32_t *p = realloc(pv->allele_ct, (size_t)cap * sizeof *p);
        if (!p) return tg_error_set(err, TG_ERR_NOMEM, "cannot allocate room for %lld variants",
                                    (long long)cap);
        for (int64_t i = pv->allele_ct ? pv->multi_cap : 0; i < cap; i++) p[i] = 2;
        pv->allele_ct = p;
        pv->multi_cap = cap;
    }
    return TG_OK;
}

static tg_status pvar_line(const char *path, int64_t line_no, char **f, const pvar_cols *c,
                           tg_bed *b, tg_error *err) {
    tg_snp *s = &b->snps[b->n_snps];
    const tg_snp *prev = b->n_snps ? s - 1 : NULL;
    s->cm = 0;
    if (!tg_text_parse_int64(f[c->pos], &s->pos))
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s line %lld: position '%s' (column %d) is not an integer", path,
                            (long long)line_no, TG_ESC(f[c->pos]), c->pos + 1);
    if (c->cm >= 0 && !tg_text_parse_double(f[c->cm], &s->cm))
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s line %lld: genetic distance '%s' (column %d) is not a number",
                            path, (long long)line_no, TG_ESC(f[c->cm]), c->cm + 1);
    /* one copy of a chromosome name for a run of variants on it */
    s->chrom = prev && !strcmp(prev->chrom, f[c->chrom])
                   ? prev->chrom
                   : tg_fileset_str(b, f[c->chrom], strlen(f[c->chrom]), err);
    if (!s->chrom || !(s->id = tg_fileset_str(b, f[c->id], strlen(f[c->id]), err)) ||
        !(s->a1 = tg_fileset_str(b, f[c->alt], strlen(f[c->alt]), err)) ||
        !(s->a2 = tg_fileset_str(b, f[c->ref], strlen(f[c->ref]), err)))
        return TG_ERR_NOMEM;
    b->n_snps++;
    return TG_OK;
}

static tg_status read_pvar(const char *path, tg_bed *b, pvar_read *pv, tg_error *err) {
    tg_lines r;
    char *line = NULL, *f[256];
    pvar_cols c = {.ncol = 6, .chrom = 0, .id = 1, .cm = 2, .pos = 3, .alt = 4, .ref = 5};
    tg_status st = tg_lines_open(&r, path, err);
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line && line[0] == '#' &&
           line[1] == '#')
        continue;
    if (!st && line && line[0] == '#' && !(st = pvar_header(line, path, r.line_no, &c, err)))
        st = tg_lines_next(&r, &line, err);
    int need = 1 + (c.pos > c.id ? c.pos : c.id);
    need = need > 1 + c.ref ? need : 1 + c.ref;
    need = need > 1 + c.alt ? need : 1 + c.alt;
    need = need > 1 + c.cm ? need : 1 + c.cm;
    for (; !st && line; st = tg_lines_next(&r, &line, err), pv->n++) {
        int k = tg_text_split(line, f, need);
        if (k < c.ncol) {
            st = c.header_line
                     ? tg_error_set(err, TG_ERR_FORMAT,
                                    "%s line %lld: expected %d columns, as the header on line "
                                    "%lld, found %d",
                                    path, (long long)r.line_no, c.ncol, (long long)c.header_line,
                                    k)
                     : tg_error_set(err, TG_ERR_FORMAT,
                                    "%s line %lld: expected 6 columns (CHROM ID CM POS ALT REF: "
                                    "without a #CHROM header a .pvar is read as a .bim), found %d",
                                    path, (long long)r.line_no, k);
            break;
        }
        const char *comma = strchr(f[c.alt], ',');
        if ((st = pvar_grow(pv, b->n_snps, pv->n, comma != NULL, err)) ||
            (st = tg_fileset_reserve(b, b->n_snps + 1, err)))
            break;
        if (comma) { /* ALT lists k alleles: k + 1 with REF */
            uint32_t n_alleles = 2;
            for (const char *p = comma; p; p = strchr(p + 1, ',')) n_alleles++;
            pv->allele_ct[pv->n] = n_alleles;
            pv->n_multi++;
            continue;
        }
        pv->vidx[b->n_snps] = (uint32_t)pv->n;
        if ((st = pvar_line(path, r.line_no, f, &c, b, err))) break;
    }
    if (!st && pv->n == 0) st = tg_error_set(err, TG_ERR_FORMAT, "%s lists no variant", path);
    tg_lines_close(&r);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Genotypes */

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "a 64-bit word's bytes are copied as the .bed's bytes: sample 0 in the low bits");

/* pgenlib's hard call (0 hom REF, 1 het, 2 hom ALT, 3 missing) → .bed code with A1 = ALT (11,
 * 10, 00, 01; io/plink.c's invariant). For a call hl: the code's high bit is ¬h and its low
 * bit ¬(h⊕l), so code = ¬(w ⊕ (high bits shifted onto the low ones)), 32 calls a word. The
 * last byte's padding codes are 00, as PLINK writes them. */
static void calls_to_bed(const uint64_t *w, int64_t n, uint8_t *out) {
    const uint64_t lo = 0x5555555555555555u;
    int64_t full = n / 32, rem = n % 32;
    for (int64_t k = 0; k < full; k++) {
        uint64_t x = ~(w[k] ^ ((w[k] >> 1) & lo));
        memcpy(out + 8 * k, &x, 8);
    }
    if (rem) {
        uint64_t x = ~(w[full] ^ ((w[full] >> 1) & lo)) & ((UINT64_C(1) << 2 * rem) - 1);
        memcpy(out + 8 * full, &x, (size_t)(rem + 3) / 4);
    }
}

typedef struct {
    tg_bed *b;
    const uint32_t *vidx;
    tg_pgr **readers;
    int64_t block, nblocks, next; /* next: the next block to claim */
    int dosages;                  /* the file stores dosages: count the variants with them */
    int64_t n_dosage;
    pthread_mutex_t lock; /* guards the first error */
    int64_t bad;          /* the lowest SNP that failed; −1: none */
    char msg[TG_PGR_MSG];
} read_job;

static void read_blocks(void *ctx, int64_t c) {
    read_job *job = ctx;
    tg_pgr *r = job->readers[c];
    int64_t dosage = 0;
    char msg[TG_PGR_MSG];
    for (;;) {
        int64_t k = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (k >= job->nblocks || __atomic_load_n(&job->bad, __ATOMIC_RELAXED) >= 0) break;
        int64_t j0 = k * job->block, j1 = j0 + job->block;
        if (j1 > job->b->n_snps) j1 = job->b->n_snps;
        for (int64_t j = j0; j < j1; j++) {
            const uint64_t *calls;
            if (tg_pgr_get(r, job->vidx[j], &calls, msg)) {
                pthread_mutex_lock(&job->lock);
                if (job->bad < 0 || j < job->bad) {
                    memcpy(job->msg, msg, sizeof msg);
                    __atomic_store_n(&job->bad, j, __ATOMIC_RELAXED);
                }
                pthread_mutex_unlock(&job->lock);
                break;
            }
            calls_to_bed(calls, job->b->n_samples, tg_fileset_snp(job->b, j));
            if (job->dosages) dosage += tg_pgr_has_dosage(r, job->vidx[j]);
        }
    }
    __atomic_fetch_add(&job->n_dosage, dosage, __ATOMIC_RELAXED);
}

/* Reads the hard calls of every SNP of @p b from the open @p f, on @p o's threads. */
static tg_status read_calls(const char *path, tg_pgr_file *f, int dosages, const tg_input_opts *o,
                            tg_bed *b, const pvar_read *pv, int64_t *n_dosage, tg_error *err) {
    int threads = tg_parallel_threads();
    if (o->threads > 0 && o->threads < threads) threads = o->threads;
    read_job job = {.b = b, .vidx = pv->vidx, .dosages = dosages, .bad = -1,
                    .lock = PTHREAD_MUTEX_INITIALIZER};
    /* blocks of consecutive variants (pgenlib reads a block's records in order, LD-compressed
     * ones after their base), several a thread so that an uneven one does not hold the rest */
    job.block = (b->n_snps + 16 * threads - 1) / (16 * threads);
    job.nblocks = (b->n_snps + job.block - 1) / job.block;
    if (threads > job.nblocks) threads = (int)job.nblocks;
    tg_status st = TG_OK;
    char msg[TG_PGR_MSG];
    if (!(job.readers = tg_calloc_n(threads, 1, sizeof *job.readers, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < threads && !st; c++)
        if (tg_pgr_new(f, path, &job.readers[c], msg))
            st = tg_error_set(err, TG_ERR_IO, "%s: %s", path, msg);
    if (!st) tg_parallel_for(threads, read_blocks, &job);
    if (!st && job.bad >= 0)
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: variant %s (number %u of the .pvar): %s", path,
                          b->snps[job.bad].id, pv->vidx[job.bad] + 1, job.msg);
    for (int c = 0; c < threads; c++) tg_pgr_free(job.readers[c]);
    free(job.readers);
    *n_dosage = job.n_dosage;
    return st;
}

/* ---------------------------------------------------------------------------------------- */

/* The counts of the .pgen against its .psam and .pvar, and what pgenlib needs to open it. */
static tg_status open_pgen(const char *pgen, const pgen_counts *hc, const char *psam,
                           const char *pvar, const tg_bed *b, const pvar_read *pv,
                           tg_pgr_file **f, int *dosages, tg_error *err) {
    char msg[TG_PGR_MSG];
    if (hc->samples >= 0 && hc->samples != b->n_samples)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s holds %lld samples but %s lists %lld: they must be the same "
                            "samples, in the same order",
                            pgen, (long long)hc->samples, psam, (long long)b->n_samples);
    if (hc->variants >= 0 && hc->variants != pv->n)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s holds %lld variants but %s lists %lld: they must be the same "
                            "variants, in the same order",
                            pgen, (long long)hc->variants, pvar, (long long)pv->n);
    if (pv->n > INT32_MAX - 2 || b->n_samples > INT32_MAX - 1)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: %lld variants × %lld samples: pgenlib reads "
                            "at most 2^31 − 3 variants and 2^31 − 2 samples",
                            pgen, (long long)pv->n, (long long)b->n_samples);
    if (b->n_snps == 0)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: all %lld variants are multi-allelic, and tilegwas reads "
                            "biallelic ones (plink2 --max-alleles 2, or split them before "
                            "import with bcftools norm -m-)",
                            pvar, (long long)pv->n);
    if (tg_pgr_file_open(pgen, (uint32_t)pv->n, (uint32_t)b->n_samples, pv->allele_ct, f,
                         dosages, msg))
        return tg_error_set(err, TG_ERR_FORMAT, "%s: %s", pgen, msg);
    return TG_OK;
}

static void report(const tg_input_opts *o, const tg_bed *b, const pvar_read *pv,
                   int64_t n_dosage, tg_input_report *rep) {
    if (pv->n_multi) {
        tg_input_step_add(rep, "multi-allelic", 0, pv->n_multi, b->n_samples, b->n_snps);
        tg_input_note(rep,
                      "%s.pvar: %lld multi-allelic variant%s skipped (tilegwas reads biallelic "
                      "ones: plink2 --max-alleles 2 drops them, bcftools norm -m- splits them "
                      "before import)",
                      o->path, (long long)pv->n_multi, pv->n_multi == 1 ? "" : "s");
    }
    if (n_dosage)
        tg_input_note(rep,
                      "%s.pgen: %lld of %lld variants store dosages; their hard calls are read "
                      "(plink2's, rounded by --hard-call-threshold when the .pgen was written; "
                      "missing where a dosage was too far from 0, 1 or 2), not the dosages",
                      o->path, (long long)n_dosage, (long long)b->n_snps);
}

tg_status tg_pgen_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err) {
    tg_input_report own = {0};
    pgen_counts hc;
    psam_cols sc;
    pvar_read pv = {0};
    tg_pgr_file *f = NULL;
    int dosages = 0;
    int64_t n_dosage = 0;
    char *pgen = path_of(o->path, ".pgen", err), *psam = path_of(o->path, ".psam", err),
         *pvar = path_of(o->path, ".pvar", err), *pvar_zst = path_of(o->path, ".pvar.zst", err);
    tg_status st = TG_ERR_NOMEM;
    memset(bed, 0, sizeof *bed);
    if (!rep) rep = &own;
    if (!pgen || !psam || !pvar || !pvar_zst) goto cleanup;
    /* plink2 --pfile takes PREFIX.pvar.zst when there is no PREFIX.pvar */
    const char *pvar_path = access(pvar, F_OK) && !access(pvar_zst, F_OK) ? pvar_zst : pvar;
    /* the .pgen first: a wrong prefix or file is named before a long .pvar is parsed */
    if ((st = pgen_header(pgen, &hc, err)) || (st = scan_psam(psam, &sc, err)) ||
        (st = tg_fileset_init(bed, o->path, "pgen", sc.n, 0, o->tmp_dir, err)) ||
        (st = fill_psam(psam, &sc, bed, err)) || (st = read_pvar(pvar_path, bed, &pv, err)) ||
        (st = open_pgen(pgen, &hc, psam, pvar_path, bed, &pv, &f, &dosages, err)) ||
        (st = read_calls(pgen, f, dosages, o, bed, &pv, &n_dosage, err)))
        goto cleanup;
    report(o, bed, &pv, n_dosage, rep);
cleanup:
    tg_pgr_file_close(f);
    free(pv.vidx);
    free(pv.allele_ct);
    free(pgen);
    free(psam);
    free(pvar);
    free(pvar_zst);
    if (st) tg_bed_close(bed);
    return st;
}
