// The K2 screen of the epistasis epilogue: a lower bound on a combination's K2 key computed
// without the score table, so that the exact score (3·3^k table gathers, the epilogue's bound)
// is computed only where the bound does not already put the key above the worker's threshold.
// Included by codelets/epistasis_cuda.cu (the round codelet) and codelets/epistasis_hooks.cu
// (the test hook that checks the bound against exact keys), in an unnamed namespace like
// codelets/epistasis_cuda.cuh.
//
// The bound. A cell's term is T(n0, n1) = ln((n0 + n1 + 1)! / (n0!·n1!)) = lgamma(x2) −
// lgamma(x0) − lgamma(x1), with x0 = n0 + 1, x1 = n1 + 1, x2 = x0 + x1. Binet's form
// lgamma(x) = (x − ½)·ln x − x + ½·ln 2π + μ(x), 0 < μ(x) < 1/(12x) for x > 0, gives (the linear
// terms cancel, μ(x2) > 0 is dropped)
//     T ≥ D − ½·ln 2π − 1/(12·x0) − 1/(12·x1),
//     D = x0·ln(x2/x0) + x1·ln(x2/x1) + ½·ln(x0·x1/x2),
// where each part of D is small (x0·ln(x2/x0) ≤ x1), so D is well conditioned in float. Per
// cell: three log2 (lg2.approx, __log2f's instruction, one MUFU op each), a few float
// operations, and 1/x0 + 1/x1 bounded from above by the float bits (0x7F000000 − bits(x) is
// 2^(−e−1)·(3 − m) ≥ 1/x for x = m·2^e, m in [1, 2)). The margin covers, with a factor of two
// at least each:
//   - __log2f's error, 2 ulp (2^−22 absolute on [0.5, 2]): |δ| ≤ 2^−22·max(1, log2(R + 2)) for
//     every x ≤ R + 2; D's error from it is at most ln 2·|δ|·(2·x2 + 1.5) a cell;
//   - the float operations of a cell, each rounding at most 2^−24 of a value below
//     x2/ln 2 + 2·log2(R + 2);
//   - the lane's float sum of its cells, at most (cells + 1)·2^−24·Σ|D|, Σ|D| ≤ Σx2 +
//     cells·log2(R + 2) (|½·ln(x0·x1/x2)| ≤ ½·ln(R + 2));
//   - the table's and the exact sum's double rounding: 10^−12 of the largest table entry a
//     term (lgamma to 10^−15 relative, 81 additions).
// Σx2 over the 3^k cells is R + 2·3^k. The float trick for x needs x < 2^23, so R + 1 < 2^23;
// above it there is no screen. tests/test_epistasis checks the bound against exact keys on the
// GPU.
#ifndef TG_CODELETS_EPISTASIS_K2SCREEN_CUH
#define TG_CODELETS_EPISTASIS_K2SCREEN_CUH
#include <stdint.h>

namespace {

constexpr int64_t K2_SCREEN_MAX_R = (1 << 23) - 2;

// One lane's running sums: d of D / ln 2, r of the upper bounds on 1/x0 + 1/x1.
struct K2Screen {
    float d = 0, r = 0;
};

// __log2f's instruction without the scaling of subnormal inputs (x ≥ 1 here): one MUFU op
__device__ __forceinline__ float lg2_ftz(float x) {
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ void k2_screen_cell(int n0, int n1, K2Screen &s) {
    // x = n + 1 exactly: the float 2^23 + x, minus 2^23
    const int b0 = 0x4B000000 | (n0 + 1), b1 = 0x4B000000 | (n1 + 1);
    const float x0 = __int_as_float(b0) - 8388608.f, x1 = __int_as_float(b1) - 8388608.f;
    const float x2 = x0 + x1, l0 = lg2_ftz(x0), l1 = lg2_ftz(x1), l2 = lg2_ftz(x2);
    s.d += fmaf(x0, l2 - l0, fmaf(x1, l2 - l1, 0.5f * (l0 + l1 - l2)));
    s.r += __int_as_float(0x7F000000 - __float_as_int(x0)) +
           __int_as_float(0x7F000000 - __float_as_int(x1));
}

// The lower bound on the key a − c of a combination of R samples (0 < R ≤ K2_SCREEN_MAX_R)
// over `cells` cells summed by lanes of `per_lane` cells; d and r are the lanes' sums added in
// double, c = (t[R+1] − t[R0]) − t[R1] as the exact key computes it, tmax = t[R + 1].
__device__ __forceinline__ double k2_screen_key(double d, double r, int64_t R, int cells,
                                                int per_lane, double c, double tmax) {
    const double ln2 = 0.69314718055994531, u = 0x1p-24, half_ln_2pi = 0.91893853320467278;
    const double L = 64 - __clzll((long long)R + 1); // ≥ log2(R + 2), without a double log2
    const double X = (double)R + 2.0 * cells;
    const double margin = 2 * ln2 * 0x1p-22 * L * (2 * X + 1.5 * cells) // __log2f
                        + 8 * u * (X + 4 * cells * L)                  // a cell's float ops
                        + 2 * (per_lane + 1) * u * (X + cells * L)     // the lanes' sums
                        + 1e-12 * (3 * cells + 3) * tmax;              // the double path
    return ln2 * d - cells * half_ln_2pi - r * (1 + 0x1p-16) / 12 - margin - c;
}

} // namespace
#endif
