# GPU memory (issue 30): every command that runs GPU tasks logs what they hold against what a
# GPU has, runs on when its data exceed a GPU (StarPU keeps the rest in host memory) and
# refuses a task larger than a GPU. STARPU_LIMIT_CUDA_MEM makes the GPU small. Prints TAP.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

"$TG_BIN" simulate --quiet --out d --trait qt --n-pheno 1 --n-samples 2600 --n-snps 1500 \
    --missing 0.01 --seed 5 >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }
common="--bfile d --pheno d.pheno --test-frac 0.2 --seed 3 --kernel gaussian --gamma 0.005"
common="$common --alpha 1 --precisions fp64 --diag fp64 --quiet"

# the log line of an ordinary run names the GPU's memory
# shellcheck disable=SC2086
"$TG_BIN" krr $common --tile 512 --ncpu 0 --ngpu 1 --out big >/dev/null 2>&1
line=$(grep -o "GPU memory: .*" big.log)
mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
have=$(sed -n 's/.*MiB for the largest task, \([0-9]*\) MiB on each of 1 GPU.*/\1/p' <<<"$line")
# StarPU's total is the device's memory as CUDA reports it, nvidia-smi's within a few percent
[ -n "$have" ] && awk -v h="$have" -v m="$mib" 'BEGIN { exit !(h > 0.9 * m && h <= 1.01 * m) }'
report $? "krr logs the GPU's memory: $line (nvidia-smi: $mib MiB)"

# a GPU of 16 MiB: K's tiles (~17 MiB) do not fit, a task (three 512² FP64 tiles, 6 MiB) does:
# the run says so and its predictions equal the ordinary run's
# shellcheck disable=SC2086
STARPU_LIMIT_CUDA_MEM=16 timeout 120 "$TG_BIN" krr $common --tile 512 --ncpu 0 --ngpu 1 \
    --out small >/dev/null 2>small.err
rc=$?
grep -q "what does not fit stays in host memory" small.log 2>/dev/null && [ $rc -eq 0 ]
report $? "krr with 16 MiB of GPU memory runs, and says the data do not fit (exit $rc)" small.err
if [ -s small.pred.tsv ] && [ -s big.pred.tsv ]; then
    msg=$(agree <(cut -f3- small.pred.tsv) <(cut -f3- big.pred.tsv) 1e-9)
    report $? "krr with its tiles moved in and out of a 16 MiB GPU = the ordinary run ($msg)"
else
    report 1 "krr with 16 MiB of GPU memory wrote no predictions" small.err
fi

# a task larger than the GPU: three 2048² FP64 tiles are 96 MiB, the GPU 64 MiB
# shellcheck disable=SC2086
expect_error "krr --tile 2048 on a GPU of 64 MiB" "not enough GPU memory: one task needs 96 MiB" \
    env STARPU_LIMIT_CUDA_MEM=64 "$TG_BIN" krr $common --tile 2048 --ncpu 0 --ngpu 1 --out huge
[ ! -e huge.pred.tsv ]
report $? "the refused run left no prediction file"

# snpmm: the products' line
awk 'NR == 1 {print "ID\tA"} {print $2 "\t" NR % 7}' d.bim >L.tsv
"$TG_BIN" snpmm --bfile d --matrix L.tsv --out mm --quiet --ncpu 0 >/dev/null 2>&1
grep -q "GPU memory: about .* MiB of data a GPU (the genotype blocks, L and the result)" mm.log
report $? "snpmm logs the products' GPU memory: $(grep -o 'GPU memory: .*' mm.log)"
tap_end
