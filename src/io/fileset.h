/* Building a fileset (tg_bed) in memory, for the readers of other formats (.pgen, VCF/BCF) and
 * for the selection and QC filter: the same samples[], snps[] and SNP-major 2-bit genotypes as
 * an opened .bed, so that every workload reads every format through tg_bed_decode. The
 * genotypes live in an anonymous mapping, or, with a temporary folder, in a mapping of an
 * unlinked file there, which the kernel can write back instead of holding in memory (a
 * converted whole-genome VCF may exceed the node's memory). Strings (IDs, alleles) go to a pool
 * the fileset owns; tg_bed_close frees it all. */
#ifndef TG_IO_FILESET_H
#define TG_IO_FILESET_H
#include <stddef.h>
#include <stdint.h>

#include "tilegwas.h"

/** Starts @p b: @p prefix (copied; names the input in messages), @p format ("pgen", "vcf", …),
 * @p n_samples zeroed samples, room for @p snp_cap SNPs (grown by tg_fileset_reserve), no SNP
 * yet. @p tmp_dir NULL: anonymous memory; else an unlinked file in that folder (memory when no
 * file can be made there). On failure @p b is closed and zeroed. */
tg_status tg_fileset_init(tg_bed *b, const char *prefix, const char *format, int64_t n_samples,
                          int64_t snp_cap, const char *tmp_dir, tg_error *err);
/** Makes room for at least @p snps SNPs (samples' bytes and tg_snp entries), growing
 * geometrically; entries beyond n_snps are zeroed. */
tg_status tg_fileset_reserve(tg_bed *b, int64_t snps, tg_error *err);
/** A copy of @p len bytes of @p s (NUL-terminated) in the fileset's pool. */
char *tg_fileset_str(tg_bed *b, const char *s, size_t len, tg_error *err);
/** The writable bytes of SNP @p j (bytes_per_snp of them; j below the reserved room). */
uint8_t *tg_fileset_snp(tg_bed *b, int64_t j);
/** Packs @p n A1 counts (0, 1, 2 or TG_GENO_MISSING) into .bed codes at @p out
 * (ceil(n/4) bytes; the padding codes of the last byte are 0). */
void tg_fileset_pack(const int8_t *g, int64_t n, uint8_t *out);
/** A fileset of @p in's samples rows[0..n) (increasing; NULL: all of them) and SNPs cols[0..m)
 * (any order, repeats allowed; NULL: all of them) built in memory into @p out (@p tmp_dir as
 * for tg_fileset_init): IDs copied, genotypes repacked in parallel over SNPs, by runs of
 * consecutive samples or, when the runs are short, one table lookup per source byte. @p in is
 * unchanged. */
tg_status tg_fileset_subset(const tg_bed *in, const int64_t *rows, int64_t n,
                            const int64_t *cols, int64_t m, const char *tmp_dir, tg_bed *out,
                            tg_error *err);
/** Appends a step of reading, selection or QC to @p rep: @p flag, what it removed, what is
 * left; returns it, or NULL when the report's table is full. */
tg_input_step *tg_input_step_add(tg_input_report *rep, const char *flag, int64_t samples_removed,
                                 int64_t snps_removed, int64_t samples_left, int64_t snps_left);
/** Appends a printf-style note to @p rep (dropped when its table is full). */
void tg_input_note(tg_input_report *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** Frees what tg_fileset_init allocated (called by tg_bed_close). */
void tg_fileset_free(tg_bed *b);
#endif
