/* What the libFuzzer harnesses of fuzz/ share (docs/FUZZING.md): one fuzz input holds the
 * several files a reader takes, separated by the line TGF_SEP; each file is written into a
 * folder on tmpfs and the reader is called on its path, as the commands call it. */
#ifndef TG_FUZZ_H
#define TG_FUZZ_H
#include <stddef.h>
#include <stdint.h>

#include "tilegwas.h"

/* Ends each file of a fuzz input but the last ("cat a; echo --tgfuzz--; cat b" makes a seed);
 * the last file takes the rest of the input, separators included. Missing files are empty. */
#define TGF_SEP "--tgfuzz--\n"
enum { TGF_MAX_PARTS = 8 };

typedef struct {
    const uint8_t *p[TGF_MAX_PARTS];
    size_t n[TGF_MAX_PARTS];
} tgf_parts;

/** Splits @p data into @p nparts files. */
void tgf_split(const uint8_t *data, size_t size, int nparts, tgf_parts *out);

/** The harness's folder (made once per process: $TGFUZZ_TMP, else /dev/shm, else /tmp; removed
 * at a normal exit). */
const char *tgf_dir(void);

/** Writes @p n bytes into the folder's file @p name; its path into @p path (PATH_MAX bytes). */
const char *tgf_put(const char *name, const void *p, size_t n, char *path);

/** The contract of every reader, checked after each call: a failure has its status in @p err
 * and a message of one non-empty line; anything else aborts, which libFuzzer reports as a
 * crash with the input that caused it. */
void tgf_check(tg_status st, const tg_error *err);

/** What a command does next with an opened fileset, checked: every ID read, the genotypes
 * decoded (the first 2^22 at most) to codes -1..2, the statistics in range; aborts otherwise. */
void tgf_use_bed(const tg_bed *bed);

/** The column choice of a phenotype or covariate file in file @p k of @p in: a line
 * "name LIST" (--pheno-name) or "col-nums LIST" (--pheno-col-nums) into @p o, with @p buf
 * holding the list; anything else keeps every column. */
void tgf_columns(const tgf_parts *in, int k, tg_pheno_opts *o, char buf[256]);

/** Opens the fileset PREFIX "fs" made of a .fam and a .bim from the input and a .bed of the
 * size they imply (the non-blank lines of each, genotypes a fixed pattern of every code): the
 * fileset that a reader of a file about samples or SNPs checks its IDs against. A pair that
 * tg_bed_open refuses (the bed harness's domain) or over 2^20 genotypes returns non-zero. */
int tgf_fileset(const tgf_parts *in, int fam, int bim, tg_bed *bed);
#endif
