# tilegwas krr --save-model / --load-model: a saved model predicts a new cohort as the fit did
# (FP64; bit for bit with an FP32/FP16 factor), new phenotypes solved with the saved factor
# equal a fit from scratch and need no factorisation, a model saved from a loaded one, and bad
# input refused with one error line (missing or damaged model files, options a model fixes, a
# changed training fileset, a test cohort with other SNPs, a full disk). CPU workers only: bit
# for bit needs the same kernels in both runs (tests/device/krr.sh runs the GPUs).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
krr() { "$TG_BIN" krr --quiet --ngpu 0 "$@" 2>krr.err; }
krr_error() { # DESCRIPTION SUBSTRING ARGS...
    expect_error "$1" "$2" "$TG_BIN" krr --quiet --ngpu 0 "${@:3}"
}

# A training and a test cohort of the same SNPs: the same seed with another sample count gives
# the same .bim (SNPs and planted effects are drawn first) and other genotypes.
sim() {
    "$TG_BIN" simulate --quiet --trait qt --nonlinear --nl-pairs 2 --h2 0.9 --n-snps 40 \
        --seed 5 "$@" 2>/dev/null
}
{ sim --out ds --n-samples 600 && sim --out te --n-samples 150 && cmp -s ds.bim te.bim; } ||
    { echo "Bail out! tilegwas simulate failed, or the test cohort has other SNPs"; exit 1; }
# cols FILE: a table's columns 1-7 (krr.tsv without the seconds)
cols() { cut -f1-7 "$1"; }

fit64="--gamma 0.03 --alpha 0.1 --tile 64 --diag fp64 --precisions fp64"
# shellcheck disable=SC2086
krr --bfile ds --pheno ds.pheno $fit64 --test-bfile te --test-pheno te.pheno --save-model m \
    --out f
rc=$?
keys=$(cut -f1 m/model.tsv | tr '\n' ' ')
[ $rc -eq 0 ] && [ "$(head -c 8 m/factor.bin | tr '\0' '@')" = "TGKRRL1@" ] &&
    [ "$keys" = "key tilegwas_krr_model kernel gamma alpha tile diag n_train n_snps n_pheno \
train_bfile train_bfile_abs train_bed_size train_bed_mtime train_bim_fnv1a " ] &&
    grep -qx "n_train	600" m/model.tsv && grep -qx "train_bfile	ds" m/model.tsv &&
    [ "$(wc -l <m/train.tsv)" -eq 601 ] && [ "$(wc -l <m/weights.tsv)" -eq 601 ] &&
    [ "$(wc -l <m/snps.tsv)" -eq 41 ] && [ "$(wc -l <m/pheno.tsv)" -eq 2 ] &&
    [ "$(cut -f1,2 m/train.tsv | tail -n +2)" = "$(cut -f1,2 ds.fam)" ] && ! ls m | grep -q tmp
report $? "--save-model: model.tsv keys, 600 training rows, 40 SNPs, factor.bin magic (exit $rc)"

krr --load-model m --test-bfile te --test-pheno te.pheno --out l
rc=$?
w=$(agree l.pred.tsv f.pred.tsv 1e-12)
ok=$?
[ $rc -eq 0 ] && [ $ok -eq 0 ] && [ "$(cut -f1,2 l.pred.tsv)" = "$(cut -f1,2 f.pred.tsv)" ] &&
    [ "$(cols l.krr.tsv)" = "$(cols f.krr.tsv)" ] && grep -q "unchanged since the fit" l.log
report $? "--load-model: predictions equal the fit's ($w, at most 1e-12), same MSPE, r (exit $rc)"

# new phenotypes of the same training samples, two at once
two() { # two PHENO: columns SQ = y² − 0.5 and LIN = 1 − 2y
    awk 'NR == 1 { print "FID\tIID\tSQ\tLIN"; next }
        { print $1 "\t" $2 "\t" $3 * $3 - 0.5 "\t" 1 - 2 * $3 }' "$1"
}
two ds.pheno >new.pheno
two te.pheno >te_new.pheno
# shellcheck disable=SC2086
krr --bfile ds --pheno new.pheno $fit64 --test-bfile te --test-pheno te_new.pheno --out fn
rc1=$?
krr --load-model m --pheno new.pheno --test-bfile te --test-pheno te_new.pheno \
    --save-model m2 --out ln
rc2=$?
w=$(agree ln.pred.tsv fn.pred.tsv 1e-10)
ok=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $ok -eq 0 ] &&
    [ "$(head -1 ln.pred.tsv)" = "$(printf 'FID\tIID\tSQ\tLIN')" ] &&
    agree <(cut -f6,7 ln.krr.tsv) <(cut -f6,7 fn.krr.tsv) 1e-6 >/dev/null
report $? "--load-model --pheno: 2 new phenotypes as a fit from scratch ($w, at most 1e-10), \
MSPE and r too (exit $rc1, $rc2)"
grep -q "solved 2 phenotypes with the saved factor (no factorisation)" ln.log &&
    grep -q "read the saved factor (tiles fp64 55," ln.log &&
    ! grep -qE "TFLOP/s|precision map|alpha 0.1: kernel" ln.log
report $? "--load-model --pheno: the log shows the saved factor used, no training kernel, \
no factorisation"

# a model saved from a loaded one: the same factor, the new weights
krr --load-model m2 --test-bfile te --out l2
rc=$?
w=$(agree l2.pred.tsv fn.pred.tsv 1e-10)
ok=$?
[ $rc -eq 0 ] && [ $ok -eq 0 ] && cmp -s m/factor.bin m2/factor.bin &&
    grep -qx "n_pheno	2" m2/model.tsv && grep -qx "train_bfile	ds" m2/model.tsv &&
    [ "$(grep abs m/model.tsv)" = "$(grep abs m2/model.tsv)" ]
report $? "--save-model from --load-model --pheno: same factor, the new weights ($w) (exit $rc)"

# An FP32 diagonal and FP16 tiles (--accuracy 1e-3: at 1e-4 this small K keeps every tile FP32).
# The factor is saved in its precisions, so the solve and predictions are the fit's bit for bit.
fit16="--gamma 0.03 --alpha 0.1 --tile 64 --diag fp32 --precisions fp32,fp16 --accuracy 1e-3"
# shellcheck disable=SC2086
krr --bfile ds --pheno ds.pheno $fit16 --test-bfile te --test-pheno te.pheno --save-model m16 \
    --out h
rc1=$?
krr --load-model m16 --test-bfile te --test-pheno te.pheno --out h1
rc2=$?
krr --load-model m16 --pheno ds.pheno --test-bfile te --test-pheno te.pheno --out h2
rc3=$?
fp16=$(grep -o "map ([^)]*): tiles fp64 0, fp32 [0-9]*, fp16 [0-9]*" h.log | grep -o "fp16 [0-9]*")
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && [ "${fp16#fp16 }" -gt 0 ] &&
    grep -q "read the saved factor (tiles fp64 0, fp32 [0-9]*, ${fp16}," h2.log &&
    cmp -s h.pred.tsv h1.pred.tsv && cmp -s h.pred.tsv h2.pred.tsv &&
    [ "$(cols h.krr.tsv)" = "$(cols h1.krr.tsv)" ] && [ "$(cols h.krr.tsv)" = "$(cols h2.krr.tsv)" ]
report $? "fp32/fp16 factor ($fp16 tiles): the saved weights, and a solve with the saved \
factor, predict bit for bit as the fit (exit $rc1, $rc2, $rc3)"

# a folder holding a model is replaced
# shellcheck disable=SC2086
krr --bfile ds --pheno ds.pheno $fit16 --test-bfile te --save-model m2 --out r &&
    cmp -s m16/factor.bin m2/factor.bin && grep -qx "diag	fp32" m2/model.tsv
report $? "--save-model into a folder holding a model replaces it"

# bad input
cp ds.bed sw.bed
cp ds.fam sw.fam
# a test cohort without one of the training SNPs (its ID renamed)
awk -v OFS='\t' 'NR == 2 { $2 = "renamed" } { print }' ds.bim >sw.bim
cp -r m mt && truncate -s -1000 mt/factor.bin
cp -r m mb && sed -i 's/^tile\t64$/tile\tsixty-four/' mb/model.tsv
cp -r m mk && printf 'colour\tblue\n' >>mk/model.tsv
cp -r m mw && sed -i '5s/\t[^\t]*$/\tx/' mw/weights.tsv
mkdir other && touch other/notes.txt
awk 'NR == 1 { print; next } { print $1 "\t" $2 "\t" (NR == 9 ? "NA" : $3) "\t" $4 }' new.pheno \
    >hole.pheno
cut -f1-3 ds.pheno >cov.txt
# shellcheck disable=SC2086
{
    krr_error "missing model folder" "nomodel/model.tsv" --load-model nomodel --test-bfile te \
        --out e
    krr_error "truncated factor.bin" "mt/factor.bin: " --load-model mt --test-bfile te --out e
    krr_error "truncated factor.bin (--pheno)" "mt/factor.bin: " --load-model mt \
        --pheno ds.pheno --test-bfile te --out e
    krr_error "model.tsv with a bad value" "mb/model.tsv line 6: tile 'sixty-four' is not" \
        --load-model mb --test-bfile te --out e
    krr_error "model.tsv with an unknown key" "mk/model.tsv line 16: unknown key 'colour'" \
        --load-model mk --test-bfile te --out e
    krr_error "weights.tsv with a bad value" "mw/weights.tsv line 5: column 3: 'x'" \
        --load-model mw --test-bfile te --out e
    krr_error "--gamma with --load-model" "--gamma cannot be given with --load-model" \
        --load-model m --gamma 0.1 --test-bfile te --out e
    krr_error "--tile with --load-model" "--tile cannot be given with --load-model" \
        --load-model m --pheno new.pheno --tile 32 --test-bfile te --out e
    krr_error "--load-model without --test-bfile" "--load-model needs --test-bfile" \
        --load-model m --out e
    krr_error "--save-model with --load-model and no --pheno" "needs --pheno" \
        --load-model m --test-bfile te --save-model m9 --out e
    krr_error "--save-model with two alphas" "--save-model needs one --gamma and one --alpha" \
        --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1,1 --test-bfile te --save-model m9 \
        --out e
    krr_error "--save-model with --covar" "a model with --covar cannot be saved" --bfile ds \
        --pheno ds.pheno --covar cov.txt --test-covar cov.txt $fit64 --test-bfile ds \
        --save-model m9 --out e
    krr_error "--save-model into a folder of other files" "holds no tilegwas model" --bfile ds \
        --pheno ds.pheno $fit64 --test-bfile te --save-model other --out e
    krr_error "--pheno without a value for a training sample" \
        "training sample 'F7 I7' (FID IID) has no value of SQ" --load-model m \
        --pheno hole.pheno --test-bfile te --out e
    krr_error "test cohort with other SNPs" "sw has no variant snp1" --load-model m \
        --test-bfile sw --out e
}
[ ! -e m9 ] && [ "$(ls other)" = notes.txt ]
report $? "refused saves wrote nothing"

# the training fileset changes after the save: its .bim (same .bed), then its .bed's time
cp ds.bed cp.bed
cp ds.fam cp.fam
cp ds.bim cp.bim
# shellcheck disable=SC2086
krr --bfile cp --pheno ds.pheno $fit64 --test-bfile te --save-model mc --out c ||
    echo "# fit on cp failed: $(cat krr.err)"
awk 'BEGIN { OFS = "\t" } NR == 3 { $4 = $4 + 1 } { print }' ds.bim >cp.bim
krr_error "training .bim changed after the save" \
    "training fileset $(pwd -P)/cp changed since the model was saved (.bim content)" \
    --load-model mc --test-bfile te --out e
cp ds.bim cp.bim
touch -d 2001-01-01 cp.bed
krr_error "training .bed touched after the save" \
    "changed since the model was saved (.bed modification time)" --load-model mc \
    --test-bfile te --out e

# a full disk while saving: a tmpfs with room for a copy of the model and 8 kB more (where
# unprivileged user namespaces allow one; the outputs' own temporaries would replace a symbolic
# link to /dev/full): the error names the file, the model is kept, no temporary is left
if unshare -rm true 2>/dev/null; then
    mkdir mf
    kb=$(($(du -sk m | cut -f1) + 8))
    # shellcheck disable=SC2016,SC2086
    unshare -rm bash -c 'mount -t tmpfs -o size="$0"k none mf && cp m/* mf/ || exit
        "$1" krr --quiet --ngpu 0 "${@:2}" --save-model mf --out e 2>err.txt
        echo $? >rc.txt
        cmp -s mf/factor.bin m/factor.bin && cmp -s mf/model.tsv m/model.tsv &&
            ! compgen -G "mf/*tmp*" >/dev/null
        echo $? >kept.txt' "$kb" "$TG_BIN" --bfile ds --pheno ds.pheno $fit16 --test-bfile te
    [ "$(cat rc.txt)" = 1 ] && [ "$(grep -c . err.txt)" -eq 1 ] &&
        grep -q "error: error writing mf/factor.bin.tmp: No space left on device" err.txt
    report $? "full disk while saving: $(cat err.txt)" err.txt
    [ "$(cat kept.txt)" = 0 ]
    report $? "full disk: the model in the folder is untouched, no temporary left"
else
    echo "ok $((n + 1)) # SKIP no user namespaces for a small tmpfs"
    echo "ok $((n + 2)) # SKIP no user namespaces for a small tmpfs"
    n=$((n + 2))
fi

tap_end
