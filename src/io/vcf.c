/* VCF and BCF genotypes (through htslib) into a fileset built in memory (io/fileset.h), as
 * `plink2 --vcf FILE --vcf-half-call missing --make-bed` would give them: FID "0" (or the part
 * before --id-delim), IID the sample ID; A1 = ALT (the counted allele), A2 = REF; chromosome
 * codes as plink2 writes them (chr1 → 1, 23 → X, chrM → MT); GT hard calls, haploid calls as
 * homozygous, half calls (./1) missing; a record without GT takes hard calls from DS by plink2's
 * --hard-call-threshold 0.1. Multi-allelic records are skipped and counted.
 *
 * The file is streamed into the builder's SNP-major 2-bit mapping (a file beside the outputs with
 * o->tmp_dir): never the whole text in memory. htslib's thread pool decompresses BGZF blocks
 * beside the reading thread, which parses each record's fixed columns; a VCF line with GT is
 * then held, up to a batch of BATCH_RECORDS lines or BATCH_BYTES of text, and the batch's calls
 * are decoded on up to o->threads threads (tg_parallel_for), each packing its own SNPs. A VCF
 * text line is read here (hts_getline) and parsed by htslib's vcf_parse, as bcf_read would, so
 * that the line number, the column count and, on a parse error, the offending sample are known
 * for the message.
 * htslib's log is silenced while reading: the library never prints, and every problem ends as
 * one tg_error naming the file, the line (VCF) or record (BCF), the variant and what was
 * expected. */
#include "io/vcf.h"

#include <errno.h>
#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/hts_log.h>
#include <htslib/kstring.h>
#include <htslib/thread_pool.h>
#include <htslib/vcf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/cpus.h"
#include "base/parallel.h"
#include "io/fileset.h"
#include "io/lines.h"

/* plink2 holds dosages in 1/16384 allele; --hard-call-threshold 0.1 is 16384 / 10 = 1638 of
 * them: a dosage at most that far from 0, 1 or 2 becomes that count, any other is missing. */
enum { DOSAGE_MID = 16384, HARD_CALL_DIST = DOSAGE_MID / 10 };

/* The lines whose GT is decoded in parallel are held until BATCH_RECORDS of them or
 * BATCH_BYTES of text: the memory the reader holds beyond the fileset. */
enum { BATCH_RECORDS = 1024 };
#define BATCH_BYTES ((size_t)64 << 20)

/* A line held for decoding: its copy at text + at, where its FORMAT ends, GT's index, its
 * alleles, its line number and its SNP. */
typedef struct {
    size_t at, l, fmt_end;
    int gi, na;
    int64_t lineno, snp;
} held_line;

typedef struct {
    const tg_input_opts *o;
    const char *path;
    htsFile *fp;
    bcf_hdr_t *hdr;
    bcf1_t *rec;
    hts_tpool *pool;
    int is_bcf, rec_ok;     /* rec_ok: rec holds the current record, unpacked to its alleles */
    kstring_t line;         /* VCF text: the current line (vcf_parse cuts it in place) */
    size_t fmt_at, fmt_end; /* VCF text: the FORMAT column's bytes in line */
    int gi;                 /* VCF text: GT's index among the FORMAT keys (-1: none) */
    int64_t recno;          /* records read, the current one included */
    int64_t lineno;         /* VCF text: the current line's number */
    int na;                 /* the current record's alleles */
    int64_t n;              /* samples */
    int32_t *gt;            /* htslib's GT and DS buffers, reused from record to record */
    int ngt;
    float *ds;
    int nds;
    int8_t *row;            /* one record's A1 counts, packed into the mapping */
    /* the order check: contigs (htslib's rid) already left behind, the current one, its last
     * position and its code in the fileset's pool */
    unsigned char *done;
    int ndone, rid;
    int64_t pos;
    const char *chrom;
    const char *dot; /* "." in the pool: A1 of a record without ALT */
    int64_t multi, ds_only, ds_missing, ds_with_gt, half_calls, haploid_calls;
    /* VCF text with GT: the lines held for decode_gt_text on nrows threads, one row each */
    char *text;
    size_t ntext, captext;
    held_line *held;
    int nheld, nrows;
    int8_t **rows;
} reader;

/* "FILE line L (variant CHR:POS ID)", or "FILE record R (...)" in a BCF. A VCF line's first
 * fields are read from the text, tab- or NUL-separated (vcf_parse cuts them), so that a line
 * htslib refused is named too. */
static const char *where(const reader *r, char *buf, size_t len) {
    if (r->is_bcf) {
        int k = snprintf(buf, len, "%s record %lld", r->path, (long long)r->recno);
        if (r->rec_ok && k > 0 && (size_t)k < len)
            snprintf(buf + k, len - (size_t)k, " (variant %s:%lld %s)",
                     TG_ESC(bcf_seqname_safe(r->hdr, r->rec)), (long long)r->rec->pos + 1,
                     TG_ESC(r->rec->d.id));
        return buf;
    }
    const char *s = r->line.s, *f[3];
    size_t l = r->line.l, i = 0;
    int fl[3];
    for (int k = 0; k < 3; k++) {
        size_t a = i;
        while (i < l && s[i] != '\t' && s[i]) i++;
        f[k] = s + a;
        fl[k] = (int)(i - a < 64 ? i - a : 64);
        if (i < l) i++;
    }
    snprintf(buf, len, "%s line %lld (variant %.*s:%.*s %.*s)", r->path, (long long)r->lineno,
             fl[0], f[0], fl[1], f[1], fl[2], f[2]);
    return buf;
}

/* plink2's chromosome code for a contig name: "chr" (any case) dropped before a known code,
 * 1-22, X, Y, XY, MT, M → MT, 23-26 → X, Y, XY, MT; any other name as it is (plink2 takes
 * those with --allow-extra-chr). */
static const char *chrom_code(const char *name, char *buf, size_t len) {
    static const char *const named[] = {"X", "Y", "XY", "MT"};
    const char *c = strncasecmp(name, "chr", 3) == 0 ? name + 3 : name;
    char *end = NULL;
    long v = c[0] >= '1' && c[0] <= '9' ? strtol(c, &end, 10) : 0;
    if (v >= 1 && v <= 22 && !*end) {
        snprintf(buf, len, "%ld", v);
        return buf;
    }
    if (v >= 23 && v <= 26 && !*end) return named[v - 23];
    for (int k = 0; k < 4; k++)
        if (strcasecmp(c, named[k]) == 0) return named[k];
    return strcasecmp(c, "M") == 0 ? "MT" : name;
}

/* ---------------------------------------------------------------------------------------- */
/* Opening: the format, the BGZF end-of-file block, the header */

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What is wrong with a #CHROM line @p s that htslib refused (the columns, or a sample ID). */
static tg_status check_chrom_line(kstring_t *s, const char *path, long long ln, tg_error *err) {
    static const char fixed[] = "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO";
    const size_t nf = sizeof fixed - 1;
    if (strncmp(s->s, fixed, nf) != 0 || (s->s[nf] && strncmp(s->s + nf, "\tFORMAT\t", 8) != 0))
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: the header line must be #CHROM "
                            "POS ID REF ALT QUAL FILTER INFO FORMAT and the sample IDs, separated "
                            "by tabs", path, ln);
    int n = 0, *off = ksplit(s, '\t', &n);
    char **ids = n > 9 ? tg_malloc_n(n - 9, 1, sizeof *ids, NULL) : NULL;
    tg_status st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: malformed #CHROM line", path,
                                ln);
    for (int i = 9; ids && i < n; i++) ids[i - 9] = s->s + off[i];
    if (ids) qsort(ids, (size_t)(n - 9), sizeof *ids, cmp_str);
    for (int i = 0; ids && i < n - 9; i++) {
        if (!ids[i][0] || strspn(ids[i], " ") == strlen(ids[i])) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: an empty sample ID in the "
                              "#CHROM line (a tab too many?)", path, ln);
            break;
        }
        if (i && strcmp(ids[i - 1], ids[i]) == 0) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: duplicate sample ID '%s' in "
                              "the #CHROM line", path, ln, TG_ESC(ids[i]));
            break;
        }
    }
    free(ids);
    free(off);
    return st;
}

/* After htslib refused a VCF header: reads the text again to say what is wrong (no #CHROM
 * line, a record before it, its columns, an empty or duplicate sample ID). */
static tg_status diagnose_header(const char *path, tg_error *err) {
    htsFile *fp = hts_open(path, "r");
    kstring_t s = KS_INITIALIZE;
    tg_status st = TG_ERR_FORMAT;
    int ret = -1;
    while (fp && (ret = hts_getline(fp, '\n', &s)) >= 0) {
        if (s.l == 0 || strncmp(s.s, "##", 2) == 0) continue;
        if (s.s[0] == '#') {
            st = check_chrom_line(&s, path, (long long)fp->lineno, err);
        } else {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: a record before the #CHROM "
                              "header line (expected #CHROM POS ID REF ALT QUAL FILTER INFO "
                              "FORMAT and the sample IDs, tab-separated)", path,
                              (long long)fp->lineno);
        }
        goto cleanup;
    }
    if (fp && ret == -1)
        tg_error_set(err, st, "%s: no #CHROM header line (the file ends at line %lld; expected "
                     "#CHROM POS ID REF ALT QUAL FILTER INFO FORMAT and the sample IDs)", path,
                     (long long)fp->lineno - 1);
    else
        tg_error_set(err, st, "%s: cannot read the VCF header: the file is truncated or corrupt",
                     path);
cleanup:
    free(s.s);
    if (fp) hts_close(fp);
    return st;
}

/* The threads o->threads asks for: 0 is the CPUs this process may use. */
static int input_threads(const tg_input_opts *o) {
    if (o->threads >= 1) return o->threads;
    tg_cpus c;
    tg_cpus_get(&c);
    return c.usable > 0 ? c.usable : 1;
}

static tg_status open_input(reader *r, tg_error *err) {
    const char *name[] = {"VCF", "BCF"}, *flag[] = {"--vcf", "--bcf"};
    tg_status st = tg_file_check(r->path, err); /* htslib would block on a FIFO */
    if (st) return st;
    if (!(r->fp = hts_open(r->path, "r")))
        return errno == ENOEXEC /* htslib's "unknown format" */
                   ? tg_error_set(err, TG_ERR_FORMAT, "%s is not a VCF or BCF file (htslib "
                                  "does not know its format)", r->path)
                   : tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", r->path, strerror(errno));
    const htsFormat *f = hts_get_format(r->fp);
    if (f->format == empty_format)
        return tg_error_set(err, TG_ERR_FORMAT, "%s is empty: expected a %s file", r->path,
                            name[r->o->format == TG_INPUT_BCF]);
    if (f->format != vcf && f->format != bcf) {
        char *d = hts_format_description(f);
        tg_error_set(err, TG_ERR_FORMAT, "%s is not a VCF or BCF file (htslib reads it as %s; a "
                     "VCF starts with the line ##fileformat=VCFv4.x)", r->path, d ? d : "unknown");
        free(d);
        return TG_ERR_FORMAT;
    }
    r->is_bcf = f->format == bcf;
    if (r->is_bcf != (r->o->format == TG_INPUT_BCF))
        return tg_error_set(err, TG_ERR_FORMAT, "%s is a %s file: read it with %s, not %s",
                            r->path, name[r->is_bcf], flag[r->is_bcf], flag[!r->is_bcf]);
    if (f->compression != no_compression && f->compression != gzip && f->compression != bgzf)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: compressed in a way htslib does not read "
                            "(expected bgzip, gzip or none)", r->path);
    /* htslib only warns when a BGZF file lacks its end-of-file block: a cut copy would read as a
     * shorter file, so it is refused here, before anything is read */
    if (f->compression == bgzf && bgzf_check_EOF(r->fp->fp.bgzf) == 0)
        return tg_error_set(err, TG_ERR_FORMAT, "%s is truncated: its bgzip stream has no "
                            "end-of-file block (copy or compress it again)", r->path);
    const int threads = input_threads(r->o);
    if (f->compression != bgzf || threads == 1) return TG_OK; /* one thread: htslib's own read */
    htsThreadPool tp = {.pool = r->pool = hts_tpool_init(threads)};
    if (!r->pool || hts_set_opt(r->fp, HTS_OPT_THREAD_POOL, &tp) != 0)
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot start %d decompression threads",
                            r->path, threads);
    return TG_OK;
}

/* A BCF starts with "BCF\2\2" and its header text's length, which htslib allocates before
 * reading the text: a damaged file of a few bytes could make it take gigabytes (found by
 * fuzzing). The length is checked first against what the file can hold: its size, times
 * deflate's largest ratio (1032) when compressed. */
static tg_status check_bcf_header(const reader *r, tg_error *err) {
    struct stat sb;
    unsigned char h[9];
    BGZF *z = bgzf_open(r->path, "r");
    const int got = z ? (int)bgzf_read(z, h, sizeof h) : -1, packed = z && z->is_compressed;
    if (z) bgzf_close(z);
    if (got != (int)sizeof h || stat(r->path, &sb)) return TG_OK; /* bcf_hdr_read says why */
    const uint64_t len = h[5] | (uint64_t)h[6] << 8 | (uint64_t)h[7] << 16 | (uint64_t)h[8] << 24,
                   room = (uint64_t)sb.st_size * (packed ? 1032 : 1);
    if (len > room)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: its BCF header claims %llu bytes, more than "
                            "the file's %lld bytes can hold: the file is damaged", r->path,
                            (unsigned long long)len, (long long)sb.st_size);
    return TG_OK;
}

static tg_status read_header(reader *r, tg_error *err) {
    tg_status st;
    if (r->is_bcf && (st = check_bcf_header(r, err))) return st;
    if (!(r->hdr = bcf_hdr_read(r->fp)))
        return r->is_bcf ? tg_error_set(err, TG_ERR_FORMAT, "%s: malformed or truncated BCF "
                                        "header", r->path)
                         : diagnose_header(r->path, err);
    if ((r->n = bcf_hdr_nsamples(r->hdr)) == 0)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: no samples (the #CHROM header line has no "
                            "FORMAT column and sample IDs): no genotypes to read", r->path);
    if (!(r->rec = bcf_init()))
        return tg_error_set(err, TG_ERR_NOMEM, "%s: cannot allocate a record", r->path);
    return TG_OK;
}

/* Samples as plink2 imports them: FID "0" and IID the ID, or FID and IID split at the first
 * o->id_delim (an ID without it is an error, as in plink2); father and mother "0", sex 0,
 * phenotype missing. htslib has already refused duplicate IDs; a split at the first delimiter
 * keeps distinct IDs distinct. */
static tg_status add_samples(reader *r, tg_bed *bed, tg_error *err) {
    const char d = r->o->id_delim;
    char *zero = tg_fileset_str(bed, "0", 1, err);
    if (!zero || !(r->dot = tg_fileset_str(bed, ".", 1, err))) return TG_ERR_NOMEM;
    for (int64_t i = 0; i < r->n; i++) {
        const char *id = r->hdr->samples[i], *c = d ? strchr(id, d) : NULL;
        tg_sample *s = &bed->samples[i];
        *s = (tg_sample){.fid = zero, .father = zero, .mother = zero, .pheno = NAN};
        /* htslib 1.16 keeps the tabs and line breaks after an empty sample ID in the next */
        if (strpbrk(id, "\t\r\n"))
            return tg_error_set(err, TG_ERR_FORMAT, "%s: sample ID %lld of the #CHROM line is "
                                "empty or holds a tab or a line break (IDs are separated by "
                                "single tabs)", r->path, (long long)i + 1);
        if (strchr(id, ' '))
            return tg_error_set(err, TG_ERR_FORMAT, "%s: sample ID '%s' contains a space, "
                                "which PLINK IDs cannot hold (plink2 refuses it too)", r->path,
                                TG_ESC(id));
        if (d && (!c || c == id || !c[1]))
            return tg_error_set(err, TG_ERR_FORMAT, "%s: sample ID '%s' is not FID%cIID "
                                "(--id-delim '%c': a non-empty FID and IID on either side of "
                                "the first '%c')", r->path, TG_ESC(id), d, d, d);
        if (c && !(s->fid = tg_fileset_str(bed, id, (size_t)(c - id), err))) return TG_ERR_NOMEM;
        if (c) id = c + 1;
        if (!(s->iid = tg_fileset_str(bed, id, strlen(id), err))) return TG_ERR_NOMEM;
    }
    return TG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Records */

/* Tab bytes in p[0..len), a word at a time: a byte is zero in x = w ^ tabs exactly when the
 * high bit of ((x & 0x7f..) + 0x7f..) | x is clear (no carry crosses a byte); the flags are
 * summed by a multiply (a popcount would be a libgcc call without -mpopcnt). */
static int64_t count_tabs(const char *p, size_t len) {
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL, tabs = 0x0909090909090909ULL;
    int64_t c = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t x = w ^ tabs, z = ~(((x & lo7) + lo7) | x) & ~lo7;
        c += (int64_t)(((z >> 7) * 0x0101010101010101ULL) >> 56); /* the bytes' sum, ≤ 8 */
    }
    for (; i < len; i++) c += p[i] == '\t';
    return c;
}

/* Columns of the current VCF line; notes where its FORMAT column lies. */
static int64_t count_columns(reader *r) {
    const char *s = r->line.s, *p = s, *end = s + r->line.l;
    int64_t cols = 1;
    r->fmt_at = r->fmt_end = r->line.l;
    for (; cols <= 9 && (p = memchr(p, '\t', (size_t)(end - p))); p++, cols++) {
        if (cols == 8) r->fmt_at = (size_t)(p + 1 - s);
        if (cols == 9) r->fmt_end = (size_t)(p - s);
    }
    return cols <= 9 ? cols : cols + count_tabs(p, (size_t)(end - p));
}

/* The index of FORMAT key @p key (2 letters) in the current VCF line, or -1. */
static int format_key(const reader *r, const char *key) {
    const char *s = r->line.s;
    for (size_t i = r->fmt_at, a = i, k = 0; i <= r->fmt_end; i++)
        if (i == r->fmt_end || s[i] == ':') {
            if (i - a == 2 && memcmp(s + a, key, 2) == 0) return (int)k;
            k++, a = i + 1;
        }
    return -1;
}

/* After vcf_parse refused the current line (its fixed columns, or the FORMAT fields of a line
 * without GT), what htslib's error code says. */
static tg_status parse_error(reader *r, tg_error *err) {
    char w[320];
    int e = r->rec->errcode;
    const char *what =
        e & BCF_ERR_NCOLS ? "a sample column with more fields than FORMAT lists"
        : e & BCF_ERR_CHAR ? "a FORMAT value with a character that does not belong there (text "
                             "in a number?)"
        : e & BCF_ERR_LIMITS ? "a value beyond htslib's limits (too many alleles or FORMAT "
                               "fields, or over 2 GB of FORMAT data)"
        : e & (BCF_ERR_TAG_INVALID | BCF_ERR_CTG_INVALID) ? "an invalid FORMAT tag or contig name"
                                                           : "a value htslib cannot parse";
    return tg_error_set(err, TG_ERR_FORMAT, "%s: malformed record: %s", where(r, w, sizeof w),
                        what);
}

/* Reads and parses the next VCF line; *got is 0 at the end of the file. */
static tg_status next_line(reader *r, int *got, tg_error *err) {
    char w[320];
    int ret;
    while ((ret = hts_getline(r->fp, '\n', &r->line)) == 0) {} /* blank lines */
    if (ret == -1) return TG_OK;
    /* htslib 1.16 returns the text before a damaged compressed block as a (short) line */
    if (ret < -1 || (r->fp->is_bgzf && r->fp->fp.bgzf->errcode))
        return tg_error_set(err, TG_ERR_FORMAT, "%s: cannot read past line %lld: the file is "
                            "truncated or corrupt", r->path, (long long)r->fp->lineno - 1);
    r->recno++;
    r->lineno = r->fp->lineno;
    int64_t cols = count_columns(r);
    if (cols != 9 + r->n)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: %lld columns, expected %lld (CHROM POS ID "
                            "REF ALT QUAL FILTER INFO FORMAT and the %lld samples of the header, "
                            "tab-separated)", where(r, w, sizeof w), (long long)cols,
                            (long long)(9 + r->n), (long long)r->n);
    /* htslib reads "12x" or "x" as a position without complaint */
    const char *p = memchr(r->line.s, '\t', r->line.l) + 1;
    size_t np = strspn(p, "0123456789");
    if (np == 0 || p[np] != '\t' || strtoll(p, NULL, 10) < 1)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: POS is not a positive integer",
                            where(r, w, sizeof w));
    /* with GT, htslib parses the fixed columns only and decode_gt_text the GT fields: the
     * FORMAT fields of every sample are most of the text, and most of htslib's time */
    r->gi = format_key(r, "GT");
    r->rec->max_unpack = r->gi >= 0 ? BCF_UN_STR : 0;
    if (vcf_parse(&r->line, r->hdr, r->rec) < 0) return parse_error(r, err);
    *got = 1;
    return TG_OK;
}

/* Reads the next record (VCF line or BCF record) and unpacks its ID and alleles. */
static tg_status next_record(reader *r, int *got, tg_error *err) {
    char w[320];
    tg_status st;
    *got = 0;
    r->rec_ok = 0;
    if (!r->is_bcf) {
        if ((st = next_line(r, got, err)) || !*got) return st;
    } else {
        int ret = bcf_read(r->fp, r->hdr, r->rec);
        if (ret == -1) return TG_OK;
        r->recno++;
        if (ret < -1)
            return tg_error_set(err, TG_ERR_FORMAT, "%s: malformed or truncated BCF record",
                                where(r, w, sizeof w));
        *got = 1;
    }
    if (bcf_unpack(r->rec, BCF_UN_STR) != 0 || r->rec->n_allele < 1)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: malformed record (no REF allele)",
                            where(r, w, sizeof w));
    r->rec_ok = 1;
    r->na = r->rec->n_allele;
    if (r->is_bcf && r->rec->n_sample != r->n)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: %d samples, the header has %lld",
                            where(r, w, sizeof w), (int)r->rec->n_sample, (long long)r->n);
    return TG_OK;
}

/* Records must come sorted, as plink2 keeps them: each chromosome in one block, positions not
 * decreasing within it. Sets r->chrom to the record's chromosome code. */
static tg_status check_order(reader *r, tg_bed *bed, tg_error *err) {
    char w[320], code[24];
    const int rid = r->rec->rid;
    const int64_t pos = r->rec->pos;
    if (rid == r->rid) {
        if (pos < r->pos)
            return tg_error_set(err, TG_ERR_FORMAT, "%s: position %lld comes after %lld on the "
                                "same chromosome: the file is not sorted (sort it first: bcftools "
                                "sort, or plink2 --make-pgen --sort-vars)", where(r, w, sizeof w),
                                (long long)pos + 1, (long long)r->pos + 1);
        r->pos = pos;
        return TG_OK;
    }
    if (rid < 0 || rid >= r->hdr->n[BCF_DT_CTG])
        return tg_error_set(err, TG_ERR_FORMAT, "%s: contig number %d is not in the header",
                            where(r, w, sizeof w), rid);
    if (rid >= r->ndone) {
        int nd = rid + 1 > 2 * r->ndone ? rid + 1 : 2 * r->ndone;
        unsigned char *d = realloc(r->done, (size_t)nd);
        if (!d) return tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", r->path);
        memset(d + r->ndone, 0, (size_t)(nd - r->ndone));
        r->done = d;
        r->ndone = nd;
    }
    if (r->done[rid])
        return tg_error_set(err, TG_ERR_FORMAT, "%s: chromosome %s comes again after %s: "
                            "the file is not sorted (plink2 refuses a split chromosome too; sort "
                            "it first: bcftools sort)", where(r, w, sizeof w),
                            TG_ESC(bcf_seqname(r->hdr, r->rec)),
                            TG_ESC(bcf_hdr_id2name(r->hdr, r->rid)));
    if (r->rid >= 0) r->done[r->rid] = 1;
    const char *c = chrom_code(bcf_seqname(r->hdr, r->rec), code, sizeof code);
    if (!(r->chrom = tg_fileset_str(bed, c, strlen(c), err))) return TG_ERR_NOMEM;
    r->rid = rid;
    r->pos = pos;
    return TG_OK;
}

/* Sample @p i's call of @p np alleles a[] (allele numbers, -1 missing) into r->row: ALT alleles
 * of a diploid call; a haploid call counts as homozygous (0 or 2), as plink2 imports it; a call
 * with an allele missing, or none, is missing. */
static tg_status store_call(reader *r, int64_t i, const int *a, int np, tg_error *err) {
    char w[320];
    const int na = r->na;
    if (np > 2)
        return tg_error_set(err, TG_ERR_FORMAT, "%s, sample '%s': a GT of %d alleles: only "
                            "haploid and diploid calls are read", where(r, w, sizeof w),
                            TG_ESC(r->hdr->samples[i]), np);
    for (int k = 0; k < np; k++)
        if (a[k] >= na)
            return tg_error_set(err, TG_ERR_FORMAT, "%s, sample '%s': GT allele %d, but the "
                                "record has %d allele%s (REF%s)", where(r, w, sizeof w),
                                TG_ESC(r->hdr->samples[i]), a[k], na, na == 1 ? "" : "s",
                                na == 1 ? " only" : " and one ALT");
    int8_t v = TG_GENO_MISSING;
    if (np == 1 && a[0] >= 0) {
        v = (int8_t)(a[0] ? 2 : 0);
        r->haploid_calls++;
    } else if (np == 2 && a[0] >= 0 && a[1] >= 0) {
        v = (int8_t)((a[0] != 0) + (a[1] != 0));
    } else if (np == 2) {
        r->half_calls += (a[0] < 0) != (a[1] < 0);
    }
    r->row[i] = v;
    return TG_OK;
}

/* The stored type of FORMAT field @p tag: htslib 1.16 calls exit() on a type it does not know
 * (a damaged BCF; found by fuzzing), so it is checked before htslib reads the values. */
static tg_status check_fmt_type(const reader *r, const char *tag, tg_error *err) {
    char w[320];
    const bcf_fmt_t *f = bcf_get_fmt(r->hdr, r->rec, tag);
    if (!f || f->type == BCF_BT_INT8 || f->type == BCF_BT_INT16 || f->type == BCF_BT_INT32 ||
        f->type == BCF_BT_FLOAT)
        return TG_OK;
    return tg_error_set(err, TG_ERR_FORMAT, "%s: malformed record: %s values of unknown type %d",
                        where(r, w, sizeof w), tag, f->type);
}

/* GT hard calls of a BCF record, or of a VCF line htslib parsed whole, from htslib's vector. */
static tg_status decode_gt(reader *r, tg_error *err) {
    tg_status st = check_fmt_type(r, "GT", err);
    if (st) return st;
    int k = bcf_get_genotypes(r->hdr, r->rec, &r->gt, &r->ngt);
    const int ploidy = k > 0 ? k / (int)r->n : 0;
    for (int64_t i = 0; i < r->n && !st; i++) {
        const int32_t *g = r->gt + i * ploidy;
        int a[3], np = 0;
        for (; np < ploidy && np < 3 && g[np] != bcf_int32_vector_end; np++)
            a[np] = bcf_gt_is_missing(g[np]) ? -1 : bcf_gt_allele(g[np]);
        st = store_call(r, i, a, np, err);
    }
    return st;
}

/* GT hard calls of a VCF line from its text, GT being FORMAT field r->gi: each sample's column
 * is read up to its GT and the rest skipped. Allele numbers or '.', separated by '/' or '|'. */
static tg_status decode_gt_text(reader *r, tg_error *err) {
    char w[320];
    const char *p = r->line.s + r->fmt_end + 1, *end = r->line.s + r->line.l;
    tg_status st = TG_OK;
    const int fast = r->gi == 0 && r->na == 2;
    for (int64_t i = 0; i < r->n && !st; i++) {
        /* the common call first: GT leading the column, "a/b" or "a|b" with a, b in {0, 1} */
        if (fast && ((p[0] | 1) == '1') && (p[1] == '/' || p[1] == '|') && ((p[2] | 1) == '1') &&
            (p[3] == '\t' || p[3] == ':' || p + 3 == end)) {
            r->row[i] = (int8_t)(p[0] + p[2] - 2 * '0');
            p += 3;
            if (p < end && *p != '\t') p = memchr(p, '\t', (size_t)(end - p));
            p = p ? p + 1 : end;
            continue;
        }
        int k = 0, a[3], np = 0;
        for (; k < r->gi && p < end && *p != '\t'; p++) k += *p == ':';
        const char *g = p;
        for (; k == r->gi && np < 3; p++) { /* GT left out at the end of the column: missing */
            if (*p == '.') {
                a[np++] = -1, p++;
            } else if (*p >= '0' && *p <= '9') {
                int x = 0;
                for (; *p >= '0' && *p <= '9'; p++) x = x < 1000000 ? 10 * x + (*p - '0') : x;
                a[np++] = x;
            } else {
                np = -1;
                break;
            }
            if (*p != '/' && *p != '|') break;
        }
        if (np < 0 || (np < 3 && p < end && *p != ':' && *p != '\t')) {
            size_t len = strcspn(g, ":\t");
            return tg_error_set(err, TG_ERR_FORMAT, "%s, sample '%s': GT '%.*s' is not a "
                                "genotype (allele numbers or '.', separated by '/' or '|')",
                                where(r, w, sizeof w), TG_ESC(r->hdr->samples[i]),
                                (int)(len < 32 ? len : 32), g);
        }
        st = store_call(r, i, a, np, err);
        if (p < end && *p != '\t') p = memchr(p, '\t', (size_t)(end - p));
        p = p ? p + 1 : end;
    }
    return st;
}

/* A record without GT: hard calls from DS (ALT dosage in [0, 2]) by plink2's rule, in its
 * 1/16384 units: the nearest count when at most HARD_CALL_DIST away, else missing. */
static tg_status decode_ds(reader *r, tg_error *err) {
    char w[320];
    tg_status st = check_fmt_type(r, "DS", err);
    if (st) return st;
    int k = bcf_get_format_float(r->hdr, r->rec, "DS", &r->ds, &r->nds);
    if (k == -2)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: no GT, and DS is not declared as a number "
                            "(##FORMAT=<ID=DS,Number=1,Type=Float,...>)", where(r, w, sizeof w));
    if (k < (int)r->n)
        return tg_error_set(err, TG_ERR_FORMAT, "%s: no GT or DS FORMAT field: no genotypes to "
                            "read", where(r, w, sizeof w));
    const int per = k / (int)r->n;
    for (int64_t i = 0; i < r->n; i++) {
        const float f = r->ds[i * per];
        int8_t v = TG_GENO_MISSING;
        if (!bcf_float_is_missing(f) && !bcf_float_is_vector_end(f)) {
            if (!(f >= 0 && f <= 2))
                return tg_error_set(err, TG_ERR_FORMAT, "%s, sample '%s': DS %g outside "
                                    "[0, 2]", where(r, w, sizeof w), TG_ESC(r->hdr->samples[i]),
                                    f);
            int d = (int)((double)f * DOSAGE_MID + 0.5), rem = d % DOSAGE_MID;
            if (rem <= HARD_CALL_DIST || DOSAGE_MID - rem <= HARD_CALL_DIST)
                v = (int8_t)((d + DOSAGE_MID / 2) / DOSAGE_MID);
        }
        r->ds_missing += v == TG_GENO_MISSING;
        r->row[i] = v;
    }
    r->ds_only++;
    return TG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Held lines: GT decoded from the text on several threads, each writing its own SNPs' bytes */

/* Holds the current VCF line for SNP @p snp: copied (htslib reuses its buffer) with its NUL,
 * which decode_gt_text's scans stop at. */
static tg_status hold_line(reader *r, int64_t snp, tg_error *err) {
    const size_t need = r->ntext + r->line.l + 1;
    if (need > r->captext) {
        /* doubling, but past BATCH_BYTES only as far as the line needs */
        size_t cap = 2 * r->captext < BATCH_BYTES ? 2 * r->captext : BATCH_BYTES;
        if (cap < need) cap = need;
        char *t = realloc(r->text, cap);
        if (!t) return tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", r->path);
        r->text = t;
        r->captext = cap;
    }
    memcpy(r->text + r->ntext, r->line.s, r->line.l + 1);
    r->held[r->nheld++] = (held_line){.at = r->ntext, .l = r->line.l, .fmt_end = r->fmt_end,
                                      .gi = r->gi, .na = r->na, .lineno = r->lineno, .snp = snp};
    r->ntext = need;
    return TG_OK;
}

/* The reader as decode_gt_text sees held line @p h: its text, number and alleles, row @p row
 * and counts of its own. */
static reader held_view(const reader *r, const held_line *h, int8_t *row) {
    reader v = *r;
    v.line = (kstring_t){.l = h->l, .m = h->l, .s = r->text + h->at};
    v.fmt_end = h->fmt_end;
    v.gi = h->gi;
    v.na = h->na;
    v.lineno = h->lineno;
    v.row = row;
    v.half_calls = v.haploid_calls = 0;
    return v;
}

typedef struct {
    const reader *r;
    tg_bed *bed;
    int nc;          /* chunks, one row each */
    int64_t *counts; /* per chunk: half calls, haploid calls */
    int first;       /* the first held line that failed (nheld: none) */
} decode_job;

/* Chunk @p c of the held lines: decoded and packed into their SNPs; a failure is only noted
 * (the message is made on the reading thread, for the first failing line in file order). */
static void decode_chunk(void *ctx, int64_t c) {
    decode_job *J = ctx;
    const reader *r = J->r;
    const int a = (int)(c * r->nheld / J->nc), b = (int)((c + 1) * r->nheld / J->nc);
    for (int k = a; k < b; k++) {
        reader v = held_view(r, &r->held[k], r->rows[c]);
        if (decode_gt_text(&v, NULL)) {
            int f = __atomic_load_n(&J->first, __ATOMIC_RELAXED);
            while (k < f && !__atomic_compare_exchange_n(&J->first, &f, k, 0, __ATOMIC_RELAXED,
                                                         __ATOMIC_RELAXED)) {}
            return;
        }
        tg_fileset_pack(v.row, r->n, tg_fileset_snp(J->bed, r->held[k].snp));
        J->counts[2 * c] += v.half_calls;
        J->counts[2 * c + 1] += v.haploid_calls;
    }
}

/* Decodes the held lines (their SNPs are reserved and named) and empties the batch; on an
 * error, the first failing line's message. */
static tg_status decode_held(reader *r, tg_bed *bed, tg_error *err) {
    int64_t counts[2 * r->nrows];
    memset(counts, 0, sizeof counts);
    decode_job J = {.r = r, .bed = bed, .nc = r->nheld < r->nrows ? r->nheld : r->nrows,
                    .counts = counts, .first = r->nheld};
    tg_parallel_for(J.nc, decode_chunk, &J);
    tg_status st = TG_OK;
    if (J.first < r->nheld) {
        reader v = held_view(r, &r->held[J.first], r->rows[0]);
        st = decode_gt_text(&v, err);
    }
    for (int c = 0; c < J.nc; c++) {
        r->half_calls += counts[2 * c];
        r->haploid_calls += counts[2 * c + 1];
    }
    r->nheld = 0;
    r->ntext = 0;
    return st;
}

/* Checks the current record's place, then adds it as the next SNP (or counts it skipped). A
 * VCF line with GT is held, its calls decoded with the batch. */
static tg_status add_record(reader *r, tg_bed *bed, tg_error *err) {
    tg_status st = check_order(r, bed, err);
    if (st) return st;
    bcf1_t *v = r->rec;
    if (v->n_allele > 2) {
        r->multi++;
        return TG_OK;
    }
    const int held = !r->is_bcf && r->gi >= 0;
    if (held) {
        r->ds_with_gt += format_key(r, "DS") >= 0;
    } else if (bcf_get_fmt(r->hdr, v, "GT")) {
        st = decode_gt(r, err);
        r->ds_with_gt += bcf_get_fmt(r->hdr, v, "DS") != NULL;
    } else {
        st = decode_ds(r, err);
    }
    if (st || (st = tg_fileset_reserve(bed, bed->n_snps + 1, err)) ||
        (held && (st = hold_line(r, bed->n_snps, err))))
        return st;
    tg_snp *s = &bed->snps[bed->n_snps];
    const char *id = v->d.id, *ref = v->d.allele[0], *alt = v->n_allele > 1 ? v->d.allele[1] : ".";
    *s = (tg_snp){.chrom = (char *)r->chrom, .pos = v->pos + 1, .a1 = (char *)r->dot};
    if (!(s->id = tg_fileset_str(bed, id, strlen(id), err)) ||
        !(s->a2 = tg_fileset_str(bed, ref, strlen(ref), err)) ||
        (v->n_allele > 1 && !(s->a1 = tg_fileset_str(bed, alt, strlen(alt), err))))
        return TG_ERR_NOMEM;
    if (!held) tg_fileset_pack(r->row, r->n, tg_fileset_snp(bed, bed->n_snps));
    bed->n_snps++;
    return r->nheld == BATCH_RECORDS || r->ntext >= BATCH_BYTES ? decode_held(r, bed, err) : TG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The reader */

/* What the log says about the reading: the skipped multi-allelic records (a step), the DS
 * hard calls, the DS left aside, the half and haploid calls. */
static void report(const reader *r, const tg_bed *bed, tg_input_report *rep) {
    const char *flag = r->is_bcf ? "--bcf" : "--vcf";
#define S(x) (long long)(x), (x) == 1 ? "" : "s"
    if (r->multi) {
        tg_input_step_add(rep, "multi-allelic", 0, r->multi, bed->n_samples, bed->n_snps);
        tg_input_note(rep,
                      "%s: %lld multi-allelic record%s skipped (biallelic variants only): "
                      "split them first with bcftools norm -m-, or drop them as plink2 "
                      "--max-alleles 2 does",
                      flag, S(r->multi));
    }
    if (r->ds_only)
        tg_input_note(rep,
                      "%s: %lld variant%s without GT: hard calls from DS as plink2's "
                      "--hard-call-threshold 0.1 makes them (%lld call%s more than 0.1 from 0, 1 "
                      "or 2 left missing)", flag, S(r->ds_only), S(r->ds_missing));
    if (r->ds_with_gt)
        tg_input_note(rep,
                      "%s: %lld variant%s with both GT and DS: GT read, DS ignored (as plink2 "
                      "without dosage=DS)", flag, S(r->ds_with_gt));
    if (r->half_calls)
        tg_input_note(rep,
                      "%s: %lld half call%s (./1) read as missing (plink2 --vcf-half-call "
                      "missing; plink2 refuses them by default)", flag, S(r->half_calls));
    if (r->haploid_calls)
        tg_input_note(rep,
                      "%s: %lld haploid call%s counted as homozygous (0 or 2 ALT alleles), as "
                      "plink2 imports them", flag, S(r->haploid_calls));
#undef S
}

tg_status tg_vcf_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err) {
    reader r = {.o = o, .path = o->path, .rid = -1};
    tg_input_report own = {0};
    const enum htsLogLevel level = hts_get_log_level();
    hts_set_log_level(HTS_LOG_OFF); /* errors come back as tg_error, never printed */
    memset(bed, 0, sizeof *bed);
    tg_status st;
    if ((st = open_input(&r, err)) || (st = read_header(&r, err)) ||
        (st = tg_fileset_init(bed, o->path, r.is_bcf ? "bcf" : "vcf", r.n, 4096, o->tmp_dir,
                              err)) ||
        (st = add_samples(&r, bed, err)))
        goto cleanup;
    /* one row per decoding thread, at most as many as the pool has */
    const int nt = input_threads(o), np = tg_parallel_threads();
    r.nrows = nt < np ? nt : np;
    if (!(r.row = tg_malloc_n(r.n, 1, 1, err)) ||
        !(r.held = tg_malloc(BATCH_RECORDS * sizeof *r.held, err)) ||
        !(r.rows = tg_calloc_n(r.nrows, 1, sizeof *r.rows, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    for (int c = 0; c < r.nrows; c++)
        if (!(r.rows[c] = tg_malloc_n(r.n, 1, 1, err))) {
            st = TG_ERR_NOMEM;
            goto cleanup;
        }
    int got = 1;
    while (got && !(st = next_record(&r, &got, err)) && (!got || !(st = add_record(&r, bed, err))))
        continue;
    /* the held lines come before the record the loop stopped at: their error is the first */
    tg_status held_st = decode_held(&r, bed, err);
    if (held_st) st = held_st;
    if (st) goto cleanup;
    if (bed->n_snps == 0) {
        st = r.multi ? tg_error_set(err, TG_ERR_FORMAT, "%s: every record is multi-allelic (%lld; "
                                    "biallelic variants only): split them first with bcftools "
                                    "norm -m-", o->path, (long long)r.multi)
                     : tg_error_set(err, TG_ERR_FORMAT, "%s: no variant records after the header",
                                    o->path);
        goto cleanup;
    }
    report(&r, bed, rep ? rep : &own);
cleanup:
    for (int c = 0; r.rows && c < r.nrows; c++) free(r.rows[c]);
    free(r.rows);
    free(r.held);
    free(r.text);
    free(r.row);
    free(r.gt);
    free(r.ds);
    free(r.done);
    free(r.line.s);
    if (r.rec) bcf_destroy(r.rec);
    if (r.hdr) bcf_hdr_destroy(r.hdr);
    if (r.fp) hts_close(r.fp); /* before the pool its threads belong to */
    if (r.pool) hts_tpool_destroy(r.pool);
    if (st) tg_bed_close(bed);
    hts_set_log_level(level);
    return st;
}
