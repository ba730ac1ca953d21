/* Shared plumbing of the text readers (.fam, .bim, the value matrix, model folders; phenotype
 * files stream through io/lines.h instead), internal to the library: the FID+IID → sample index hash map (the one implementation, used for .fam duplicate
 * detection and for phenotype row matching), whole-file text reading with in-place line and
 * field splitting (plain or compressed, through io/lines.h's checks; CRLF and blank lines
 * handled), and the parsing and printing of numeric values with PLINK's missing codes. */
#ifndef TG_IDMAP_H
#define TG_IDMAP_H
#include <stddef.h>
#include <stdint.h>

#include "tilegwas.h"

/* ---- FID+IID hash map: open addressing, linear probing, load ≤ 1/2, fixed capacity. It
 * stores indices into a caller-owned sample array whose fid/iid strings must outlive it. */
typedef struct {
    uint64_t hash;
    int64_t idx; /* -1: empty slot */
} tg_idmap_slot;

typedef struct {
    const tg_sample *samples;
    int64_t n; /* the samples it has room for */
    tg_idmap_slot *slots;
    uint64_t mask; /* slot count − 1 (a power of two) */
} tg_idmap;

/** Creates an empty map with room for @p n samples of @p samples (entries are added by
 * tg_idmap_insert_all or tg_idmap_add_lines, once the samples are in the array). */
tg_status tg_idmap_init(tg_idmap *m, const tg_sample *samples, int64_t n, tg_error *err);
/** Adds samples 0 .. n−1 in order, each slot fetched some samples before it is probed (a map of
 * many samples outgrows the caches); stops at the first sample that repeats an earlier one's
 * FID+IID and returns its index (*dup: the earlier one's), or -1. At most the @p n given to
 * tg_idmap_init. */
int64_t tg_idmap_insert_all(tg_idmap *m, int64_t n, int64_t *dup);
/** tg_idmap_insert_all for samples read from lines line_of[i] of the sample file @p path: a
 * repeated FID IID is TG_ERR_FORMAT naming both lines; without one, returns @p later, the
 * status of an error at a later line of the file (its message in @p err), or TG_OK. */
tg_status tg_idmap_add_lines(tg_idmap *m, int64_t n, const int64_t *line_of, const char *path,
                             tg_status later, tg_error *err);
/** PLINK's rule for a phenotype column read from a .fam (or a .psam): when every value that is
 * not missing is 0, 1 or 2 the column is case/control (1 control, 2 case) and 0 is missing. */
void tg_fam_case_control(tg_sample *s, int64_t n);
/** Index of the sample with this FID and IID, or -1. */
int64_t tg_idmap_find(const tg_idmap *m, const char *fid, const char *iid);
/** tg_idmap_find in a map of all its n samples without repeated keys, trying sample @p hint
 * first: rows in the sample list's order, as most phenotype files are, are found there without
 * the map's memory latency. */
int64_t tg_idmap_find_near(const tg_idmap *m, const char *fid, const char *iid, int64_t hint);
void tg_idmap_free(tg_idmap *m);

/* ---- Sample lookup for the files that name samples (phenotypes, covariates, relatives): by
 * FID+IID, or by IID alone (twin[i]: another sample with sample i's IID, or -1, so that an
 * ambiguous IID is refused only where a row uses it). */
typedef struct {
    tg_idmap full, by_iid;
    tg_sample *iid_keys; /* the samples with an empty FID: the keys of by_iid */
    int64_t *twin;
} tg_idlookup;

/** The maps of @p samples (by_iid and twin only with @p iid_only); a sample listed twice is
 * TG_ERR_ARG naming @p path, the file being read. */
tg_status tg_idlookup_init(tg_idlookup *m, const char *path, const tg_sample *samples, int64_t n,
                           int iid_only, tg_error *err);
void tg_idlookup_free(tg_idlookup *m);

/* ---- Whole-file text reading. The file is read into one block; tg_text_next_line() cuts it
 * into lines in place, so the strings found in it stay valid as long as the block does. */
typedef struct {
    const char *path; /* for messages; not owned */
    char *base;       /* malloc'ed block: `front` bytes reserved for the caller, then the text */
    char *text, *cur, *end; /* the text (NUL-terminated at end), the next unread byte */
    int64_t line_no;        /* 1-based number of the line last returned */
} tg_text;

/** Reads all of @p path, plain, gzip or zstd (tg_lines_read_all: "cannot open PATH: reason"
 * when it cannot be opened or read, a regular file only, lines of at most TG_LINE_MAX). */
tg_status tg_text_read(tg_text *t, const char *path, tg_error *err);
/** Non-blank lines from the current position to the end (the text is not modified). */
int64_t tg_text_count_lines(const tg_text *t);
/** Moves the text @p front bytes into its block, so that the block starts with @p front bytes
 * for the caller, who may then take the block over (t->base), keeping the strings and its own
 * array in one allocation. Call before the first tg_text_next_line(). */
tg_status tg_text_reserve_front(tg_text *t, size_t front, tg_error *err);
/** The next line that is not blank (only spaces, tabs, CR), NUL-terminated in place, with
 * t->line_no set to its number in the file; NULL at the end. */
char *tg_text_next_line(tg_text *t);
/** Frees the block unless the caller took it (set t->base to NULL to take it). */
void tg_text_free(tg_text *t);

/** Splits @p line in place at runs of spaces, tabs and CRs. Stores the first @p max fields in
 * @p fields (NUL-terminated) and returns the number of fields on the line, which may be more. */
int tg_text_split(char *line, char **fields, int max);

/** Whether @p s can be written as one field: non-NULL, non-empty, no whitespace. */
int tg_text_is_token(const char *s);

/** Parses a phenotype-style value: a finite decimal number, or a missing code (-9, i.e. any
 * value equal to −9, and NA or NaN in any case), which gives NAN. Returns 0 for anything else
 * (text, trailing junk, infinities). */
int tg_text_parse_value(const char *s, double *v);
/** Parses a whole token as a finite double / a base-10 int64; returns 0 if it is not one. */
int tg_text_parse_double(const char *s, double *v);
int tg_text_parse_int64(const char *s, int64_t *v);
/* tg_text_format_double, which the commands use too, is declared in tilegwas.h. */
#endif
