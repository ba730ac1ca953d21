/* Genotype matrix products on the CPU: the 5codes kernel (Freudenberg et al. 2023, section
 * 2.2.2), its codelet table and tg_insert_fivecodes. See codelets/fivecodes.h for the layout.
 *
 * For each group g of five table rows the kernel builds the 243 possible dot products
 * tab[code] = base + Σ_t d_t(code)·A_t (A_t = w_t·in_t: a row of Λ) and adds tab[code] to the
 * accumulator of every output row: one lookup per (row, group) instead of 5k multiply-adds.
 * The tables of up to eight groups are built at a time (in L2), and each output row's
 * accumulator stays in registers for their eight lookups; rows are processed in chunks whose
 * accumulators stay in L2. Wide products run in slices of columns (FC_SLICE_BYTES), each a
 * pass of its own. Missing calls are added after the lookups from packed tiles of in
 * (fc_missing). One kernel for double and float (a macro over the type); docs/PERFORMANCE.md
 * ("CPU genotype products against miraculix") has the measurements behind the choices.
 * On a CPU with AMX tiles the sums the tables would give come from codelets/fivecodes_amx.c
 * (P, without the centering folded in); the missing calls and the final terms stay here. */
#include "codelets/fivecodes.h"
#include "codelets/fivecodes_amx.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

struct starpu_codelet tg_cl_fivecodes[2][2][2];
static struct starpu_perfmodel fc_models[2][2];
static const char *const fc_symbols[2][2] = {{"tg_fivecodes_zl_fp64", "tg_fivecodes_zl_fp32"},
                                             {"tg_fivecodes_ztl_fp64", "tg_fivecodes_ztl_fp32"}};

/* Accumulator bytes per row chunk and table bytes per group chunk: both stay in a 1 MiB L2. */
#define FC_ACC_BYTES (512 * 1024)
#define FC_TAB_BYTES (192 * 1024)
#define FC_MAXP 8 /* groups applied per pass over a row chunk */
#define FC_PACK_BYTES (128 * 1024) /* a tile of packed rows of in, for the missing calls */
#define FC_AHEAD 8                 /* rows whose next call is fetched ahead, in that pass */
/* Columns a pass over the codes, as a table entry's bytes: 16 doubles, 32 floats (two
 * vectors). Wider entries leave room for fewer groups' tables in L2 (at 64 doubles, one), and
 * loops without a constant width copy a row's accumulators with memcpy at every lookup. */
#define FC_SLICE_BYTES 128
_Static_assert(FC_SLICE_BYTES == 2 * 64, "fc_block's switch takes entries of two vectors at most");

/* An entry (a table's row, an accumulator row) is nw 64-byte vectors and, where the last
 * columns fill at most half of one, a tail of ht 16-byte vectors (ht <= 2): k = 10 doubles take
 * one zmm and one xmm (80 bytes a table row; the lookups' table lines come from L2, so a tail
 * wider than its columns costs time). Wide parts and tails are kept in separate arrays, so that
 * each is aligned to its width. */
#define FC_DEFINE(T, SFX)                                                                          \
    typedef T fc_v_##SFX __attribute__((vector_size(64)));                                         \
    typedef T fc_h_##SFX __attribute__((vector_size(16)));                                         \
    enum { FC_L_##SFX = 64 / sizeof(T), FC_MAXW_##SFX = TG_FC_MAXK / FC_L_##SFX };                \
                                                                                                   \
    /* tab[c] = base + sum_t d_t(c)*A_t, adding one base-3 digit at a time (242 vector adds) */    \
    static inline __attribute__((always_inline)) void fc_table_##SFX(                              \
        fc_v_##SFX *tw, fc_h_##SFX *th, int nw, int ht, const fc_v_##SFX *Aw,                      \
        const fc_h_##SFX *Ah) {                                                                    \
        for (int t = 0, p = 1; t < 5; t++, p *= 3)                                                 \
            for (int c = 0; c < p; c++) {                                                          \
                for (int v = 0; v < nw; v++) {                                                     \
                    fc_v_##SFX x = tw[c * nw + v] + Aw[t * nw + v];                                \
                    tw[(c + p) * nw + v] = x;                                                      \
                    tw[(c + 2 * p) * nw + v] = x + Aw[t * nw + v];                                 \
                }                                                                                  \
                for (int h = 0; h < ht; h++) {                                                     \
                    fc_h_##SFX y = th[c * ht + h] + Ah[t * ht + h];                                \
                    th[(c + p) * ht + h] = y;                                                      \
                    th[(c + 2 * p) * ht + h] = y + Ah[t * ht + h];                                 \
                }                                                                                  \
            }                                                                                      \
    }                                                                                              \
                                                                                                   \
    /* The table of group g at tw, th: A_t (scaled rows of in, 0 past the end) and its entry 0,   \
     * the base (trans 0: -sum_t c_t*in_t). */                                                     \
    static inline __attribute__((always_inline)) void fc_group_##SFX(                              \
        const struct tg_fivecodes_arg *a, size_t g, const T *in, size_t nt, size_t ldin,           \
        const double *coef, int nw, int ht, fc_v_##SFX *tw, fc_h_##SFX *th) {                      \
        T s[6][TG_FC_MAXK] __attribute__((aligned(64)));                                           \
        fc_v_##SFX Aw[5 * FC_MAXW_##SFX];                                                          \
        fc_h_##SFX Ah[5 * 2];                                                                      \
        const size_t wb = (size_t)nw * sizeof *Aw, eb = wb + (size_t)ht * sizeof *Ah;              \
        for (int t = 0; t < 6; t++) memset(s[t], 0, eb);                                           \
        for (int t = 0; t < 5; t++) {                                                              \
            size_t row = 5 * g + (size_t)t;                                                        \
            if (row >= nt) break;                                                                  \
            T w = a->trans ? (T)1 : (T)coef[2 * row], c = a->trans ? (T)0 : (T)coef[2 * row + 1];  \
            for (int col = 0; col < a->k; col++) {                                                 \
                T x = in[row + (size_t)col * ldin];                                                \
                s[t][col] = w * x;                                                                 \
                s[5][col] -= c * x;                                                                \
            }                                                                                      \
        }                                                                                          \
        for (int t = 0; t < 5; t++) {                                                              \
            memcpy(Aw + t * nw, s[t], wb);                                                         \
            memcpy(Ah + t * ht, (char *)s[t] + wb, (size_t)ht * sizeof *Ah);                       \
        }                                                                                          \
        memcpy(tw, s[5], wb);                                                                      \
        memcpy(th, (char *)s[5] + wb, (size_t)ht * sizeof *th);                                    \
        fc_table_##SFX(tw, th, nw, ht, Aw, Ah);                                                    \
    }                                                                                              \
                                                                                                   \
    /* acc[r] += sum_q tab_q[code of row r in group g+q], q < P: the row's accumulator stays in    \
     * registers for the P lookups (P, nw, ht constants where the caller's switch gives them) */   \
    static inline __attribute__((always_inline)) void fc_rows_##SFX(                               \
        fc_v_##SFX *accw, fc_h_##SFX *acch, const fc_v_##SFX *tw, const fc_h_##SFX *th,            \
        const uint8_t *c0, size_t ldc, size_t nr, int nw, int ht, int P) {                         \
        const size_t sw = (size_t)TG_FC_NCODES * nw;                                               \
        for (size_t r = 0; r < nr; r++) {                                                          \
            fc_v_##SFX x[FC_MAXW_##SFX];                                                           \
            fc_h_##SFX y[2];                                                                       \
            for (int v = 0; v < nw; v++) x[v] = accw[r * nw + v];                                  \
            for (int h = 0; h < ht; h++) y[h] = acch[r * ht + h];                                  \
            const uint8_t *cq = c0 + r;                                                            \
            _Pragma("GCC unroll 8") for (int q = 0; q < P; q++, cq += ldc) {                       \
                size_t c = *cq;                                                                    \
                for (int v = 0; v < nw; v++) x[v] += tw[q * sw + c * nw + v];                      \
                for (int h = 0; h < ht; h++) y[h] += th[(q * TG_FC_NCODES + c) * ht + h];          \
            }                                                                                      \
            for (int v = 0; v < nw; v++) accw[r * nw + v] = x[v];                                  \
            for (int h = 0; h < ht; h++) acch[r * ht + h] = y[h];                                  \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* The tables of groups g .. g+P-1, then their lookups for rows r0 .. r0+nr-1 */               \
    static inline __attribute__((always_inline)) void fc_chunk_##SFX(                              \
        const struct tg_fivecodes_arg *a, size_t g, const T *in, size_t nt, size_t ldin,           \
        const double *coef, fc_v_##SFX *accw, fc_h_##SFX *acch, fc_v_##SFX *tw, fc_h_##SFX *th,    \
        const uint8_t *codes, size_t ldc, size_t r0, size_t nr, int nw, int ht, int P) {           \
        for (int q = 0; q < P; q++)                                                                \
            fc_group_##SFX(a, g + (size_t)q, in, nt, ldin, coef, nw, ht,                           \
                           tw + (size_t)q * TG_FC_NCODES * nw,                                     \
                           th + (size_t)q * TG_FC_NCODES * ht);                                    \
        fc_rows_##SFX(accw, acch, tw, th, codes + g * ldc + r0, ldc, nr, nw, ht, P);               \
    }                                                                                              \
                                                                                                   \
    /* The calls of rows r0 .. r0+nr-1 below table row t1 (of the product), from each row's      \
     * cursor: their entries of the packed tile (its first table row tp) added to the rows' sums  \
     * in registers. Each tile reads a new line of every row's list, and a chunk's lists exceed   \
     * the L2: the line of the row FC_AHEAD rows on is fetched ahead. */                          \
    static inline __attribute__((always_inline)) void fc_calls_##SFX(                              \
        const int32_t *miss, const int32_t *tl, size_t r0, size_t nr, int64_t tp, int64_t t1,      \
        const fc_v_##SFX *pw, const fc_h_##SFX *ph, fc_v_##SFX *mw, fc_h_##SFX *mh,               \
        int32_t *cur, int nw, int ht) {                                                            \
        for (size_t r = 0; r < nr; r++) {                                                          \
            if (r + FC_AHEAD < nr) __builtin_prefetch(tl + cur[r + FC_AHEAD]);                     \
            int32_t e = cur[r], end = miss[r0 + r + 1];                                            \
            if (e == end || tl[e] >= t1) continue;                                                 \
            fc_v_##SFX x[FC_MAXW_##SFX];                                                           \
            fc_h_##SFX y[2];                                                                       \
            for (int v = 0; v < nw; v++) x[v] = mw[r * nw + v];                                    \
            for (int h = 0; h < ht; h++) y[h] = mh[r * ht + h];                                    \
            for (; e < end && tl[e] < t1; e++) {                                                   \
                const size_t i = (size_t)(tl[e] - tp);                                             \
                for (int v = 0; v < nw; v++) x[v] += pw[i * nw + v];                               \
                for (int h = 0; h < ht; h++) y[h] += ph[i * ht + h];                               \
            }                                                                                      \
            for (int v = 0; v < nw; v++) mw[r * nw + v] = x[v];                                    \
            for (int h = 0; h < ht; h++) mh[r * ht + h] = y[h];                                    \
            cur[r] = e;                                                                            \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* The missing calls of output rows r0 .. r0+nr-1 in the part: m[r] = sum over the row's      \
     * calls t of s_t*in_t (s_t = c_t for trans 0, 1 for trans 1), in tiles of mt table rows: the  \
     * tile's rows of in packed as entries (pw, ph; from the column-major in, a call read k        \
     * lines), then each row's calls inside the tile, from its cursor (the lists are ascending,   \
     * in the product's table rows: the part's start at a->t0). */                                 \
    static inline __attribute__((always_inline)) void fc_missing_##SFX(                            \
        const struct tg_fivecodes_arg *a, const T *in, size_t nt, size_t ldin,                     \
        const double *coef, const int32_t *miss, size_t rows, size_t r0, size_t nr, int nw,        \
        int ht, size_t mt, fc_v_##SFX *pw, fc_h_##SFX *ph, fc_v_##SFX *mw, fc_h_##SFX *mh,         \
        int32_t *cur) {                                                                            \
        const int32_t *tl = miss + rows + 1;                                                       \
        const int L = FC_L_##SFX;                                                                  \
        memset(mw, 0, nr * nw * sizeof *mw);                                                       \
        memset(mh, 0, nr * ht * sizeof *mh);                                                       \
        if (miss[r0 + nr] == miss[r0]) return;                                                     \
        for (size_t r = 0; r < nr; r++)                                                            \
            cur[r] = tg_fc_first_call(tl, miss[r0 + r], miss[r0 + r + 1], a->t0);                  \
        for (size_t t0 = 0; t0 < nt; t0 += mt) {                                                   \
            size_t n = nt - t0 < mt ? nt - t0 : mt;                                                \
            for (int col = 0; col < a->k; col++) {                                                 \
                const T *x = in + t0 + (size_t)col * ldin;                                         \
                T *o = col < nw * L ? (T *)pw + col : (T *)ph + (col - nw * L);                    \
                size_t st = col < nw * L ? (size_t)nw * L : (size_t)ht * L / 4;                    \
                for (size_t i = 0; i < n; i++)                                                     \
                    o[i * st] = a->trans ? x[i] : (T)coef[2 * (t0 + i) + 1] * x[i];                \
            }                                                                                      \
            const int64_t t1 = a->t0 + (int64_t)(t0 + n);                                          \
            FC_SHAPED(FC_CALLS, SFX); /* sums in registers */                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void                \
    fc_block_##SFX(const struct tg_fivecodes_arg *a, const uint8_t *codes, size_t rows,            \
                   size_t groups, size_t ldc, const T *in, size_t nt, size_t ldin,                 \
                   const double *coef, const int32_t *miss, const double *P, size_t ldp,           \
                   T *out, size_t ldout) {                                                         \
        typedef fc_v_##SFX V;                                                                      \
        typedef fc_h_##SFX H;                                                                      \
        const int k = a->k, L = FC_L_##SFX, rem = k % L;                                           \
        const int nw = k / L + (rem > L / 2), ht = rem > L / 2 ? 0 : (rem + L / 4 - 1) / (L / 4);  \
        const size_t eb = (size_t)nw * sizeof(V) + (size_t)ht * sizeof(H); /* entry bytes */       \
        size_t rb = FC_ACC_BYTES / eb;                                                             \
        if (rb > rows) rb = rows;                                                                  \
        int pmax = FC_MAXP; /* a power of two: the chunks below take 8, 4, 2 or 1 groups */        \
        while (pmax > 1 && (size_t)pmax * TG_FC_NCODES * eb > FC_TAB_BYTES) pmax /= 2;             \
        const size_t ntab = (size_t)pmax * TG_FC_NCODES, mt = FC_PACK_BYTES / eb;                  \
        /* tables, accumulators, the missing calls' sums and packed tile: the wide arrays first,   \
         * so that each is aligned to 64 bytes; the tile zeroed once, as its padding is read */    \
        const size_t bytes = (ntab + 2 * rb + mt) * eb + rb * sizeof(int32_t) + 64;                \
        V *tw = aligned_alloc(64, (bytes + 63) / 64 * 64); /* a multiple of the alignment */       \
        STARPU_ASSERT_MSG(tw, "out of memory in the 5codes kernel");                               \
        V *accw = tw + ntab * nw, *mw = accw + rb * nw, *pw = mw + rb * nw;                        \
        H *th = (H *)(pw + mt * nw), *acch = th + ntab * ht, *mh = acch + rb * ht,                 \
          *ph = mh + rb * ht;                                                                      \
        int32_t *cur = (int32_t *)(ph + mt * ht);                                                  \
        memset(pw, 0, mt * eb);                                                                    \
        for (size_t r0 = 0; r0 < rows; r0 += rb) {                                                 \
            size_t nr = rows - r0 < rb ? rows - r0 : rb;                                           \
            memset(accw, 0, nr * nw * sizeof(V));                                                  \
            memset(acch, 0, nr * ht * sizeof(H));                                                  \
            for (size_t g = 0; !P && g < groups;) { /* P: the lookups' sums made on AMX */         \
                int p = pmax;                                                                      \
                while ((size_t)p > groups - g) p /= 2;                                             \
                FC_SHAPED(FC_ROWS, SFX); /* unrolled loops */                                      \
                g += (size_t)p;                                                                    \
            }                                                                                      \
            fc_missing_##SFX(a, in, nt, ldin, coef, miss, rows, r0, nr, nw, ht, mt, pw, ph, mw,    \
                             mh, cur);                                                             \
            for (size_t r = 0; r < nr; r++) {                                                      \
                T x[TG_FC_MAXK] __attribute__((aligned(64))),                                      \
                    y[TG_FC_MAXK] __attribute__((aligned(64)));                                    \
                const size_t wb = (size_t)nw * sizeof(V);                                          \
                memcpy(x, accw + r * nw, wb);                                                      \
                memcpy(y, mw + r * nw, wb);                                                        \
                memcpy((char *)x + wb, acch + r * ht, (size_t)ht * sizeof(H));                     \
                memcpy((char *)y + wb, mh + r * ht, (size_t)ht * sizeof(H));                       \
                for (int col = 0; P && col < k; col++) /* P has no centering term folded in */     \
                    x[col] = (T)(P[(r0 + r) * ldp + (size_t)col] -                                 \
                                 (a->trans ? 0 : a->offset[col]));                                 \
                int64_t j = a->r0 + (int64_t)(r0 + r);                                             \
                T w = a->trans ? (T)coef[2 * j] : (T)1, c = a->trans ? (T)coef[2 * j + 1] : (T)0;  \
                T *o = out + r0 + r;                                                               \
                for (int col = 0; col < k; col++) {                                                \
                    T v = a->trans ? w * x[col] - c * (T)a->offset[col] + c * y[col]               \
                                   : x[col] + y[col];                                              \
                    o[(size_t)col * ldout] = a->t0 ? o[(size_t)col * ldout] + v : v;               \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        free(tw);                                                                                  \
    }

/* M(SFX, NW, HT) with the entry's shape (nw, ht: at most two vectors) as constants */
#define FC_SHAPED(M, SFX)                                                                          \
    switch (3 * nw + ht) {                                                                         \
    case 1: M(SFX, 0, 1); break;                                                                   \
    case 2: M(SFX, 0, 2); break;                                                                   \
    case 3: M(SFX, 1, 0); break;                                                                   \
    case 4: M(SFX, 1, 1); break;                                                                   \
    case 5: M(SFX, 1, 2); break;                                                                   \
    default: M(SFX, 2, 0);                                                                         \
    }
/* fc_calls with the entry shape (NW, HT) as constants */
#define FC_CALLS(SFX, NW, HT)                                                                      \
    fc_calls_##SFX(miss, tl, r0, nr, a->t0 + (int64_t)t0, t1, pw, ph, mw, mh, cur, NW, HT)
/* fc_chunk with the entry shape (NW, HT) and the chunk's group count p as constants */
#define FC_CHUNK(SFX, NW, HT, P)                                                                   \
    fc_chunk_##SFX(a, g, in, nt, ldin, coef, accw, acch, tw, th, codes, ldc, r0, nr, NW, HT, P)
#define FC_ROWS(SFX, NW, HT)                                                                       \
    switch (p) {                                                                                   \
    case 8: FC_CHUNK(SFX, NW, HT, 8); break;                                                       \
    case 4: FC_CHUNK(SFX, NW, HT, 4); break;                                                       \
    case 2: FC_CHUNK(SFX, NW, HT, 2); break;                                                       \
    default: FC_CHUNK(SFX, NW, HT, 1);                                                             \
    }

FC_DEFINE(double, fp64)
FC_DEFINE(float, fp32)

void tg_fivecodes_cpu(void *buffers[], void *cl_arg) {
    struct tg_fivecodes_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    /* the part's groups and table rows; the coefficients by table row from the part's first
     * for trans 0, by output row (the SNPs of the block) for trans 1 */
    size_t rows = STARPU_MATRIX_GET_NX(buffers[4]), ldc = STARPU_MATRIX_GET_LD(buffers[0]);
    const uint8_t *codes = (const uint8_t *)STARPU_MATRIX_GET_PTR(buffers[0]) + a.t0 / 5 * ldc;
    const void *in = (const void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t nt = STARPU_MATRIX_GET_NX(buffers[1]), ldin = STARPU_MATRIX_GET_LD(buffers[1]),
           groups = (nt + 4) / 5;
    const double *coef =
        (const double *)STARPU_VECTOR_GET_PTR(buffers[2]) + (a.trans ? 0 : 2 * a.t0);
    const int32_t *miss = (const int32_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    void *out = (void *)STARPU_MATRIX_GET_PTR(buffers[4]);
    size_t ldout = STARPU_MATRIX_GET_LD(buffers[4]);
    /* on AMX tiles the products that the tables would give, for every column at once; then
     * the columns in slices of FC_SLICE_BYTES a table entry (columns are independent) */
    const size_t es = tg_prec_size(a.prec);
    const int amx = tg_fc_amx_available() && tg_fc_amx_fits(nt), slice = (int)(FC_SLICE_BYTES / es);
    double *P = amx ? malloc(rows * (size_t)a.k * sizeof *P) : NULL;
    STARPU_ASSERT_MSG(!amx || P, "out of memory in the 5codes kernel");
    if (amx) tg_fc_amx_product(&a, codes, rows, groups, ldc, in, nt, ldin, coef, P);
    for (int c0 = 0; c0 < a.k; c0 += slice) {
        struct tg_fivecodes_arg s = a;
        s.k = a.k - c0 < slice ? a.k - c0 : slice;
        memcpy(s.offset, a.offset + c0, (size_t)s.k * sizeof *s.offset);
        const char *ic = (const char *)in + (size_t)c0 * ldin * es;
        char *oc = (char *)out + (size_t)c0 * ldout * es;
        const double *Pc = P ? P + c0 : NULL;
        if (a.prec == TG_FP64)
            fc_block_fp64(&s, codes, rows, groups, ldc, (const double *)ic, nt, ldin, coef, miss,
                          Pc, (size_t)a.k, (double *)oc, ldout);
        else
            fc_block_fp32(&s, codes, rows, groups, ldc, (const float *)ic, nt, ldin, coef, miss,
                          Pc, (size_t)a.k, (float *)oc, ldout);
    }
    free(P);
}

void tg_fivecodes_init(void) {
    tg_runtime_note_cpu(tg_fc_amx_available() ? "CPU genotype products on AMX tiles" : NULL);
    static const enum starpu_data_access_mode modes[2][5] = {
        {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W},
        {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_RW}};
    for (int t = 0; t < 2; t++)
        for (int p = 0; p < 2; p++)
            for (int add = 0; add < 2; add++)
                tg_codelet_fill(&tg_cl_fivecodes[t][p][add], &fc_models[t][p], fc_symbols[t][p],
                                tg_fivecodes_cpu, TG_CUDA_FN(tg_fivecodes_cuda), 5, modes[add],
                                (struct tg_codelet_hints){TG_B_GENO, 0});
}

void tg_fivecodes_forget(uint64_t geno) {
#ifdef TG_USE_CUDA
    if (starpu_cuda_worker_get_count() > 0)
        starpu_execute_on_each_worker(tg_fivecodes_cuda_forget, &geno, STARPU_CUDA);
#else
    (void)geno;
#endif
}

int tg_insert_fivecodes(const struct tg_fivecodes_arg *a, starpu_data_handle_t codes,
                        starpu_data_handle_t in, starpu_data_handle_t coef,
                        starpu_data_handle_t miss, starpu_data_handle_t out, double flops,
                        int worker, void (*done)(void *), void *done_arg) {
    /* plain StarPU even with several MPI ranks: a genotype matrix is node-local, each rank
     * that holds one computes its products on its own workers */
    struct starpu_codelet *cl = &tg_cl_fivecodes[a->trans][a->prec == TG_FP32][a->t0 > 0];
    struct starpu_task *t = starpu_task_build(cl, STARPU_R, codes, STARPU_R, in, STARPU_R, coef,
                                              STARPU_R, miss, cl->modes[4], out, STARPU_VALUE, a,
                                              sizeof *a, STARPU_FLOPS, flops, 0);
    if (t && worker >= 0) {
        t->execute_on_a_specific_worker = 1;
        t->workerid = (unsigned)worker;
    }
    if (t && done) {
        t->callback_func = done;
        t->callback_arg = done_arg;
    }
    return tg_task_submit(t);
}
