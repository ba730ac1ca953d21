/* The check that every MPI rank read the same inputs, before any work (tg_cli_ranks_agree): a
 * stale copy of a fileset on one node would otherwise mix two datasets into one result, or
 * leave the ranks waiting for each other in collectives of different sizes. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* One input as this rank read it: named by path and suffix, its size in @p unit, a hash of its
 * content. */
typedef struct {
    const char *path, *suffix, *unit;
    int64_t count;
    uint64_t hash;
} item;

/* Two filesets of 3 items each, the 4 files of the selection flags: at most 10 items and the
 * command's own files. */
#define MAX_FIXED 10

typedef struct {
    item *it; /* room for MAX_FIXED and the command's files */
    int n;
    double bytes; /* hashed, for the log */
} items;

static void add(items *s, const char *path, const char *suffix, const char *unit, int64_t count,
                uint64_t hash) {
    s->it[s->n++] = (item){path, suffix, unit, count, hash};
}

/* The file behind a genotype input's variant rows (@p k = 0), sample rows (1) or genotypes (2). */
static const char *suffix(const tg_input_opts *o, int k) {
    static const char *const bed[] = {".bim", ".fam", ".bed"}, *const pgen[] = {".pvar", ".psam",
                                                                                ".pgen"};
    switch (o->format) {
    case TG_INPUT_BED: return bed[k];
    case TG_INPUT_PGEN: return pgen[k];
    default: return ""; /* a VCF or BCF holds all three */
    }
}

static void add_fileset(items *s, const tg_input_opts *o, const tg_bed *b) {
    static const char *const units[2][3] = {
        {"variants", "samples", "genotypes"},
        {"variants after selection and QC", "samples after selection and QC",
         "genotypes after selection and QC"}};
    const int f = tg_input_filters(o);
    tg_bed_hashes h;
    tg_bed_hash(b, &h);
    add(s, o->path, suffix(o, 0), units[f][0], b->n_snps, h.snps);
    add(s, o->path, suffix(o, 1), units[f][1], b->n_samples, h.samples);
    add(s, o->path, suffix(o, 2), units[f][2], b->n_snps * b->n_samples, h.geno);
    s->bytes += (double)b->n_snps * (double)b->bytes_per_snp;
}

/* A file's content (tg_file_hash); one that is not a regular file (a pipe, which cannot be read
 * twice) counts −1 bytes and hashes to 0: the ranks compare only that it is not one. */
static tg_status add_file(items *s, const char *path, tg_error *err) {
    int64_t bytes;
    uint64_t hash;
    tg_status st = tg_file_hash(path, &bytes, &hash, err);
    if (st) return st;
    add(s, path, "", "bytes", bytes, hash);
    s->bytes += bytes > 0 ? (double)bytes : 0;
    return TG_OK;
}

/* What a rank read of an input that differs (@p count of @p unit), against rank 0 (@p ref). */
static size_t describe(char *buf, size_t len, const char *unit, int64_t count, int64_t ref) {
    if (count < 0 || ref < 0)
        return (size_t)snprintf(buf, len, "%s", count < 0 ? "not a regular file, against a "
                                "regular one" : "a regular file, against not one");
    if (count != ref)
        return (size_t)snprintf(buf, len, "%lld %s against %lld", (long long)count, unit,
                                (long long)ref);
    return (size_t)snprintf(buf, len, "the same %lld %s, other content", (long long)count, unit);
}

/* The pair (count, hash) of input @p i as rank @p r read it, in @p all (nranks × n pairs). */
static const uint64_t *pair(const uint64_t *all, int n, int r, int i) {
    return all + 2 * ((size_t)r * (size_t)n + (size_t)i);
}

static int differs(const uint64_t *all, int n, int r, int i) {
    return memcmp(pair(all, n, r, i), pair(all, n, 0, i), 2 * sizeof *all) != 0;
}

/* The message for the first input on which some rank differs from rank 0: the ranks that do
 * (at most 4 named) and what they read, once when they all read the same size, else each. */
static void message(const items *s, const uint64_t *all, int nranks, tg_error *err) {
    const int n = s->n;
    int i = 0, nbad = 0, bad[4], one_size = 1;
    while (i < n - 1) {
        int r = 1;
        while (r < nranks && !differs(all, n, r, i)) r++;
        if (r < nranks) break;
        i++;
    }
    for (int r = 1; r < nranks; r++) {
        if (!differs(all, n, r, i)) continue;
        if (nbad < 4) bad[nbad] = r;
        one_size &= pair(all, n, r, i)[0] == pair(all, n, bad[0], i)[0];
        nbad++;
    }
    const int named = nbad < 4 ? nbad : 4;
    const int64_t ref = (int64_t)pair(all, n, 0, i)[0];
    char who[96], what[640];
    size_t w = (size_t)snprintf(who, sizeof who, "rank%s", nbad > 1 ? "s" : ""), at = 0;
    for (int b = 0; b < named; b++) {
        const char *sep = b == 0 ? " " : b + 1 < named || nbad > 4 ? ", " : " and ";
        w += (size_t)snprintf(who + w, sizeof who - w, "%s%d", sep, bad[b]);
        if (one_size && b) continue;
        if (!one_size)
            at += (size_t)snprintf(what + at, sizeof what - at, "%srank %d: ", b ? "; " : "",
                                   bad[b]);
        at += describe(what + at, sizeof what - at, s->it[i].unit,
                       (int64_t)pair(all, n, bad[b], i)[0], ref);
    }
    if (nbad > 4) snprintf(who + w, sizeof who - w, " and %d more", nbad - 4);
    tg_error_set(err, TG_ERR_ARG, "%s read a different %s%s than rank 0 (%s): every rank must "
                 "read the same files", who, s->it[i].path, s->it[i].suffix, what);
}

int tg_cli_ranks_agree(const char *cmd, tg_log *log, const tg_cli_common *c, const tg_bed *bed,
                       const char *test_path, const tg_bed *test, const char *const *files,
                       int nfiles) {
    const int nranks = tg_runtime_nranks();
    if (nranks == 1) return 0;
    tg_error err = {0};
    item it[MAX_FIXED + nfiles];
    items s = {.it = it};
    double t0 = tg_now();
    add_fileset(&s, &c->in, bed);
    if (test) {
        tg_input_opts o;
        tg_input_opts_init(&o);
        o.path = test_path;
        add_fileset(&s, &o, test);
    }
    const char *sel[] = {c->in.keep, c->in.remove, c->in.extract, c->in.exclude};
    tg_status st = TG_OK;
    for (int k = 0; k < 4 && !st; k++)
        if (sel[k]) st = add_file(&s, sel[k], &err);
    for (int k = 0; k < nfiles && !st; k++)
        if (files[k]) st = add_file(&s, files[k], &err);
    if (st) return tg_cli_fail(cmd, log, &err);
    double dt = tg_now() - t0;
    uint64_t mine[2 * s.n], *all = tg_malloc_n(nranks, 1, sizeof mine, &err);
    if (!all) return tg_cli_fail(cmd, log, &err);
    for (int i = 0; i < s.n; i++) {
        mine[2 * i] = (uint64_t)s.it[i].count;
        mine[2 * i + 1] = s.it[i].hash;
    }
    int rc = 0;
    if (tg_runtime_differing_rank(mine, 2 * s.n, all) >= 0) {
        message(&s, all, nranks, &err);
        rc = tg_cli_fail_alike(cmd, log, &err);
    } else {
        tg_log_file_only(log, "the %d ranks read the same inputs (%d inputs compared, %.1f MB "
                         "hashed in %.3f s)", nranks, s.n, s.bytes * 1e-6, dt);
    }
    free(all);
    return rc;
}
