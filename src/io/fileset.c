/* A fileset built in memory: see fileset.h. */
#define _GNU_SOURCE /* mremap */
#include "io/fileset.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/parallel.h"

/* The pool's strings come in chunks of at least this many bytes, so that a million IDs cost a
 * few dozen allocations. */
#define POOL_CHUNK ((size_t)1 << 20)

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    char text[];
} chunk;

struct tg_fileset_store {
    chunk *pool;
    int fd;          /* the unlinked temporary file behind the mapping; -1: anonymous memory */
    int64_t snp_cap; /* SNPs the mapping and snps[] have room for */
};

/* The genotype bytes of @p snps SNPs, at least 1 (a mapping of 0 bytes is not allowed); 0 when
 * they exceed the address space. */
static size_t geno_bytes(const tg_bed *b, int64_t snps) {
    size_t n = 0;
    if (tg_size_mul(snps, (int64_t)b->bytes_per_snp, 1, &n, NULL)) return 0;
    return n ? n : 1;
}

/* An unlinked file in @p tmp_dir, @p len bytes long; -1 when it cannot be made. */
static int spill_file(const char *tmp_dir, size_t len) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/tilegwas-geno-XXXXXX", tmp_dir) >= (int)sizeof path)
        return -1;
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path); /* freed by the kernel when the process ends, however it ends */
    if (ftruncate(fd, (off_t)len) == 0) return fd;
    close(fd);
    return -1;
}

static tg_status map_geno(tg_bed *b, size_t len, const char *tmp_dir, tg_error *err) {
    struct tg_fileset_store *s = b->store;
    /* a folder that takes no file (read-only, full) leaves the genotypes in memory */
    s->fd = tmp_dir ? spill_file(tmp_dir, len) : -1;
    b->map = s->fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0)
                        : mmap(NULL, len, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b->map == MAP_FAILED) {
        b->map = NULL;
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot map %zu bytes of genotypes%s%s: %s",
                            b->prefix, len, s->fd >= 0 ? " in " : "", s->fd >= 0 ? tmp_dir : "",
                            strerror(errno));
    }
    b->map_len = len;
    b->geno = b->map;
    return TG_OK;
}

tg_status tg_fileset_init(tg_bed *b, const char *prefix, const char *format, int64_t n_samples,
                          int64_t snp_cap, const char *tmp_dir, tg_error *err) {
    memset(b, 0, sizeof *b);
    tg_status st = TG_ERR_NOMEM;
    if (n_samples < 1 || snp_cap < 0) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: %lld samples: need at least one", prefix,
                          (long long)n_samples);
        goto fail;
    }
    if (!(b->store = tg_calloc(1, sizeof *b->store, err))) goto fail;
    b->store->fd = -1;
    b->format = format;
    b->bytes_per_snp = (size_t)(n_samples + 3) / 4;
    if (!(b->prefix = tg_strdup(prefix, err)) ||
        !(b->samples = tg_calloc_n(n_samples, 1, sizeof *b->samples, err)) ||
        !(b->snps = tg_calloc_n(snp_cap ? snp_cap : 1, 1, sizeof *b->snps, err)))
        goto fail;
    b->n_samples = n_samples;
    if (!geno_bytes(b, snp_cap)) {
        st = tg_error_set(err, TG_ERR_NOMEM, "%s: %lld SNPs × %lld samples exceed the address "
                          "space", prefix, (long long)snp_cap, (long long)n_samples);
        goto fail;
    }
    if ((st = map_geno(b, geno_bytes(b, snp_cap), tmp_dir, err))) goto fail;
    b->store->snp_cap = snp_cap;
    return TG_OK;
fail:
    tg_bed_close(b);
    return st;
}

tg_status tg_fileset_reserve(tg_bed *b, int64_t snps, tg_error *err) {
    struct tg_fileset_store *s = b->store;
    if (snps <= s->snp_cap) return TG_OK;
    int64_t cap = s->snp_cap * 2 > snps ? s->snp_cap * 2 : snps;
    size_t bytes = 0, len = geno_bytes(b, cap);
    tg_snp *e = len && !tg_size_mul(cap, 1, sizeof *e, &bytes, NULL) ? realloc(b->snps, bytes)
                                                                     : NULL;
    if (!e)
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot allocate room for %lld SNPs", b->prefix,
                            (long long)cap);
    memset(e + s->snp_cap, 0, (size_t)(cap - s->snp_cap) * sizeof *e);
    b->snps = e;
    if (s->fd >= 0 && ftruncate(s->fd, (off_t)len) != 0)
        return tg_error_set(err, TG_ERR_IO, "%s: cannot grow the temporary genotype file to %zu "
                            "bytes: %s", b->prefix, len, strerror(errno));
    void *m = mremap(b->map, b->map_len, len, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot grow the genotypes to %zu bytes: %s",
                            b->prefix, len, strerror(errno));
    b->map = m;
    b->map_len = len;
    b->geno = m;
    s->snp_cap = cap;
    return TG_OK;
}

char *tg_fileset_str(tg_bed *b, const char *s, size_t len, tg_error *err) {
    struct tg_fileset_store *st = b->store;
    chunk *c = st->pool;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK;
        if (!(c = tg_malloc(sizeof *c + size, err))) return NULL;
        *c = (chunk){.next = st->pool, .size = size};
        st->pool = c;
    }
    char *p = c->text + c->used;
    memcpy(p, s, len);
    p[len] = '\0';
    c->used += len + 1;
    return p;
}

uint8_t *tg_fileset_snp(tg_bed *b, int64_t j) {
    return (uint8_t *)b->map + (size_t)j * b->bytes_per_snp;
}

void tg_fileset_pack(const int8_t *g, int64_t n, uint8_t *out) {
    /* A1 count + 1 (−1 = missing, 0, 1, 2) → code, as io/plink.c's writer */
    static const uint8_t enc[4] = {1, 3, 2, 0};
    memset(out, 0, (size_t)(n + 3) / 4);
    for (int64_t i = 0; i < n; i++) out[i >> 2] |= (uint8_t)(enc[g[i] + 1] << 2 * (i & 3));
}

/* Copies a string into @p b's pool (NULL, a field a reader left unset, stays NULL). */
static tg_status copy_str(tg_bed *b, char **dst, const char *s, tg_error *err) {
    *dst = NULL;
    return !s || (*dst = tg_fileset_str(b, s, strlen(s), err)) ? TG_OK : TG_ERR_NOMEM;
}

/* The kept samples as runs of consecutive ones: source samples [from, from + len). */
typedef struct {
    int64_t from, len;
} run;

/* compact[m][b]: the codes of byte b's samples in mask m, packed in order (low byte), and their
 * bit count (high byte). */
static uint16_t compact[16][256];
static pthread_once_t compact_once = PTHREAD_ONCE_INIT;

static void compact_init(void) {
    for (int m = 0; m < 16; m++)
        for (int b = 0; b < 256; b++) {
            int codes = 0, bits = 0;
            for (int i = 0; i < 4; i++)
                if (m >> i & 1) codes |= (b >> 2 * i & 3) << bits, bits += 2;
            compact[m][b] = (uint16_t)(codes | bits << 8);
        }
}

/* Many short runs (scattered samples): one table lookup per source byte instead, appended to
 * a 64-bit accumulator written out 4 bytes at a time. */
static void gather_bytes(const uint8_t *in, size_t in_len, const uint8_t *kmask, uint8_t *out,
                         size_t out_len) {
    uint64_t acc = 0;
    int nb = 0;
    size_t pos = 0;
    for (size_t k = 0; k < in_len; k++) {
        uint16_t e = compact[kmask[k]][in[k]];
        acc |= (uint64_t)(e & 0xff) << nb;
        nb += e >> 8;
        if (nb >= 32) {
            uint32_t w = (uint32_t)acc;
            memcpy(out + pos, &w, 4);
            pos += 4;
            acc >>= 32;
            nb -= 32;
        }
    }
    memcpy(out + pos, &acc, out_len - pos);
}

/* Up to 8 bytes at p, of which n exist (little-endian: sample order is bit order). */
static uint64_t load_le(const uint8_t *p, size_t n) {
    uint64_t x = 0;
    if (n >= 8)
        memcpy(&x, p, 8);
    else
        memcpy(&x, p, n);
    return x;
}

/* The kept samples' codes of one SNP, run by run, 28 at a time: 56 bits read at any sample
 * offset of the source, appended to a 64-bit accumulator written out a whole word at a time
 * (never read back: a store followed by an overlapping load would stall). The padding codes of
 * the last byte stay 0, as tg_fileset_pack leaves
 * them. */
static void gather(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                   const run *runs, int64_t nruns) {
    uint64_t acc = 0;
    int nb = 0; /* bits in acc */
    size_t pos = 0;
    for (int64_t q = 0; q < nruns; q++)
        for (int64_t k = 0; k < runs[q].len; k += 28) {
            int64_t n = runs[q].len - k < 28 ? runs[q].len - k : 28, i = runs[q].from + k;
            size_t ib = (size_t)i / 4;
            uint64_t codes = load_le(in + ib, in_len - ib) >> (2 * (i % 4));
            codes &= (1ULL << (2 * n)) - 1;
            acc |= codes << nb;
            if (nb + 2 * n < 64) {
                nb += (int)(2 * n);
                continue;
            }
            memcpy(out + pos, &acc, 8);
            pos += 8;
            acc = nb ? codes >> (64 - nb) : 0;
            nb += (int)(2 * n) - 64;
        }
    memcpy(out + pos, &acc, out_len - pos);
}

typedef struct {
    const tg_bed *in;
    tg_bed *out;
    const int64_t *cols;
    const run *runs; /* NULL: every sample, in order */
    int64_t nruns;
    const uint8_t *kmask; /* per source byte, which of its 4 samples stay (NULL: by runs) */
} subset_job;

/* SNPs [256c, 256c + 256) of the subset (a byte copy when every sample is kept). */
static void subset_chunk(void *ctx, int64_t c) {
    const subset_job *j = ctx;
    const size_t in_len = j->in->bytes_per_snp, out_len = j->out->bytes_per_snp;
    const int64_t m = j->out->n_snps, end = 256 * c + 256 < m ? 256 * c + 256 : m;
    for (int64_t t = 256 * c; t < end; t++) {
        const uint8_t *in = j->in->geno + (size_t)(j->cols ? j->cols[t] : t) * in_len;
        uint8_t *out = tg_fileset_snp(j->out, t);
        if (!j->runs)
            memcpy(out, in, out_len);
        else if (j->kmask)
            gather_bytes(in, in_len, j->kmask, out, out_len);
        else
            gather(in, in_len, out, out_len, j->runs, j->nruns);
    }
}

/* Copies the sample and SNP entries, their strings into @p out's pool (a chromosome's name
 * once for its run of SNPs). */
static tg_status copy_entries(const tg_bed *in, const int64_t *rows, const int64_t *cols,
                              tg_bed *out, tg_error *err) {
    for (int64_t i = 0; i < out->n_samples; i++) {
        const tg_sample *a = &in->samples[rows ? rows[i] : i];
        tg_sample *b = &out->samples[i];
        *b = *a;
        if (copy_str(out, &b->fid, a->fid, err) || copy_str(out, &b->iid, a->iid, err) ||
            copy_str(out, &b->father, a->father, err) || copy_str(out, &b->mother, a->mother, err))
            return TG_ERR_NOMEM;
    }
    for (int64_t t = 0; t < out->n_snps; t++) {
        const tg_snp *a = &in->snps[cols ? cols[t] : t];
        tg_snp *b = &out->snps[t];
        *b = *a;
        if (t && a->chrom && out->snps[t - 1].chrom && !strcmp(out->snps[t - 1].chrom, a->chrom))
            b->chrom = out->snps[t - 1].chrom;
        else if (copy_str(out, &b->chrom, a->chrom, err))
            return TG_ERR_NOMEM;
        if (copy_str(out, &b->id, a->id, err) || copy_str(out, &b->a1, a->a1, err) ||
            copy_str(out, &b->a2, a->a2, err))
            return TG_ERR_NOMEM;
    }
    return TG_OK;
}

tg_status tg_fileset_subset(const tg_bed *in, const int64_t *rows, int64_t n,
                            const int64_t *cols, int64_t m, const char *tmp_dir, tg_bed *out,
                            tg_error *err) {
    run *runs = NULL;
    uint8_t *kmask = NULL;
    tg_status st = tg_fileset_init(out, in->prefix, in->format ? in->format : "bed", n, m,
                                   tmp_dir, err);
    if (st) return st;
    out->n_snps = m;
    subset_job job = {.in = in, .out = out, .cols = cols};
    if ((st = copy_entries(in, rows, cols, out, err))) goto cleanup;
    if (rows) {
        if (!(runs = tg_malloc_n(n, 1, sizeof *runs, err))) {
            st = TG_ERR_NOMEM;
            goto cleanup;
        }
        for (int64_t i = 0; i < n; i++)
            if (job.nruns && runs[job.nruns - 1].from + runs[job.nruns - 1].len == rows[i])
                runs[job.nruns - 1].len++;
            else
                runs[job.nruns++] = (run){rows[i], 1};
        job.runs = runs;
        /* a run costs about four source bytes' lookups (bench/filter) */
        if (job.nruns * 4 > (int64_t)in->bytes_per_snp) {
            if (!(kmask = tg_calloc(in->bytes_per_snp, 1, err))) {
                st = TG_ERR_NOMEM;
                goto cleanup;
            }
            pthread_once(&compact_once, compact_init);
            for (int64_t i = 0; i < n; i++) kmask[rows[i] / 4] |= (uint8_t)(1 << (rows[i] % 4));
            job.kmask = kmask;
        }
    }
    tg_parallel_for((m + 255) / 256, subset_chunk, &job);
cleanup:
    if (st) tg_bed_close(out);
    free(kmask);
    free(runs);
    return st;
}

tg_input_step *tg_input_step_add(tg_input_report *rep, const char *flag, int64_t samples_removed,
                                 int64_t snps_removed, int64_t samples_left, int64_t snps_left) {
    if (rep->nsteps == (int)(sizeof rep->steps / sizeof rep->steps[0])) return NULL;
    tg_input_step *s = &rep->steps[rep->nsteps++];
    *s = (tg_input_step){.samples_removed = samples_removed, .snps_removed = snps_removed,
                         .samples_left = samples_left, .snps_left = snps_left};
    snprintf(s->flag, sizeof s->flag, "%s", flag);
    return s;
}

void tg_input_note(tg_input_report *rep, const char *fmt, ...) {
    if (rep->nnotes == (int)(sizeof rep->notes / sizeof rep->notes[0])) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->notes[rep->nnotes++], sizeof rep->notes[0], fmt, ap);
    va_end(ap);
}

/* A string with its NUL, so that "ab" "c" and "a" "bc" differ. */
static uint64_t hash_str(uint64_t h, const char *s) { return tg_fnv1a(h, s, strlen(s) + 1); }

void tg_bed_hash(const tg_bed *b, tg_bed_hashes *h) {
    h->snps = h->samples = TG_FNV1A_INIT;
    for (int64_t j = 0; j < b->n_snps; j++) {
        const tg_snp *s = &b->snps[j];
        h->snps = hash_str(hash_str(h->snps, s->chrom), s->id);
        h->snps = tg_fnv1a(tg_fnv1a(h->snps, &s->cm, sizeof s->cm), &s->pos, sizeof s->pos);
        h->snps = hash_str(hash_str(h->snps, s->a1), s->a2);
    }
    for (int64_t i = 0; i < b->n_samples; i++) {
        const tg_sample *s = &b->samples[i];
        h->samples = hash_str(hash_str(h->samples, s->fid), s->iid);
        h->samples = hash_str(hash_str(h->samples, s->father), s->mother);
        h->samples = tg_fnv1a(h->samples, &s->sex, sizeof s->sex);
        h->samples = tg_fnv1a(h->samples, &s->pheno, sizeof s->pheno);
    }
    h->geno = tg_hash_bulk(TG_FNV1A_INIT, b->geno, (size_t)b->n_snps * b->bytes_per_snp);
}

void tg_fileset_free(tg_bed *b) {
    struct tg_fileset_store *s = b->store;
    if (!s) return;
    for (chunk *c = s->pool, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    if (s->fd >= 0) close(s->fd);
    free(s);
    b->store = NULL;
}
