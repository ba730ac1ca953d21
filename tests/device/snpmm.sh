# tilegwas snpmm on the GPU machine: the same products on the GPU only (--ncpu 0 --ngpu 1) and
# on the CPU only (--ngpu 0) agree (FP64 within 1e-12 relative to the largest value of each
# column, FP32 within 1e-3), both orientations, on a fileset with missing calls large enough for
# several tasks and CUDA thread blocks. Prints TAP. FP32: both sides sum up to 4,100 centered
# terms in different orders; the worst-case bound, (n+10)·2⁻²⁴ of the sum of magnitudes, is
# ~√n·2.4e-4 ≈ 1.6e-2 of a column's largest value and observed differences are ~5e-5, while a
# decoding or centering error is of order 1: 1e-3 separates the two.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

"$TG_BIN" simulate --quiet --out d --n-samples 4100 --n-snps 2600 --missing 0.02 --seed 8 \
    >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }
awk 'BEGIN { srand(1) } { for (c = 0; c < 10; c++) printf "%.6f%s", rand() - 0.5, c < 9 ? " " : "\n" }' \
    d.bim >L.tsv
awk 'BEGIN { srand(2) } { printf "%.6f %.6f %.6f\n", rand() - 0.5, rand(), -rand() }' d.fam >Lt.tsv

run() { # run OUT WORKER_OPTIONS... (the matrix options are $args)
    out=$1
    shift
    # shellcheck disable=SC2086
    "$TG_BIN" snpmm --quiet --bfile d $args "$@" --out "$out" >"$out.err" 2>&1
}
for prec in fp64 fp32; do
    for dir in zl ztl; do
        args="--matrix L.tsv" cols=3- tol=1e-12
        [ $dir = ztl ] && args="--matrix Lt.tsv --transpose" cols=7-
        [ $prec = fp32 ] && args="$args --float" tol=1e-3
        if run cpu --ngpu 0 && run gpu --ncpu 0 --ngpu 1; then
            msg=$(agree <(cut -f$cols gpu.snpmm.tsv) <(cut -f$cols cpu.snpmm.tsv) $tol)
            rc=$?
            msg="$msg; $(grep -h '^product' gpu.log)"
        else
            rc=1 msg="snpmm failed: $(cat cpu.err gpu.err 2>/dev/null | head -3)"
        fi
        report $rc "$dir $prec: GPU only = CPU only ($msg)"
    done
done
tap_end
