/* The genomic relationship matrix, two ways: by blocks of rows from INT8 or FP64 tiles
 * (tg_grm_rows, the second half of this file: one rank, every kind and divisor), and below,
 * for several MPI ranks, K = Z·Zᵀ/m through the genotype matrix products: for each
 * block of at most TG_CG_MAXK samples, W = Zᵀ·E (E the block's identity columns, so W holds those
 * samples' rows of Z) and K[:, block] = Z·W / m. 2·⌈n/64⌉ products; the genotypes stay where
 * tg_geno keeps them (on the GPUs) between products. With scale this is plink2's
 * `--make-rel meanimpute` (variance-standardised, missing calls mean-imputed, divided by the
 * total SNP count m, zero columns included); without, `--make-rel cov meanimpute`.
 *
 * Several MPI ranks: E holds this rank's rows only, so W = Σ_r Z_rᵀ·E_r is summed over the
 * ranks (only the ranks holding a sample of the block add anything but zeros, and W's entries
 * are exact sums of a few terms: the same as one rank's), Z·W gives each rank its rows of the
 * block's columns, and rank 0 gathers them into K. Only rank 0 holds K. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "base/parallel.h"
#include "codelets/distance.h"
#include "codelets/grm.h"
#include "geno/pass.h"
#include "geno/source.h"
#include "io/out.h"
#include "runtime/runtime.h"

tg_status tg_grm(tg_geno *g, double *K, int64_t ldk, tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    const int root = tg_runtime_rank() == 0;
    if (root && (!K || ldk < n))
        return tg_error_set(err, TG_ERR_ARG, "GRM: no matrix, or leading dimension %lld < n %lld",
                            (long long)ldk, (long long)n);
    int64_t i0, nl;
    tg_geno_local(g, &i0, &nl);
    tg_status st = TG_OK;
    double *e = tg_calloc_n(nl, TG_CG_MAXK, sizeof *e, err),
           *w = tg_malloc_n(m, TG_CG_MAXK, sizeof *w, err),
           *kb = tg_malloc_n(nl, TG_CG_MAXK, sizeof *kb, err);
    if (!e || !w || !kb) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    /* counted on the host: each product waits for its tasks */
    tg_phase *ph =
        tg_phase_open_host("grm", "products", 2 * ((n + TG_CG_MAXK - 1) / TG_CG_MAXK));
    for (int64_t b0 = 0; b0 < n && !st; b0 += TG_CG_MAXK) {
        int64_t k = n - b0 < TG_CG_MAXK ? n - b0 : TG_CG_MAXK;
        /* the block's samples that are this rank's: a = i − b0 for i in both ranges */
        int64_t a0 = i0 > b0 ? i0 - b0 : 0, a1 = i0 + nl - b0 < k ? i0 + nl - b0 : k;
        for (int64_t a = a0; a < a1; a++) e[b0 + a - i0 + a * nl] = 1;
        st = tg_cg_mul(g, 1, k, e, nl, w, m, NULL, NULL, err);
        if (!st) st = tg_cg_mul(g, 0, k, w, m, kb, nl, NULL, NULL, err);
        if (!st) tg_phase_add(ph, 2);
        if (!st)
            st = tg_runtime_gather_rows(kb, nl, root ? K + b0 * ldk : NULL, ldk, n, k, sizeof *kb,
                                        err);
        for (int64_t a = a0; a < a1; a++) e[b0 + a - i0 + a * nl] = 0;
    }
    tg_phase_close(ph);
    if (st || !root) goto cleanup;
    /* the two triangles come from different summation orders: average them, so K is exactly
     * symmetric, and divide by m */
    for (int64_t j = 0; j < n; j++) {
        K[j + j * ldk] /= (double)m;
        for (int64_t i = j + 1; i < n; i++) {
            double v = 0.5 * (K[i + j * ldk] + K[j + i * ldk]) / (double)m;
            K[i + j * ldk] = K[j + i * ldk] = v;
        }
    }
cleanup:
    free(kb);
    free(w);
    free(e);
    return st;
}

/* ---- The relationship matrix by blocks of rows (tg_grm_rows): one pass encodes every sample
 * as int8 e_ik = x_ik − round(2p_k) (TG_GRM_MISS where missing), SNPs contiguous per sample, in
 * panels of nb samples, each registered once as a runtime handle. The matrix is then made a
 * block row at a time, each tile (I, J) one task on a CPU or a GPU:
 *  - integer (centred or VanRaden, no missing call): Σ_k Z_ik Z_jk = G_ij − s_i − s_j + c0 with
 *    G = E·Eᵀ the exact INT8 Gram (tg_cl_gram), δ_k = 2p_k − round(2p_k), s_i = Σ_k e_ik δ_k,
 *    c0 = Σ_k δ_k²;
 *  - float (standardised: a per-SNP weight 1/(2p(1 − p)) makes no integer product; or missing
 *    calls): Z·diag(w)·Zᵀ from FP64 tiles (e − δ)·√w widened chunk by chunk (tg_cl_grm: DSYRK
 *    on the diagonal, DGEMM elsewhere). Not FP32: its rounding (up to 1e-7 on an entry at
 *    20,000 SNPs) changed plink2's 6th printed digit in 22% of the entries
 *    (docs/PERFORMANCE.md), and an exact INT8 form of the weights needs ~5 products (6 bits
 *    each), slower than one DGEMM.
 * Pair counts (the pairwise divisor, GCTA's N) are the INT8 Gram of the called indicators. The
 * tasks write the tiles straight into the block row's buffers; the host then applies the
 * corrections and divisors when the row comes back, while the next block row computes. */

enum {
    GRM_NB = 512,      /* rows per block on CPUs: 7% less CPU than 256 in the FP64 path (2 cores) */
    GRM_NB_GPU = 2048, /* with GPUs: a 512² tile is 16 of cuBLAS's 128² blocks for 132 SMs */
    GRM_ALIGN = 16     /* INT8 product panels: a multiple of 16 entries */
};

static const char *const grm_kinds[] = {"standardised", "centred", "vanraden"};

const char *tg_grm_kind_name(tg_grm_kind k) {
    return (unsigned)k < sizeof grm_kinds / sizeof *grm_kinds ? grm_kinds[k] : "invalid";
}

tg_status tg_grm_kind_parse(const char *name, tg_grm_kind *k, tg_error *err) {
    for (int i = 0; i < (int)(sizeof grm_kinds / sizeof *grm_kinds); i++)
        if (name && !strcmp(name, grm_kinds[i])) {
            *k = (tg_grm_kind)i;
            return TG_OK;
        }
    return tg_error_set(err, TG_ERR_ARG, "unknown GRM kind '%s': expected standardised, centred "
                        "or vanraden", name ? name : "(null)");
}

int tg_grm_block_rows(const tg_grm_opts *o) {
    return o && o->nb > 0 ? o->nb : tg_runtime_ngpu() > 0 ? GRM_NB_GPU : GRM_NB;
}

/* One block row in flight: its tiles' handles and the buffers they write (row-major, ld n). */
struct grm_row {
    int64_t bi;
    int tiles;                 /* J = 0 .. tiles − 1, handles registered */
    double *k, *nobs;          /* the result (k also receives the FP64 sums); nobs: counts */
    int32_t *c;                /* the INT8 Gram of the encodings (integer) or of the called
                                * indicators (counts): never both */
    tg_handle *hk, *hc;        /* per tile: over k (FP64 sums), over c */
};

struct grm {
    int64_t n, m, pad;
    int nb, np, integer, square, counts;
    int8_t **enc, **obs; /* np panels of pad × rows (obs: 0/1 called, only for counts) */
    double *off, *w;     /* pad each, one block (off first: hv): δ_k, and the weight √w_k of Z
                          * (0 for unused SNPs and the padding) */
    double *s, c0, denom;
    tg_handle *he, *ho, hv; /* the panels of enc and obs, and δ with √w */
    struct grm_row row[2];  /* two block rows in flight */
};

static int64_t grm_rows(const struct grm *g, int64_t p) {
    return p == g->np - 1 ? g->n - p * g->nb : g->nb;
}

/* SNPs a chunk of the pass (the encoder's) */
enum { GRM_CHUNK = 64 };

/* Sample by sample: each writes its chunk's bytes of one panel row contiguously, where SNP by
 * SNP every value would be a write to another row, a page apart at 4,096 SNPs and more. */
static tg_status grm_encode(void *ctx, const double *freq, int64_t j0, int64_t nj, int64_t i0,
                            int64_t ni, int8_t *x, int64_t ld, tg_error *err) {
    const struct grm *g = ctx;
    (void)err;
    int8_t shift[GRM_CHUNK];
    for (int64_t j = 0; j < nj; j++) {
        const double p = freq[j0 + j];
        shift[j] = isnan(p) ? 0 : (int8_t)floor(2 * p + 0.5);
    }
    for (int64_t r = 0; r < ni; r++) {
        const int64_t i = i0 + r;
        int8_t *e = g->enc[i / g->nb] + (i % g->nb) * g->pad + j0;
        for (int64_t j = 0; j < nj; j++) {
            const int8_t v = x[j * ld + r];
            e[j] = v == TG_GENO_MISSING ? TG_GRM_MISS : (int8_t)(v - shift[j]);
        }
    }
    return TG_OK;
}

static void grm_free(struct grm *g) {
    for (int p = 0; p < g->np; p++) {
        if (g->he && g->he[p]) tg_handle_free(g->he[p]);
        if (g->ho && g->ho[p]) tg_handle_free(g->ho[p]);
        if (g->enc) tg_host_free(g->enc[p]);
        if (g->obs) tg_host_free(g->obs[p]);
    }
    if (g->hv) tg_handle_free(g->hv);
    for (int r = 0; r < 2; r++) {
        tg_host_free(g->row[r].k);
        tg_host_free(g->row[r].c);
        free(g->row[r].nobs);
        free(g->row[r].hk);
        free(g->row[r].hc);
    }
    free(g->he);
    free(g->ho);
    free(g->enc);
    free(g->obs);
    tg_host_free(g->off);
    free(g->s);
}

/* Panel p's per-sample terms: s_i = Σ_k e_ik δ_k (integer path) and the called indicators
 * (pair counts). */
static void grm_panel_terms(void *ctx, int64_t p) {
    struct grm *g = ctx;
    for (int64_t r = 0; r < grm_rows(g, p); r++) {
        const int8_t *e = g->enc[p] + r * g->pad;
        if (g->s) {
            double s = 0;
            for (int64_t k = 0; k < g->m; k++) s += e[k] * g->off[k];
            g->s[p * g->nb + r] = s;
        }
        for (int64_t k = 0; g->obs && k < g->m; k++)
            g->obs[p][r * g->pad + k] = e[k] != TG_GRM_MISS;
    }
}

/* A zeroed panel of pad × rows bytes, in memory the GPUs reach by DMA (the padding must read 0). */
static int8_t *grm_panel(const struct grm *g, int64_t p, tg_error *err) {
    size_t bytes;
    if (tg_size_mul(grm_rows(g, p), g->pad, 1, &bytes, err)) return NULL;
    int8_t *x = tg_host_alloc(bytes, err);
    if (x) memset(x, 0, bytes);
    return x;
}

/* The panels, from one pass over the fileset, the per-SNP and per-sample terms, and their
 * handles. */
static tg_status grm_prepare(const tg_bed *bed, const tg_grm_opts *o, struct grm *g,
                             tg_grm_info *info, tg_error *err) {
    g->n = bed->n_samples;
    g->m = o->snps ? o->nsnps : bed->n_snps;
    /* the panels' leading dimension (pad) and the terms' 2 × pad entries are StarPU's uint32 */
    if (g->m > INT32_MAX - GRM_ALIGN)
        return tg_error_set(err, TG_ERR_ARG, "GRM: %lld SNPs: at most %d", (long long)g->m,
                            INT32_MAX - GRM_ALIGN);
    g->pad = (g->m + GRM_ALIGN - 1) / GRM_ALIGN * GRM_ALIGN;
    g->nb = tg_grm_block_rows(o);
    g->np = (int)((g->n + g->nb - 1) / g->nb);
    g->square = o->square;
    if (!(g->enc = tg_calloc_n(g->np, 1, sizeof *g->enc, err)) ||
        !(g->he = tg_calloc_n(g->np, 1, sizeof *g->he, err)) ||
        !(g->off = tg_host_alloc(2 * (size_t)g->pad * sizeof *g->off, err))) /* pad < 2^31 */
        return TG_ERR_NOMEM;
    memset(g->off, 0, 2 * (size_t)g->pad * sizeof *g->off);
    g->w = g->off + g->pad;
    for (int p = 0; p < g->np; p++)
        if (!(g->enc[p] = grm_panel(g, p, err))) return TG_ERR_NOMEM;
    tg_geno_source *src = NULL;
    tg_geno_range all = {0, g->n};
    const tg_geno_encoder enc = {grm_encode, g, GRM_CHUNK, 1};
    tg_geno_counts cnt = {0};
    tg_status st = tg_geno_source_bed(bed, &src, err);
    if (!st && o->snps) st = tg_geno_source_select(src, NULL, g->n, o->snps, o->nsnps, err);
    if (!st) st = tg_geno_pass(src, &all, 1, 1, NULL, &enc, &cnt, err);
    tg_geno_source_free(src);
    if (st) return st;
    double var = 0; /* Σ 2p(1 − p) over polymorphic SNPs */
    int64_t used = 0;
    for (int64_t k = 0; k < g->m; k++) {
        double p = cnt.freq[k];
        if (!tg_geno_polymorphic(p)) continue; /* δ and √w stay 0: Z is 0 */
        used++;
        var += 2 * p * (1 - p);
        g->off[k] = 2 * p - floor(2 * p + 0.5); /* exact (Sterbenz) */
        g->w[k] = o->kind == TG_GRM_STANDARDISED ? 1 / sqrt(2 * p * (1 - p)) : 1;
    }
    info->m = g->m;
    info->used = used;
    info->missing = cnt.missing;
    tg_geno_counts_free(&cnt);
    g->integer = o->kind != TG_GRM_STANDARDISED && info->missing == 0;
    /* the pairs' counts of SNPs both called: the pairwise divisor, and GCTA's N (which is m
     * with meanimpute, as plink2 writes it); every SNP for every pair without missing calls */
    g->counts = !o->meanimpute && info->missing > 0 && (o->counts || o->kind != TG_GRM_VANRADEN);
    g->denom = o->kind == TG_GRM_VANRADEN ? var : g->counts ? 0 : (double)g->m;
    if (o->kind == TG_GRM_VANRADEN && !(var > 0))
        return tg_error_set(err, TG_ERR_ARG, "%s: every SNP is monomorphic or missing: the "
                            "VanRaden GRM (divided by Σ2p(1-p)) is undefined", bed->prefix);
    info->denom = g->denom;
    info->integer = g->integer;
    if (g->integer) {
        if (!(g->s = tg_calloc_n(g->n, 1, sizeof *g->s, err))) return TG_ERR_NOMEM;
        for (int64_t k = 0; k < g->m; k++) g->c0 += g->off[k] * g->off[k];
    }
    if (g->counts) {
        if (!(g->obs = tg_calloc_n(g->np, 1, sizeof *g->obs, err)) ||
            !(g->ho = tg_calloc_n(g->np, 1, sizeof *g->ho, err)))
            return TG_ERR_NOMEM;
        for (int p = 0; p < g->np; p++)
            if (!(g->obs[p] = grm_panel(g, p, err))) return TG_ERR_NOMEM;
    }
    tg_parallel_for(g->np, grm_panel_terms, g);
    for (int p = 0; p < g->np; p++) {
        const uint32_t pad = (uint32_t)g->pad, rows = (uint32_t)grm_rows(g, p);
        tg_handle_matrix(&g->he[p], g->enc[p], pad, pad, rows, 1);
        if (g->counts) tg_handle_matrix(&g->ho[p], g->obs[p], pad, pad, rows, 1);
    }
    tg_handle_vector(&g->hv, g->off, 2 * (uint32_t)g->pad, sizeof *g->off);
    /* the two block rows' buffers */
    size_t bk, bc; /* a block row's bytes: nb × n doubles, int32 */
    if (tg_size_mul(g->nb, g->n, sizeof *g->row[0].k, &bk, err) ||
        tg_size_mul(g->nb, g->n, sizeof *g->row[0].c, &bc, err))
        return TG_ERR_NOMEM;
    for (int r = 0; r < 2; r++) {
        struct grm_row *w = &g->row[r];
        if (!(w->hk = tg_calloc_n(g->np, 1, sizeof *w->hk, err)) ||
            !(w->hc = tg_calloc_n(g->np, 1, sizeof *w->hc, err)) ||
            !(w->k = tg_host_alloc(bk, err)) ||
            ((g->integer || g->counts) && !(w->c = tg_host_alloc(bc, err))) ||
            (o->counts && !(w->nobs = tg_malloc_n(g->nb, g->n, sizeof *w->nobs, err))))
            return TG_ERR_NOMEM;
    }
    return TG_OK;
}

/* Submits block row @p bi's tiles into @p w. On a failed submission the tiles submitted so far
 * stay registered (grm_collect waits for them). */
static tg_status grm_submit(struct grm *g, struct grm_row *w, int64_t bi, tg_error *err) {
    const uint32_t n = (uint32_t)g->n, rows = (uint32_t)grm_rows(g, bi);
    w->bi = bi;
    w->tiles = 0;
    for (int64_t bj = 0; bj < (g->square ? g->np : bi + 1); bj++) {
        const int64_t c0 = bj * g->nb;
        const uint32_t cols = (uint32_t)grm_rows(g, bj);
        /* the tile, row-major with ld n: a cols × rows column-major matrix */
        int rc = 0;
        w->hk[bj] = w->hc[bj] = NULL;
        if (g->integer) {
            tg_handle_matrix(&w->hc[bj], w->c + c0, n, cols, rows, sizeof *w->c);
        } else {
            tg_handle_matrix(&w->hk[bj], w->k + c0, n, cols, rows, sizeof *w->k);
            if (g->counts) tg_handle_matrix(&w->hc[bj], w->c + c0, n, cols, rows, sizeof *w->c);
        }
        w->tiles++;
        if (g->integer)
            rc = tg_insert_gram(g->he[bj], g->he[bi], w->hc[bj], 0);
        else
            rc = tg_insert_grm(g->he[bi], g->he[bj], g->hv, w->hk[bj], 0);
        if (!rc && g->counts) rc = tg_insert_gram(g->ho[bj], g->ho[bi], w->hc[bj], 0);
        if (rc)
            return tg_error_set(err, TG_ERR_RUNTIME, "GRM: cannot submit the tasks of tile "
                                "(%lld, %lld)", (long long)bi + 1, (long long)bj + 1);
    }
    return TG_OK;
}

struct grm_finish {
    const struct grm *g;
    const struct grm_row *w;
};

/* Tile J of a returned block row: the corrections and divisors, in place; a diagonal tile's
 * upper half from its lower (the FP64 codelet writes the lower only). */
static void grm_finish_tile(void *ctx, int64_t bj) {
    const struct grm_finish *f = ctx;
    const struct grm *g = f->g;
    const struct grm_row *w = f->w;
    const int64_t bi = w->bi, rows = grm_rows(g, bi), cols = grm_rows(g, bj), n = g->n;
    const int64_t r0 = bi * g->nb, c0 = bj * g->nb;
    const int sym = bi == bj;
    double *k = w->k + c0, *nobs = w->nobs ? w->nobs + c0 : NULL;
    const int32_t *c = w->c ? w->c + c0 : NULL;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < (sym ? i + 1 : cols); j++) {
            const int64_t e = j + i * n;
            const double v = g->integer ? (double)c[e] - g->s[r0 + i] - g->s[c0 + j] + g->c0 : k[e];
            const double nij = g->counts ? (double)c[e] : (double)g->m;
            /* a pair without a common call: plink2 prints nan */
            const double d = g->denom > 0 ? g->denom : nij > 0 ? nij : NAN;
            k[e] = v / d;
            if (nobs) nobs[e] = nij;
        }
    for (int64_t i = 0; sym && i < rows; i++)
        for (int64_t j = i + 1; j < cols; j++) {
            k[j + i * n] = k[i + j * n];
            if (nobs) nobs[j + i * n] = nobs[i + j * n];
        }
}

/* Waits for block row @p w's tiles (unregistering brings them back to its buffers) and, when
 * @p finish, applies the corrections and divisors. */
static void grm_collect(const struct grm *g, struct grm_row *w, int finish) {
    for (int j = 0; j < w->tiles; j++) {
        if (w->hk[j]) tg_handle_free(w->hk[j]);
        if (w->hc[j]) tg_handle_free(w->hc[j]);
    }
    if (finish) {
        struct grm_finish f = {g, w};
        tg_parallel_for(w->tiles, grm_finish_tile, &f);
    }
    w->tiles = 0;
}

tg_status tg_grm_rows(const tg_bed *bed, const tg_grm_opts *o, tg_grm_rows_fn fn, void *ctx,
                      tg_grm_info *info, tg_error *err) {
    tg_grm_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    if (!bed || !o || !fn || bed->n_samples < 1 || bed->n_snps < 1 || (o->snps && o->nsnps < 1))
        return tg_error_set(err, TG_ERR_ARG, "GRM: no fileset, no samples or no SNPs");
    if ((unsigned)o->kind > TG_GRM_VANRADEN)
        return tg_error_set(err, TG_ERR_ARG, "GRM: invalid kind %d", (int)o->kind);
    if (tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "GRM by blocks of rows: one MPI rank only");
    if (!tg_runtime_started())
        return tg_error_set(err, TG_ERR_RUNTIME, "GRM: the runtime is not started");
    double t0 = tg_now();
    struct grm g = {0};
    tg_status st = grm_prepare(bed, o, &g, info, err);
    info->read_s = tg_now() - t0;
    t0 = tg_now();
    tg_phase *ph = st ? NULL : tg_phase_open_host("grm", "blocks", g.np);
    /* block row I + 1 is submitted before row I is waited for: the tasks run while the host
     * finishes and hands on row I */
    if (!st) st = grm_submit(&g, &g.row[0], 0, err);
    for (int64_t bi = 0; !st && bi < g.np; bi++) {
        struct grm_row *w = &g.row[bi % 2];
        if (bi + 1 < g.np) st = grm_submit(&g, &g.row[(bi + 1) % 2], bi + 1, err);
        grm_collect(&g, w, !st);
        const int64_t r0 = bi * g.nb;
        if (!st) st = fn(ctx, r0, r0 + grm_rows(&g, bi), w->k, w->nobs, g.n, err);
        tg_phase_add(ph, 1);
    }
    for (int r = 0; r < 2; r++) grm_collect(&g, &g.row[r], 0); /* after an error */
    if (ph) tg_phase_close(ph);
    info->products_s = tg_now() - t0;
    grm_free(&g);
    return st;
}

struct grm_copy {
    double *K;
    int64_t ldk;
};

static tg_status grm_copy_rows(void *ctx, int64_t r0, int64_t r1, const double *k,
                               const double *nobs, int64_t ld, tg_error *err) {
    const struct grm_copy *c = ctx;
    (void)nobs;
    (void)err;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t j = 0; j <= r; j++) c->K[r + j * c->ldk] = k[j + (r - r0) * ld];
    return TG_OK;
}

tg_status tg_grm_lower(const tg_bed *bed, const tg_grm_opts *o, double *K, int64_t ldk,
                       tg_grm_info *info, tg_error *err) {
    if (!K || !bed || ldk < bed->n_samples)
        return tg_error_set(err, TG_ERR_ARG, "GRM: no matrix, or leading dimension %lld below "
                            "the samples", (long long)ldk);
    tg_grm_opts lo = *o;
    lo.square = 0;
    lo.counts = 0;
    struct grm_copy c = {K, ldk};
    return tg_grm_rows(bed, &lo, grm_copy_rows, &c, info, err);
}
