/* Internal view of a genotype source (the public calls are in include/tilegwas.h): a format
 * behind one decoder, and the selection of samples and SNPs applied to it once. A new format
 * (.pgen, VCF) is one decoder and one constructor. */
#ifndef TG_GENO_SOURCE_H
#define TG_GENO_SOURCE_H
#include "tilegwas.h"

/** A format's decoder: its samples [i0, i0 + ni) × SNPs [j0, j0 + nj), in its own numbering, into
 * column-major @p out (leading dimension ld): A1 counts, or TG_GENO_MISSING. Thread-safe. */
typedef void (*tg_geno_decode_fn)(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                                  int8_t *out, int64_t ld);

/** Optional: the format's samples rows[0..ni) (scattered) × SNPs [j0, j0 + nj), as above. */
typedef void (*tg_geno_decode_rows_fn)(const void *ctx, const int64_t *rows, int64_t ni,
                                       int64_t j0, int64_t nj, int8_t *out, int64_t ld);

struct tg_geno_source {
    tg_geno_decode_fn decode;
    tg_geno_decode_rows_fn decode_rows; /* NULL: scattered samples are read run by run */
    const void *ctx;
    const tg_bed *bed;    /* sample and SNP ids (NULL: an int8 array has none) */
    const int8_t *g;      /* an int8 array (the context of its decoder) */
    int64_t ld;
    int64_t n_all, m_all; /* the format's samples and SNPs */
    int64_t n, m;         /* selected */
    int64_t *rows, *cols; /* selected sample i is the format's rows[i], SNP j cols[j]; NULL: i, j */
    const char *what;     /* names the input in errors */
};

/** A source over any decoder of @p n samples × @p m SNPs (@p what names it in errors; kept, not
 * copied): what the .bed and int8 constructors make, and tests use to watch what is read. */
tg_status tg_geno_source_new(tg_geno_decode_fn decode, const void *ctx, int64_t n, int64_t m,
                             const char *what, tg_geno_source **out, tg_error *err);
#endif
