/* Precisions: the per-precision table (name, element size, unit roundoff), name parsing, and the
 * scalar conversions between double and every tile precision. These conversions are the CPU
 * reference that the GPU conversion kernels are checked against, so each rounds exactly once,
 * directly from the double's bits (no float intermediate, no libm, no loop over bits).
 *
 * Bit layouts (S sign, E biased exponent, M mantissa):
 *   FP16 (IEEE 754 binary16)  S.EEEEE.MMMMMMMMMM, bias 15. E = 0: subnormal M·2^-24;
 *       E = 31: inf (M = 0) or NaN; max finite 65504.
 *   FP8 E4M3 (OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, 2023, section 5.1)
 *       S.EEEE.MMM, bias 7. E = 0: subnormal M·2^-9; no infinities; S.1111.111 (0x7f/0xff) is
 *       the only NaN, so S.1111.110 = ±448 is the largest finite value.
 * Rounding is to nearest, ties to even. Out-of-range values:
 *   FP16  |x| ≥ 65520 (the midpoint between 65504 and 2^16, which ties to the even code of inf)
 *         and ±inf give ±inf; NaN gives the quiet NaN 0x7e00 with x's sign (payload dropped).
 *   FP8   saturating conversion (OFP8 section 5.2 "Conversion Behavior", saturation mode): a
 *         finite x whose rounding would exceed 448, and ±inf, give ±448; NaN gives 0x7f, or
 *         0xff when its sign bit is set. Values below half the smallest subnormal give ±0.
 *   INT8/INT32  round to nearest even, saturate to the type's range; NaN stores 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tilegwas.h"

static const struct {
    const char *name;
    size_t size;
    double u; /* unit roundoff 2^-t, t = significand bits including the implicit one */
} prec_tab[TG_NPREC] = {
    [TG_FP64] = {"fp64", sizeof(double), 0x1p-53},
    [TG_FP32] = {"fp32", sizeof(float), 0x1p-24},
    [TG_FP16] = {"fp16", sizeof(uint16_t), 0x1p-11},
    [TG_FP8_E4M3] = {"fp8", sizeof(uint8_t), 0x1p-4},
    [TG_INT8] = {"int8", sizeof(int8_t), 0},
    [TG_INT32] = {"int32", sizeof(int32_t), 0},
};

/* Other accepted spellings of a precision name. */
static const struct {
    const char *name;
    tg_prec p;
} prec_alias[] = {{"fp8_e4m3", TG_FP8_E4M3}, {"e4m3", TG_FP8_E4M3}};

static int prec_valid(tg_prec p) { return (unsigned)p < TG_NPREC; }

size_t tg_prec_size(tg_prec p) { return prec_valid(p) ? prec_tab[p].size : 0; }

const char *tg_prec_name(tg_prec p) { return prec_valid(p) ? prec_tab[p].name : "invalid"; }

double tg_prec_unit_roundoff(tg_prec p) { return prec_valid(p) ? prec_tab[p].u : NAN; }

tg_status tg_prec_parse(const char *name, tg_prec *p, tg_error *err) {
    if (name) {
        for (int q = 0; q < TG_NPREC; q++)
            if (!strcasecmp(name, prec_tab[q].name)) {
                *p = (tg_prec)q;
                return TG_OK;
            }
        for (size_t k = 0; k < sizeof prec_alias / sizeof *prec_alias; k++)
            if (!strcasecmp(name, prec_alias[k].name)) {
                *p = prec_alias[k].p;
                return TG_OK;
            }
    }
    /* the list comes from the tables, so a new precision shows up in the message by itself */
    char list[256];
    size_t len = 0;
    for (int q = 0; q < TG_NPREC && len < sizeof list; q++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", q ? ", " : "",
                                prec_tab[q].name);
    for (size_t k = 0; k < sizeof prec_alias / sizeof *prec_alias && len < sizeof list; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s = %s", k ? ", " : "; aliases ",
                                prec_alias[k].name, prec_tab[prec_alias[k].p].name);
    return tg_error_set(err, TG_ERR_ARG, "unknown precision '%s': expected one of %s (any case)",
                        name ? name : "(null)", list);
}

/* ---- bit-level rounding ------------------------------------------------------------------- */

#define ABS_MASK UINT64_C(0x7fffffffffffffff)
#define MANT_MASK UINT64_C(0x000fffffffffffff)
#define EXP_INF UINT64_C(0x7ff0000000000000)
#define EXP_FIELD(e) ((uint64_t)(e) << 52) /* a biased double exponent in its place */

static inline uint64_t dbl_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double bits_dbl(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* v / 2^s rounded to nearest, ties to even (1 ≤ s ≤ 63). A carry out of the kept mantissa bits
 * moves into the exponent bits above them, which is exactly the next binade. */
static inline uint64_t rne_shift(uint64_t v, unsigned s) {
    uint64_t q = v >> s, rem = v & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
    return q + ((rem > half) | ((rem == half) & q & 1));
}

/* |x| / 2^k rounded to nearest even, from a = the bits of |x| (finite, |x| < 2^(k+52)).
 * |x| = sig·2^(e-1075) with e the biased exponent (1 for double subnormals) and sig the
 * significand with its implicit bit. Shifts beyond 63 are clamped: sig < 2^53 < half, so the
 * result is 0 either way. */
static inline uint64_t round_scaled(uint64_t a, int k) {
    uint64_t e = a >> 52, sig = (a & MANT_MASK) | ((uint64_t)(e != 0) << 52);
    int64_t s = 1075 + k - (int64_t)(e ? e : 1);
    return rne_shift(sig, s > 63 ? 63 : (unsigned)s);
}

/* FP16 and FP8 E4M3 are one scheme with different constants. */
typedef struct {
    int bits, bias, mbits; /* width, exponent bias, mantissa bits */
    uint64_t clamp;        /* the magnitude code every larger finite input and inf round to */
    uint64_t nan;          /* the quiet NaN code, sign excluded */
    int ieee_inf;          /* the all-ones exponent holds inf/NaN (IEEE), else normal numbers */
} minifloat;
/* FP16 clamps to 0x7c00 = inf; FP8 to 0x7e = 448, which is the saturation (it also catches the
 * round-up of 448 < |x| onto the NaN code 0x7f). */
static const minifloat FP16 = {16, 15, 10, 0x7c00, 0x7e00, 1};
static const minifloat FP8 = {8, 7, 3, 0x7e, 0x7f, 0};

/* Normal range (double exponent ≥ that of 2^(1−bias)): re-biasing the exponent and dropping
 * 52 − mbits mantissa bits with rounding gives the code; a round-up carries into the exponent by
 * itself. Below it, the code is |x| as a multiple of the smallest subnormal 2^(1−bias−mbits). */
static uint64_t mini_encode(const minifloat *f, double x) {
    uint64_t u = dbl_bits(x), a = u & ABS_MASK, sign = (u >> 63) << (f->bits - 1), c;
    if (a > EXP_INF) return sign | f->nan;
    if (a >= EXP_FIELD(1024 - f->bias)) {
        c = rne_shift(a - EXP_FIELD(1023 - f->bias), (unsigned)(52 - f->mbits));
        c = c < f->clamp ? c : f->clamp;
    } else {
        c = round_scaled(a, -(f->bias - 1 + f->mbits)); /* may round up to the first normal */
    }
    return sign | c;
}

/* Exact: subnormals are m·2^(1−bias−mbits); inf/NaN keep the mantissa (payload, quiet bit). */
static double mini_decode(const minifloat *f, uint64_t c) {
    uint64_t sbit = UINT64_C(1) << (f->bits - 1), mag = c & (sbit - 1);
    uint64_t e = mag >> f->mbits, m = mag & ((UINT64_C(1) << f->mbits) - 1);
    uint64_t emax = (sbit - 1) >> f->mbits, r;
    if (f->ieee_inf ? e == emax : mag == f->nan)
        r = f->ieee_inf ? EXP_INF | m << (52 - f->mbits) : EXP_INF | UINT64_C(1) << 51;
    else if (e == 0)
        r = dbl_bits((double)m * bits_dbl(EXP_FIELD(1024 - f->bias - f->mbits)));
    else
        r = EXP_FIELD(e + 1023 - (uint64_t)f->bias) | m << (52 - f->mbits);
    return bits_dbl(((c & sbit) ? ~ABS_MASK : 0) | r);
}

uint16_t tg_fp16_from_double(double x) { return (uint16_t)mini_encode(&FP16, x); }
double tg_fp16_to_double(uint16_t h) { return mini_decode(&FP16, h); }
uint8_t tg_fp8_from_double(double x) { return (uint8_t)mini_encode(&FP8, x); }
double tg_fp8_to_double(uint8_t b) { return mini_decode(&FP8, b); }

/* x rounded to nearest even and saturated to [lo, hi]; NaN gives 0. Within the range
 * |x| ≤ 2^31, so round_scaled's precondition holds; the rounding does not depend on the FPU's
 * rounding mode. */
static inline int64_t round_sat(double x, int64_t lo, int64_t hi) {
    if (x != x) return 0;
    if (x <= (double)lo) return lo;
    if (x >= (double)hi) return hi;
    uint64_t u = dbl_bits(x);
    int64_t r = (int64_t)round_scaled(u & ABS_MASK, 0);
    return u >> 63 ? -r : r;
}

double tg_prec_load(tg_prec p, const void *a, size_t i) {
    switch (p) {
    case TG_FP64: return ((const double *)a)[i];
    case TG_FP32: return ((const float *)a)[i];
    case TG_FP16: return tg_fp16_to_double(((const uint16_t *)a)[i]);
    case TG_FP8_E4M3: return tg_fp8_to_double(((const uint8_t *)a)[i]);
    case TG_INT8: return ((const int8_t *)a)[i];
    case TG_INT32: return ((const int32_t *)a)[i];
    default: return NAN;
    }
}

void tg_prec_store(tg_prec p, void *a, size_t i, double x) {
    switch (p) {
    case TG_FP64: ((double *)a)[i] = x; break;
    case TG_FP32: ((float *)a)[i] = (float)x; break; /* hardware rounding: nearest even */
    case TG_FP16: ((uint16_t *)a)[i] = tg_fp16_from_double(x); break;
    case TG_FP8_E4M3: ((uint8_t *)a)[i] = tg_fp8_from_double(x); break;
    case TG_INT8: ((int8_t *)a)[i] = (int8_t)round_sat(x, INT8_MIN, INT8_MAX); break;
    case TG_INT32: ((int32_t *)a)[i] = (int32_t)round_sat(x, INT32_MIN, INT32_MAX); break;
    default: break;
    }
}
