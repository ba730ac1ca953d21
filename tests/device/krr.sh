# tilegwas krr and rr --solver cholesky on the GPU machine: the whole pipeline (build, tile
# Cholesky, solve, predict) on the GPU only (--ncpu 0 --ngpu 1) against the CPU only (--ngpu 0),
# on a cohort of several tiles with a partial last tile and missing calls. Prints TAP.
# Tolerances, per prediction column relative to its largest value:
#  - all-FP64 tiles: 1e-9 (both sides are backward stable; they differ only in summation order,
#    amplified by κ(K + αI) ≤ ~1e3 here);
#  - FP32 diagonal + FP16 off-diagonal at ε = 1e-4, against the CPU's all-FP64 predictions:
#    1e-3, the bound the issue sets (the map keeps the perturbation of K + αI within ~ε‖K‖, times
#    κ ≤ ~1e3 gives ~1e-1 in the worst case; observed ~1e-5);
#  - FP32 + FP8 (GPU only: tensor cores), against all-FP64: 5e-2, a sanity bound (u₈ = 2⁻⁴).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

"$TG_BIN" simulate --quiet --out d --trait qt --nonlinear --n-pheno 2 --n-samples 2600 \
    --n-snps 1500 --missing 0.01 --seed 5 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

common="--bfile d --pheno d.pheno --test-frac 0.2 --seed 3 --tile 512 --quiet"
# γ 0.005 makes the off-diagonal entries small enough (~0.03) that the adaptive map at ε 1e-4
# lowers most off-diagonal tiles to FP16; FP8 everywhere off the diagonal needs α 10 to stay SPD.
krr() { # krr OUT KERNEL ALPHA MAP_OPTIONS WORKER_OPTIONS...
    local out=$1 kernel=$2 alpha=$3 map=$4
    shift 4
    local g="--gamma 0.005"
    [ "$kernel" = gaussian ] || g=
    # shellcheck disable=SC2086
    "$TG_BIN" krr $common --kernel "$kernel" $g --alpha "$alpha" $map "$@" --out "$out" >"$out.err" 2>&1
}
check() { # check DESC A B TOL
    local msg rc
    if [ -s "$2.pred.tsv" ] && [ -s "$3.pred.tsv" ]; then
        msg=$(agree <(cut -f3- "$2.pred.tsv") <(cut -f3- "$3.pred.tsv") "$4")
        rc=$?
    else
        rc=1 msg="missing output: $(cat "$2.err" "$3.err" 2>/dev/null | head -3)"
    fi
    report $rc "$1 ($msg)"
}

fp64="--precisions fp64 --diag fp64"
for kernel in gaussian ibs linear; do
    krr "cpu-$kernel" $kernel 1 "$fp64" --ngpu 0
    krr "gpu-$kernel" $kernel 1 "$fp64" --ncpu 0 --ngpu 1
    check "krr $kernel, all FP64 tiles: GPU only = CPU only" "gpu-$kernel" "cpu-$kernel" 1e-9
done
krr gpu16 gaussian 1 "--precisions fp32,fp16 --diag fp32 --accuracy 1e-4" --ncpu 0 --ngpu 1
check "krr gaussian, FP32 + FP16 adaptive map (ε 1e-4) on the GPU vs all FP64" gpu16 cpu-gaussian 1e-3
grep -o "tiles fp64[^)]*" gpu16.log | sed 's/^/# map: /'
krr cpu-a10 gaussian 10 "$fp64" --ngpu 0
krr gpu8 gaussian 10 "--precisions fp32,fp8 --diag fp32 --band 0" --ncpu 0 --ngpu 1
check "krr gaussian, FP32 + FP8 (band 0) on the GPU vs all FP64" gpu8 cpu-a10 5e-2
krr both gaussian 1 "$fp64"
check "krr gaussian, all FP64, every worker = CPU only" both cpu-gaussian 1e-9

# --save-model after a GPU-only fit (the factor's tiles read back from GPU memory, FP8 tiles
# stored as FP16) and --load-model --pheno on the GPU (the saved factor's tiles written and
# moved to it): the fit's test samples get the fit's predictions. Same tiles, same GPU kernels:
# the two solves differ only in the order of their floating-point work, ~1e-6 in FP32.
saved() { # saved DESC OUT ALPHA MAP_OPTIONS
    krr "$2" gaussian "$3" "$4 --save-model $2.model" --ncpu 0 --ngpu 1
    "$TG_BIN" krr --load-model "$2.model" --pheno d.pheno --test-bfile d --ncpu 0 --ngpu 1 \
        --quiet --out "$2-load" >"$2-load.err" 2>&1
    # the load predicts every sample of d: keep the fit's test samples (both in .fam order)
    awk -F'\t' 'NR == FNR { if (FNR > 1) keep[$1 FS $2] = 1; next } FNR == 1 || keep[$1 FS $2]' \
        "$2.pred.tsv" "$2-load.pred.tsv" >"$2-sub.pred.tsv"
    [ -s "$2-load.pred.tsv" ] || cat "$2-load.err" >"$2-sub.err"
    check "$1" "$2-sub" "$2" 1e-5
}
saved "krr --save-model / --load-model --pheno on the GPU, FP32 + FP16 map" s16 1 \
    "--precisions fp32,fp16 --diag fp32 --accuracy 1e-4"
saved "krr --save-model / --load-model --pheno on the GPU, FP32 + FP8 (band 0)" s8 10 \
    "--precisions fp32,fp8 --diag fp32 --band 0"

rr() { # rr OUT WORKER_OPTIONS...
    local out=$1
    shift
    "$TG_BIN" rr --bfile d --pheno d.pheno --lambda 500 --solver cholesky --tile 256 \
        --precisions fp64 --diag fp64 --quiet "$@" --out "$out" >"$out.err" 2>&1
}
rr rr-cpu --ngpu 0
rr rr-gpu --ncpu 0 --ngpu 1
check "rr --solver cholesky, all FP64: GPU only = CPU only" rr-gpu rr-cpu 1e-9
tap_end
