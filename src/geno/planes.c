/* The bit-plane encoder (geno/planes.h). A 32-sample word of a SNP's row splits into the codes'
 * low and high bits; each class keeps its own samples' bits of both (PEXT with the class's mask
 * of that word) and appends them to its planes, which are stored 64 samples a word. Distinct
 * SNPs own distinct plane words, so SNPs are built on every core at once. */
#include "geno/planes.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "base/parallel.h"
#include "codelets/epistasis.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "a row's 8 bytes are loaded as one word: sample 32g in the low bits");

/* The compaction primitives: split a 64-bit word of 32 codes into their low and high bits;
 * keep the bits of lo and hi under mask m, packed at the bottom in order. */
typedef void (*split_fn)(uint64_t c, uint64_t *lo, uint64_t *hi);
typedef void (*compact_fn)(uint64_t lo, uint64_t hi, uint32_t m, uint64_t *rl, uint64_t *rh);

static inline uint64_t even_bits(uint64_t x) {
    x &= 0x5555555555555555u;
    x = (x | x >> 1) & 0x3333333333333333u;
    x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0fu;
    x = (x | x >> 4) & 0x00ff00ff00ff00ffu;
    x = (x | x >> 8) & 0x0000ffff0000ffffu;
    return (x | x >> 16) & 0xffffffffu;
}

static inline void soft_split(uint64_t c, uint64_t *lo, uint64_t *hi) {
    *lo = even_bits(c);
    *hi = even_bits(c >> 1);
}

static inline void soft_compact(uint64_t lo, uint64_t hi, uint32_t m, uint64_t *rl,
                                uint64_t *rh) {
    if (m == 0xffffffffu) { /* a run of one class: every sample kept */
        *rl = lo, *rh = hi;
        return;
    }
    uint64_t l = 0, h = 0;
    for (int k = 0; m; m &= m - 1, k++) {
        const int t = __builtin_ctz(m);
        l |= (lo >> t & 1) << k;
        h |= (hi >> t & 1) << k;
    }
    *rl = l, *rh = h;
}

#if defined(__x86_64__)
__attribute__((target("bmi2,popcnt"))) static inline void hw_split(uint64_t c, uint64_t *lo,
                                                            uint64_t *hi) {
    *lo = _pext_u64(c, 0x5555555555555555u);
    *hi = _pext_u64(c, 0xaaaaaaaaaaaaaaaau);
}

__attribute__((target("bmi2,popcnt"))) static inline void hw_compact(uint64_t lo, uint64_t hi,
                                                              uint32_t m, uint64_t *rl,
                                                              uint64_t *rh) {
    *rl = _pext_u64(lo, m);
    *rh = _pext_u64(hi, m);
}
#endif

/* One class's planes of one SNP, filled as its samples' bits arrive. */
typedef struct {
    uint64_t lo, hi; /* the codes' low and high bits of the nb samples not yet stored */
    int nb;
    int64_t w, valid; /* the next word; the calls stored */
    uint64_t *p0, *p1, *pv;
} writer;

/* .bed codes, low bit first: 00 → 2, 01 → missing, 10 → 1, 11 → 0; bits outside @p used are
 * zeros in every plane (lo and hi are zeros there). */
static inline void store(writer *o, uint64_t lo, uint64_t hi, uint64_t used) {
    const uint64_t v = (~lo | hi) & used;
    o->p0[o->w] = lo & hi;
    o->p1[o->w] = hi & ~lo;
    o->pv[o->w] = v;
    o->valid += __builtin_popcountll(v);
    o->w++;
}

static inline void append(writer *o, uint64_t lo, uint64_t hi, int k) {
    o->lo |= lo << o->nb;
    o->hi |= hi << o->nb;
    if ((o->nb += k) < 64) return;
    store(o, o->lo, o->hi, ~(uint64_t)0);
    o->nb -= 64; /* the bits of lo and hi that did not fit */
    o->lo = o->nb ? lo >> (k - o->nb) : 0;
    o->hi = o->nb ? hi >> (k - o->nb) : 0;
}

typedef struct {
    const tg_bed *bed;
    const int64_t *snps;
    int64_t m, slots, per_chunk, groups; /* slots: the SNPs of the blocks, m and the padding */
    const tg_planes *pl;
    const uint32_t *mask; /* [group][class]: the class's samples among the group's 32 */
    int64_t *missing; /* per block: the missing calls of the samples used */
    int32_t *left;    /* per block: its SNPs not yet written */
    void (*built)(void *ctx, int64_t block, int64_t missing);
    void *built_ctx;
} build_ctx;

static inline __attribute__((always_inline)) void build_snp(build_ctx *b, int64_t j,
                                                            split_fn split, compact_fn compact) {
    const tg_planes *pl = b->pl;
    uint64_t *blk = pl->planes + (j / pl->B) * pl->block_words;
    writer o[2];
    for (int c = 0; c < 2; c++)
        o[c] = (writer){.p0 = blk + tg_epi_plane_offset(pl->B, pl->words, c, (int)(j % pl->B), 0),
                        .p1 = blk + tg_epi_plane_offset(pl->B, pl->words, c, (int)(j % pl->B), 1),
                        .pv = blk + tg_epi_plane_offset(pl->B, pl->words, c, (int)(j % pl->B), 2)};
    if (j < b->m) {
        const size_t bytes = b->bed->bytes_per_snp;
        const uint8_t *row = b->bed->geno + (size_t)(b->snps ? b->snps[j] : j) * bytes;
        for (int64_t g = 0; g < b->groups; g++) {
            uint64_t code = 0, lo, hi; /* the row's last word may be short */
            memcpy(&code, row + 8 * g, bytes - 8 * (size_t)g < 8 ? bytes - 8 * (size_t)g : 8);
            split(code, &lo, &hi);
            for (int c = 0; c < 2; c++) {
                const uint32_t mk = b->mask[2 * g + c];
                if (!mk) continue;
                uint64_t cl, ch;
                compact(lo, hi, mk, &cl, &ch);
                append(&o[c], cl, ch, __builtin_popcount(mk));
            }
        }
    }
    int64_t miss = 0;
    for (int c = 0; c < 2; c++) {
        if (o[c].nb) store(&o[c], o[c].lo, o[c].hi, ((uint64_t)1 << o[c].nb) - 1);
        const size_t pad = (size_t)(pl->words[c] - o[c].w) * sizeof *o[c].p0;
        memset(o[c].p0 + o[c].w, 0, pad);
        memset(o[c].p1 + o[c].w, 0, pad);
        memset(o[c].pv + o[c].w, 0, pad);
        miss += j < b->m ? pl->n[c] - o[c].valid : 0;
    }
    const int64_t blk_of = j / pl->B;
    if (miss) __atomic_fetch_add(&b->missing[blk_of], miss, __ATOMIC_RELAXED);
    if (__atomic_sub_fetch(&b->left[blk_of], 1, __ATOMIC_ACQ_REL) == 0 && b->built)
        b->built(b->built_ctx, blk_of, __atomic_load_n(&b->missing[blk_of], __ATOMIC_RELAXED));
}

static void chunk_soft(void *ctx, int64_t ch) {
    build_ctx *b = ctx;
    for (int64_t j = ch * b->per_chunk; j < (ch + 1) * b->per_chunk && j < b->slots; j++)
        build_snp(b, j, soft_split, soft_compact);
}

#if defined(__x86_64__)
__attribute__((target("bmi2,popcnt"))) static void chunk_hw(void *ctx, int64_t ch) {
    build_ctx *b = ctx;
    for (int64_t j = ch * b->per_chunk; j < (ch + 1) * b->per_chunk && j < b->slots; j++)
        build_snp(b, j, hw_split, hw_compact);
}
#endif

/* On a CPU with BMI2: PEXT is one instruction on Intel and on AMD from Zen 3 (family 19h),
 * microcode on Zen 1 and 2 (a cost growing with the mask's bits). */
static int pext_is_fast(void) {
#if defined(__x86_64__)
    if (__builtin_cpu_is("intel")) return 1;
    unsigned a, b, c, d;
    if (!__builtin_cpu_is("amd") || !__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned family = (a >> 8 & 0xf) + ((a >> 8 & 0xf) == 0xf ? (a >> 20 & 0xff) : 0);
    return family >= 0x19;
#else
    return 0;
#endif
}

static int use_pext = -1;

int tg_planes_use_pext(int use) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    const int has = __builtin_cpu_supports("bmi2");
#else
    const int has = 0;
#endif
    use_pext = has && (use < 0 ? pext_is_fast() : use);
    return use_pext;
}

tg_status tg_planes_build(const tg_bed *bed, const int8_t *cls, const int64_t *snps, int64_t m,
                          const tg_planes *pl, int beside,
                          void (*built)(void *ctx, int64_t block, int64_t missing),
                          void *built_ctx, int64_t *missing, tg_error *err) {
    const int64_t n = bed->n_samples, groups = (n + 31) / 32, nb = (m + pl->B - 1) / pl->B;
    uint32_t *mask = tg_calloc_n(groups, 2, sizeof *mask, err);
    int32_t *left = tg_malloc_n(nb, 1, sizeof *left, err);
    int64_t *bmiss = tg_calloc_n(nb, 1, sizeof *bmiss, err);
    if (!mask || !left || !bmiss) {
        free(mask);
        free(left);
        free(bmiss);
        return TG_ERR_NOMEM;
    }
    for (int64_t i = 0; i < n; i++)
        if (cls[i] >= 0) mask[2 * (i / 32) + cls[i]] |= (uint32_t)1 << (i % 32);
    for (int64_t k = 0; k < nb; k++) left[k] = pl->B;
    const int64_t slots = pl->B * nb;
    int64_t per = slots / (4 * (int64_t)tg_parallel_threads()); /* 4 chunks a thread at least */
    per = per < 1 ? 1 : per > 8 ? 8 : per;
    build_ctx b = {bed, snps, m, slots, per, groups, pl, mask, bmiss, left, built, built_ctx};
    if (use_pext < 0) tg_planes_use_pext(-1);
    void (*loop)(int64_t, void (*)(void *, int64_t), void *) =
        beside ? tg_parallel_for_running : tg_parallel_for;
#if defined(__x86_64__)
    loop((slots + per - 1) / per, use_pext ? chunk_hw : chunk_soft, &b);
#else
    loop((slots + per - 1) / per, chunk_soft, &b);
#endif
    *missing = 0;
    for (int64_t k = 0; k < nb; k++) *missing += bmiss[k];
    free(mask);
    free(left);
    free(bmiss);
    return TG_OK;
}
