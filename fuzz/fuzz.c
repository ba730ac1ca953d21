/* The harnesses' shared part (fuzz.h): splitting an input into files, the tmpfs folder, the
 * readers' error contract and a fileset to read ID files against. */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tgf_split(const uint8_t *data, size_t size, int nparts, tgf_parts *out) {
    const size_t sl = strlen(TGF_SEP);
    memset(out, 0, sizeof *out);
    for (int k = 0; k < nparts; k++) {
        const uint8_t *end = k < nparts - 1 ? memmem(data, size, TGF_SEP, sl) : NULL;
        size_t len = end ? (size_t)(end - data) : size;
        out->p[k] = data;
        out->n[k] = len;
        if (!end) return; /* the files after this one are empty */
        data += len + sl;
        size -= len + sl;
    }
}

static char dir[PATH_MAX];

static void remove_dir(void) {
    DIR *d = opendir(dir);
    char path[PATH_MAX];
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    if (d) closedir(d);
    rmdir(dir);
}

const char *tgf_dir(void) {
    if (*dir) return dir;
    const char *base = getenv("TGFUZZ_TMP");
    struct stat sb;
    if (!base || !*base) base = stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
    if (snprintf(dir, sizeof dir, "%s/tgfuzz-XXXXXX", base) >= (int)sizeof dir || !mkdtemp(dir)) {
        fprintf(stderr, "fuzz: cannot make a folder in %s\n", base);
        abort();
    }
    atexit(remove_dir);
    return dir;
}

const char *tgf_put(const char *name, const void *p, size_t n, char *path) {
    snprintf(path, PATH_MAX, "%s/%s", tgf_dir(), name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd)) {
        fprintf(stderr, "fuzz: cannot write %s\n", path);
        abort();
    }
    return path;
}

void tgf_check(tg_status st, const tg_error *err) {
    if (st == TG_OK) return;
    const char *why = err->status != st         ? "its status differs from the one returned"
                      : !err->msg[0]             ? "it is empty"
                      : strchr(err->msg, '\n')   ? "it has a line break"
                                                 : NULL;
    if (!why) return;
    fprintf(stderr, "fuzz: bad error message (%s): status %d, '%s'\n", why, (int)st, err->msg);
    abort();
}

static void fail(const char *what, long long i) {
    fprintf(stderr, "fuzz: %s (index %lld)\n", what, i);
    abort();
}

void tgf_use_bed(const tg_bed *bed) {
    const int64_t n = bed->n_samples, m = bed->n_snps;
    if (n < 1 || m < 1) fail("an opened fileset without samples or SNPs", n < 1 ? n : m);
    size_t ids = 0; /* every string is read: the sanitizers see one that is not there */
    for (int64_t i = 0; i < n; i++) {
        const tg_sample *s = &bed->samples[i];
        ids += strlen(s->fid) + strlen(s->iid) + strlen(s->father) + strlen(s->mother);
        if (s->sex < 0 || s->sex > 2) fail("a sex code outside 0-2", i);
    }
    for (int64_t j = 0; j < m; j++) {
        const tg_snp *s = &bed->snps[j];
        ids += strlen(s->chrom) + strlen(s->id) + strlen(s->a1) + strlen(s->a2);
    }
    if (!ids) fail("no ID has a character", 0);
    const int64_t mm = n * m > 1 << 22 ? (1 << 22) / n : m;
    int8_t *g = malloc((size_t)(n * (mm ? mm : 1)));
    tg_snp_stats *st = malloc((size_t)m * sizeof *st);
    if (!g || !st) abort();
    tg_bed_decode(bed, 0, n, 0, mm, g, n);
    for (int64_t k = 0; k < n * mm; k++)
        if (g[k] < TG_GENO_MISSING || g[k] > 2) fail("a decoded genotype outside -1..2", k);
    tg_bed_stats(bed, st);
    for (int64_t j = 0; j < m; j++)
        if (!(st[j].missing >= 0 && st[j].missing <= 1) || st[j].n_obs < 0 || st[j].n_obs > n ||
            (st[j].n_obs ? !(st[j].freq >= 0 && st[j].freq <= 1) : st[j].freq == st[j].freq))
            fail("SNP statistics out of range", j);
    free(g);
    free(st);
}

void tgf_columns(const tgf_parts *in, int k, tg_pheno_opts *o, char buf[256]) {
    const size_t n = in->n[k] < 255 ? in->n[k] : 255;
    if (n) memcpy(buf, in->p[k], n);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!strncmp(buf, "name ", 5)) o->names = buf + 5;
    else if (!strncmp(buf, "col-nums ", 9)) o->col_nums = buf + 9;
}

/* The lines that are not blank (only spaces, tabs, CR), as tg_bed_open counts them. */
static int64_t count_lines(const uint8_t *p, size_t n) {
    int64_t lines = 0;
    int filled = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '\n') {
            lines += filled;
            filled = 0;
        } else if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
            filled = 1;
        }
    }
    return lines;
}

int tgf_fileset(const tgf_parts *in, int fam, int bim, tg_bed *bed) {
    const int64_t n = count_lines(in->p[fam], in->n[fam]), m = count_lines(in->p[bim], in->n[bim]);
    char path[PATH_MAX];
    tg_error err;
    if (n * m > 1 << 20) return 1;
    const size_t bps = (size_t)(n + 3) / 4, size = 3 + (size_t)m * bps;
    uint8_t *b = malloc(size);
    if (!b) abort();
    memcpy(b, "\x6c\x1b\x01", 3);
    for (size_t i = 3; i < size; i++) b[i] = (uint8_t)(0xe4 + i); /* codes 0-3 in turn */
    tgf_put("fs.bed", b, size, path);
    free(b);
    tgf_put("fs.fam", in->p[fam], in->n[fam], path);
    tgf_put("fs.bim", in->p[bim], in->n[bim], path);
    snprintf(path, sizeof path, "%s/fs", tgf_dir());
    tg_status st = tg_bed_open(path, bed, &err);
    tgf_check(st, &err);
    return st != TG_OK;
}
