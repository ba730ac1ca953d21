# tilegwas grm on the GPU machine: the block rows' tile tasks on the GPU only (--ncpu 0 --ngpu 1)
# against the CPU only (--ngpu 0), every path: the FP64 tiles (standardised, and any kind with
# missing calls, pairwise counts and --meanimpute), the exact INT8 Gram (centred and VanRaden
# without missing calls) and the pair counts (GCTA's N). 2,100 samples (blocks of 2,048 on the
# GPU: a partial last block) × 4,500 SNPs (past one chunk of 4,096). The lower triangles, as
# float64, agree within 1e-12 of the largest entry (the two DGEMMs sum in different orders; the
# INT8 Gram is exact); the pair counts are equal. Prints TAP.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

for d in miss full; do
    m=0.02
    [ $d = full ] && m=0
    "$TG_BIN" simulate --quiet --out $d --n-samples 2100 --n-snps 4500 --missing $m --seed 4 \
        >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }
done

# values FILE: a float32 or float64 file as one column with a header, for agree
values() { echo v; od -An -v -t "f$2" -w"$2" "$1" | tr -d ' '; }
grm() { # grm OUT DATA WORKER_OPTIONS... (the GRM options are $args)
    local out=$1 data=$2
    shift 2
    # shellcheck disable=SC2086
    "$TG_BIN" grm --quiet --bfile "$data" $args "$@" --out "$out" >"$out.err" 2>&1
}
check() { # check DESC DATA
    local msg rc
    if grm cpu "$2" --ngpu 0 && grm gpu "$2" --ncpu 0 --ngpu 1 &&
        grep -q "tasks on 1 CUDA and 0 CPU workers" gpu.log; then
        if [ -f gpu.grm.bin ]; then # float32: one rounding of either side's float64
            msg=$(agree <(values gpu.grm.bin 4) <(values cpu.grm.bin 4) 1e-7)
        else
            msg=$(agree <(values gpu.rel.bin 8) <(values cpu.rel.bin 8) 1e-12)
        fi
        rc=$?
        if [ -f gpu.grm.N.bin ] && ! cmp -s gpu.grm.N.bin cpu.grm.N.bin; then
            rc=1 msg="$msg; the pair counts differ"
        fi
        msg="$msg; $(grep -ho '[^;]*products (tasks[^)]*)' gpu.log | sed 's/^ //')"
    else
        rc=1 msg="grm failed or not on the GPU: $(cat cpu.err gpu.err 2>/dev/null | head -3)"
    fi
    report $rc "$1: GPU only = CPU only ($msg)"
    rm -f gpu.* cpu.*
}
for kind in standardised centred vanraden; do
    args="--grm-kind $kind --grm-format triangle,bin"
    check "$kind, missing calls, pairwise" miss
    args="$args --meanimpute"
    check "$kind, missing calls, --meanimpute" miss
    args="--grm-kind $kind --grm-format triangle,bin"
    check "$kind, no missing call" full
done
# GCTA's files: float32 values and the pair counts N_ij
args="--grm-format gcta"
check "standardised, missing calls, GCTA's .grm.bin and .grm.N.bin" miss
tap_end
