/* bench/snpmm: genotype matrix products Z·Λ and Zᵀ·Λ̃ (k columns) on random genotypes made in
 * memory (tg_geno_from_int8, 2 in 256 calls missing unless --missing says otherwise), against
 * ceilings measured in the same run.
 *
 * GPU (one CUDA worker; --ngpu G: G of them, the ceilings taken G times): per product, end to
 * end through tg_geno_mul (Λ sent, result fetched: the API as a caller sees it; Λ and the result
 * in malloc's memory, then in tg_host_alloc's, pinned), the mean of --reps and the fastest (one
 * stall of a shared machine moves the mean), and "resident" (Λ and the result in StarPU handles
 * that stay on the GPU, as a solver keeping its vectors there would see it; products back to
 * back); rates: 2nmk flops/s against cuBLAS DGEMM (SGEMM for fp32) on 8192² × 8192, the
 * 5codes bytes read per second against a cudaMemcpy device-to-device copy (read + write), and
 * for FP64 (8 INT8 slices a column of Λ) the tensor operations' rate against cuBLAS's INT8 GEMM
 * (one product's floors at these two rates are printed before the table); and
 * the host-to-device rate of Λ̃ from pinned memory just written by the cores, with plain and
 * with non-temporal stores (the staging copy's).
 * CPU (--cpu-n samples, default 20,400, so one core finishes in seconds): 5codes on one core
 * against every core in --pairs P pairs (one product on one core, the mean of --reps on every
 * core, then the fma loop's speedup, bench/cpuloops.h, as the ceiling of the same moment); then
 * 1024 × 256 tiles decompressed to double (centered), each followed by OpenBLAS DGEMM (the
 * decompress-on-the-fly method the paper compares with), on one core and on every core,
 * against OpenBLAS DGEMM on one core as the FP64 ceiling. --ncpu C instead times only the
 * products on C CPU workers: wall per product, the process's CPU time per product (the workers
 * poll when idle, but products run back to back, so that is the cores' work plus each
 * product's tail; on a shared machine it does not count the time others held the cores) and
 * the cores' busy time (the tasks' summed run time): the side of a comparison with another
 * program run alternately with it on the same cores.
 * --part-rows R: products split along their inner dimension in parts of R table rows, end to
 * end (tg_geno_set_part_rows; 0, the default: the library's choice) and resident (each part its
 * own handle of Λ; 0: one part).
 * --codes5: the GPU's FP64 products read the 5codes, not the 2-bit tiles it makes from them
 * (tg_geno_gpu_tiles_use(0)), so that the two are compared in one call.
 * usage: bench/snpmm [--n N] [--m M] [--k K] [--reps R] [--pairs P] [--cpu-n N] [--missing F]
 *                    [--part-rows R] [--ngpu G] [--ncpu C] [--no-gpu] [--no-cpu] [--codes5]
 * (defaults: the paper's small set, n 102,000 × m 50,241, k 10, 10 reps, 3 pairs) */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "algo/snpmm.h"
#include "base/mem.h"
#include "base/parallel.h"
#include "bench/common.h"
#include "bench/cpuloops.h"
#include "io/out.h"
#include "runtime/runtime.h"

/* Genotypes 0/1/2 from a splitmix64 stream, miss256 in 256 missing: the state of genotypes
 * 8i..8i+7 is seed + (i+1)·γ, so chunks are filled on all cores with the values one pass gives. */
typedef struct {
    int8_t *g;
    size_t count;
    uint64_t seed;
    unsigned miss256;
} geno_job;

#define GENO_CHUNK ((size_t)1 << 24)

static void random_chunk(void *ctx, int64_t c) {
    const geno_job *jb = ctx;
    size_t i0 = (size_t)c * GENO_CHUNK, i1 = i0 + GENO_CHUNK;
    if (i1 > jb->count) i1 = jb->count;
    uint64_t x = jb->seed + (i0 / 8) * 0x9e3779b97f4a7c15ull;
    for (size_t i = i0; i < i1; i += 8) {
        x += 0x9e3779b97f4a7c15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        for (size_t b = 0; b < 8 && i + b < i1; b++) {
            unsigned v = (unsigned)(z >> (8 * b)) & 0xff;
            jb->g[i + b] = v < jb->miss256 ? TG_GENO_MISSING : (int8_t)(v % 3);
        }
    }
}

static void random_genotypes(int8_t *g, size_t count, uint64_t seed, unsigned miss256) {
    geno_job jb = {g, count, seed, miss256};
    tg_parallel_for((int64_t)((count + GENO_CHUNK - 1) / GENO_CHUNK), random_chunk, &jb);
}

static void start(int ncpu, int ngpu) {
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    o.ncpu = ncpu;
    o.ngpu = ngpu;
    if (tg_runtime_start(&o, &err)) die("runtime", &err);
    char desc[512];
    tg_runtime_describe(desc, sizeof desc);
    printf("# %s\n", desc);
}

/* Where one product's time goes (its tasks recorded): the tasks' summed run time, the span
 * from the first start to the last end, the busiest worker's run time, and the workers' idle
 * time before their first task and after their last, summed over the workers that ran one;
 * and from the call's start, when its first task was submitted, when the first started, when
 * the last ended and when the call returned. */
typedef struct {
    double task_sum, span, busiest, idle_before, idle_after;
    double first_submit, first_start, last_end, call_end;
    size_t ntask;
    int nworkers;
} task_stats;

/* Seconds per product through tg_geno_mul (one warm-up product first), Λ and the result in
 * malloc's memory or, @p pinned, in tg_host_alloc's; the mean, and the fastest in *best. With
 * @p ts, one more product with its tasks recorded. */
static double time_mul(tg_geno *g, int trans, int k, tg_prec prec, int reps, int pinned,
                       double *best, task_stats *ts) {
    tg_error err = {0};
    int64_t nt = trans ? tg_geno_n(g) : tg_geno_m(g), nr = trans ? tg_geno_m(g) : tg_geno_n(g);
    size_t es = tg_prec_size(prec), bin = (size_t)(nt * k) * es, bout = (size_t)(nr * k) * es;
    void *in = pinned ? tg_host_alloc(bin, &err) : malloc(bin),
         *out = pinned ? tg_host_alloc(bout, &err) : malloc(bout);
    if (!in || !out) die("memory for the product", &err);
    for (int64_t e = 0; e < nt * k; e++) tg_prec_store(prec, in, (size_t)e, sin((double)e));
    if (tg_geno_mul(g, trans, k, prec, in, nt, out, nr, &err)) die("product", &err);
    double t0 = tg_now(), fastest = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t1 = tg_now();
        if (tg_geno_mul(g, trans, k, prec, in, nt, out, nr, &err)) die("product", &err);
        fastest = fmin(fastest, tg_now() - t1);
    }
    double t = (tg_now() - t0) / reps;
    if (best) *best = fastest;
    if (ts) {
        tg_record_start(0);
        /* the records' times count from a moment within tg_record_start, a few µs earlier */
        const double call0 = starpu_timing_now();
        if (tg_geno_mul(g, trans, k, prec, in, nt, out, nr, &err)) die("product", &err);
        const double call1 = starpu_timing_now();
        tg_task_record *rec = tg_record_stop(&ts->ntask);
        double first = INFINITY, last = 0, submit = INFINITY, per[STARPU_NMAXWORKERS] = {0},
               w_first[STARPU_NMAXWORKERS], w_last[STARPU_NMAXWORKERS] = {0};
        for (int w = 0; w < STARPU_NMAXWORKERS; w++) w_first[w] = INFINITY;
        ts->task_sum = ts->busiest = ts->idle_before = ts->idle_after = 0;
        ts->nworkers = 0;
        for (size_t i = 0; i < ts->ntask; i++) {
            const int w = rec[i].worker;
            if (w < 0 || w >= STARPU_NMAXWORKERS) continue; /* no worker known: not counted */
            ts->task_sum += rec[i].end - rec[i].start;
            submit = fmin(submit, rec[i].submit);
            per[w] += rec[i].end - rec[i].start;
            ts->busiest = fmax(ts->busiest, per[w]);
            first = fmin(first, rec[i].start);
            last = fmax(last, rec[i].end);
            w_first[w] = fmin(w_first[w], rec[i].start);
            w_last[w] = fmax(w_last[w], rec[i].end);
        }
        for (int w = 0; w < STARPU_NMAXWORKERS; w++)
            if (per[w] > 0) {
                ts->nworkers++;
                ts->idle_before += w_first[w] - first;
                ts->idle_after += last - w_last[w];
            }
        ts->span = last - first;
        ts->call_end = (call1 - call0) * 1e-6;
        ts->first_submit = submit, ts->first_start = first, ts->last_end = last;
        free(rec);
    }
    if (pinned) {
        tg_host_free(in);
        tg_host_free(out);
    } else {
        free(in);
        free(out);
    }
    return t;
}

/* Seconds per product with Λ and the result kept in StarPU handles (resident on the GPU); Λ in
 * parts of @p part_rows table rows, each its own handle, when that is above 0 (the GPU's side
 * of the parts that tg_geno_mul makes, without the host's). */
static double time_resident(tg_geno *g, int trans, int k, tg_prec prec, int reps,
                            int64_t part_rows) {
    tg_error err = {0};
    int64_t nt = trans ? tg_geno_n(g) : tg_geno_m(g), nb = tg_geno_nblocks(g, trans);
    if (part_rows <= 0 || part_rows > nt) part_rows = nt;
    const int64_t nparts = (nt + part_rows - 1) / part_rows;
    size_t es = tg_prec_size(prec);
    starpu_data_handle_t *in = malloc((size_t)(nb + nparts) * sizeof *in), *out = in + nparts;
    for (int64_t q = 0; q < nparts; q++) {
        const int64_t t0 = q * part_rows, rows = nt - t0 < part_rows ? nt - t0 : part_rows;
        starpu_matrix_data_register(&in[q], -1, 0, (uint32_t)rows, (uint32_t)rows, (uint32_t)k,
                                    es);
        starpu_data_acquire(in[q], STARPU_W);
        void *p = (void *)starpu_matrix_get_local_ptr(in[q]);
        for (int64_t c = 0; c < k; c++)
            for (int64_t t = 0; t < rows; t++)
                tg_prec_store(prec, p, (size_t)(c * rows + t), sin((double)(c * nt + t0 + t)));
        starpu_data_release(in[q]);
    }
    for (int64_t b = 0; b < nb; b++) {
        uint32_t rows = (uint32_t)(tg_geno_block_start(g, trans, b + 1) -
                                   tg_geno_block_start(g, trans, b));
        starpu_matrix_data_register(&out[b], -1, 0, rows, rows, (uint32_t)k, es);
    }
    double off[64] = {0}; /* offsets and column maxima: the results are timed, not read */
    double t = 0;
    for (int pass = 0; pass < 2; pass++) { /* pass 0: transfers and calibration */
        int n = pass ? reps : 2;
        double t0 = tg_now();
        for (int r = 0; r < n; r++)
            for (int64_t q = 0; q < nparts; q++)
                if (tg_geno_mul_submit(g, trans, k, prec, q * part_rows, off, off, in[q], out,
                                       0, &err))
                    die("submit", &err);
        starpu_task_wait_for_all();
        t = (tg_now() - t0) / n;
    }
    for (int64_t h = 0; h < nb + nparts; h++) starpu_data_unregister_no_coherency(in[h]);
    free(in);
    return t;
}

#ifdef TG_USE_CUDA
/* cudaMemcpy device-to-device, bytes read + written per second */
static double gpu_copy_ceiling(void) {
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes)) return 0;
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    double t0 = tg_now();
    for (int r = 0; r < 10; r++) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    double t = tg_now() - t0;
    cudaFree(a);
    cudaFree(b);
    return 2.0 * bytes * 10 / t;
}

/* The staging buffer's transfer: host to device from pinned memory just written by the pool's
 * threads, with plain stores (@p stream 0: the lines dirty in the cores' caches when the DMA
 * reads them) or non-temporal ones (tg_copy_stream, as tg_geno_mul's staging copy); bytes per
 * second, the fastest of 5. */
typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
    int stream;
} fill_job;

enum { FILL_CHUNK = 64 * 1024 };

static void fill_chunk(void *ctx, int64_t c) {
    const fill_job *f = ctx;
    const size_t o = (size_t)c * FILL_CHUNK;
    const size_t n = f->bytes - o < FILL_CHUNK ? f->bytes - o : FILL_CHUNK;
    if (f->stream)
        tg_copy_stream(f->dst + o, f->src + o, n);
    else
        memcpy(f->dst + o, f->src + o, n);
}

static double h2d_rate(size_t bytes, int stream) {
    tg_error err = {0};
    char *src = malloc(bytes), *pin = tg_host_alloc(bytes, &err);
    void *dev = NULL;
    double best = INFINITY;
    if (src && pin && !cudaMalloc(&dev, bytes)) {
        memset(src, 1, bytes);
        fill_job f = {pin, src, bytes, stream};
        for (int r = 0; r < 6; r++) {
            tg_parallel_for((int64_t)((bytes + FILL_CHUNK - 1) / FILL_CHUNK), fill_chunk, &f);
            const double t0 = tg_now();
            cudaMemcpy(dev, pin, bytes, cudaMemcpyHostToDevice);
            if (r) best = fmin(best, tg_now() - t0); /* the first one warms up */
        }
    }
    cudaFree(dev);
    tg_host_free(pin);
    free(src);
    return bytes / best;
}
#endif

static void gpu_part(const int8_t *geno, int64_t n, int64_t m, int k, int reps, int ngpu,
                     int64_t part_rows) {
#ifdef TG_USE_CUDA
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("# no GPU: GPU part skipped\n");
        return;
    }
    start(0, ngpu);
    tg_error err = {0};
    tg_geno *g;
    double t0 = tg_now();
    if (tg_geno_from_int8(geno, n, m, n, 0, &g, &err)) die("prepare", &err);
    tg_geno_set_part_rows(g, part_rows);
    printf("# GPU: n %lld x m %lld, k %d: 5codes prepared in %.1f s; %lld blocks of samples "
           "(first %lld), %lld blocks of SNPs (first %lld); end to end, parts of %lld table rows "
           "(0: the default)\n",
           (long long)n, (long long)m, k, tg_now() - t0, (long long)tg_geno_nblocks(g, 0),
           (long long)tg_geno_block_start(g, 0, 1), (long long)tg_geno_nblocks(g, 1),
           (long long)tg_geno_block_start(g, 1, 1), (long long)part_rows);
    double copy = gpu_copy_ceiling(), bytes = 0.2 * (double)n * (double)m,
           flops = 2.0 * (double)n * (double)m * k;
    double gemm[2] = {bench_gpu_gemm_rate(TG_FP64), bench_gpu_gemm_rate(TG_FP32)},
           int8 = bench_gpu_gemm_rate(TG_INT8);
    printf("# ceilings: cudaMemcpy D2D %.0f GB/s (read + write); cuBLAS DGEMM %.1f TFLOP/s, "
           "SGEMM %.1f TFLOP/s, INT8 GEMM %.0f TOPS (8192^3), on one GPU; the ratios below are "
           "to %d times them\n",
           copy / 1e9, gemm[0] / 1e12, gemm[1] / 1e12, int8 / 1e12, tg_runtime_ngpu());
    /* FP64 products run on the INT8 tensor cores: 8 slices of 7 bits a column of Λ */
    const double int8_ops = 8 * flops;
    printf("# floors of one product on one GPU: the 5codes read once %.2f ms (their 2-bit tiles "
           "%.2f ms); FP64's %.3g INT8 operations at the INT8 GEMM rate %.2f ms (of_int8: that "
           "rate's share reached)\n",
           1e3 * bytes / copy, 1.25e3 * bytes / copy, int8_ops, 1e3 * int8_ops / int8);
    const size_t lbytes = (size_t)n * (size_t)k * sizeof(double); /* Λ̃ in FP64 */
    printf("# staging: Λ̃'s %.1f MB host to device from pinned memory just written by %d "
           "threads: %.1f GB/s with plain stores, %.1f GB/s with non-temporal ones (as staged)\n",
           lbytes / 1e6, tg_parallel_threads(), h2d_rate(lbytes, 0) / 1e9,
           h2d_rate(lbytes, 1) / 1e9);
    copy *= tg_runtime_ngpu(), gemm[0] *= tg_runtime_ngpu(), gemm[1] *= tg_runtime_ngpu();
    int8 *= tg_runtime_ngpu();
    printf("device\tproduct\tprec\tmode\tms\tTFLOP/s\tof_gemm\tGB/s_codes\tof_copy\t"
           "fastest_ms\tof_int8\n");
    for (int pi = 0; pi < 2; pi++)
        for (int trans = 0; trans < 2; trans++)
            for (int mode = 0; mode < 3; mode++) { /* pageable, pinned, resident */
                tg_prec prec = pi ? TG_FP32 : TG_FP64;
                task_stats ts = {0};
                double best = NAN; /* resident: products back to back, no single one timed */
                double t = mode == 2 ? time_resident(g, trans, k, prec, reps, part_rows)
                                     : time_mul(g, trans, k, prec, reps, mode, &best, &ts);
                const char *how = mode == 2 ? "resident" : mode ? "tg_geno_mul_pinned" : "tg_geno_mul";
                printf("gpu\t%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.0f\t%.3f\t%.2f\t",
                       trans ? "Z'L" : "ZL", tg_prec_name(prec), how, 1e3 * t, flops / t / 1e12,
                       flops / t / gemm[pi], bytes / t / 1e9, bytes / t / copy, 1e3 * best);
                if (pi == 0) printf("%.2f\n", int8_ops / t / int8);
                else printf("-\n");
                if (ts.ntask) /* one more product, its tasks recorded (profiling on) */
                    printf("# %s %s %s, one product in µs from its call: first task submitted "
                           "%.0f, started %.0f; last ended %.0f (%zu tasks, %.0f summed); "
                           "returned %.0f\n", trans ? "Z'L" : "ZL", tg_prec_name(prec), how,
                           1e6 * ts.first_submit, 1e6 * ts.first_start, 1e6 * ts.last_end,
                           ts.ntask, 1e6 * ts.task_sum, 1e6 * ts.call_end);
            }
    tg_geno_free(g);
    tg_runtime_stop();
#else
    (void)geno, (void)n, (void)m, (void)k, (void)reps, (void)ngpu, (void)part_rows;
    printf("# built without CUDA: GPU part skipped\n");
#endif
}

/* The decompress-on-the-fly method: tiles of 1024 samples × 256 SNPs (2 MiB, cache resident)
 * decompressed to centered doubles, each multiplied into out (rows × k) by one-thread DGEMM;
 * a band of 1024 samples per chunk, on one core or on every core (tg_parallel_for). */
typedef struct {
    const int8_t *geno;
    int64_t ld, rows, m;
    int k;
    const double *freq, *lam;
    double *out;
} dec_job;

enum { DEC_ROWS = 1024, DEC_COLS = 256 };

static void decompress_band(void *ctx, int64_t c) {
    const dec_job *jb = ctx;
    const int64_t i0 = c * DEC_ROWS, ni = jb->rows - i0 < DEC_ROWS ? jb->rows - i0 : DEC_ROWS;
    double *zt = malloc((size_t)DEC_ROWS * DEC_COLS * sizeof *zt);
    if (!zt) die("memory for a tile", NULL);
    for (int64_t j0 = 0; j0 < jb->m; j0 += DEC_COLS) {
        int64_t nj = jb->m - j0 < DEC_COLS ? jb->m - j0 : DEC_COLS;
        for (int64_t j = 0; j < nj; j++) {
            const double cj = isfinite(jb->freq[j0 + j]) ? 2 * jb->freq[j0 + j] : 0;
            const int8_t *col = jb->geno + (size_t)(j0 + j) * (size_t)jb->ld + i0;
            double *z = zt + j * ni;
            for (int64_t i = 0; i < ni; i++) z[i] = col[i] < 0 ? 0 : col[i] - cj;
        }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)ni, jb->k, (int)nj, 1, zt,
                    (int)ni, jb->lam + j0, (int)jb->m, 1, jb->out + i0, (int)jb->rows);
    }
    free(zt);
}

/* seconds for out = Z·lam by decompress + DGEMM, on every core when @p all */
static double decompress_dgemm(const dec_job *jb, int all) {
    const int64_t bands = (jb->rows + DEC_ROWS - 1) / DEC_ROWS;
    double t0 = tg_now();
    memset(jb->out, 0, (size_t)(jb->rows * jb->k) * sizeof *jb->out);
    if (all)
        tg_parallel_for(bands, decompress_band, (void *)jb);
    else
        for (int64_t c = 0; c < bands; c++) decompress_band((void *)jb, c);
    return tg_now() - t0;
}

/* One core against every core, in pairs a few seconds apart: this virtual machine's neighbours
 * change a core's speed by a third from minute to minute, so each pair's ratio compares products
 * run under the same load, and the median of the pairs is the figure (not a one-core block timed
 * a minute before the all-core block). Each pair also measures the fma loop's speedup on all
 * CPUs (bench/cpuloops.h): the scaling ceiling of a compute-bound loop at that moment. */
enum { MAX_PAIRS = 64 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median, smallest and largest of v[0..n) */
static double median(const double *v, int n, double *lo, double *hi) {
    double s[MAX_PAIRS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    if (lo) *lo = s[0];
    if (hi) *hi = s[n - 1];
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* OpenBLAS DGEMM on one core, 2048³ (the fastest of three): the FP64 ceiling of one core */
static double dgemm_rate(void) {
    const int q = 2048;
    double *a = malloc((size_t)q * q * 8), *b = malloc((size_t)q * q * 8),
           *c = malloc((size_t)q * q * 8), best = 0;
    if (!a || !b || !c) die("memory for DGEMM", NULL);
    for (size_t e = 0; e < (size_t)q * q; e++) a[e] = b[e] = c[e] = sin((double)e);
    for (int r = 0; r < 3; r++) {
        double t0 = tg_now();
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, q, q, q, 1, a, q, b, q, 0, c, q);
        best = fmax(best, 2.0 * q * (double)q * q / (tg_now() - t0));
    }
    free(a);
    free(b);
    free(c);
    return best;
}

static void cpu_part(const int8_t *geno, int64_t ld, int64_t n, int64_t m, int k, int reps,
                     int pairs) {
    tg_error err = {0};
    tg_geno *g;
    double t0 = tg_now();
    if (tg_geno_from_int8(geno, n, m, ld, 0, &g, &err)) die("prepare", &err);
    double flops = 2.0 * (double)n * (double)m * k, tp = tg_now() - t0;
    printf("# CPU: n %lld x m %lld, k %d: 5codes prepared in %.1f s (%.0f Mgenotypes/s)\n",
           (long long)n, (long long)m, k, tp, 1e-6 * (double)n * (double)m / tp);
    int ncpu, *cpus = cpuloop_cpus(&ncpu), ncores = 0;
    openblas_set_num_threads(1);
    double gemm1 = dgemm_rate();
    /* per pair and product: one core (one product), every core (mean and fastest of reps) */
    double one[MAX_PAIRS][2], all[MAX_PAIRS][2], allb[MAX_PAIRS][2], fma[MAX_PAIRS];
    double ratio[2][MAX_PAIRS], of_fma[2][MAX_PAIRS];
    task_stats ts[2][2];
    printf("pair\tproduct\tone_core_ms\tall_cores_ms\tall_cores_best_ms\tspeedup\t"
           "fma_speedup\tof_fma\n");
    for (int p = 0; p < pairs; p++) {
        fma[p] = cpuloop_supported() ? cpuloop_fma_speedup(cpus, ncpu, 0.2) : NAN;
        for (int a = 0; a < 2; a++) {
            start(a ? -1 : 1, 0);
            if (a) ncores = tg_runtime_ncpu();
            for (int trans = 0; trans < 2; trans++) {
                double *t = a ? &all[p][trans] : &one[p][trans];
                *t = time_mul(g, trans, k, TG_FP64, a ? reps : 1, 0, a ? &allb[p][trans] : NULL,
                              p ? NULL : &ts[a][trans]);
            }
            tg_runtime_stop();
        }
        for (int trans = 0; trans < 2; trans++) {
            ratio[trans][p] = one[p][trans] / all[p][trans];
            of_fma[trans][p] = ratio[trans][p] / fma[p];
            printf("%d\t%s\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\n", p + 1, trans ? "Z'L" : "ZL",
                   1e3 * one[p][trans], 1e3 * all[p][trans], 1e3 * allb[p][trans],
                   ratio[trans][p], fma[p], of_fma[trans][p]);
        }
        fflush(stdout);
    }
    /* the decompress + DGEMM comparison, on one core and on every core */
    double *lam = malloc((size_t)(m * k) * sizeof *lam), *out = malloc((size_t)(n * k) * 8);
    for (int64_t e = 0; e < m * k; e++) lam[e] = sin((double)e);
    const dec_job jb = {geno, ld, n, m, k, tg_geno_freq(g), lam, out};
    double tdec = decompress_dgemm(&jb, 0), tdec_all = decompress_dgemm(&jb, 1);
    double gemm_after = dgemm_rate();
    printf("# ceiling: OpenBLAS DGEMM (core %s) on one core, 2048^3: %.1f GFLOP/s before the "
           "products, %.1f after\n", tg_blas_core(), gemm1 / 1e9, gemm_after / 1e9);
    /* rates of the last pair (its products ran last, next to the decompress method) */
    const int l = pairs - 1;
    printf("device\tproduct\tmethod\tcores\tms\tGFLOP/s\tof_1core_dgemm\n");
    for (int trans = 0; trans < 2; trans++)
        for (int al = 0; al < 2; al++) {
            double t = al ? all[l][trans] : one[l][trans];
            printf("cpu\t%s\t5codes\t%d\t%.1f\t%.1f\t%.2f\n", trans ? "Z'L" : "ZL",
                   al ? ncores : 1, 1e3 * t, flops / t / 1e9, flops / t / gemm1);
        }
    printf("cpu\tZL\tdecompress+dgemm\t1\t%.1f\t%.1f\t%.2f\n", 1e3 * tdec, flops / tdec / 1e9,
           flops / tdec / gemm1);
    const long online = tg_parallel_threads();
    printf("cpu\tZL\tdecompress+dgemm\t%ld\t%.1f\t%.1f\t%.2f\n", online, 1e3 * tdec_all,
           flops / tdec_all / 1e9, flops / tdec_all / gemm1);
    printf("# 5codes vs decompress+DGEMM: %.2fx on one core, %.2fx on all (5codes on %d CPU "
           "workers, decompress+DGEMM on %ld cores)\n",
           tdec / one[l][0], tdec_all / all[l][0], ncores, online);
    double lo[2], hi[2], med[2];
    for (int trans = 0; trans < 2; trans++)
        med[trans] = median(ratio[trans], pairs, &lo[trans], &hi[trans]);
    printf("# %d cores against one, median of %d pairs: Z*L %.1fx, Z'*L %.1fx (pairs %.1f-%.1fx, "
           "%.1f-%.1fx); the fma loop's speedup on %d CPUs, median %.1fx: the products reach "
           "%.2f / %.2f of it\n",
           ncores, pairs, med[0], med[1], lo[0], hi[0], lo[1], hi[1], ncpu,
           median(fma, pairs, NULL, NULL), median(of_fma[0], pairs, NULL, NULL),
           median(of_fma[1], pairs, NULL, NULL));
    /* the scaling loss split (first pair, one product recorded): tasks running slower on a
     * loaded machine (their summed time against one core's) and cores idle within the product
     * (busy share of cores × span) */
    for (int trans = 0; trans < 2; trans++) {
        const task_stats *o = &ts[0][trans], *x = &ts[1][trans];
        if (!o->ntask || !x->ntask || x->span <= 0) continue; /* nothing recorded */
        /* idle: before a core's first task, after its last, cores that ran none, the rest */
        const double idle = ncores * x->span - x->task_sum, none = (ncores - x->nworkers) * x->span;
        printf("# %s, one recorded product: %zu tasks; task time summed: one core %.1f ms, %d "
               "cores %.1f ms (%.2fx); %d cores: span %.1f ms, busy %.0f%% of cores x span, "
               "busiest core %.1f ms against a mean of %.1f; idle per core %.1f ms: %.1f before "
               "its first task, %.1f after its last, %.1f between, %.1f on the %d cores that ran "
               "none\n",
               trans ? "Z'*L" : "Z*L", x->ntask, 1e3 * o->task_sum, ncores, 1e3 * x->task_sum,
               x->task_sum / o->task_sum, ncores, 1e3 * x->span,
               100 * x->task_sum / (ncores * x->span), 1e3 * x->busiest,
               1e3 * x->task_sum / ncores, 1e3 * idle / ncores, 1e3 * x->idle_before / ncores,
               1e3 * x->idle_after / ncores,
               1e3 * (idle - x->idle_before - x->idle_after - none) / ncores, 1e3 * none / ncores,
               ncores - x->nworkers);
    }
    free(lam);
    free(out);
    free(cpus);
    tg_geno_free(g);
}

/* user + system CPU seconds of the process so far */
static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* --ncpu: the products alone on @p ncpu CPU workers, FP64 */
static void cpu_products(const int8_t *geno, int64_t ld, int64_t n, int64_t m, int k, int reps,
                         int ncpu) {
    tg_error err = {0};
    tg_geno *g;
    start(ncpu, 0);
    double t0 = tg_now();
    if (tg_geno_from_int8(geno, n, m, ld, 0, &g, &err)) die("prepare", &err);
    printf("# CPU: n %lld x m %lld, k %d: 5codes prepared in %.1f s; %d CPU workers\n",
           (long long)n, (long long)m, k, tg_now() - t0, tg_runtime_ncpu());
    printf("device\tproduct\tworkers\tmean_ms\tbest_ms\tcpu_ms\tbusy_core_ms\tGFLOP/s\n");
    for (int trans = 0; trans < 2; trans++) {
        task_stats ts;
        double c0 = cpu_seconds(), best;
        double t = time_mul(g, trans, k, TG_FP64, reps, 0, &best, &ts);
        /* time_mul ran reps + 2 products: a warm-up, the timed ones, the recorded one */
        double cpu = (cpu_seconds() - c0) / (reps + 2);
        printf("cpu\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", trans ? "Z'L" : "ZL",
               tg_runtime_ncpu(), 1e3 * t, 1e3 * best, 1e3 * cpu, 1e3 * ts.task_sum,
               2.0 * (double)n * (double)m * k / t / 1e9);
    }
    tg_geno_free(g);
    tg_runtime_stop();
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int64_t n = 102000, m = 50241, cpu_n = 20400, part_rows = 0;
    int k = 10, reps = 10, pairs = 3, gpu = 1, cpu = 1, ngpu = 1, ncpu = 0, tiles = 1;
    double missing = 2.0 / 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--m") && i + 1 < argc)
            m = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--k") && i + 1 < argc)
            k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-n") && i + 1 < argc)
            cpu_n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--missing") && i + 1 < argc)
            missing = atof(argv[++i]);
        else if (!strcmp(argv[i], "--part-rows") && i + 1 < argc)
            part_rows = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--ngpu") && i + 1 < argc)
            ngpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ncpu") && i + 1 < argc)
            ncpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-gpu"))
            gpu = 0;
        else if (!strcmp(argv[i], "--no-cpu"))
            cpu = 0;
        else if (!strcmp(argv[i], "--codes5"))
            tiles = 0;
        else {
            fprintf(stderr,
                    "usage: %s [--n N] [--m M] [--k K] [--reps R] [--pairs P] [--cpu-n N] "
                    "[--missing F] [--part-rows R] [--ngpu G] [--ncpu C] [--no-gpu] [--no-cpu] "
                    "[--codes5]\n",
                    argv[0]);
            return 2;
        }
    }
    if (n < 1 || m < 1 || k < 1 || k > 64 || reps < 1 || pairs < 1 || pairs > MAX_PAIRS ||
        cpu_n < 1 || !(missing >= 0) || missing > 1 || ngpu < 1 || ncpu < 0 || part_rows < 0) {
        fprintf(stderr, "bench/snpmm: sizes must be positive, k at most 64, --pairs at most %d, "
                        "--missing in [0, 1]\n", MAX_PAIRS);
        return 2;
    }
    if (cpu_n > n) cpu_n = n;
    int8_t *geno = malloc((size_t)n * (size_t)m);
    if (!geno) {
        fprintf(stderr, "bench/snpmm: cannot allocate %.1f GB of genotypes\n", 1e-9 * n * m);
        return 1;
    }
    double t0 = tg_now();
    unsigned miss256 = (unsigned)lround(256 * missing);
    random_genotypes(geno, (size_t)n * (size_t)m, 42, miss256);
    printf("# random genotypes n %lld x m %lld, %u in 256 calls missing, in %.1f s\n",
           (long long)n, (long long)m, miss256, tg_now() - t0);
    tg_geno_gpu_tiles_use(tiles);
    if (gpu) gpu_part(geno, n, m, k, reps, ngpu, part_rows);
    if (cpu && ncpu)
        cpu_products(geno, n, cpu_n, m, k, reps, ncpu);
    else if (cpu)
        cpu_part(geno, n, cpu_n, m, k, reps, pairs);
    free(geno);
    return 0;
}
