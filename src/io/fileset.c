/* A fileset built in memory: see fileset.h. */
#define _GNU_SOURCE /* mremap */
#include "io/fileset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

static size_t geno_bytes(const tg_bed *b, int64_t snps) {
    size_t n = (size_t)snps * b->bytes_per_snp;
    return n ? n : 1; /* a mapping of 0 bytes is not allowed */
}

static tg_status map_geno(tg_bed *b, size_t len, const char *tmp_dir, tg_error *err) {
    struct tg_fileset_store *s = b->store;
    if (!tmp_dir) {
        b->map = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (b->map == MAP_FAILED) {
            b->map = NULL;
            return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot allocate %zu bytes of genotypes: %s",
                                b->prefix, len, strerror(errno));
        }
    } else {
        size_t plen = strlen(tmp_dir) + 32;
        char *path = tg_malloc(plen, err);
        if (!path) return TG_ERR_NOMEM;
        snprintf(path, plen, "%s/tilegwas-geno-XXXXXX", tmp_dir);
        s->fd = mkstemp(path);
        if (s->fd >= 0) unlink(path); /* freed by the kernel when the process ends, however */
        int e = errno;
        if (s->fd < 0) {
            tg_error_set(err, TG_ERR_IO, "cannot create a temporary genotype file in %s: %s",
                         tmp_dir, strerror(e));
            free(path);
            return TG_ERR_IO;
        }
        free(path);
        if (ftruncate(s->fd, (off_t)len) != 0 ||
            (b->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0)) ==
                MAP_FAILED) {
            b->map = NULL;
            return tg_error_set(err, TG_ERR_IO, "cannot map %zu bytes of genotypes in %s: %s", len,
                                tmp_dir, strerror(errno));
        }
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
        !(b->samples = tg_calloc((size_t)n_samples, sizeof *b->samples, err)) ||
        !(b->snps = tg_calloc(snp_cap ? (size_t)snp_cap : 1, sizeof *b->snps, err)))
        goto fail;
    b->n_samples = n_samples;
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
    tg_snp *e = realloc(b->snps, (size_t)cap * sizeof *e);
    if (!e)
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot allocate room for %lld SNPs", b->prefix,
                            (long long)cap);
    memset(e + s->snp_cap, 0, (size_t)(cap - s->snp_cap) * sizeof *e);
    b->snps = e;
    size_t len = geno_bytes(b, cap);
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

typedef struct {
    const tg_bed *in;
    tg_bed *out;
    const int64_t *rows, *cols;
} subset_job;

/* SNPs [256c, 256c + 256) of the subset: each selected sample's 2-bit code moved to its new
 * place (the padding codes of the last byte stay 00, which decoding never reads). */
static void subset_chunk(void *ctx, int64_t c) {
    const subset_job *j = ctx;
    const int64_t n = j->out->n_samples, m = j->out->n_snps;
    const int64_t end = 256 * c + 256 < m ? 256 * c + 256 : m;
    for (int64_t t = 256 * c; t < end; t++) {
        const int64_t f = j->cols ? j->cols[t] : t;
        const uint8_t *src = j->in->geno + (size_t)f * j->in->bytes_per_snp;
        uint8_t *dst = tg_fileset_snp(j->out, t);
        if (!j->rows) {
            memcpy(dst, src, j->out->bytes_per_snp);
            continue;
        }
        memset(dst, 0, j->out->bytes_per_snp);
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = j->rows[i];
            dst[i >> 2] |= (uint8_t)((src[r >> 2] >> 2 * (r & 3) & 3) << 2 * (i & 3));
        }
    }
}

tg_status tg_fileset_subset(const tg_bed *in, const int64_t *rows, int64_t n,
                            const int64_t *cols, int64_t m, const char *tmp_dir, tg_bed *out,
                            tg_error *err) {
    tg_status st = tg_fileset_init(out, in->prefix, in->format ? in->format : "bed", n, m,
                                   tmp_dir, err);
    if (st) return st;
    for (int64_t i = 0; i < n && !st; i++) {
        const tg_sample *a = &in->samples[rows ? rows[i] : i];
        tg_sample *b = &out->samples[i];
        *b = (tg_sample){.sex = a->sex, .pheno = a->pheno};
        if (!(st = copy_str(out, &b->fid, a->fid, err)) &&
            !(st = copy_str(out, &b->iid, a->iid, err)) &&
            !(st = copy_str(out, &b->father, a->father, err)))
            st = copy_str(out, &b->mother, a->mother, err);
    }
    for (int64_t t = 0; t < m && !st; t++) {
        const tg_snp *a = &in->snps[cols ? cols[t] : t];
        tg_snp *b = &out->snps[t];
        *b = (tg_snp){.cm = a->cm, .pos = a->pos};
        if (!(st = copy_str(out, &b->chrom, a->chrom, err)) &&
            !(st = copy_str(out, &b->id, a->id, err)) && !(st = copy_str(out, &b->a1, a->a1, err)))
            st = copy_str(out, &b->a2, a->a2, err);
    }
    if (st) {
        tg_bed_close(out);
        return st;
    }
    out->n_snps = m;
    subset_job job = {.in = in, .out = out, .rows = rows, .cols = cols};
    tg_parallel_for((m + 255) / 256, subset_chunk, &job);
    return TG_OK;
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
