/* Exhaustive epistasis search (issue 4; paper: epistasis-4th-order-tensor-cores, sections 2–3).
 * The genotypes become bit planes per class (codelets/epistasis.h has the layout), one StarPU
 * vector per block of B SNPs; every tuple of blocks b_1 ≤ … ≤ b_k is one round task that scores
 * all its combinations and keeps its best top-k. Rounds go out in waves (bounding the result
 * memory), each wave's results are merged on the CPU, and the reported hits get their full
 * table recounted here from the planes, which must give the round's key again (a check of the
 * device that ran the round).
 * With several MPI ranks every rank builds all planes and runs round i when i mod R is its rank,
 * on its own workers; rank 0 gathers every rank's merged best and merges them the same way. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/chi2.h"
#include "base/parallel.h"
#include "codelets/epistasis.h"
#include "geno/planes.h"
#include "io/out.h"
#include "runtime/runtime.h"

_Static_assert((int)TG_EPI_SCORE_K2 == (int)TG_EPI_K2 && (int)TG_EPI_SCORE_MI == (int)TG_EPI_MI &&
                   (int)TG_EPI_SCORE_CHI2 == (int)TG_EPI_CHI2,
               "public and codelet score enums differ");

tg_epi_opts tg_epi_defaults(void) {
    return (tg_epi_opts){.order = 2, .topk = 10, .score = TG_EPI_SCORE_K2, .block = 0};
}

tg_status tg_epi_classes(const tg_sample *samples, const double *values, int64_t n,
                         const char *source, int8_t *cls, tg_error *err) {
    /* PLINK: 0 is a missing code only when every value is 0, 1, 2 or missing */
    int64_t count[2] = {0, 0}, i = 0;
    while (i < n && (isnan(values[i]) || values[i] == 0 || values[i] == 1 || values[i] == 2)) i++;
    const int zero_missing = i == n;
    for (i = 0; i < n; i++) {
        double v = values[i];
        if (isnan(v) || (v == 0 && zero_missing))
            cls[i] = -1;
        else if (v == 1 || v == 2)
            count[(cls[i] = (int8_t)(v - 1))]++;
        else
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s: sample %s %s has phenotype %g: epistasis needs a case-control "
                                "phenotype (1 = control, 2 = case, 0/-9/NA = missing), and any "
                                "other value makes it quantitative",
                                source, samples[i].fid, samples[i].iid, v);
    }
    if (!count[0] || !count[1])
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: %lld controls and %lld cases: epistasis needs both (1 = control, "
                            "2 = case)",
                            source, (long long)count[0], (long long)count[1]);
    return TG_OK;
}

/* C(m, k) in 128 bits (C(2^31, 4) does not fit 64). */
static unsigned __int128 choose(int64_t m, int k) {
    unsigned __int128 c = 1;
    if (m < k) return 0;
    for (int i = 0; i < k; i++) c = c * (unsigned __int128)(m - i) / (unsigned __int128)(i + 1);
    return c;
}

/* Search state shared with the task callbacks. */
struct progress {
    const tg_epi_opts *o;
    uint64_t total;
    int nranks;
    _Atomic uint64_t done; /* by this rank's rounds */
    _Atomic int64_t last_ms; /* when progress was last reported */
};

struct slot {
    struct progress *p;
    uint64_t combos;
    tg_handle h;
    struct tg_epi_result *res;
    struct tg_epi_round_arg a; /* pass mode: the round again for its next pages */
    tg_handle blocks[TG_EPI_MAX_ORDER];
    double work;
};

/* Pass mode's candidates: sorted runs of up to `run` hits in a temporary file, merged at the
 * end, each run read RUN_READ hits at a time (the memory bound of tg_epi_opts.p_threshold). */
enum { RUN = 1 << 20, RUN_READ = 4096 };
struct spill {
    FILE *f;
    struct tg_epi_hit *buf; /* `run` hits */
    size_t n, run;
    int64_t nruns, *run_len; /* run r: run_len[r] hits from offset Σ earlier lengths */
};

static void round_done(void *arg) {
    struct slot *s = arg;
    struct progress *p = s->p;
    uint64_t done = atomic_fetch_add(&p->done, s->combos) + s->combos;
    if (!p->o->progress) return;
    /* this rank runs every R-th round: R times its count estimates the search's, kept below
     * the total, which only the exact count at the end reports */
    if (p->nranks > 1)
        done = done < (p->total - 1) / (uint64_t)p->nranks ? done * (uint64_t)p->nranks
                                                             : p->total - 1;
    int64_t now = (int64_t)(tg_now() * 1000), last = atomic_load(&p->last_ms);
    if (now - last >= 1000 && atomic_compare_exchange_strong(&p->last_ms, &last, now))
        p->o->progress(p->o->progress_ctx, done, p->total);
}

/* Everything the search allocates, released at one place. */
struct search {
    int64_t m, nb, words[2], n[2], block_words;
    int B, k;
    int topk;          /* hits kept per round: opts.topk, or a page of TG_EPI_MAX_TOPK */
    int rank, nranks;
    int64_t next, b[TG_EPI_MAX_ORDER]; /* the next round: its index and block tuple */
    int64_t step;                      /* rounds run: every step-th (tg_epi_opts.round_step) */
    int64_t id;                        /* this search, among the process's (tg_epi_round_arg) */
    uint64_t *planes;
    char *pinned;  /* per block: pinned (tg_host_pin) as soon as built */
    char *missing; /* per block: 1 where a sample used has a missing call (tg_epi_round_arg) */
    double *table;
    tg_handle *blk, th;
    struct slot *slots;
    char *results;
    struct tg_epi_result *best; /* the rounds' results merged (tg_epi_result_size(topk)) */
    char *gathered;             /* every rank's merged result, on rank 0 */
    double pass_stat[81];       /* pass mode (tg_epi_round_arg) */
    int64_t nset, *perm;        /* a SNP set: the .bim index of each plane SNP, the set first */
    struct spill sp;
};

/* Each block as soon as it is built, while later ones are being built: its missing calls
 * noted for the rounds, pinned, and given to the rounds already submitted on it. */
static void block_built(void *ctx, int64_t b, int64_t missing) {
    struct search *s = ctx;
    s->missing[b] = missing > 0;
    s->pinned[b] = (char)tg_host_pin(s->planes + b * s->block_words,
                                     (size_t)s->block_words * sizeof *s->planes);
    tg_handle_release(s->blk[b]);
}

static void unpin_block(void *ctx, int64_t b) {
    const struct search *s = ctx;
    if (s->pinned[b])
        tg_host_unpin(s->planes + b * s->block_words, (size_t)s->block_words * sizeof *s->planes);
}

/* Builds the planes into the held block handles (tg_handle_hold), releasing each as it is
 * built; on failure releases them all unbuilt, so that the rounds waiting on them end (their
 * results are not used). */
static tg_status build_planes(const tg_bed *bed, const int8_t *cls, struct search *s,
                              tg_epi_report *rep, tg_error *err) {
    const tg_planes pl = {s->planes, s->B, {s->words[0], s->words[1]}, {s->n[0], s->n[1]},
                          s->block_words};
    /* beside the rounds only without CPU workers: StarPU 1.3's idle workers spin (non-blocking
     * drivers) and would take the build's cores (docs/PERFORMANCE.md); with them the rounds
     * start after the build */
    const int beside = tg_runtime_ncpu() == 0;
    int64_t missing;
    tg_status st = tg_planes_build(bed, cls, s->perm, s->m, &pl, beside, block_built, s, &missing,
                                   err);
    if (st) {
        for (int64_t b = 0; b < s->nb; b++) tg_handle_release(s->blk[b]);
        return st;
    }
    rep->complete = missing == 0;
    rep->missing_rate = (double)missing / ((double)s->m * (double)(s->n[0] + s->n[1]));
    return TG_OK;
}

/* The table of hit @p b recounted from the planes (host copies), its key checked against the
 * round's bit for bit, its score, DF and P. */
static tg_status recount(const struct search *s, const tg_epi_opts *o, const struct tg_epi_hit *b,
                         tg_epi_hit_info *hi, tg_error *err) {
    const uint64_t *blk[TG_EPI_MAX_ORDER];
    int32_t loc[TG_EPI_MAX_ORDER];
    memset(hi, 0, sizeof *hi);
    for (int i = 0; i < 4; i++) hi->snp[i] = i < s->k ? b->snp[i] : -1;
    for (int i = 0; i < s->k; i++) {
        blk[i] = s->planes + (b->snp[i] / s->B) * s->block_words;
        loc[i] = b->snp[i] % s->B;
    }
    tg_epi_table(s->k, s->B, s->words, blk, loc, hi->table[0], hi->table[1]);
    double key =
        tg_epi_key((enum tg_epi_score)o->score, s->k, hi->table[0], hi->table[1], s->table);
    if (memcmp(&key, &b->key, sizeof key))
        return tg_error_set(err, TG_ERR_RUNTIME,
                            "internal error: combination of SNPs %d %d %d %d: the round "
                            "task's score key %.17g differs from the recounted table's %.17g",
                            b->snp[0], b->snp[1], b->snp[2], b->snp[3], b->key, key);
    int cells = 0;
    int64_t rc[2] = {0, 0};
    for (int g = 0; g < 81; g++) {
        rc[0] += hi->table[0][g], rc[1] += hi->table[1][g];
        cells += hi->table[0][g] + hi->table[1][g] > 0;
    }
    const int classes = (rc[0] > 0) + (rc[1] > 0);
    hi->n = rc[0] + rc[1];
    hi->score = -key;
    hi->p = NAN;
    if (o->score != TG_EPI_SCORE_K2) {
        /* empty cells and classes carry no freedom (and no term of the statistic) */
        hi->df = cells && classes ? (cells - 1) * (classes - 1) : 0;
        hi->p = tg_chi2_sf(o->score == TG_EPI_SCORE_CHI2 ? hi->score
                                                          : 2 * (double)hi->n * hi->score,
                           hi->df);
    }
    return TG_OK;
}

/* A SNP set's hit in the .bim's terms: SNPs mapped back and sorted, the table's cells in that
 * order, the score (and P) from the table so ordered, as the exhaustive search has them. */
static void to_bim_order(const struct search *s, const tg_epi_opts *o, tg_epi_hit_info *hi) {
    const int k = s->k, cells = k == 2 ? 9 : k == 3 ? 27 : 81;
    int pos[TG_EPI_MAX_ORDER]; /* pos[j]: the plane position of the j-th SNP in .bim order */
    for (int i = 0; i < k; i++) {
        hi->snp[i] = s->perm[hi->snp[i]];
        pos[i] = i;
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && hi->snp[pos[j]] < hi->snp[pos[j - 1]]; j--) {
            int t = pos[j];
            pos[j] = pos[j - 1], pos[j - 1] = t;
        }
    int64_t t[2][81], snp[TG_EPI_MAX_ORDER];
    for (int g = 0; g < cells; g++) {
        int d[TG_EPI_MAX_ORDER], h = 0;
        for (int i = k - 1, r = g; i >= 0; i--, r /= 3) d[i] = r % 3;
        for (int j = 0; j < k; j++) h = 3 * h + d[pos[j]];
        t[0][h] = hi->table[0][g], t[1][h] = hi->table[1][g];
    }
    for (int j = 0; j < k; j++) snp[j] = hi->snp[pos[j]];
    memcpy(hi->snp, snp, (size_t)k * sizeof *snp);
    memcpy(hi->table[0], t[0], (size_t)cells * sizeof t[0][0]);
    memcpy(hi->table[1], t[1], (size_t)cells * sizeof t[1][0]);
    hi->score = -tg_epi_key((enum tg_epi_score)o->score, k, hi->table[0], hi->table[1], s->table);
    if (o->score != TG_EPI_SCORE_K2)
        hi->p = tg_chi2_sf(o->score == TG_EPI_SCORE_CHI2 ? hi->score
                                                          : 2 * (double)hi->n * hi->score,
                           hi->df);
}

static int info_cmp(const void *x, const void *y) {
    const tg_epi_hit_info *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    for (int i = 0; i < 4; i++)
        if (a->snp[i] != b->snp[i]) return a->snp[i] < b->snp[i] ? -1 : 1;
    return 0;
}

/* Recounts the table of every hit and checks its key. */
static tg_status report_hits(const struct search *s, const tg_epi_opts *o, tg_epi_report *rep,
                             tg_error *err) {
    const int nbest = s->best->nhit;
    if (!(rep->hits = tg_calloc_n(nbest, 1, sizeof *rep->hits, err))) return TG_ERR_NOMEM;
    for (int h = 0; h < nbest; h++) {
        tg_status st = recount(s, o, &s->best->hit[h], &rep->hits[h], err);
        if (st) return st;
        if (s->perm) to_bim_order(s, o, &rep->hits[h]);
    }
    if (s->perm) qsort(rep->hits, (size_t)nbest, sizeof *rep->hits, info_cmp);
    rep->nhit = nbest;
    return TG_OK;
}

/* ---- pass mode (tg_epi_opts.p_threshold) */

/* pass_stat[df]: a little below the smallest statistic whose P is at most T (bisection on the
 * tail), so that rounding never drops a combination; the exact P of each candidate decides at
 * the end. df 0 (P = 1) passes only T = 1. */
static void pass_stats(double T, double *stat) {
    stat[0] = T >= 1 ? -INFINITY : INFINITY;
    for (int df = 1; df < 81; df++) {
        double lo = 0, hi = 1;
        if (T >= 1) {
            stat[df] = -INFINITY;
            continue;
        }
        while (tg_chi2_sf(hi, df) > T && hi < 1e6) lo = hi, hi *= 2;
        for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
            const double mid = 0.5 * (lo + hi);
            if (tg_chi2_sf(mid, df) > T) lo = mid;
            else hi = mid;
        }
        stat[df] = lo * (1 - 1e-9);
    }
}

static int hit_cmp_void(const void *a, const void *b) { return tg_epi_hit_cmp(a, b); }

/* Ends the run in the buffer: sorted, appended to the file. */
static tg_status spill_flush(struct spill *sp, tg_error *err) {
    if (!sp->n) return TG_OK;
    qsort(sp->buf, sp->n, sizeof *sp->buf, hit_cmp_void);
    int64_t *len = realloc(sp->run_len, (size_t)(sp->nruns + 1) * sizeof *len);
    if (!len) return tg_error_set(err, TG_ERR_NOMEM, "out of memory for the candidates' runs");
    sp->run_len = len;
    if (fwrite(sp->buf, sizeof *sp->buf, sp->n, sp->f) != sp->n)
        return tg_error_set(err, TG_ERR_IO, "cannot write the candidates' temporary file: %s",
                            strerror(errno));
    sp->run_len[sp->nruns++] = (int64_t)sp->n;
    sp->n = 0;
    return TG_OK;
}

static tg_status spill_add(struct spill *sp, const struct tg_epi_result *r, tg_error *err) {
    for (int h = 0; h < r->nhit; h++) {
        if (sp->n == sp->run) {
            tg_status st = spill_flush(sp, err);
            if (st) return st;
        }
        sp->buf[sp->n++] = r->hit[h];
    }
    return TG_OK;
}

/* Merges the runs, recounts each candidate and emits those with P ≤ T, in hit order. */
static tg_status spill_emit(struct search *s, const tg_epi_opts *o, tg_epi_report *rep,
                            tg_error *err) {
    tg_status st = spill_flush(&s->sp, err);
    const int64_t nr = s->sp.nruns;
    struct cursor {
        struct tg_epi_hit *buf;
        int64_t left, pos, n, at; /* hits left in the file, offset, buffered, next */
    } *c = st ? NULL : tg_calloc_n(nr ? nr : 1, 1, sizeof *c, err);
    struct tg_epi_hit *bufs = c ? tg_malloc_n(nr ? nr : 1, RUN_READ, sizeof *bufs, err)
                                : NULL;
    if (!st && (!c || !bufs)) st = TG_ERR_NOMEM;
    for (int64_t r = 0, off = 0; !st && r < nr; off += s->sp.run_len[r++])
        c[r] = (struct cursor){bufs + r * RUN_READ, s->sp.run_len[r], off, 0, 0};
    while (!st) {
        int64_t best = -1;
        for (int64_t r = 0; r < nr && !st; r++) {
            struct cursor *x = &c[r];
            if (x->at == x->n && x->left) { /* refill */
                x->n = x->left < RUN_READ ? x->left : RUN_READ;
                if (fseeko(s->sp.f, (off_t)x->pos * (off_t)sizeof *x->buf, SEEK_SET) ||
                    fread(x->buf, sizeof *x->buf, (size_t)x->n, s->sp.f) != (size_t)x->n)
                    st = tg_error_set(err, TG_ERR_IO, "cannot read the candidates' temporary "
                                      "file back");
                x->left -= x->n, x->pos += x->n, x->at = 0;
            }
            if (x->at < x->n && (best < 0 || tg_epi_hit_cmp(&x->buf[x->at],
                                                            &c[best].buf[c[best].at]) < 0))
                best = r;
        }
        if (st || best < 0) break;
        tg_epi_hit_info hi;
        if (!(st = recount(s, o, &c[best].buf[c[best].at++], &hi, err)) && s->perm)
            to_bim_order(s, o, &hi);
        if (!st && hi.p <= o->p_threshold) {
            rep->passed++;
            st = o->emit(o->emit_ctx, &hi, err);
        }
    }
    free(bufs);
    free(c);
    return st;
}

/* Merges a result (a round's, or a rank's merged one) into @p into. Hits are ordered totally
 * (key, then SNPs), so the order of the merges does not change the outcome. */
static void merge(const struct tg_epi_result *r, int topk, struct tg_epi_result *into) {
    into->evaluated += r->evaluated;
    for (int h = 0; h < r->nhit; h++) tg_epi_keep(into->hit, &into->nhit, topk, &r->hit[h]);
}

/* Advances s->b to the block tuple after it (b_1 ≤ … ≤ b_k, the last one increasing fastest);
 * the last tuple stays, as the round count stops the walk there. */
static void next_tuple(struct search *s) {
    int i = s->k - 1;
    while (i >= 0 && s->b[i] == s->nb - 1) i--;
    if (i < 0) return;
    s->b[i]++;
    for (int j = i + 1; j < s->k; j++) s->b[j] = s->b[i];
}

/* Sets s->b to the block tuple of round r, its rank in the order next_tuple walks: among the
 * tuples from position i on, those with b_i = v number multichoose(nb − v, k − i − 1). */
static void seek_round(struct search *s, int64_t r) {
    int64_t v = 0;
    for (int i = 0; i < s->k; i++) {
        const int after = s->k - i - 1;
        for (;; v++) {
            const int64_t c = (int64_t)choose(s->nb - v + after - 1, after);
            if (r < c) break;
            r -= c;
        }
        s->b[i] = v;
    }
}

/* Pass mode: spills a round's candidates and, while it had more than a page, runs it again for
 * the next page (after its last hit), one task at a time: only rounds with more than
 * TG_EPI_MAX_TOPK passing combinations come back. The result's handle is registered anew for
 * each page, so that the host reads what the worker wrote. */
static tg_status pages(struct search *s, struct slot *sl, tg_error *err) {
    tg_status st = spill_add(&s->sp, sl->res, err);
    while (!st && sl->res->passing > (uint64_t)sl->res->nhit) {
        const struct tg_epi_hit *last = &sl->res->hit[sl->res->nhit - 1];
        sl->a.has_after = 1;
        sl->a.after_key = last->key;
        memcpy(sl->a.after_snp, last->snp, sizeof sl->a.after_snp);
        sl->combos = 0; /* the progress counted the round once */
        tg_handle_vector(&sl->h, sl->res, (uint32_t)tg_epi_result_size(s->topk), 1);
        const int ret = tg_insert_epi_round(&sl->a, sl->blocks, s->th, sl->h, sl->work, round_done,
                                            sl);
        if (!ret) tg_runtime_wait_local();
        tg_handle_free(sl->h);
        if (ret)
            return tg_error_set(err, TG_ERR_RUNTIME, "cannot submit an epistasis round task of "
                                "order %d (%s)", s->k, strerror(-ret));
        st = spill_add(&s->sp, sl->res, err);
    }
    return st;
}

/* Submits up to `wave` of this rank's rounds from round s->next on, below round `rounds`
 * (advancing s->next); *expected adds their combinations, *nw counts the slots used. 0, or the
 * runtime's negative errno of the submission that failed (its slot counted, for finish_wave). */
static int submit_wave(struct search *s, const tg_epi_opts *o, struct progress *p, int64_t wave,
                       int64_t rounds, uint64_t *expected, int64_t *nw) {
    const size_t rsize = tg_epi_result_size(s->topk);
    int64_t w = 0;
    int ret = 0;
    for (; w < wave && !ret; s->next++, next_tuple(s)) {
        /* this rank's next round: every step-th round is run, every R-th of those is this
         * rank's; any other is reached by its rank (seek_round), not by walking */
        const int64_t q0 = (s->next + s->step - 1) / s->step,
                      q = q0 + ((s->rank - q0 % s->nranks) % s->nranks + s->nranks) % s->nranks,
                      t = q * s->step;
        if (t >= rounds) {
            s->next = rounds;
            break;
        }
        if (t != s->next) {
            s->next = t;
            seek_round(s, t);
        }
        struct tg_epi_round_arg a = {.order = s->k,
                                     .block = s->B,
                                     .block_missing = s->missing,
                                     .score = (int32_t)o->score,
                                     .topk = s->topk,
                                     .search = s->id,
                                     .pass = o->p_threshold > 0,
                                     .first_end = s->nset ? s->nset : s->m};
        memcpy(a.pass_stat, s->pass_stat, sizeof a.pass_stat);
        memcpy(a.words, s->words, sizeof a.words);
        memcpy(a.n, s->n, sizeof a.n);
        tg_handle blocks[TG_EPI_MAX_ORDER];
        uint64_t combos = 1;
        const int64_t *b = s->b;
        for (int i = 0; i < s->k; i++) {
            a.first[i] = b[i] * s->B;
            a.nsnp[i] = (int32_t)(s->m - a.first[i] < s->B ? s->m - a.first[i] : s->B);
            /* a set ending inside the first block, alone at its position: only its SNPs there
             * (no GEMM rows nor loops for the rest); shared with later positions, the block
             * stays whole and first_end leaves the rest out */
            if (i == 0 && s->nset && a.first[0] + a.nsnp[0] > s->nset && b[1] != b[0])
                a.nsnp[0] = (int32_t)(s->nset - a.first[0]);
            blocks[i] = s->blk[b[i]];
            /* a group of equal blocks contributes C(nsnp, multiplicity); the first group, in
             * the block where a SNP set ends, only those with a SNP of the set: all but the
             * C(its SNPs past the set, multiplicity) */
            int mult = 1;
            while (i + mult < s->k && b[i + mult] == b[i]) mult++;
            const int64_t past = i == 0 && s->nset && a.first[0] + a.nsnp[0] > s->nset
                                     ? a.first[0] + a.nsnp[0] - s->nset
                                     : 0;
            if (i == 0 || b[i - 1] != b[i])
                combos *= (uint64_t)(choose(a.nsnp[i], mult) - choose(past, mult));
        }
        struct slot *sl = &s->slots[w];
        sl->p = p;
        sl->combos = combos;
        *expected += combos;
        sl->res = (struct tg_epi_result *)(s->results + (size_t)w * rsize);
        tg_handle_vector(&sl->h, sl->res, (uint32_t)rsize, 1);
        /* a round is this rank's own work on its own handles (tg_insert_epi_round, waited for
         * by tg_runtime_wait_local) */
        /* the perfmodel's size: counting costs per combination and sample, scoring and
         * selection per combination about as much as 1,024 samples' counting */
        sl->work = (double)combos * (double)(s->n[0] + s->n[1] + 1024);
        sl->a = a;
        memcpy(sl->blocks, blocks, sizeof blocks);
        ret = tg_insert_epi_round(&a, blocks, s->th, sl->h, sl->work, round_done, sl);
        w++; /* its handle is registered: unregistered by finish_wave, submitted or not */
    }
    *nw = w;
    return ret;
}

/* Waits for the @p w rounds of submit_wave (@p ret: its return) and, unless @p st is an error
 * already (returned as it is), merges their results into s->best. */
static tg_status finish_wave(struct search *s, const tg_epi_opts *o, int64_t w, int ret,
                             tg_status st, tg_error *err) {
    /* this rank's tasks only: other ranks run other numbers of waves */
    tg_runtime_wait_local();
    for (int64_t x = 0; x < w; x++) {
        tg_handle_free(s->slots[x].h);
        if (ret || st) continue;
        if (o->p_threshold > 0) {
            s->best->evaluated += s->slots[x].res->evaluated;
            st = pages(s, &s->slots[x], err);
        } else {
            merge(s->slots[x].res, s->topk, s->best);
        }
    }
    if (st) return st;
    if (ret)
        return tg_error_set(err, TG_ERR_RUNTIME,
                            "cannot submit an epistasis round task of order %d (%s)%s", s->k,
                            strerror(-ret), ret == -ENODEV ? ": no worker started can run it" : "");
    return TG_OK;
}

static tg_status run_wave(struct search *s, const tg_epi_opts *o, struct progress *p,
                          int64_t wave, int64_t rounds, uint64_t *expected, tg_error *err) {
    int64_t w;
    const int ret = submit_wave(s, o, p, wave, rounds, expected, &w);
    return finish_wave(s, o, w, ret, TG_OK, err);
}

static void search_free(struct search *s) {
    if (s->blk)
        for (int64_t b = 0; b < s->nb; b++)
            if (s->blk[b]) tg_handle_free(s->blk[b]);
    if (s->th) tg_handle_free(s->th);
    free(s->blk);
    if (s->pinned) tg_parallel_for(s->nb, unpin_block, s);
    free(s->pinned);
    free(s->missing);
    free(s->planes);
    free(s->table);
    free(s->slots);
    free(s->results);
    free(s->best);
    free(s->gathered);
    if (s->sp.f) fclose(s->sp.f);
    free(s->sp.buf);
    free(s->sp.run_len);
    free(s->perm);
}

/* A SNP set's plane order: its SNPs in .bim order, then the others in .bim order. */
static tg_status set_order(const tg_epi_opts *o, struct search *s, tg_error *err) {
    if (!o->set) return TG_OK;
    if (o->nset < 1 || o->nset > s->m)
        return tg_error_set(err, TG_ERR_ARG, "a SNP set of %lld SNPs (1 to %lld)",
                            (long long)o->nset, (long long)s->m);
    if (!(s->perm = tg_calloc_n(s->m, 1, sizeof *s->perm, err))) return TG_ERR_NOMEM;
    for (int64_t i = 0; i < o->nset; i++) {
        const int64_t j = o->set[i];
        if (j < 0 || j >= s->m || s->perm[j])
            return tg_error_set(err, TG_ERR_ARG, "SNP set entry %lld: SNP index %lld %s",
                                (long long)i + 1, (long long)j,
                                j < 0 || j >= s->m ? "is outside the .bim" : "is there twice");
        s->perm[j] = 1; /* a mark until the order is written */
    }
    int64_t *order = tg_malloc_n(s->m, 1, sizeof *order, err);
    if (!order) return TG_ERR_NOMEM;
    int64_t at = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (int64_t j = 0; j < s->m; j++)
            if (s->perm[j] == pass) order[at++] = j;
    free(s->perm);
    s->perm = order;
    s->nset = o->nset;
    return TG_OK;
}

static tg_status check_opts(const tg_bed *bed, const tg_epi_opts *o, tg_error *err) {
    if (o->order < 2 || o->order > TG_EPI_MAX_ORDER)
        return tg_error_set(err, TG_ERR_ARG, "--order %d: must be 2, 3 or 4", o->order);
    if (o->topk < 1 || o->topk > TG_EPI_MAX_TOPK)
        return tg_error_set(err, TG_ERR_ARG, "--top %d: must be between 1 and %d", o->topk,
                            TG_EPI_MAX_TOPK);
    if (o->score < TG_EPI_SCORE_K2 || o->score > TG_EPI_SCORE_CHI2)
        return tg_error_set(err, TG_ERR_ARG, "unknown score kind %d", (int)o->score);
    if (o->p_threshold != 0 && !(o->p_threshold > 0 && o->p_threshold <= 1))
        return tg_error_set(err, TG_ERR_ARG, "--p-threshold %g: must be in (0, 1]", o->p_threshold);
    if (o->p_threshold > 0 && o->score == TG_EPI_SCORE_K2)
        return tg_error_set(err, TG_ERR_ARG, "--p-threshold: the K2 score has no P value (use "
                            "--score mi or chi2)");
    if (o->p_threshold > 0 && tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "--p-threshold: not with several MPI ranks (each "
                            "would hold its own candidates)");
    if (o->max_rounds < 0 || o->round_step < 0)
        return tg_error_set(err, TG_ERR_ARG, "rounds: max_rounds %lld and round_step %lld must "
                            "not be negative", (long long)o->max_rounds, (long long)o->round_step);
    if (o->block && (o->block < 8 || o->block > 4096 || o->block % 8))
        return tg_error_set(err, TG_ERR_ARG, "--block %d: must be a multiple of 8 in [8, 4096]",
                            o->block);
    if (bed->n_snps > TG_EPI_MAX_SNPS)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s.bim: %lld SNPs: epistasis indexes SNPs with 32 bits, at most "
                            "2^31 - 1 = %d SNPs",
                            bed->prefix, (long long)bed->n_snps, TG_EPI_MAX_SNPS);
    if (bed->n_snps < o->order)
        return tg_error_set(err, TG_ERR_ARG, "%s.bim: %lld SNPs: --order %d needs at least %d",
                            bed->prefix, (long long)bed->n_snps, o->order, o->order);
    if (choose(bed->n_snps, o->order) > (unsigned __int128)UINT64_MAX)
        return tg_error_set(err, TG_ERR_ARG, "%lld SNPs at --order %d: more than 2^64 combinations",
                            (long long)bed->n_snps, o->order);
    return TG_OK;
}

/* The search's shape from its options and classes: the order, the block, the plane words. */
static tg_status plan(const tg_bed *bed, const int8_t *cls, const tg_epi_opts *o,
                      struct search *s, tg_error *err) {
    static const int default_block[TG_EPI_MAX_ORDER + 1] = {0, 0, 1024, 256, 64};
    tg_status st = check_opts(bed, o, err);
    if (st) return st;
    for (int64_t i = 0; i < bed->n_samples; i++)
        if (cls[i] >= 0) s->n[cls[i]]++;
    if (!s->n[0] || !s->n[1])
        return tg_error_set(err, TG_ERR_ARG, "%lld controls and %lld cases: epistasis needs both",
                            (long long)s->n[0], (long long)s->n[1]);
    s->k = o->order;
    s->topk = o->p_threshold > 0 ? TG_EPI_MAX_TOPK : o->topk;
    s->m = bed->n_snps;
    s->B = o->block ? o->block : default_block[s->k];
    /* order 4 with GPUs: blocks of 128, whose rounds run ~4% faster there than those of 64
     * (docs/PERFORMANCE.md), where that still makes 8 rounds a GPU; the CPUs' shorter rounds
     * spread over more cores. One rank only: every rank must plan the same blocks, and ranks
     * may differ in GPUs. */
    const int64_t big = (s->m + 127) / 128;
    if (!o->block && s->k == 4 && tg_runtime_nranks() == 1 && tg_runtime_ngpu() > 0 &&
        choose(big + 3, 4) >= 8 * (unsigned)tg_runtime_ngpu())
        s->B = 128;
    if (s->B > (s->m + 7) / 8 * 8) s->B = (int)((s->m + 7) / 8 * 8);
    s->nb = (s->m + s->B - 1) / s->B;
    for (int c = 0; c < 2; c++) s->words[c] = 4 * ((s->n[c] + 255) / 256);
    s->block_words = 3 * (int64_t)s->B * (s->words[0] + s->words[1]);
    if (s->block_words > (int64_t)UINT32_MAX)
        return tg_error_set(err, TG_ERR_ARG,
                            "--block %d with %lld samples: a block of %lld words is more than a "
                            "StarPU vector holds (2^32 - 1); use a smaller --block",
                            s->B, (long long)(s->n[0] + s->n[1]), (long long)s->block_words);
    return TG_OK;
}

/* The search's memory: the planes (not yet built), their flags, the score table, the handles,
 * a wave's slots and results, the merged results and pass mode's spill. */
static tg_status search_alloc(struct search *s, const tg_epi_opts *o, int64_t wave, int64_t nt,
                              size_t rsize, tg_error *err) {
    size_t bytes;
    if (tg_size_mul(s->nb, s->block_words, sizeof *s->planes, &bytes, err)) return TG_ERR_NOMEM;
    if (!(s->planes = tg_host_alloc_large(bytes, NULL)))
        return tg_error_set(err, TG_ERR_NOMEM, "cannot allocate %.3g GiB of genotype planes",
                            (double)bytes / (1 << 30));
    if (!(s->pinned = tg_calloc_n(s->nb, 1, 1, err)) ||
        !(s->missing = tg_calloc_n(s->nb, 1, 1, err)) ||
        !(s->table = tg_malloc_n(nt, 1, sizeof *s->table, err)) ||
        !(s->blk = tg_calloc_n(s->nb, 1, sizeof *s->blk, err)) ||
        !(s->slots = tg_calloc_n(wave, 1, sizeof *s->slots, err)) ||
        !(s->results = tg_malloc_n(wave, 1, rsize, err)) ||
        !(s->best = tg_calloc(1, rsize, err)) ||
        (s->rank == 0 && !(s->gathered = tg_malloc_n(s->nranks, 1, rsize, err))) ||
        (o->p_threshold > 0 &&
         !(s->sp.buf = tg_malloc_n(s->sp.run = o->p_run > 0 ? (size_t)o->p_run : RUN, 1,
                                   sizeof *s->sp.buf, err))))
        return TG_ERR_NOMEM;
    if (o->p_threshold > 0) {
        pass_stats(o->p_threshold, s->pass_stat);
        if (!(s->sp.f = tmpfile()))
            return tg_error_set(err, TG_ERR_IO, "cannot create a temporary file for the "
                                "candidates of --p-threshold: %s", strerror(errno));
    }
    return TG_OK;
}

/* Rounds in flight: enough to feed every worker, their results bounded to about 256 MiB. */
static int64_t wave_most(size_t rsize) {
    int64_t wave = (int64_t)(((size_t)256 << 20) / rsize),
            busy = 8 * (int64_t)tg_runtime_nworkers();
    if (wave > 4096) wave = 4096;
    return wave < busy ? busy : wave;
}

tg_status tg_epistasis_memory(const tg_bed *bed, const int8_t *cls, const tg_epi_opts *o,
                              double *host, double *gpu, double *task, tg_error *err) {
    struct search s = {0};
    tg_status st = plan(bed, cls, o, &s, err);
    if (st) return st;
    const double planes = (double)s.nb * (double)s.block_words * sizeof *s.planes,
                 table = (double)(s.n[0] + s.n[1] + 2) * sizeof *s.table,
                 rsize = (double)tg_epi_result_size(s.topk);
    *host = planes + table + (double)wave_most(tg_epi_result_size(s.topk)) * rsize +
            (double)tg_runtime_nranks() * rsize;
    *gpu = planes + table;
    *task = (double)s.k * (double)s.block_words * sizeof *s.planes + table + rsize;
    return TG_OK;
}

tg_status tg_epistasis(const tg_bed *bed, const int8_t *cls, const tg_epi_opts *o,
                       tg_epi_report *rep, tg_error *err) {
    static int64_t searches; /* atomic */
    struct search s = {.id = __atomic_fetch_add(&searches, 1, __ATOMIC_RELAXED)};
    memset(rep, 0, sizeof *rep);
    if (o->p_threshold > 0 && !o->emit)
        return tg_error_set(err, TG_ERR_ARG, "p_threshold without an emit function");
    tg_status st = plan(bed, cls, o, &s, err);
    if (st) return st;
    s.rank = tg_runtime_rank();
    s.nranks = tg_runtime_nranks();
    *rep = (tg_epi_report){.order = s.k,
                           .block = s.B,
                           .n_snps = s.m,
                           .n_controls = s.n[0],
                           .n_cases = s.n[1],
                           .n_excluded = bed->n_samples - s.n[0] - s.n[1]};
    if ((st = set_order(o, &s, err))) goto done;
    /* with a set, the block tuples that start in the set's blocks: the first rounds */
    const uint64_t all =
        (uint64_t)(choose(s.m, s.k) - (s.nset ? choose(s.m - s.nset, s.k) : 0));
    rep->rounds = (int64_t)choose(s.nb + s.k - 1, s.k);
    if (s.nset) rep->rounds -= (int64_t)choose(s.nb - (s.nset - 1) / s.B - 1 + s.k - 1, s.k);
    rep->n_set = s.nset;
    const int cut = o->max_rounds > 0 && o->max_rounds < rep->rounds, part = cut || o->round_step > 1;
    if (cut) rep->rounds = o->max_rounds;
    s.step = o->round_step < 1 ? 1 : o->round_step > rep->rounds ? rep->rounds : o->round_step;

    const double t0 = tg_now();
    const int64_t nt = s.n[0] + s.n[1] + 2;
    const size_t rsize = tg_epi_result_size(s.topk);
    /* this rank's rounds: of the rounds run (every step-th), every R-th from the rank's own
     * on (none when R exceeds them) */
    const int64_t run = (rep->rounds + s.step - 1) / s.step,
                  own = run / s.nranks + (s.rank < run % s.nranks);
    int64_t wave = wave_most(rsize);
    if (wave > own) wave = own;
    if ((st = search_alloc(&s, o, wave, nt, rsize, err))) goto done;
    tg_epi_score_table((enum tg_epi_score)o->score, s.n[0] + s.n[1], s.table);
    tg_handle_vector(&s.th, s.table, (uint32_t)nt, sizeof *s.table);
    for (int64_t b = 0; b < s.nb; b++) {
        tg_handle_vector(&s.blk[b], s.planes + b * s.block_words, (uint32_t)s.block_words,
                         sizeof *s.planes);
        tg_handle_hold(s.blk[b]); /* released by build_planes */
    }
    struct progress p = {.o = o,
                         .total = all,
                         .nranks = s.nranks,
                         .last_ms = (int64_t)(tg_now() * 1000)};
    uint64_t expected = 0;
    /* the first wave before the planes: its rounds start as their blocks are built */
    int64_t w;
    const int ret = submit_wave(&s, o, &p, wave, rep->rounds, &expected, &w);
    st = build_planes(bed, cls, &s, rep, err);
    rep->seconds_planes = tg_now() - t0;
    st = finish_wave(&s, o, w, ret, st, err);
    for (int64_t left = own - wave; left > 0 && !st; left -= wave)
        st = run_wave(&s, o, &p, left < wave ? left : wave, rep->rounds, &expected, err);
    if (st) goto done;
    /* the rounds' own counts and the counts planned at their submission must agree */
    if (s.best->evaluated != expected) {
        st = tg_error_set(err, TG_ERR_RUNTIME,
                          "internal error: the rounds evaluated %llu combinations, %llu expected "
                          "(a bug in the search: please report it)",
                          (unsigned long long)s.best->evaluated, (unsigned long long)expected);
        goto done;
    }
    rep->combinations = expected;
    tg_runtime_gather(s.best, rsize, s.gathered);
    rep->seconds_search = tg_now() - t0;
    if (s.rank) goto done; /* rank 0 reports */
    struct tg_epi_result *best = s.best;
    best->evaluated = 0;
    best->nhit = 0;
    for (int r = 0; r < s.nranks; r++)
        merge((const struct tg_epi_result *)(s.gathered + (size_t)r * rsize), s.topk, best);
    /* every combination evaluated exactly once, whatever the ranks */
    if (!part && best->evaluated != all) {
        st = tg_error_set(err, TG_ERR_RUNTIME,
                          "internal error: the rounds of %d rank%s evaluated %llu combinations, "
                          "C(%lld, %d) - C(%lld, %d) = %llu expected (a bug in the search: "
                          "please report it)",
                          s.nranks, s.nranks == 1 ? "" : "s",
                          (unsigned long long)best->evaluated, (long long)s.m, s.k,
                          (long long)(s.nset ? s.m - s.nset : 0), s.k, (unsigned long long)all);
        goto done;
    }
    rep->combinations = best->evaluated;
    if (o->progress) o->progress(o->progress_ctx, best->evaluated, best->evaluated);
    st = o->p_threshold > 0 ? spill_emit(&s, o, rep, err) : report_hits(&s, o, rep, err);
done:
    search_free(&s);
    if (st) tg_epi_report_free(rep);
    return st;
}

void tg_epi_report_free(tg_epi_report *rep) {
    free(rep->hits);
    rep->hits = NULL;
    rep->nhit = 0;
}
