/* The files and codes of plink2's sample and variant selection: --keep/--remove sample lists,
 * --extract/--exclude variant ID lists and range files, and chromosome codes (--chr, the
 * ranges' first column), read against an open fileset's samples and SNPs. Each reader marks the
 * entries it names; the caller (geno/filter.c) turns marks into a selection. Files are plain,
 * gzip or zstd (io/lines.h), streamed. */
#ifndef TG_IO_SELECT_H
#define TG_IO_SELECT_H
#include <stdint.h>

#include "tilegwas.h"

/* Human chromosome codes as plink2 numbers them: 1-22, then X, Y, XY (the pseudo-autosomal
 * region) and MT. */
enum { TG_CHR_X = 23, TG_CHR_Y = 24, TG_CHR_XY = 25, TG_CHR_MT = 26 };

/** The human code of @p s (1..26): a number 1-26, X, Y, XY, MT or M, in any case, with or
 * without a "chr" prefix; 0 for any other code (a contig, a non-human chromosome), which is
 * matched as written. */
int tg_chrom_code(const char *s);

/** A --chr selection: human codes, and other codes as written. */
typedef struct {
    uint8_t human[TG_CHR_MT + 1];
    char **names; /* into text, a copy of the argument */
    int nnames, ncodes;
    char *text;
} tg_chr_set;

/** Parses plink2's --chr syntax: comma-separated codes and ranges of human codes ("1-4,22,X").
 * ncodes counts the codes and ranges given (--from-bp needs exactly one). */
tg_status tg_chr_set_parse(tg_chr_set *c, const char *arg, tg_error *err);
int tg_chr_set_has(const tg_chr_set *c, const char *chrom);
void tg_chr_set_free(tg_chr_set *c);

/** Sets hit[i] = 1 for each sample the --keep/--remove file @p path names (plink2's rules:
 * leading '#' lines other than a #FID or #IID header are comments; with "#FID IID" every line
 * starts FID IID; with "#IID" every line starts with an IID; without a header a line of one
 * field is an IID, of two or more FID IID; an IID alone stands for FID "0", as plink2 reads it;
 * columns after the ID are ignored; IDs not in the fileset are ignored). */
tg_status tg_sample_list_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err);

/** The SNPs of a fileset by ID: open addressing, load ≤ 1/2, a repeated ID in several slots. */
typedef struct {
    const tg_bed *bed;
    int64_t *slot; /* -1: empty */
    uint64_t mask;
} tg_snp_index;
tg_status tg_snp_index_build(tg_snp_index *h, const tg_bed *bed, tg_error *err);
/** The SNPs whose ID is @p id, in .bim order: start with *at = UINT64_MAX, call again with the
 * same @p at for the next; -1 when there are no more. */
int64_t tg_snp_index_next(const tg_snp_index *h, const char *id, uint64_t *at);
void tg_snp_index_free(tg_snp_index *h);

/** Sets hit[j] = 1 for each SNP whose ID is one of the whitespace-separated words of @p path
 * (--extract/--exclude; every SNP with that ID when the fileset repeats it). */
tg_status tg_snp_ids_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err);

/** Sets hit[j] = 1 for each SNP inside a range of @p path: lines CHR START END [LABEL ...],
 * positions inclusive ("--extract range", plink2's bed1); '#' lines are comments. A short line,
 * a position that is not a non-negative integer, or END < START is TG_ERR_FORMAT naming the
 * file and line. */
tg_status tg_snp_ranges_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err);
#endif
