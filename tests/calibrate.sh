# tilegwas calibrate: `calibrate --quick` on the CPU calibrates a model for every kernel a small
# krr and epistasis run use, so that those runs meet no uncalibrated model (StarPU's warning,
# shown with STARPU_SILENT=0); its table predicts every size it checks; a profile exported by
# --export is copied into an empty model directory when it matches this machine, and only then.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
export STARPU_HOME=$tmp/home TILEGWAS_PERFMODELS=off

"$TG_BIN" calibrate --quick --ngpu 0 --out cal --export prof >cal.out 2>&1
report $? "calibrate --quick --export exits 0" cal.out
# against the fastest of a size's tasks: a task of microseconds descheduled once on a loaded
# machine measures milliseconds, a mean over two such tasks is no measure of the model
awk -F'\t' 'NR == 1 { ok = $1 == "kernel" && $6 == "predicted_ms" && $8 == "fastest_ms"; next }
    { rows++; if ($6 == "nan" || $6 == "" || $6 + 0 <= 0) { bad++; list = list " " $1 "@" $3 }
      else if ($6 > 100 * $8 || $8 > 100 * $6) { far++; list = list " " $1 "@" $3 ":" $6 "/" $8 } }
    END { printf "%d sizes, %d without a prediction, %d off by more than 100x%s\n", rows, bad, far, list
          exit !(ok && rows > 50 && bad == 0 && far == 0) }' cal.calibrate.tsv >tsv.txt 2>&1
report $? "every kernel size checked has a prediction within 100x of its fastest task: $(cat tsv.txt)" \
    cal.calibrate.tsv
kernels=$(tail -n +2 cal.calibrate.tsv | cut -f1 | sort -u | wc -l)
models=$(ls prof | grep -c '^tg_')
[ "$kernels" -ge 25 ] && [ "$models" -ge "$kernels" ] && grep -q '^cpu	' prof/machine.txt
report $? "the profile holds a model per kernel checked ($models models, $kernels kernels) and machine.txt"

"$TG_BIN" simulate --quiet --out ds --trait qt --nonlinear --nl-pairs 2 --n-samples 300 \
    --n-snps 60 --seed 3 2>/dev/null &&
    "$TG_BIN" simulate --quiet --out cc --trait cc --epistasis 2:1 --n-samples 400 --n-snps 70 \
        --seed 4 2>/dev/null || { echo "Bail out! tilegwas simulate failed"; exit 1; }
# no_warning NAME CMD...: the command succeeds and StarPU warns of no uncalibrated model (a
# warning StarPU gives only while it is not calibrating already: STARPU_CALIBRATE=0)
no_warning() {
    local name=$1
    shift
    STARPU_SILENT=0 STARPU_CALIBRATE=0 "$@" >run.out 2>&1
    local rc=$?
    ! grep -q "not calibrated enough" run.out && [ $rc -eq 0 ]
    report $? "$name after calibrate --quick: no uncalibrated model" run.out
}
no_warning "krr (adaptive FP64/FP32/FP16 map)" "$TG_BIN" krr --quiet --ngpu 0 --bfile ds \
    --pheno ds.pheno --alpha 5 --gamma 0.02 --test-frac 0.2 --tile 64 --accuracy 1e-6 --out k
no_warning "krr (FP8 band)" "$TG_BIN" krr --quiet --ngpu 0 --bfile ds --pheno ds.pheno \
    --alpha 5 --gamma 0.02 --test-frac 0.2 --tile 64 --precisions fp32,fp8 --diag fp32 --band 0 --out k8
for o in 2 3 4; do
    no_warning "epistasis --order $o" "$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order $o \
        --out e$o
done

# the exported profile, seeded into an empty model directory
STARPU_HOME=$tmp/home2 TILEGWAS_PERFMODELS=$tmp/prof "$TG_BIN" epistasis --bfile cc --order 2 \
    --ngpu 0 --out s >seed.out 2>&1
copied=$(ls home2/.starpu/sampling/codelets/45 2>/dev/null | grep -c '^tg_')
grep -q "models of prof: $models copied" s.log && [ "$copied" -eq "$models" ]
report $? "a matching profile is copied in ($copied of $models models) and the log says so" s.log
sed 's/^cpu\t.*/cpu\tsome other CPU/' prof/machine.txt >m && mkdir other && cp prof/tg_* other/ &&
    mv m other/machine.txt
STARPU_HOME=$tmp/home3 TILEGWAS_PERFMODELS=$tmp/other "$TG_BIN" epistasis --bfile cc --order 2 \
    --ngpu 0 --out t >other.out 2>&1
[ "$(ls home3/.starpu/sampling/codelets/45 2>/dev/null | grep -c '^tg_gemm')" -eq 0 ] &&
    grep -q "no shipped models for this machine" t.log
report $? "a profile of another machine is not used" t.log

expect_error "--workloads with an unknown name" "unknown workload 'foo'" \
    "$TG_BIN" calibrate --workloads krr,foo
expect_error "--reps 0" "--reps" "$TG_BIN" calibrate --reps 0
tap_end
