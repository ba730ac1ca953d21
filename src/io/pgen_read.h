/* A C face on pgenlib's .pgen reader (C++), internal to src/io (io/pgen.c is its one user):
 * one file opened once, then one reader per thread, each reading variants by index into
 * pgenlib's 2-bit hard calls. Failures return non-zero with pgenlib's message (without its
 * "Error: " and final newline) in @p msg, which the caller completes with file and variant. */
#ifndef TG_IO_PGEN_READ_H
#define TG_IO_PGEN_READ_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_pgr_file tg_pgr_file;
typedef struct tg_pgr tg_pgr;

enum { TG_PGR_MSG = 256 }; /* room for a message */

/** Opens @p path, a .pgen of @p n_variants variants × @p n_samples samples (what the .pvar
 * and .psam hold; pgenlib checks them against the file). @p allele_ct: alleles of each variant
 * (NULL: every variant has 2), which pgenlib needs to step over multi-allelic records.
 * *dosages is set when the file stores dosages. */
int tg_pgr_file_open(const char *path, uint32_t n_variants, uint32_t n_samples,
                     const uint32_t *allele_ct, tg_pgr_file **out, int *dosages, char *msg);
/** A reader of @p f with its own file handle and buffers. Not thread-safe: create every
 * reader on one thread, then use each on one thread at a time. */
int tg_pgr_new(tg_pgr_file *f, const char *path, tg_pgr **out, char *msg);
/** The hard calls of variant @p vidx, 2 bits a sample (sample 0 in the lowest bits of word 0):
 * 0 homozygous REF, 1 heterozygous, 2 two ALT alleles, 3 missing. The words stay valid until
 * the reader's next call; the bits past the last sample are unspecified. */
int tg_pgr_get(tg_pgr *r, uint32_t vidx, const uint64_t **calls, char *msg);
/** Whether variant @p vidx stores dosages beside its hard calls. */
int tg_pgr_has_dosage(const tg_pgr *r, uint32_t vidx);
void tg_pgr_free(tg_pgr *r);
/** Closes the file; every reader of it must be freed first. */
void tg_pgr_file_close(tg_pgr_file *f);

#ifdef __cplusplus
}
#endif
#endif
