/* Epistasis search vs a naive reference that builds every contingency table sample by sample
 * from the genotype matrix and scores it with its own code: random data with and without
 * missing genotypes, orders 2/3/4, M not a multiple of the block, N not a multiple of 64 or
 * 256, a class smaller than 64, every score kind and every CPU popcount kernel this CPU has.
 * With top-k = all combinations, every key is compared bit for bit; the reported tables must
 * equal the reference's; the search must evaluate C(M, k) combinations. When CUDA workers exist
 * the same searches run with CUDA workers only and must give bit-identical results (a failure
 * without CUDA workers when TG_REQUIRE_GPU is set). Also: phenotype coding and bad options. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "codelets/epistasis.h"
#include "codelets/epistasis_hooks.h"
#include "common.h"
#include "runtime/runtime.h"
#include "tap.h"

static char tmpdir[64];

/* A dataset: genotypes column-major (n × m), classes, written and opened as a fileset. */
typedef struct {
    int32_t snp[4];
    int32_t t[2][81];
} ref_table;

typedef struct {
    int64_t n, m;
    int8_t *g, *cls;
    tg_bed bed;
    ref_table *tab[5]; /* reference tables by order, built once */
    int64_t count[5];
} dataset;

/* missing: the rate of missing calls, in every SNP, or with @p odd_blocks > 0 only in the SNPs
 * of the odd blocks of that many SNPs (so that a search's rounds mix blocks with and without
 * missing calls) */
static void make_dataset(dataset *d, const char *name, int64_t n0, int64_t n1, int64_t nx,
                         int64_t m, double missing, int odd_blocks, tg_rng *r) {
    d->n = n0 + n1 + nx;
    d->m = m;
    d->g = malloc((size_t)(d->n * m));
    d->cls = malloc((size_t)d->n);
    /* classes in a shuffled order, so class positions differ from sample positions */
    for (int64_t i = 0; i < d->n; i++) d->cls[i] = i < n0 ? 0 : i < n0 + n1 ? 1 : -1;
    for (int64_t i = d->n - 1; i > 0; i--) {
        int64_t j = (int64_t)tg_rng_below(r, (uint64_t)i + 1);
        int8_t t = d->cls[i];
        d->cls[i] = d->cls[j], d->cls[j] = t;
    }
    for (int64_t j = 0; j < m; j++) {
        double p = 0.1 + 0.4 * tg_rng_uniform(r);
        for (int64_t i = 0; i < d->n; i++) {
            double u = tg_rng_uniform(r);
            const int may = !odd_blocks || j / odd_blocks % 2;
            d->g[i + j * d->n] = tg_rng_uniform(r) < missing && may
                                     ? TG_GENO_MISSING
                                     : (int8_t)((u < p * p) + (u < 1 - (1 - p) * (1 - p)));
        }
    }
    tg_sample *s = calloc((size_t)d->n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    char *ids = malloc((size_t)(d->n + m) * 16);
    static char zero[] = "0", chr[] = "1", a1[] = "A", a2[] = "C";
    for (int64_t i = 0; i < d->n; i++) {
        s[i].fid = s[i].iid = ids + 16 * i;
        snprintf(s[i].fid, 16, "S%u", (unsigned)i);
        s[i].father = s[i].mother = zero;
        s[i].pheno = d->cls[i] < 0 ? NAN : d->cls[i] + 1;
    }
    for (int64_t j = 0; j < m; j++) {
        v[j].id = ids + 16 * (d->n + j);
        snprintf(v[j].id, 16, "v%u", (unsigned)j);
        v[j].chrom = chr, v[j].a1 = a1, v[j].a2 = a2, v[j].pos = j + 1;
    }
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/%s", tmpdir, name);
    tg_error err = {0};
    if (tg_bed_write(prefix, s, d->n, v, m, d->g, d->n, &err) ||
        tg_bed_open(prefix, &d->bed, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    free(ids);
    free(s);
    free(v);
}

static void free_dataset(dataset *d) {
    for (int k = 2; k <= 4; k++) free(d->tab[k]);
    tg_bed_close(&d->bed);
    free(d->g);
    free(d->cls);
}

static int64_t choose_ref(int64_t m, int k) {
    int64_t c = 1;
    for (int i = 0; i < k; i++) c = m - i > 0 ? c * (m - i) / (i + 1) : 0;
    return c;
}

/* ---- the reference: tables sample by sample, keys by the documented formulas */
typedef struct {
    double key;
    const ref_table *tab;
} ref_hit;

/* ln Γ(i + 1) and i·ln i for i = 0 .. n + 1, computed once per reference */
static double *lgam, *xlx;

/* The sum over cells is three partial sums, one per genotype of the first SNP, each in cell
 * order, then (p0 + p1) + p2 (the documented order). */
static double ref_key(int score, int cells, const int32_t t[2][81]) {
    int64_t R[2] = {0, 0};
    for (int g = 0; g < cells; g++) R[0] += t[0][g], R[1] += t[1][g];
    int64_t N = R[0] + R[1];
    if (N == 0) return INFINITY;
    double p[3] = {0, 0, 0};
    for (int g = 0; g < cells; g++) {
        double *a = &p[g / (cells / 3)];
        int64_t r = t[0][g] + t[1][g];
        if (score == TG_EPI_K2) {
            *a = *a + ((lgam[r + 1] - lgam[t[0][g]]) - lgam[t[1][g]]);
        } else if (score == TG_EPI_MI) {
            *a = *a + xlx[t[0][g]];
            *a = *a + xlx[t[1][g]];
            *a = *a - xlx[r];
        } else if (r) {
            for (int c = 0; c < 2; c++)
                if (R[c]) *a = *a + (double)((int64_t)t[c][g] * t[c][g]) / (double)(r * R[c]);
        }
    }
    double a = (p[0] + p[1]) + p[2];
    if (score == TG_EPI_K2) return a - ((lgam[N + 1] - lgam[R[0]]) - lgam[R[1]]);
    if (score == TG_EPI_MI) return -((((a - xlx[R[0]]) - xlx[R[1]]) + xlx[N]) / (double)N);
    return -((a - 1.0) * (double)N);
}

/* MI and χ²: the P value of the table by the textbook statistics in long double (Pearson's
 * Σ (O − E)² / E and G = 2 Σ O ln(O / E) over the cells and classes with E > 0, E = r_g·R_c/N)
 * and the closed form of the χ² tail, with df = (non-empty cells − 1)(non-empty classes − 1). */
static long double ref_p(int score, const int32_t t[2][81], int *df) {
    int64_t R[2] = {0, 0}, cells = 0;
    for (int g = 0; g < 81; g++) R[0] += t[0][g], R[1] += t[1][g], cells += t[0][g] + t[1][g] > 0;
    const int64_t N = R[0] + R[1];
    const int classes = (R[0] > 0) + (R[1] > 0);
    *df = cells && classes ? (int)(cells - 1) * (classes - 1) : 0;
    long double stat = 0;
    for (int g = 0; g < 81; g++)
        for (int c = 0; c < 2; c++) {
            const long double o = t[c][g], e = (long double)(t[0][g] + t[1][g]) * R[c] / N;
            if (e <= 0) continue;
            stat += score == TG_EPI_CHI2 ? (o - e) * (o - e) / e : o > 0 ? 2 * o * logl(o / e) : 0;
        }
    return *df ? chi2_sf_closed(*df, stat) : 1;
}

static int ref_cmp(const void *x, const void *y) {
    const ref_hit *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    int c = memcmp(a->tab->snp, b->tab->snp, sizeof a->tab->snp);
    return (c > 0) - (c < 0);
}

/* The table of every combination of k SNPs (s_1 < ... < s_k, lexicographic order). */
static void ref_tables(dataset *d, int k) {
    int64_t count = 1;
    for (int i = 0; i < k; i++) count = count * (d->m - i) / (i + 1);
    ref_table *rt = calloc((size_t)count, sizeof *rt);
    int32_t s[4] = {0, 1, 2, 3};
    for (int64_t x = 0; x < count; x++) {
        ref_table *c = &rt[x];
        for (int i = 0; i < 4; i++) c->snp[i] = i < k ? s[i] : -1;
        for (int64_t i = 0; i < d->n; i++) {
            if (d->cls[i] < 0) continue;
            int cell = 0, miss = 0;
            for (int j = 0; j < k; j++) {
                int8_t g = d->g[i + s[j] * d->n];
                miss |= g == TG_GENO_MISSING;
                cell = 3 * cell + g;
            }
            if (!miss) c->t[d->cls[i]][cell]++;
        }
        int j = k - 1; /* next combination */
        while (j >= 0 && s[j] == d->m - k + j) j--;
        if (j >= 0) {
            s[j]++;
            for (int i = j + 1; i < k; i++) s[i] = s[i - 1] + 1;
        }
    }
    d->tab[k] = rt;
    d->count[k] = count;
}

/* Every combination scored, best first; returns the count. */
static int64_t reference(dataset *d, int k, int score, ref_hit **out) {
    /* the runtime's idle workers poll: paused, they leave the cores to the reference */
    starpu_pause();
    if (!d->tab[k]) ref_tables(d, k);
    const int cells = k == 2 ? 9 : k == 3 ? 27 : 81;
    lgam = malloc((size_t)(d->n + 2) * sizeof *lgam);
    xlx = malloc((size_t)(d->n + 2) * sizeof *xlx);
    for (int64_t i = 0; i < d->n + 2; i++) {
        lgam[i] = lgamma((double)i + 1);
        xlx[i] = i ? (double)i * log((double)i) : 0.0;
    }
    ref_hit *h = malloc((size_t)d->count[k] * sizeof *h);
    for (int64_t x = 0; x < d->count[k]; x++)
        h[x] = (ref_hit){ref_key(score, cells, d->tab[k][x].t), &d->tab[k][x]};
    qsort(h, (size_t)d->count[k], sizeof *h, ref_cmp);
    free(lgam);
    free(xlx);
    starpu_resume();
    *out = h;
    return d->count[k];
}

/* Runs the search; compares with the reference; returns the report (caller frees). */
static int check_search(dataset *d, int k, int score, int topk, int block, const char *what,
                        tg_epi_report *rep) {
    static const char *names[] = {"k2", "mi", "chi2"};
    ref_hit *ref;
    int64_t count = reference(d, k, score, &ref);
    tg_epi_opts o = tg_epi_defaults();
    o.order = k, o.topk = topk, o.score = (tg_epi_score_kind)score, o.block = block;
    tg_error err = {0};
    tg_status st = tg_epistasis(&d->bed, d->cls, &o, rep, &err);
    if (!ok(st == TG_OK, "%s order %d %s: search runs", what, k, names[score])) {
        diag("%s", err.msg);
        free(ref);
        return 0;
    }
    int want = topk < count ? topk : (int)count, bad = 0, pbad = 0;
    bad += rep->combinations != (uint64_t)count || rep->nhit != want;
    for (int h = 0; h < rep->nhit && h < want; h++) {
        const tg_epi_hit_info *x = &rep->hits[h];
        const ref_table *y = ref[h].tab;
        double key = -x->score;
        int same = !memcmp(&key, &ref[h].key, sizeof key);
        int64_t n = 0;
        for (int c = 0; c < 2; c++)
            for (int g = 0; g < 81; g++) same &= x->table[c][g] == y->t[c][g], n += y->t[c][g];
        for (int i = 0; i < 4; i++) same &= x->snp[i] == y->snp[i];
        same &= x->n == n;
        int df;
        const long double p = ref_p(score, y->t, &df);
        if (score == TG_EPI_K2)
            same &= x->df == 0 && isnan(x->p);
        else if (x->df != df || !(fabsl(x->p - p) <= 1e-9L * p + 1e-300L))
            same = 0, pbad++;
        if (!same && bad++ < 3)
            diag("rank %d: got SNPs %lld %lld %lld %lld key %.17g, want %d %d %d %d key %.17g",
                 h + 1, (long long)x->snp[0], (long long)x->snp[1], (long long)x->snp[2],
                 (long long)x->snp[3], key, y->snp[0], y->snp[1], y->snp[2], y->snp[3], ref[h].key);
    }
    ok(bad == 0,
       "%s order %d %s: %lld combinations (C(%lld,%d)), top %d identical (keys, tables, DF, P "
       "within 1e-9: %d differ)",
       what, k, names[score], (long long)rep->combinations, (long long)d->m, k, want, pbad);
    free(ref);
    return bad == 0;
}

/* The selected kernel's counts against runs of SNPs (tg_epi_pair_counts) against popcounts
 * word by word: plane word counts that are odd multiples of 4 (a half step of the AVX-512
 * kernel) and not, 1 to 9 x planes and 1 to 7 y SNPs (every register tile shape and its
 * remainders), 2 and 3 planes. */
static void check_pair_counts(const char *kernel, tg_rng *r) {
    static const int64_t nws[] = {4, 8, 12, 20, 64, 132};
    int bad = 0, runs = 0;
    for (size_t z = 0; z < sizeof nws / sizeof nws[0]; z++) {
        const int64_t nw = nws[z], stride = 3 * nw;
        uint64_t *xw = malloc((size_t)(9 * nw) * sizeof *xw),
                 *y = malloc((size_t)(7 * stride) * sizeof *y);
        const uint64_t *x[9];
        int64_t out[9 * 7 * 3];
        for (int i = 0; i < 9; i++) x[i] = xw + (8 - i) * nw; /* in no particular order */
        for (int64_t w = 0; w < 9 * nw; w++) xw[w] = tg_rng_u64(r) & tg_rng_u64(r);
        for (int64_t w = 0; w < 7 * stride; w++) y[w] = tg_rng_u64(r) | tg_rng_u64(r);
        for (int Q = 2; Q <= 3; Q++)
            for (int nx = 1; nx <= 9; nx++)
                for (int ny = 1; ny <= 7; ny++, runs++) {
                    tg_epi_pair_counts(x, nx, y, ny, Q, nw, stride, out);
                    for (int i = 0; i < nx; i++)
                        for (int j = 0; j < ny; j++)
                            for (int q = 0; q < Q; q++) {
                                int64_t want = 0;
                                for (int64_t w = 0; w < nw; w++)
                                    want += __builtin_popcountll(x[i][w] &
                                                                 y[j * stride + q * nw + w]);
                                bad += out[(j * nx + i) * Q + q] != want;
                            }
                }
        free(xw);
        free(y);
    }
    ok(bad == 0, "%s counts against SNP runs: %d calls (2 and 3 planes, 4 to 132 words, up to "
       "9 planes × 7 SNPs), %d counts differ from popcounts word by word", kernel, runs, bad);
}

/* Order 2 with top 3 and 5 of 666 pairs (the k-th key changes inside a group of pairs, all
 * scored before the selection), 37 SNPs in blocks of 8 (the last of 5: a group of one x SNP),
 * with and without missing calls. */
static void check_topk_cuts(const char *kernel, dataset *miss, dataset *full) {
    for (int x = 0; x < 2; x++) {
        char what[64];
        tg_epi_report rep;
        snprintf(what, sizeof what, "%s, %s, top-k cut", kernel, x ? "complete" : "5% missing");
        check_search(x ? full : miss, 2, TG_EPI_K2, 3 + 2 * x, 8, what, &rep);
        tg_epi_report_free(&rep);
    }
}

/* The same search on CUDA workers only must equal the CPU search bit for bit. */
static void check_cuda(const dataset *d, int k, int score, int topk, int block,
                       const tg_epi_report *cpu) {
    tg_error err = {0};
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ncpu = 0;
    tg_runtime_stop();
    if (!ok(tg_runtime_start(&ro, &err) == TG_OK, "runtime with CUDA workers only")) {
        diag("%s", err.msg);
        ro = tg_runtime_defaults();
        tg_runtime_start(&ro, &err);
        return;
    }
    tg_epi_opts o = tg_epi_defaults();
    o.order = k, o.topk = topk, o.score = (tg_epi_score_kind)score, o.block = block;
    tg_epi_report g;
    tg_status st = tg_epistasis(&d->bed, d->cls, &o, &g, &err);
    int same = st == TG_OK && g.nhit == cpu->nhit && g.complete == cpu->complete;
    for (int h = 0; same && h < g.nhit; h++)
        same = !memcmp(&g.hits[h], &cpu->hits[h], sizeof g.hits[h]);
    ok(same, "order %d score %d: CUDA rounds bit-identical to CPU rounds%s%s", k, score,
       st ? ": " : "", st ? err.msg : "");
    tg_epi_report_free(&g);
    tg_runtime_stop();
    ro = tg_runtime_defaults();
    tg_runtime_start(&ro, &err);
}

/* ---- p_threshold: every combination with P ≤ T, best first */
typedef struct {
    tg_epi_hit_info *h;
    int64_t n, cap;
} emitted;

static tg_status collect(void *ctx, const struct tg_epi_hit_info *h, tg_error *err) {
    emitted *e = ctx;
    (void)err;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->h = realloc(e->h, (size_t)e->cap * sizeof *e->h);
    }
    e->h[e->n++] = *h;
    return TG_OK;
}

/* The search with p_threshold T on the runtime as it is; fills *out (caller frees out->h). */
static tg_status pass_search(const dataset *d, int k, int score, double T, int block, int64_t run,
                             emitted *out, tg_epi_report *rep, tg_error *err) {
    tg_epi_opts o = tg_epi_defaults();
    o.order = k, o.score = (tg_epi_score_kind)score, o.block = block, o.p_threshold = T;
    o.p_run = run;
    o.emit = collect, o.emit_ctx = out;
    *out = (emitted){0};
    return tg_epistasis(&d->bed, d->cls, &o, rep, err);
}

/* Against the reference: the combinations whose reference P (long double) is at most T, in
 * the reference's order, with their keys bit for bit, tables, DF and P; when CUDA workers exist
 * the same search on them only must emit the same hits bit for bit. @p run: candidates per
 * sorted run (0: the default, one run here; small: many runs merged). */
static void check_pass(dataset *d, int k, int score, double T, int block, int64_t run, int gpu,
                       const char *what) {
    static const char *names[] = {"k2", "mi", "chi2"};
    ref_hit *ref;
    const int64_t count = reference(d, k, score, &ref);
    emitted got;
    tg_epi_report rep;
    tg_error err = {0};
    tg_status st = pass_search(d, k, score, T, block, run, &got, &rep, &err);
    int64_t want = 0, bad = 0;
    for (int64_t x = 0; x < count; x++) {
        int df;
        const long double p = ref_p(score, ref[x].tab->t, &df);
        if (p > T) continue;
        const tg_epi_hit_info *h = want < got.n ? &got.h[want] : NULL;
        int same = h != NULL;
        double key = h ? -h->score : 0;
        same = same && !memcmp(&key, &ref[x].key, sizeof key) && h->df == df &&
               fabsl(h->p - p) <= 1e-9L * p + 1e-300L;
        for (int i = 0; same && i < 4; i++) same = h->snp[i] == ref[x].tab->snp[i];
        for (int c = 0; same && c < 2; c++)
            for (int g = 0; g < 81; g++) same &= h->table[c][g] == ref[x].tab->t[c][g];
        if (!same && bad++ < 3)
            diag("passing combination %lld: want SNPs %d %d %d %d key %.17g P %.6Lg", (long long)want,
                 ref[x].tab->snp[0], ref[x].tab->snp[1], ref[x].tab->snp[2], ref[x].tab->snp[3],
                 ref[x].key, p);
        want++;
    }
    ok(st == TG_OK && !bad && got.n == want && rep.passed == (uint64_t)want &&
           rep.combinations == (uint64_t)count && rep.nhit == 0,
       "%s order %d %s, P <= %g: %lld of %lld combinations emitted (%lld by the reference), in "
       "order, keys, tables, DF and P identical %s",
       what, k, names[score], T, (long long)got.n, (long long)count, (long long)want,
       st ? err.msg : "");
    free(ref);
    if (gpu && !st) {
        tg_runtime_opts ro = tg_runtime_defaults();
        ro.ncpu = 0;
        tg_runtime_stop();
        emitted g = {0};
        int same = tg_runtime_start(&ro, &err) == TG_OK &&
                   pass_search(d, k, score, T, block, run, &g, &rep, &err) == TG_OK && g.n == got.n;
        for (int64_t x = 0; same && x < g.n; x++) same = !memcmp(&g.h[x], &got.h[x], sizeof *g.h);
        ok(same, "%s order %d %s, P <= %g: CUDA rounds emit the same %lld combinations bit for "
           "bit %s", what, k, names[score], T, (long long)got.n, err.msg);
        free(g.h);
        tg_runtime_stop();
        ro = tg_runtime_defaults();
        tg_runtime_start(&ro, &err);
    }
    free(got.h);
}

/* ---- SNP sets: only the combinations holding a SNP of the set */
static int snp_cmp(const void *x, const void *y) {
    const tg_epi_hit_info *a = x, *b = y;
    for (int i = 0; i < 4; i++)
        if (a->snp[i] != b->snp[i]) return a->snp[i] < b->snp[i] ? -1 : 1;
    return 0;
}

/* The search over a set (every combination reported: at most 1,024 of them) against the
 * exhaustive reference filtered to the set: C(M, k) − C(M − S, k) evaluated, the same
 * combinations with the same tables, DF and P, scores equal but for the last bits (summed in the
 * planes' SNP order), best first; on CUDA workers bit for bit the CPU's. */
static void check_set(dataset *d, int k, int score, const int64_t *set, int64_t nset, int block,
                      int gpu, const char *what) {
    static const char *names[] = {"k2", "mi", "chi2"};
    ref_hit *ref;
    const int64_t count = reference(d, k, score, &ref);
    int8_t in[64] = {0};
    for (int64_t i = 0; i < nset; i++) in[set[i]] = 1;
    tg_epi_hit_info *want = calloc((size_t)count, sizeof *want);
    int64_t nw = 0;
    for (int64_t x = 0; x < count; x++) {
        int hit = 0;
        for (int i = 0; i < k; i++) hit |= in[ref[x].tab->snp[i]];
        if (!hit) continue;
        tg_epi_hit_info *w = &want[nw++];
        w->score = -ref[x].key;
        for (int i = 0; i < 4; i++) w->snp[i] = ref[x].tab->snp[i];
        for (int c = 0; c < 2; c++)
            for (int g = 0; g < 81; g++) w->table[c][g] = ref[x].tab->t[c][g];
        w->p = (double)ref_p(score, ref[x].tab->t, &w->df);
        if (score == TG_EPI_K2) w->df = 0; /* a score, not a test */
    }
    free(ref);
    const int64_t closed = (int64_t)(choose_ref(d->m, k) - choose_ref(d->m - nset, k));
    tg_epi_opts o = tg_epi_defaults();
    o.order = k, o.topk = TG_EPI_MAX_TOPK, o.score = (tg_epi_score_kind)score, o.block = block;
    o.set = set, o.nset = nset;
    tg_epi_report rep;
    tg_error err = {0};
    tg_status st = tg_epistasis(&d->bed, d->cls, &o, &rep, &err);
    int bad = st != TG_OK || rep.nhit != nw || nw != closed || rep.combinations != (uint64_t)closed;
    for (int h = 1; !bad && h < rep.nhit; h++) bad |= rep.hits[h].score > rep.hits[h - 1].score;
    tg_epi_hit_info *got = st ? NULL : malloc((size_t)rep.nhit * sizeof *got);
    if (got) memcpy(got, rep.hits, (size_t)rep.nhit * sizeof *got);
    if (!bad) {
        qsort(got, (size_t)nw, sizeof *got, snp_cmp);
        qsort(want, (size_t)nw, sizeof *want, snp_cmp);
    }
    for (int64_t h = 0; !bad && h < nw; h++) {
        const tg_epi_hit_info *a = &got[h], *b = &want[h];
        int same = !snp_cmp(a, b) && a->df == b->df && !memcmp(a->table, b->table, sizeof a->table) &&
                   fabs(a->score - b->score) <= 1e-12 * fabs(b->score) + 1e-12 &&
                   (score == TG_EPI_K2 ? isnan(a->p) : fabs(a->p - b->p) <= 1e-9 * b->p + 1e-300);
        if (!same && bad++ < 3)
            diag("SNPs %lld %lld %lld %lld: score %.17g, want %.17g", (long long)b->snp[0],
                 (long long)b->snp[1], (long long)b->snp[2], (long long)b->snp[3], a->score,
                 b->score);
    }
    ok(!bad, "%s order %d %s, a set of %lld SNPs: %llu combinations evaluated (C(%lld,%d) - "
       "C(%lld,%d) = %lld), the exhaustive search's %lld holding one, best first %s",
       what, k, names[score], (long long)nset, st ? 0ull : (unsigned long long)rep.combinations,
       (long long)d->m, k, (long long)(d->m - nset), k, (long long)closed, (long long)nw,
       st ? err.msg : "");
    if (gpu && !st) {
        tg_runtime_opts ro = tg_runtime_defaults();
        ro.ncpu = 0;
        tg_runtime_stop();
        tg_epi_report g = {0};
        int same = tg_runtime_start(&ro, &err) == TG_OK &&
                   tg_epistasis(&d->bed, d->cls, &o, &g, &err) == TG_OK && g.nhit == rep.nhit;
        for (int h = 0; same && h < g.nhit; h++)
            same = !memcmp(&g.hits[h], &rep.hits[h], sizeof g.hits[h]);
        ok(same, "%s order %d %s, a set: CUDA rounds bit-identical to CPU rounds %s", what, k,
           names[score], err.msg);
        tg_epi_report_free(&g);
        tg_runtime_stop();
        ro = tg_runtime_defaults();
        tg_runtime_start(&ro, &err);
    }
    if (!st) tg_epi_report_free(&rep);
    free(got);
    free(want);
}

/* p_threshold and SNP sets on the datasets of main (their names there). */
static void check_modes(dataset *miss, dataset *full, dataset *miss4, dataset *small,
                        dataset *big2, dataset *big3, int gpu) {
    /* p_threshold: orders 2–4 with and without missing calls; 200 SNPs at block 64 (4,096
     * combinations a round: pages of 1,024 run again) */
    check_pass(miss, 2, TG_EPI_CHI2, 0.05, 8, 0, gpu, "5% missing");
    check_pass(full, 3, TG_EPI_MI, 0.01, 8, 0, gpu, "complete");
    check_pass(miss4, 4, TG_EPI_CHI2, 0.2, 16, 0, gpu, "5% missing");
    check_pass(big2, 2, TG_EPI_MI, 1, 64, 0, gpu, "pages");
    check_pass(big2, 2, TG_EPI_CHI2, 0.5, 64, 700, 0, "pages, runs of 700 merged");
    check_pass(big3, 3, TG_EPI_CHI2, 0.3, 32, 0, gpu, "pages, 2% missing");
    /* SNP sets, scattered over the blocks and ending inside one (blocks of 8 and 16) */
    static const int64_t set2[] = {30, 3, 17, 18}, set3[] = {20}, set4[] = {11, 2};
    static const int64_t set10[] = {1, 4, 7, 12, 15, 22, 23, 29, 33, 36};
    check_set(miss, 2, TG_EPI_K2, set2, 4, 8, gpu, "5% missing");
    check_set(miss, 2, TG_EPI_MI, set10, 10, 8, gpu, "5% missing, over two blocks");
    check_set(full, 2, TG_EPI_CHI2, set2, 4, 16, gpu, "complete");
    check_set(miss, 3, TG_EPI_MI, set3, 1, 8, gpu, "5% missing");
    check_set(full, 3, TG_EPI_K2, set3, 1, 8, gpu, "complete");
    check_set(small, 4, TG_EPI_K2, set4, 2, 8, gpu, "5% missing, 19 cases");
    check_set(small, 4, TG_EPI_CHI2, set4, 2, 8, gpu, "5% missing, 19 cases");
    tg_epi_report rep;
    emitted e;
    tg_error err = {0};
    ok(pass_search(miss, 2, TG_EPI_K2, 0.05, 8, 0, &e, &rep, &err) == TG_ERR_ARG &&
           strstr(err.msg, "no P value"),
       "p_threshold with K2 refused: %s", err.msg);
    free(e.h);
}

static void check_classes(void) {
    tg_sample s[5] = {{.fid = "F0", .iid = "I0"},
                      {.fid = "F1", .iid = "I1"},
                      {.fid = "F2", .iid = "I2"},
                      {.fid = "F3", .iid = "I3"},
                      {.fid = "F4", .iid = "I4"}};
    int8_t cls[5];
    tg_error err = {0};
    double v1[5] = {1, 2, 0, NAN, 2};
    ok(tg_epi_classes(s, v1, 5, "x", cls, &err) == TG_OK && cls[0] == 0 && cls[1] == 1 &&
           cls[2] == -1 && cls[3] == -1 && cls[4] == 1,
       "classes: 1 control, 2 case, 0 and NA missing");
    double v2[5] = {1, 2, 0, 1.5, 2};
    ok(tg_epi_classes(s, v2, 5, "ph.txt column P", cls, &err) == TG_ERR_FORMAT &&
           strstr(err.msg, "ph.txt column P") && strstr(err.msg, "F2 I2") &&
           strstr(err.msg, "quantitative"),
       "quantitative phenotype refused, first value not 1/2 named: %s", err.msg);
    double v3[5] = {1, 1, NAN, 1, 0};
    ok(tg_epi_classes(s, v3, 5, "x", cls, &err) == TG_ERR_FORMAT && strstr(err.msg, "0 cases"),
       "no cases refused: %s", err.msg);
    double v4[5] = {2, 2, 2, NAN, 2};
    ok(tg_epi_classes(s, v4, 5, "x", cls, &err) == TG_ERR_FORMAT && strstr(err.msg, "0 controls"),
       "no controls refused: %s", err.msg);
}

/* A search limited to its first rounds counts exactly their combinations. */
static void check_max_rounds(const dataset *d) {
    tg_error err = {0};
    tg_epi_report rep;
    tg_epi_opts o = tg_epi_defaults();
    o.block = 8, o.max_rounds = 3; /* rounds (0,0), (0,1), (0,2): C(8,2) + 64 + 64 */
    tg_status st = tg_epistasis(&d->bed, d->cls, &o, &rep, &err);
    ok(st == TG_OK && rep.rounds == 3 && rep.combinations == 156,
       "--max-rounds 3 at block 8: %lld rounds, %llu combinations (156) %s", (long long)rep.rounds,
       (unsigned long long)rep.combinations, st ? err.msg : "");
    for (int h = 0; !st && h < rep.nhit; h++)
        if (rep.hits[h].snp[0] >= 8 || rep.hits[h].snp[1] >= 24) {
            ok(0, "hit outside the first three rounds: %lld %lld", (long long)rep.hits[h].snp[0],
               (long long)rep.hits[h].snp[1]);
            break;
        }
    if (!st) tg_epi_report_free(&rep);
}

/* Order 4's default block: 128 with GPUs where that makes 8 rounds a GPU (264 SNPs: 3 blocks,
 * 15 rounds on one GPU), else 64 (5 blocks). */
static void check_order4_block(int gpu) {
    tg_rng r;
    tg_rng_seed(&r, 404);
    dataset d = {0};
    make_dataset(&d, "block4", 40, 44, 0, 264, 0.0, 0, &r);
    tg_error err = {0};
    tg_epi_report rep;
    tg_epi_opts o = tg_epi_defaults();
    o.order = 4, o.max_rounds = 1;
    const int want = gpu && 15 >= 8 * tg_runtime_ngpu() ? 128 : 64;
    tg_status st = tg_epistasis(&d.bed, d.cls, &o, &rep, &err);
    ok(st == TG_OK && rep.block == want && rep.rounds == 1,
       "order 4, 264 SNPs, %s: default block %d (%d) %s", gpu ? "GPUs" : "no GPU", rep.block,
       want, st ? err.msg : "");
    if (!st) tg_epi_report_free(&rep);
    free_dataset(&d);
}

/* A search running every step-th round counts exactly their combinations: the rounds
 * enumerated here in the search's order (blocks of 8, b_1 ≤ … ≤ b_k lexicographic, a group of
 * equal blocks contributing C(its SNPs, its multiplicity)). Step 67 of order 4's 70 rounds
 * reaches round 67 by its rank, not by walking. */
static void check_round_step(const dataset *d, int k, int64_t step) {
    tg_error err = {0};
    tg_epi_report rep;
    tg_epi_opts o = tg_epi_defaults();
    o.order = k, o.block = 8, o.round_step = step;
    const int64_t nb = (d->m + 7) / 8;
    int64_t b[4] = {0, 0, 0, 0}, r = 0;
    uint64_t want = 0;
    for (;; r++) {
        if (r % step == 0) {
            uint64_t c = 1;
            for (int i = 0; i < k;) {
                int mult = 1;
                while (i + mult < k && b[i + mult] == b[i]) mult++;
                const int64_t n = b[i] + 1 < nb ? 8 : d->m - 8 * b[i];
                for (int j = 0; j < mult; j++) c = c * (uint64_t)(n - j) / (uint64_t)(j + 1);
                i += mult;
            }
            want += c;
        }
        int i = k - 1;
        while (i >= 0 && b[i] == nb - 1) i--;
        if (i < 0) break;
        b[i]++;
        for (int j = i + 1; j < k; j++) b[j] = b[i];
    }
    tg_status st = tg_epistasis(&d->bed, d->cls, &o, &rep, &err);
    ok(st == TG_OK && rep.rounds == r + 1 && rep.combinations == want,
       "order %d, round step %lld at block 8: %lld rounds in all, %llu combinations (%llu) %s", k,
       (long long)step, (long long)rep.rounds, (unsigned long long)rep.combinations,
       (unsigned long long)want, st ? err.msg : "");
    if (!st) tg_epi_report_free(&rep);
}

static void check_bad_options(const dataset *d) {
    tg_error err = {0};
    tg_epi_report rep;
    tg_epi_opts o = tg_epi_defaults();
    o.order = 5;
    ok(tg_epistasis(&d->bed, d->cls, &o, &rep, &err) == TG_ERR_ARG && strstr(err.msg, "--order"),
       "order 5 refused: %s", err.msg);
    o = tg_epi_defaults();
    o.block = 12;
    ok(tg_epistasis(&d->bed, d->cls, &o, &rep, &err) == TG_ERR_ARG &&
           strstr(err.msg, "multiple of 8"),
       "block 12 refused: %s", err.msg);
    o = tg_epi_defaults();
    o.order = 4;
    tg_bed few = d->bed;
    few.n_snps = 3;
    ok(tg_epistasis(&few, d->cls, &o, &rep, &err) == TG_ERR_ARG && strstr(err.msg, "3 SNPs"),
       "fewer SNPs than the order refused: %s", err.msg);
    tg_bed huge = d->bed;
    huge.n_snps = (int64_t)INT32_MAX + 1;
    ok(tg_epistasis(&huge, d->cls, &o, &rep, &err) == TG_ERR_ARG && strstr(err.msg, "2^31"),
       "2^31 SNPs refused (32-bit indices): %s", err.msg);
}

/* The probe's round (codelets/probes.c) on each kind of worker: it must evaluate the B^k
 * combinations it reports as its work, or the prior it gives StarPU is that of an empty round
 * (a probe without first_end timed nothing on the cores, whose prior then read 6 times faster
 * than the GPU's, and the default order-4 search sent rounds to the cores). */
static void check_probe_rounds(int gpu) {
    for (int k = 2; k <= TG_EPI_MAX_ORDER; k++)
        for (int g = 0; g <= gpu; g++) {
            struct starpu_codelet *cl = &tg_cl_epi_round[k - 2];
            tg_probe_task pt = {0};
            const int level = g ? 0 : 1;
            if (!ok(!tg_probe_build(cl, level, g ? STARPU_CUDA_WORKER : STARPU_CPU_WORKER, NULL,
                                    &pt),
                    "order %d: the probe builds its %s round", k, g ? "CUDA" : "CPU"))
                continue;
            const struct tg_epi_round_arg *a = pt.task->cl_arg;
            double combos = 1;
            for (int i = 0; i < k; i++) combos *= a->nsnp[i];
            pt.task->synchronous = 1;
            pt.task->destroy = 0;
            pt.task->where = g ? STARPU_CUDA : STARPU_CPU;
            uint64_t evaluated = 0;
            if (starpu_task_submit(pt.task) == 0) {
                starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(pt.task, k + 1);
                starpu_data_acquire(h, STARPU_R);
                evaluated = ((const struct tg_epi_result *)starpu_data_get_local_ptr(h))->evaluated;
                starpu_data_release(h);
            }
            ok((double)evaluated == combos && combos > 0, "order %d: the %s probe's round of "
               "block %d evaluates its %.0f combinations (%llu)", k, g ? "CUDA" : "CPU", a->block,
               combos, (unsigned long long)evaluated);
            pt.release(pt.ctx);
            starpu_task_destroy(pt.task);
        }
}

/* How many of the first @p n buffers of @p a are those of @p b. */
static int same_handles(const struct starpu_task *a, const struct starpu_task *b, int n) {
    int same = 0;
    for (int i = 0; i < n; i++)
        same += STARPU_TASK_GET_HANDLE(a, i) == STARPU_TASK_GET_HANDLE(b, i);
    return same;
}

/* On a GPU a probe runs the workload's first task on its own inputs (codelets/probes.c): the
 * round it builds reads that task's planes and score table, writes a result of its own, and
 * evaluates the same combinations. The GPU probe's round on scratch data stands in for the
 * first task. */
static void check_probe_own_inputs(void) {
    for (int k = 2; k <= TG_EPI_MAX_ORDER; k++) {
        struct starpu_codelet *cl = &tg_cl_epi_round[k - 2];
        tg_probe_task like = {0}, pt = {0};
        if (tg_probe_build(cl, 0, STARPU_CUDA_WORKER, NULL, &like)) {
            ok(0, "order %d: the GPU probe's round, to stand in for a first task", k);
            continue;
        }
        int same = 0, built = !tg_probe_build(cl, 0, STARPU_CUDA_WORKER, like.task, &pt);
        uint64_t evaluated = 0;
        if (built) {
            same = same_handles(pt.task, like.task, k + 1) -
                   (STARPU_TASK_GET_HANDLE(pt.task, k + 1) ==
                    STARPU_TASK_GET_HANDLE(like.task, k + 1));
            pt.task->synchronous = 1;
            pt.task->destroy = 0;
            pt.task->where = STARPU_CUDA;
            if (starpu_task_submit(pt.task) == 0) {
                starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(pt.task, k + 1);
                starpu_data_acquire(h, STARPU_R);
                evaluated = ((const struct tg_epi_result *)starpu_data_get_local_ptr(h))->evaluated;
                starpu_data_release(h);
            }
            pt.release(pt.ctx);
            starpu_task_destroy(pt.task);
        }
        const struct tg_epi_round_arg *a = like.task->cl_arg;
        double combos = 1;
        for (int i = 0; i < k; i++) combos *= a->nsnp[i];
        ok(built && same == k + 1 && (double)evaluated == combos,
           "order %d: the GPU probe on a first task's inputs reads its %d plane blocks and table "
           "(%d shared), writes its own result and evaluates its %.0f combinations (%llu)", k, k,
           same, combos, (unsigned long long)evaluated);
        like.release(like.ctx);
        like.task->destroy = 0; /* never submitted */
        starpu_task_destroy(like.task);
    }
}

/* While the host holds a handle (tg_handle_hold: a search's planes before they are built, its
 * first rounds already submitted on them), the GPU probe builds its round on scratch data, not
 * on a first task's inputs, on which it would wait for the release; after the release, on
 * them. Only built here, not run: no GPU is needed. */
static void check_probe_held(void) {
    struct starpu_codelet *cl = &tg_cl_epi_round[TG_EPI_MAX_ORDER - 2];
    const int k = TG_EPI_MAX_ORDER;
    tg_probe_task like = {0};
    if (!ok(!tg_probe_build(cl, 0, STARPU_CUDA_WORKER, NULL, &like),
            "order %d: the GPU probe's round, to stand in for a first task", k))
        return;
    static uint64_t word;
    tg_handle h;
    tg_handle_vector(&h, &word, 1, sizeof word);
    for (int held = 1; held >= 0; held--) {
        if (held) tg_handle_hold(h);
        tg_probe_task pt = {0};
        const int held_now = tg_handles_held();
        int shared = -1;
        if (!tg_probe_build(cl, 0, STARPU_CUDA_WORKER, like.task, &pt)) {
            shared = same_handles(pt.task, like.task, k + 1);
            pt.release(pt.ctx);
            pt.task->destroy = 0;
            starpu_task_destroy(pt.task);
        }
        if (held) tg_handle_release(h);
        ok(held_now == held && shared == (held ? 0 : k + 1),
           "order %d, a handle %s: the GPU probe reads %d of the first task's %d inputs", k,
           held ? "held" : "released", shared, k + 1);
    }
    tg_handle_free(h);
    like.release(like.ctx);
    like.task->destroy = 0;
    starpu_task_destroy(like.task);
}

#ifdef TG_USE_CUDA
/* The epilogue's K2 screen (codelets/epistasis_k2screen.cuh) on the GPU against exact keys: its
 * lower bound must not exceed any table's key (random tables from 1 sample to the largest
 * screened, a class empty, everything in one cell, sparse tables), and must be close enough to
 * screen: within 6 of the key on tables of 5,000 to 262,144 samples and 30 or more a cell. One
 * past the largest R is not screened. */
static void check_k2_screen(tg_rng *r) {
    enum { N = 1200 };
    static const int64_t sizes[] = {1, 2, 7, 60, 300, 5000, 131072, 262144, 1000000, 8388606};
    const int64_t tlen = 8388607 + 2;
    double *t = malloc((size_t)tlen * sizeof *t), *lb = malloc(N * sizeof *lb);
    int32_t *c32 = malloc((size_t)2 * N * 81 * sizeof *c32);
    int64_t *c64 = malloc((size_t)2 * N * 81 * sizeof *c64), *size = malloc(N * sizeof *size);
    tg_epi_score_table(TG_EPI_K2, tlen - 2, t);
    for (int k = 2; k <= 4; k++) {
        const int cells = k == 2 ? 9 : k == 3 ? 27 : 81;
        int32_t *r0 = c32, *r1 = c32 + N * cells;
        int64_t *q0 = c64, *q1 = c64 + N * cells;
        for (int i = 0; i < N; i++) {
            const int kind = i % 4; /* random, one cell, sparse, one past the largest R */
            int64_t R = kind == 3 ? 8388607 : sizes[tg_rng_below(r, sizeof sizes / sizeof *sizes)];
            const double f = tg_rng_below(r, 8) ? tg_rng_uniform(r) : (double)tg_rng_below(r, 2);
            int64_t Rc[2] = {(int64_t)(f * (double)R), 0};
            Rc[1] = R - Rc[0];
            size[i] = R;
            for (int c = 0; c < 2; c++) {
                int64_t *q = (c ? q1 : q0) + i * cells, left = Rc[c];
                double w[81], sw = 0;
                for (int g = 0; g < cells; g++) {
                    const double u = tg_rng_uniform(r);
                    w[g] = kind == 1   ? (g == 0)
                           : kind == 2 ? (tg_rng_below(r, 8) == 0)
                           : i / 4 % 2 ? 0.2 + u /* every cell populated */
                                       : u * u * u;
                    sw += w[g];
                }
                for (int g = 0; g < cells; g++) {
                    q[g] = sw > 0 ? (int64_t)((double)Rc[c] * w[g] / sw) : 0;
                    left -= q[g];
                }
                for (int64_t x = 0; x < left; x++) q[tg_rng_below(r, (uint64_t)cells)]++;
            }
        }
        for (int64_t x = 0; x < (int64_t)N * cells; x++)
            r0[x] = (int32_t)q0[x], r1[x] = (int32_t)q1[x];
        tg_epi_test_k2_screen(k, N, r0, r1, t, tlen, lb);
        int above = 0, unscreened = 0, loose = 0;
        double worst = -INFINITY, gap = 0;
        for (int i = 0; i < N; i++) {
            const double key = tg_epi_key(TG_EPI_K2, k, q0 + i * cells, q1 + i * cells, t);
            if (size[i] > 8388606) {
                unscreened += lb[i] != -INFINITY;
                continue;
            }
            above += !(lb[i] <= key);
            if (lb[i] - key > worst) worst = lb[i] - key;
            int64_t least = INT64_MAX;
            for (int g = 0; g < cells; g++)
                least = q0[i * cells + g] < least ? q0[i * cells + g] : least,
                least = q1[i * cells + g] < least ? q1[i * cells + g] : least;
            if (i % 4 == 0 && size[i] >= 5000 && size[i] <= 262144 && least >= 30) {
                loose += !(key - lb[i] <= 6);
                if (key - lb[i] > gap) gap = key - lb[i];
            }
        }
        ok(above == 0, "order %d: the K2 screen's bound is at most the key on %d tables (%d "
                       "above; bound − key at most %.3g)", k, N, above, worst);
        ok(loose == 0 && gap > 0, "order %d: the bound within 6 of the key at 5,000–262,144 "
                                  "samples (%d further; largest gap %.3g)", k, loose, gap);
        ok(unscreened == 0, "order %d: no screen past 8,388,606 samples", k);
    }
    free(t);
    free(lb);
    free(c32);
    free(c64);
    free(size);
}
#endif

/* Missing calls in blocks 1 and 3 of 8 only: each round is complete or not by its own blocks,
 * whatever the others (the search learns it as each block is built). */
static void check_patchy(int gpu, tg_rng *r) {
    dataset patchy = {0};
    make_dataset(&patchy, "patchy", 130, 150, 10, 37, 0.05, 8, r);
    for (int k = 2; k <= 4; k++) {
        tg_epi_report rep;
        if (check_search(&patchy, k, TG_EPI_K2, 40, 8, "missing calls in blocks 1 and 3", &rep) &&
            gpu)
            check_cuda(&patchy, k, TG_EPI_K2, 40, 8, &rep);
        ok(!rep.complete && rep.missing_rate > 0, "order %d: missing calls reported (rate %g)", k,
           rep.missing_rate);
        tg_epi_report_free(&rep);
    }
    free_dataset(&patchy);
}

#ifdef TG_USE_CUDA
/* The GEMM alone, on the GPU. */
static void check_gemm_shapes(void) {
    /* every GEMM shape this GPU runs, every entry checked: several k stages (more than the
     * wgmma pipeline's four), classes of different lengths, M and N not multiples of tiles */
    static const int64_t sizes[][4] = {
        {1000, 700, 132, 68}, {193, 257, 4, 516}, {1, 1, 4, 4}, {385, 513, 2048, 260}};
    /* and with the tiles of pairs in the wrong order left out (a diagonal round's): every
     * other entry still equal to the popcount, and whole tiles of the others not written */
    static const int64_t keyed[][4] = {{1000, 1200, 132, 68}, {2000, 703, 8, 12}};
    for (int sh = 0; tg_epi_bench_gemm_shape(sh); sh++) {
        int64_t bad = 0;
        for (size_t x = 0; x < sizeof sizes / sizeof sizes[0] && bad >= 0; x++) {
            const int64_t *z = sizes[x];
            if ((bad = tg_epi_test_gemm(z[0], z[1], z[2], z[3], sh, NULL)) < 0) {
                diag("GEMM %s: not on this GPU", tg_epi_bench_gemm_shape(sh));
                break;
            }
            ok(bad == 0, "GEMM %s, %lld × %lld rows, %lld / %lld words: %lld wrong entries",
               tg_epi_bench_gemm_shape(sh), (long long)z[0], (long long)z[1], (long long)z[2],
               (long long)z[3], (long long)bad);
        }
        for (size_t x = 0; x < sizeof keyed / sizeof keyed[0] && bad >= 0; x++) {
            const int64_t *z = keyed[x];
            int64_t left = 0;
            bad = tg_epi_test_gemm(z[0], z[1], z[2], z[3], sh, &left);
            ok(bad == 0 && left > 0,
               "GEMM %s, %lld × %lld rows, pairs in order only: %lld wrong entries, %lld of the "
               "others left out", tg_epi_bench_gemm_shape(sh), (long long)z[0], (long long)z[1],
               (long long)bad, (long long)left);
        }
    }
}
#endif

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-epi-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    tg_error err = {0};
    tg_runtime_opts ro = tg_runtime_defaults();
    if (tg_runtime_start(&ro, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    const int gpu = tg_runtime_ngpu() > 0;
    if (getenv("TG_REQUIRE_GPU")) ok(gpu, "a CUDA worker exists (TG_REQUIRE_GPU is set)");
    check_classes();
    check_probe_rounds(gpu);
    if (gpu) check_probe_own_inputs();
    check_probe_held();

    /* N = 300 (not a multiple of 64 or 256), 20 excluded; M = 37 with B = 8 (5 blocks, the last
     * one partial) for orders 2 and 3, M = 29 for order 4 (B = 8: 4 blocks, the last of 5; and
     * B = 16); 13 SNPs for order 4 with top = every combination and 19 cases */
    dataset miss = {0}, full = {0}, miss4 = {0}, full4 = {0}, small = {0};
    make_dataset(&miss, "miss", 140, 160, 20, 37, 0.05, 0, &r);
    make_dataset(&full, "full", 163, 137, 0, 37, 0.0, 0, &r);
    make_dataset(&miss4, "miss4", 150, 150, 7, 29, 0.05, 0, &r);
    make_dataset(&full4, "full4", 120, 180, 0, 29, 0.0, 0, &r);
    make_dataset(&small, "small", 71, 19, 5, 13, 0.05, 0, &r);
    check_bad_options(&miss);
    check_max_rounds(&miss);
    check_order4_block(gpu);
    check_round_step(&miss, 2, 3);
    check_round_step(&miss, 4, 67);

    /* every score with the kernel used by default, K2 with the others */
    static const char *kernels[] = {"scalar", "avx2", "avx512"};
    const char *best = tg_epi_popc_select(NULL);
    for (int kn = 0; kn < 3; kn++) {
        if (!tg_epi_popc_select(kernels[kn])) {
            diag("popcount kernel %s: not supported by this CPU, skipped", kernels[kn]);
            continue;
        }
        check_pair_counts(kernels[kn], &r);
        char what[64];
        const int every = !strcmp(best, kernels[kn]); /* all scores, and the CUDA comparison */
        for (int score = 0; score < (every ? 3 : 1); score++) {
            dataset *sets[2] = {&miss, &full}, *sets4[2] = {&miss4, &full4};
            for (int x = 0; x < 2; x++) {
                tg_epi_report rep;
                snprintf(what, sizeof what, "%s, %s", kernels[kn], x ? "complete" : "5% missing");
                if (check_search(sets[x], 2, score, 1000, 8, what, &rep) && gpu && every)
                    check_cuda(sets[x], 2, score, 1000, 8, &rep);
                tg_epi_report_free(&rep);
                if (check_search(sets[x], 3, score, 60, 8, what, &rep) && gpu && every)
                    check_cuda(sets[x], 3, score, 60, 8, &rep);
                tg_epi_report_free(&rep);
                for (int b = 8; b <= 16; b += 8) {
                    if (check_search(sets4[x], 4, score, 25, b, what, &rep) && gpu && every)
                        check_cuda(sets4[x], 4, score, 25, b, &rep);
                    tg_epi_report_free(&rep);
                }
            }
            tg_epi_report rep;
            snprintf(what, sizeof what, "%s, 19 cases, all combinations", kernels[kn]);
            if (check_search(&small, 4, score, 1000, 8, what, &rep) && gpu && every)
                check_cuda(&small, 4, score, 1000, 8, &rep);
            ok(!rep.complete, "missing genotypes detected (mode: with missing)");
            tg_epi_report_free(&rep);
        }
        /* the default block (shrunk to 40 for 37 SNPs): one round per block tuple */
        tg_epi_report rep;
        snprintf(what, sizeof what, "%s, default block", kernels[kn]);
        check_search(&full, 2, TG_EPI_K2, 10, 0, what, &rep);
        ok(rep.block == 40 && rep.rounds == 1 && rep.complete,
           "default block %d, %lld rounds, complete", rep.block, (long long)rep.rounds);
        tg_epi_report_free(&rep);
        check_topk_cuts(kernels[kn], &miss, &full);
    }
    tg_epi_popc_select(NULL);
    check_patchy(gpu, &r);

#ifdef TG_USE_CUDA
    if (gpu) check_k2_screen(&r);
    if (gpu) check_gemm_shapes();
#endif

    /* larger blocks (several GPU tiles per round), K2 with the best CPU kernel; order 2 also
     * with small top-k (1 to 50 of 1,770 or 19,900 pairs: the k-th key changes inside a group
     * of pairs the CPU round scores before it selects), with and without missing calls */
    dataset big2 = {0}, big3 = {0}, big4 = {0};
    make_dataset(&big2, "big2", 333, 367, 0, 200, 0.0, 0, &r);
    make_dataset(&big3, "big3", 300, 280, 9, 60, 0.02, 0, &r);
    make_dataset(&big4, "big4", 260, 262, 0, 33, 0.0, 0, &r);
    /* classes of 5,000 and 3,000 samples: GEMMs of more k stages than the GPU pipeline holds
     * (four of 1,024 bits), a different number in each class; with missing calls, planes of 52
     * and 84 words (a half step at the end of the AVX-512 pair counts) */
    dataset wide = {0}, wide_miss = {0};
    make_dataset(&wide, "wide", 5000, 3000, 0, 16, 0.0, 0, &r);
    make_dataset(&wide_miss, "wide_miss", 3100, 5200, 40, 14, 0.03, 0, &r);
    struct {
        dataset *d;
        int k, block, topk;
    } large[] = {{&big2, 2, 0, 100}, {&big2, 2, 64, 100}, {&big3, 3, 32, 50}, {&big4, 4, 0, 50},
                 {&wide, 3, 8, 20}, {&wide_miss, 4, 8, 20}, {&wide, 2, 8, 200},
                 {&wide_miss, 2, 8, 200}, {&big3, 2, 0, 50}, {&big3, 2, 32, 7},
                 {&big2, 2, 64, 13}, {&big3, 2, 8, 1}};
    for (size_t x = 0; x < sizeof large / sizeof large[0]; x++) {
        tg_epi_report rep;
        if (check_search(large[x].d, large[x].k, TG_EPI_K2, large[x].topk, large[x].block,
                         "larger blocks", &rep) &&
            gpu)
            check_cuda(large[x].d, large[x].k, TG_EPI_K2, large[x].topk, large[x].block, &rep);
        tg_epi_report_free(&rep);
    }
    check_modes(&miss, &full, &miss4, &small, &big2, &big3, gpu);
    free_dataset(&big2);
    free_dataset(&big3);
    free_dataset(&big4);
    free_dataset(&wide);
    free_dataset(&wide_miss);
    free_dataset(&miss);
    free_dataset(&full);
    free_dataset(&small);
    free_dataset(&miss4);
    free_dataset(&full4);
    tg_runtime_stop();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) diag("could not remove %s", tmpdir);
    tap_plan(tap_n);
    return tap_done();
}
