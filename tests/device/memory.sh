# GPU memory (issue 30): every command that runs GPU tasks logs what they hold against what a
# GPU has, runs on when its data exceed a GPU (StarPU keeps the rest in host memory) and
# refuses tasks whose data StarPU cannot hold at once (five of the largest).
# STARPU_LIMIT_CUDA_MEM makes the GPU small. Prints TAP.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

"$TG_BIN" simulate --quiet --out d --trait qt --n-pheno 1 --n-samples 6000 --n-snps 1500 \
    --missing 0.01 --seed 5 >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }
common="--bfile d --pheno d.pheno --test-frac 0.2 --seed 3 --kernel gaussian --gamma 0.005"
common="$common --alpha 1 --precisions fp64 --diag fp64 --quiet --ncpu 0 --ngpu 1"

# the log line of an ordinary run names the GPU's memory: StarPU's, a few percent below the
# device's total as nvidia-smi gives it
# shellcheck disable=SC2086
"$TG_BIN" krr $common --tile 512 --out big >/dev/null 2>&1
line=$(grep -o "GPU memory: .*" big.log)
mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
have=$(sed -n 's/.*MiB for the largest task, \([0-9]*\) MiB on each of 1 GPU.*/\1/p' <<<"$line")
[ -n "$have" ] && awk -v h="$have" -v m="$mib" 'BEGIN { exit !(h > 0.8 * m && h <= m) }'
report $? "krr logs the GPU's memory: $line (nvidia-smi: $mib MiB)"

# a GPU of 32 MiB: K's tiles (132 MiB) do not fit, five tasks (three 512² FP64 tiles, 6 MiB)
# do: the run says so and its predictions equal the ordinary run's
# shellcheck disable=SC2086
STARPU_LIMIT_CUDA_MEM=32 timeout 120 "$TG_BIN" krr $common --tile 512 --out small >/dev/null \
    2>small.err
rc=$?
grep -q "what does not fit stays in host memory" small.log 2>/dev/null && [ $rc -eq 0 ]
report $? "krr with 32 MiB of GPU memory runs, and says the data do not fit (exit $rc)" small.err
if [ -s small.pred.tsv ] && [ -s big.pred.tsv ]; then
    msg=$(agree <(cut -f3- small.pred.tsv) <(cut -f3- big.pred.tsv) 1e-9)
    report $? "krr with its tiles moved in and out of a 32 MiB GPU = the ordinary run ($msg)"
else
    report 1 "krr with 32 MiB of GPU memory wrote no predictions" small.err
fi

# refused within seconds, one error line, no output: five tasks of 6 MiB on 24 MiB (where the
# run never ended before the check), and a task of 96 MiB (three 2048² tiles) on 64 MiB
refused() { # refused DESC LIMIT TILE WANT
    local start rc
    start=$(date +%s)
    # shellcheck disable=SC2086
    STARPU_LIMIT_CUDA_MEM=$2 timeout 60 "$TG_BIN" krr $common --tile "$3" --out "r$2" \
        >/dev/null 2>err.txt
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$(grep -c 'error: ' err.txt)" -eq 1 ] &&
        grep -qF "$4" err.txt && [ ! -e "r$2.pred.tsv" ] && [ $(($(date +%s) - start)) -lt 30 ]
    report $? "$1 (exit $rc): $(grep 'error: ' err.txt)" err.txt
}
refused "krr --tile 512 on a GPU of 24 MiB" 24 512 "one task needs 6 MiB, StarPU holds about \
five tasks' data at once (30 MiB) and a GPU has 24 MiB"
refused "krr --tile 2048 on a GPU of 64 MiB" 64 2048 "one task needs 96 MiB"

# snpmm: the products' line
awk 'NR == 1 {print "ID\tA"} {print $2 "\t" NR % 7}' d.bim >L.tsv
"$TG_BIN" snpmm --bfile d --matrix L.tsv --out mm --quiet --ncpu 0 >/dev/null 2>&1
grep -q "GPU memory: about .* MiB of data a GPU (the genotype blocks, L and the result)" mm.log
report $? "snpmm logs the products' GPU memory: $(grep -o 'GPU memory: .*' mm.log)"
# grm: its tiles' line
"$TG_BIN" grm --bfile d --out g --quiet --ncpu 0 --grm-format triangle,bin >/dev/null 2>&1
grep -q "GPU memory: about .* MiB of data a GPU (genotype panels and two block rows)" g.log
report $? "grm logs its tiles' GPU memory: $(grep -o 'GPU memory: .*' g.log)"
# pca: the products' line
"$TG_BIN" pca --bfile d --out pc --quiet --ncpu 0 >/dev/null 2>&1
grep -q "GPU memory: about .* MiB of data a GPU (the genotype products' blocks)" pc.log
report $? "pca logs the products' GPU memory: $(grep -o 'GPU memory: .*' pc.log)"
# epistasis: the planes' line
"$TG_BIN" simulate --quiet --out e --trait cc --n-samples 4000 --n-snps 200 --seed 2 \
    >/dev/null 2>&1
"$TG_BIN" epistasis --order 3 --bfile e --out eo --quiet --ncpu 0 >/dev/null 2>&1
grep -q "GPU memory: about .* MiB of data a GPU (genotype planes)" eo.log
report $? "epistasis logs its planes' GPU memory: $(grep -o 'GPU memory: .*' eo.log)"
tap_end
