/* Precisions: the name/size/roundoff table, name parsing, and the scalar conversions, checked
 * against independent references:
 *  - FP16: GCC's _Float16 (conversions done by libgcc or F16C, correctly rounded from double);
 *  - FP8 E4M3 (and FP16 when the compiler has no _Float16): a brute-force reference that decodes
 *    every code by the format's formula and rounds x by comparing its distance to the two
 *    neighbouring representable values (ties to the even code), then applies the overflow rule;
 *  - integers: nearbyint() (libm, default rounding mode = nearest even) and clamping.
 * The FP16 brute-force reference is itself checked against _Float16 when both exist. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "tap.h"
#include "tilegwas.h"

#ifdef __FLT16_MAX__
#define HAVE_FLOAT16 1
#endif

/* A small binary floating-point format, for the brute-force reference. */
typedef struct {
    const char *name;
    int ebits, mbits, bias;
    int ieee;        /* 1: top exponent holds inf/NaN (overflow → inf); 0: only S.1…1.1…1 is NaN and
                        conversion saturates (OFP8 E4M3) */
    unsigned maxfin; /* largest positive finite code */
    unsigned qnan;   /* positive NaN code our conversion documents */
    double *val;     /* val[c] for the positive finite codes 0..maxfin (increasing) */
} fmt;

static fmt f16 = {"fp16", 5, 10, 15, 1, 0x7bff, 0x7e00, NULL};
static fmt f8 = {"fp8", 4, 3, 7, 0, 0x7e, 0x7f, NULL};

static unsigned sign_bit(const fmt *f) { return 1u << (f->ebits + f->mbits); }

/* Value of a code by the definition: (-1)^S · 2^(E-bias) · 1.M, or 2^(1-bias) · 0.M when E = 0. */
static double ref_decode(const fmt *f, unsigned code) {
    unsigned e = (code >> f->mbits) & ((1u << f->ebits) - 1), m = code & ((1u << f->mbits) - 1);
    unsigned emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
    double v;
    if (f->ieee && e == emax) v = m ? NAN : INFINITY;
    else if (!f->ieee && e == emax && m == mmax) v = NAN;
    else if (e == 0) v = ldexp(m, 1 - f->bias - f->mbits);
    else v = ldexp((double)((1u << f->mbits) + m), (int)e - f->bias - f->mbits);
    return code & sign_bit(f) ? -v : v;
}

static void fmt_init(fmt *f) {
    f->val = malloc((f->maxfin + 1) * sizeof *f->val);
    for (unsigned c = 0; c <= f->maxfin; c++) f->val[c] = ref_decode(f, c);
}

/* Nearest representable value to x, ties to the even code. The two distances are exact (the
 * neighbours are within a factor 2 of x, Sterbenz), so the tie test is exact. */
static unsigned ref_round(const fmt *f, double x) {
    unsigned sign = signbit(x) ? sign_bit(f) : 0;
    double ax = fabs(x), max = f->val[f->maxfin];
    if (isnan(x)) return sign | f->qnan;
    if (ax > max) {
        if (!f->ieee) return sign | f->maxfin; /* saturation */
        /* the next value, max + ulp, would have code maxfin + 1 = inf (even mantissa): at or
         * past the midpoint, round to inf */
        double next = 2 * max - f->val[f->maxfin - 1];
        return sign | (ax >= (max + next) / 2 ? f->maxfin + 1 : f->maxfin);
    }
    unsigned lo = 0, hi = f->maxfin; /* largest code with val ≤ ax */
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (f->val[mid] <= ax) lo = mid;
        else hi = mid - 1;
    }
    if (f->val[lo] == ax) return sign | lo;
    double dlo = ax - f->val[lo], dhi = f->val[lo + 1] - ax;
    unsigned c = dlo < dhi ? lo : dhi < dlo ? lo + 1 : (lo & 1 ? lo + 1 : lo);
    return sign | c;
}

static unsigned ref16(double x) {
#ifdef HAVE_FLOAT16
    _Float16 h = (_Float16)x;
    uint16_t b;
    memcpy(&b, &h, sizeof b);
    return b;
#else
    return ref_round(&f16, x);
#endif
}
static unsigned ref8(double x) { return ref_round(&f8, x); }
static unsigned ours16(double x) { return tg_fp16_from_double(x); }
static unsigned ours8(double x) { return tg_fp8_from_double(x); }

/* A conversion under test, its reference, and a running count of mismatches. */
typedef struct {
    const fmt *f;
    unsigned (*ours)(double);
    unsigned (*ref)(double);
    long bad;
} conv;

/* Our code for x must equal the reference's; for a NaN input, ours is the documented quiet NaN
 * with x's sign and the reference must be some NaN. */
static void check(conv *c, double x) {
    unsigned o = c->ours(x), r = c->ref(x);
    int good = isnan(x) ? o == ((signbit(x) ? sign_bit(c->f) : 0) | c->f->qnan) &&
                              isnan(ref_decode(c->f, r))
                        : o == r;
    if (!good && c->bad++ < 5) diag("%s: x = %a: got 0x%x, want 0x%x", c->f->name, x, o, r);
}

/* Both NaN, or the same bits (so -0 and +0 differ). */
static int same_double(double a, double b) {
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a);
}

/* Midpoint of every pair of consecutive positive finite codes, and between the largest finite
 * value and max + ulp (65520 for FP16, 464 for E4M3), x and x ± 1 ulp, both signs, against the
 * reference; and at the exact midpoint the even code of the two, by the definition (for E4M3
 * the even one of 448 and 480 is 448, so saturation does not change it). */
static void check_midpoints(conv *c, const char *what) {
    const fmt *f = c->f;
    long even_bad = 0;
    for (unsigned k = 0; k <= f->maxfin; k++) {
        double lo = f->val[k], hi = k < f->maxfin ? f->val[k + 1] : 2 * lo - f->val[k - 1];
        double mid = (lo + hi) / 2;
        for (int s = 0; s < 2; s++) {
            double m = s ? -mid : mid;
            check(c, m);
            check(c, nextafter(m, 0));
            check(c, nextafter(m, s ? -INFINITY : INFINITY));
            unsigned want = k & 1 ? k + 1 : k;
            if (c->ours(m) != (want | (s ? sign_bit(f) : 0)) && even_bad++ < 5)
                diag("%s: midpoint %a gave 0x%x, want the even code 0x%x", f->name, m, c->ours(m),
                     want);
        }
    }
    ok(c->bad == 0 && even_bad == 0, "%s: %s", f->name, what);
    c->bad = 0;
}

/* Random doubles in four families, n of each: random bit patterns (every exponent, NaN, inf,
 * subnormals), uniform in ±span, tiny values 2^[tiny_lo, tiny_hi) around the subnormal range,
 * and uniform in [near_lo, near_hi] around the overflow threshold. */
static void check_random(conv *c, tg_rng *r, long n, double span, int tiny_lo, int tiny_hi,
                         double near_lo, double near_hi) {
    for (long i = 0; i < n; i++) {
        uint64_t u = tg_rng_u64(r);
        double x;
        memcpy(&x, &u, sizeof x);
        check(c, x);
        check(c, (2 * tg_rng_uniform(r) - 1) * span);
        double s = tg_rng_u64(r) & 1 ? -1 : 1;
        int e = tiny_lo + (int)tg_rng_below(r, (uint64_t)(tiny_hi - tiny_lo));
        check(c, s * ldexp(1 + tg_rng_uniform(r), e));
        check(c, s * (near_lo + tg_rng_uniform(r) * (near_hi - near_lo)));
    }
    ok(c->bad == 0, "%s: %ld random doubles (bit patterns, ±%g, subnormal range, near overflow)",
       c->f->name, 4 * n, span);
    c->bad = 0;
}

/* Exact cases from the format definitions. */
typedef struct {
    double x;
    unsigned want;
} spot;

static void check_spots(const fmt *f, unsigned (*ours)(double), const spot *s, size_t n) {
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (ours(s[i].x) != s[i].want && bad++ < 5)
            diag("%s: x = %a: got 0x%x, want 0x%x", f->name, s[i].x, ours(s[i].x), s[i].want);
    ok(bad == 0, "%s: %zu special cases (zeros, ties, subnormals, overflow, inf, NaN)", f->name, n);
}

static void test_table(void) {
    static const char *names[TG_NPREC] = {"fp64", "fp32", "fp16", "fp8", "int8", "int32"};
    static const size_t sizes[TG_NPREC] = {sizeof(double), sizeof(float), 2, 1, 1, 4};
    /* u = half the gap between 1 and the next representable value */
    double u[TG_NPREC] = {DBL_EPSILON / 2, FLT_EPSILON / 2, 0, 0, 0, 0};
    for (unsigned k = 0; k < f16.maxfin; k++)
        if (f16.val[k] == 1) u[TG_FP16] = (f16.val[k + 1] - 1) / 2;
    for (unsigned k = 0; k < f8.maxfin; k++)
        if (f8.val[k] == 1) u[TG_FP8_E4M3] = (f8.val[k + 1] - 1) / 2;
    int names_ok = 1, sizes_ok = 1, u_ok = 1, parse_ok = 1;
    for (int p = 0; p < TG_NPREC; p++) {
        names_ok &= !strcmp(tg_prec_name((tg_prec)p), names[p]);
        sizes_ok &= tg_prec_size((tg_prec)p) == sizes[p];
        u_ok &= tg_prec_unit_roundoff((tg_prec)p) == u[p];
        tg_prec q = TG_NPREC;
        parse_ok &= tg_prec_parse(names[p], &q, NULL) == TG_OK && q == (tg_prec)p;
    }
    ok(names_ok, "names fp64 fp32 fp16 fp8 int8 int32");
    ok(sizes_ok, "element sizes 8 4 2 1 1 4");
    ok(u_ok, "unit roundoffs 2^-53 2^-24 2^-11 2^-4 0 0 (half the gap above 1)");
    ok(parse_ok, "every name parses back to its precision");

    static const struct {
        const char *s;
        tg_prec p;
    } other[] = {{"FP16", TG_FP16}, {"Int8", TG_INT8}, {"fp8_e4m3", TG_FP8_E4M3},
                 {"E4M3", TG_FP8_E4M3}, {"FP8_E4M3", TG_FP8_E4M3}, {"INT32", TG_INT32}};
    int other_ok = 1;
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        tg_prec q = TG_NPREC;
        other_ok &= tg_prec_parse(other[i].s, &q, NULL) == TG_OK && q == other[i].p;
    }
    ok(other_ok, "any case, and the aliases fp8_e4m3 and e4m3");

    tg_error err = {0};
    tg_prec q;
    int bad_ok = tg_prec_parse("fp4", &q, &err) == TG_ERR_ARG && err.status == TG_ERR_ARG &&
                 strstr(err.msg, "fp4") != NULL;
    for (int p = 0; p < TG_NPREC; p++) bad_ok &= strstr(err.msg, names[p]) != NULL;
    ok(bad_ok, "unknown name: TG_ERR_ARG, message names it and lists the valid names");
    diag("message: %s", err.msg);
    ok(tg_prec_parse(NULL, &q, &err) == TG_ERR_ARG && tg_prec_parse("", &q, NULL) == TG_ERR_ARG &&
           tg_prec_parse("fp16x", &q, NULL) == TG_ERR_ARG,
       "NULL, empty and prefixed names are rejected");
    ok(tg_prec_size(TG_NPREC) == 0 && !strcmp(tg_prec_name(TG_NPREC), "invalid") &&
           isnan(tg_prec_unit_roundoff(TG_NPREC)),
       "an out-of-range precision: size 0, name \"invalid\", roundoff NaN");
}

static void test_fp16(tg_rng *r) {
    long dec_bad = 0, enc_bad = 0;
    for (unsigned c = 0; c < 0x10000; c++) {
        double got = tg_fp16_to_double((uint16_t)c), want = ref_decode(&f16, c);
#ifdef HAVE_FLOAT16
        uint16_t b = (uint16_t)c;
        _Float16 h;
        memcpy(&h, &b, sizeof h);
        int match16 = same_double(got, (double)h);
#else
        int match16 = 1;
#endif
        if (!(same_double(got, want) && match16) && dec_bad++ < 5)
            diag("fp16: code 0x%04x decodes to %a, want %a", c, got, want);
        /* encoding the exact value gives the code back; NaN codes give the quiet NaN, same sign */
        unsigned back = tg_fp16_from_double(want), wantc = isnan(want) ? (c & 0x8000) | 0x7e00 : c;
        if (back != wantc && enc_bad++ < 5) diag("fp16: 0x%04x → %a → 0x%04x", c, want, back);
    }
#ifdef HAVE_FLOAT16
    ok(dec_bad == 0, "fp16: all 65536 codes decode exactly (formula and _Float16 agree)");
#else
    ok(dec_bad == 0, "fp16: all 65536 codes decode exactly (formula; no _Float16)");
#endif
    ok(enc_bad == 0, "fp16: all 65536 codes round-trip (NaN codes → 0x7e00 | sign)");

    conv c = {&f16, ours16, ref16, 0};
#ifdef HAVE_FLOAT16
    diag("fp16 reference: _Float16");
    /* the brute-force reference must agree with _Float16 too, or it could not stand in for it */
    long ref_bad = 0;
    for (unsigned k = 0; k < f16.maxfin; k++) {
        double mid = (f16.val[k] + f16.val[k + 1]) / 2;
        double xs[] = {mid, nextafter(mid, 0), nextafter(mid, 1), -mid, 65520, 65519.99, 1e-300};
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            if (ref_round(&f16, xs[i]) != ref16(xs[i]) && ref_bad++ < 5)
                diag("brute-force fp16 reference differs from _Float16 at %a", xs[i]);
    }
    ok(ref_bad == 0, "fp16: the brute-force reference agrees with _Float16");
#else
    diag("fp16 reference: brute force (this compiler has no _Float16)");
    ok(1, "fp16: brute-force reference in use # SKIP no _Float16 to check it against");
#endif
    check_midpoints(&c, "every midpoint and midpoint ± 1 ulp rounds to nearest, ties to even");
    check_random(&c, r, 250000, 70000, -27, -13, 65000, 66000);

    const double t = 0x1p-25; /* half the smallest subnormal */
    const spot s[] = {
        {0.0, 0},          {-0.0, 0x8000},  {1, 0x3c00},     {65504, 0x7bff},
        {nextafter(65520, 0), 0x7bff},      {65520, 0x7c00}, {1e300, 0x7c00},
        {INFINITY, 0x7c00}, {-INFINITY, 0xfc00},             {0x1p-24, 1},
        {t, 0},            {nextafter(t, 1), 1},             {-t, 0x8000},
        {3 * t, 2},        {0x1p-14, 0x400}, {0x1p-14 - t, 0x400},
        {DBL_TRUE_MIN, 0}, {-DBL_TRUE_MIN, 0x8000},          {NAN, 0x7e00},
        {-NAN, 0xfe00},    {1 + 0x1p-11 + 0x1p-40, 0x3c01},  {t + 0x1p-60, 1},
    };
    check_spots(&f16, ours16, s, sizeof s / sizeof *s);

    /* double rounding: via float, x first lands on a half-way point and then ties to even */
    const double dr[] = {1 + 0x1p-11 + 0x1p-40, t + 0x1p-60};
    int dr_ok = 1;
    for (int i = 0; i < 2; i++) {
        unsigned direct = tg_fp16_from_double(dr[i]), via_float = ref16((double)(float)dr[i]);
        dr_ok &= direct == ref16(dr[i]) && direct != via_float;
        diag("x = %a: direct 0x%04x, via float 0x%04x", dr[i], direct, via_float);
    }
    ok(dr_ok, "fp16: one rounding from double, where double → float → half would differ");
}

static void test_fp8(tg_rng *r) {
    long dec_bad = 0, enc_bad = 0;
    for (unsigned c = 0; c < 0x100; c++) {
        double got = tg_fp8_to_double((uint8_t)c), want = ref_decode(&f8, c);
        if (!same_double(got, want) && dec_bad++ < 5)
            diag("fp8: code 0x%02x decodes to %a, want %a", c, got, want);
        if (tg_fp8_from_double(want) != c && enc_bad++ < 5)
            diag("fp8: 0x%02x → %a → 0x%02x", c, want, tg_fp8_from_double(want));
    }
    ok(dec_bad == 0, "fp8: all 256 codes decode exactly (only 0x7f and 0xff are NaN)");
    ok(enc_bad == 0, "fp8: all 256 codes round-trip");

    conv c = {&f8, ours8, ref8, 0};
    check_midpoints(&c, "every midpoint (and 464) and midpoint ± 1 ulp: nearest even, saturating");
    check_random(&c, r, 50000, 600, -12, -5, 440, 490);

    const spot s[] = {
        {0.0, 0},         {-0.0, 0x80},     {1, 0x38},         {0x1p-6, 0x08},
        {0x1p-9, 0x01},   {0x1p-10, 0},     {nextafter(0x1p-10, 1), 0x01},
        {-0x1p-10, 0x80}, {3 * 0x1p-10, 0x02},                 {400, 0x7c},
        {432, 0x7e},      {448, 0x7e},      {464, 0x7e},       {nextafter(464, 500), 0x7e},
        {480, 0x7e},      {-500, 0xfe},     {1e300, 0x7e},     {INFINITY, 0x7e},
        {-INFINITY, 0xfe}, {NAN, 0x7f},     {-NAN, 0xff},      {DBL_TRUE_MIN, 0},
    };
    check_spots(&f8, ours8, s, sizeof s / sizeof *s);
}

/* Integer reference: nearbyint in the default rounding mode (nearest even), then clamping. */
static double ref_int(double x, double lo, double hi) {
    if (isnan(x)) return 0;
    double v = nearbyint(x);
    if (v == 0) return 0; /* an integer has no -0 */
    return v < lo ? lo : v > hi ? hi : v;
}

/* The value tg_prec_store(p, ..., x) must leave, as a double. */
static double ref_store(tg_prec p, double x) {
    switch (p) {
    case TG_FP64: return x;
    case TG_FP32: return (float)x;
    case TG_FP16: return ref_decode(&f16, ref16(x));
    case TG_FP8_E4M3: return ref_decode(&f8, ref8(x));
    case TG_INT8: return ref_int(x, INT8_MIN, INT8_MAX);
    default: return ref_int(x, INT32_MIN, INT32_MAX);
    }
}

static void test_load_store(tg_rng *r) {
    /* value scales per precision, reaching past each range */
    static const double span[TG_NPREC] = {1e300, 1e40, 7e4, 600, 300, 3e9};
    static const double half[TG_NPREC] = {1e6, 1e6, 7e4, 600, 300, 3e9};
    enum { N = 16 };
    for (int p = 0; p < TG_NPREC; p++) {
        size_t sz = tg_prec_size((tg_prec)p);
        _Alignas(double) unsigned char buf[N * 8];
        long bad = 0;
        for (int it = 0; it < 20000; it++) {
            double x;
            switch (it % 4) {
            case 0: x = (2 * tg_rng_uniform(r) - 1) * span[p]; break;
            case 1: /* half-integers: ties for the integer types */
                x = (double)tg_rng_below(r, (uint64_t)(2 * half[p])) - half[p] + 0.5;
                break;
            case 2: x = ldexp(2 * tg_rng_uniform(r) - 1, (int)tg_rng_below(r, 40) - 30); break;
            default: {
                static const double sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5};
                x = sp[tg_rng_below(r, 8)];
            }
            }
            size_t i = tg_rng_below(r, N);
            memset(buf, 0xab, sizeof buf);
            tg_prec_store((tg_prec)p, buf, i, x);
            double got = tg_prec_load((tg_prec)p, buf, i), want = ref_store((tg_prec)p, x);
            int others = 1; /* bytes outside element i untouched */
            for (size_t b = 0; b < sizeof buf; b++)
                if ((b < i * sz || b >= (i + 1) * sz) && buf[b] != 0xab) others = 0;
            if (!(same_double(got, want) && others) && bad++ < 5)
                diag("%s: store %a at %zu loads %a, want %a%s", tg_prec_name((tg_prec)p), x, i,
                     got, want, others ? "" : " (neighbours overwritten)");
        }
        ok(bad == 0, "%s: store then load equals the reference rounding (20000 values)",
           tg_prec_name((tg_prec)p));
    }

    static const struct {
        tg_prec p;
        double x, want;
    } s[] = {{TG_INT8, 2.5, 2},        {TG_INT8, -2.5, -2},          {TG_INT8, 3.5, 4},
             {TG_INT8, 0.5, 0},        {TG_INT8, -1.5, -2},          {TG_INT8, 300, 127},
             {TG_INT8, -300, -128},    {TG_INT8, 127.5, 127},        {TG_INT8, -128.5, -128},
             {TG_INT8, NAN, 0},        {TG_INT8, INFINITY, 127},     {TG_INT8, -INFINITY, -128},
             {TG_INT32, 2.5, 2},       {TG_INT32, 2147483646.5, 2147483646},
             {TG_INT32, 2147483647.5, 2147483647},                  {TG_INT32, 1e10, 2147483647},
             {TG_INT32, -2147483648.5, -2147483648.0},              {TG_INT32, NAN, 0},
             {TG_INT32, 1e-300, 0},    {TG_INT32, 0.5000000000000001, 1}};
    long bad = 0;
    for (size_t k = 0; k < sizeof s / sizeof *s; k++) {
        int32_t buf[1];
        tg_prec_store(s[k].p, buf, 0, s[k].x);
        double got = tg_prec_load(s[k].p, buf, 0);
        if (got != s[k].want && bad++ < 5)
            diag("%s: %a stored as %.17g, want %.17g", tg_prec_name(s[k].p), s[k].x, got,
                 s[k].want);
    }
    ok(bad == 0, "integers: ties to even (2.5 → 2, -2.5 → -2, 3.5 → 4), saturation, NaN → 0");
}

int main(void) {
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    fmt_init(&f16);
    fmt_init(&f8);
    tap_plan(27);
    test_table();
    test_fp16(&r);
    test_fp8(&r);
    test_load_store(&r);
    free(f16.val);
    free(f8.val);
    return tap_done();
}
