# Every StarPU scheduler tilegwas offers runs every workload, and the results do not depend on
# it: krr (all-FP64 tiles, the CPU codelets: each tile's operations in the same order whoever
# runs them) and the epistasis top list are byte-identical to the default scheduler's. This
# covers heteroprio, whose buckets tilegwas describes (each codelet family's table row, applied by src/runtime/sched.c).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
"$TG_BIN" simulate --quiet --out ds --trait qt --nonlinear --nl-pairs 2 --n-samples 300 \
    --n-snps 60 --seed 8 2>/dev/null &&
    "$TG_BIN" simulate --quiet --out cc --trait cc --epistasis 2:1 --n-samples 400 --n-snps 90 \
        --seed 9 2>/dev/null || { echo "Bail out! tilegwas simulate failed"; exit 1; }
krr() {
    "$TG_BIN" krr --quiet --ngpu 0 --bfile ds --pheno ds.pheno --gamma 0.02 --alpha 5 \
        --test-frac 0.2 --seed 3 --tile 64 --precisions fp64 "$@"
}
krr --out ref 2>ref.err && "$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 3 --top 20 \
    --out eref 2>eref.err || { echo "Bail out! the default scheduler's runs failed"; exit 1; }
for s in eager lws dm dmda dmdas heteroprio; do
    krr --sched "$s" --out "k$s" 2>err.txt && cmp -s ref.pred.tsv "k$s.pred.tsv"
    report $? "krr under $s: predictions byte-identical to the default's" err.txt
    "$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 3 --top 20 --sched "$s" \
        --out "e$s" 2>err.txt && cmp -s eref.epi3.tsv "e$s.epi3.tsv"
    report $? "epistasis order 3 under $s: top 20 byte-identical to the default's" err.txt
done
tap_end
