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
train_bfile train_bfile_abs train_bed_size train_bed_mtime train_bim_xxh64 train_fam_xxh64 \
factor_xxh64 train_xxh64 snps_xxh64 pheno_xxh64 weights_xxh64 model_xxh64 " ] &&
    grep -qx "tilegwas_krr_model	2" m/model.tsv &&
    grep -qx "n_train	600" m/model.tsv && grep -qx "train_bfile	ds" m/model.tsv &&
    [ "$(wc -l <m/train.tsv)" -eq 601 ] && [ "$(wc -l <m/weights.tsv)" -eq 601 ] &&
    [ "$(wc -l <m/snps.tsv)" -eq 41 ] && [ "$(wc -l <m/pheno.tsv)" -eq 2 ] &&
    [ "$(cut -f1,2 m/train.tsv | tail -n +2)" = "$(cut -f1,2 ds.fam)" ] &&
    [ "$(ls -A m | tr '\n' ' ')" = \
        "factor.bin model.tsv pheno.tsv snps.tsv train.tsv weights.tsv " ] &&
    [ "$(ls -A | grep -c '^\.')" -eq 0 ] && mkdir perm &&
    [ "$(stat -c %a m)" = "$(stat -c %a perm)" ]
report $? "--save-model: model.tsv keys (format 2), 600 training rows, 40 SNPs, factor.bin magic, \
no temporary folder left, the folder's mode mkdir's (exit $rc)"

# The checksums are XXH64's, as xxhsum (Debian's xxhash) computes them; model_xxh64 is that of
# the lines before it.
if command -v xxhsum >/dev/null; then
    sum() { xxhsum -H64 "$1" | cut -c1-16; }
    ok=0
    for f in factor.bin train.tsv snps.tsv pheno.tsv weights.tsv; do
        grep -qx "${f%.*}_xxh64	$(sum "m/$f")" m/model.tsv || ok=1
    done
    head -n -1 m/model.tsv >head.tsv
    grep -qx "train_bim_xxh64	$(sum ds.bim)" m/model.tsv &&
        grep -qx "train_fam_xxh64	$(sum ds.fam)" m/model.tsv &&
        [ "$(tail -1 m/model.tsv)" = "model_xxh64	$(sum head.tsv)" ] && [ $ok -eq 0 ]
    report $? "model.tsv's checksums of the 5 files, the training .bim and .fam and itself are \
xxhsum -H64's"
else
    echo "ok $((n + 1)) # SKIP no xxhsum (Debian's xxhash)"
    n=$((n + 1))
fi
# reseal DIR: model.tsv's checksums made those of DIR's files as they are now: a crafted model
# whose checksums are right, to reach the checks behind them
reseal() {
    for f in factor.bin train.tsv snps.tsv pheno.tsv weights.tsv; do
        sed -i "s/^${f%.*}_xxh64\t.*/${f%.*}_xxh64\t$(sum "$1/$f")/" "$1/model.tsv"
    done
    sed -i '$d' "$1/model.tsv"
    printf 'model_xxh64\t%s\n' "$(sum "$1/model.tsv")" >>"$1/model.tsv"
}

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
cp -r m m1 && sed -i 's/^tilegwas_krr_model\t2$/tilegwas_krr_model\t1/' m1/model.tsv
# snps.tsv: SNP 3's position moved by one (its checksum then differs)
cp -r m ms && awk -F'\t' -v OFS='\t' 'NR == 4 { $2 += 1 } { print }' m/snps.tsv >ms/snps.tsv
# a digit of n_train changed; a weights.tsv cut mid-number; a bit flipped in a tile of the factor
cp -r m mn && sed -i 's/^n_train\t600$/n_train\t500/' mn/model.tsv
cp -r m mcut && head -c "$(($(wc -c <m/weights.tsv) - 7))" m/weights.tsv >mcut/weights.tsv
cp -r m mflip && printf '\x01' |
    dd of=mflip/factor.bin bs=1 seek=$(($(wc -c <m/factor.bin) - 500)) conv=notrunc 2>/dev/null
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
    krr_error "model.tsv with an unknown key" \
        "mk/model.tsv line $(wc -l <mk/model.tsv): unknown key 'colour'" --load-model mk \
        --test-bfile te --out e
    krr_error "model format 1" "m1/model.tsv line 2: model format 1, but this tilegwas reads \
format 2 (format 1 has no checksums and no SNP positions: save the model again)" \
        --load-model m1 --test-bfile te --out e
    krr_error "model.tsv with another n_train" "mn/model.tsv: checksum " --load-model mn \
        --test-bfile te --out e
    krr_error "weights.tsv with a bad value" "mw/weights.tsv: checksum " --load-model mw \
        --test-bfile te --out e
    krr_error "weights.tsv cut mid-number" "mcut/weights.tsv: checksum " --load-model mcut \
        --test-bfile te --out e
    krr_error "snps.tsv with a moved position" "ms/snps.tsv: checksum " --load-model ms \
        --test-bfile te --out e
    krr_error "factor.bin with a flipped bit (--pheno)" "mflip/factor.bin: checksum " \
        --load-model mflip --pheno ds.pheno --test-bfile te --out e
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
    krr_error "--save-model into a folder of other files" \
        "--save-model other: the folder holds 'notes.txt', which is no file of a tilegwas model" \
        --bfile ds --pheno ds.pheno $fit64 --test-bfile te --save-model other --out e
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

# the training .fam's lines reordered (the same samples, so that train.tsv still finds them
# all): the .bed's rows would go to other samples
cp ds.bed cf.bed
cp ds.bim cf.bim
cp ds.fam cf.fam
# shellcheck disable=SC2086
krr --bfile cf --pheno ds.pheno $fit64 --test-bfile te --save-model mfam --out c ||
    echo "# fit on cf failed: $(cat krr.err)"
{ sed -n 2p ds.fam; sed -n 1p ds.fam; tail -n +3 ds.fam; } >cf.fam
krr_error "training .fam reordered after the save" \
    "changed since the model was saved (.fam content: other samples, or the same in another" \
    --load-model mfam --test-bfile te --out e

# Crafted models whose checksums are right (resealed): the sizes and tiles model.tsv gives are
# checked against the files before anything is allocated or submitted by them
if command -v xxhsum >/dev/null; then
    cp -r m mh && sed -i 's/^n_train\t600$/n_train\t2305843009213693952/' mh/model.tsv && reseal mh
    cp -r m mt1 && sed -i 's/^tile\t64$/tile\t1/' mt1/model.tsv && reseal mt1
    # tile (0, 0)'s byte count in factor.bin's table, 8 bytes after the header and a precision
    cp -r m mz && printf '\xff\xff\xff\xff\xff\xff\xff\x7f' |
        dd of=mz/factor.bin bs=1 seek=$((32 + 16)) conv=notrunc 2>/dev/null && reseal mz
    cp -r m mv && head -n -1 m/weights.tsv >mv/weights.tsv && reseal mv
    krr_error "n_train 2^61 (resealed)" "mh/model.tsv: n_snps 40 and n_train \
2305843009213693952, but $(pwd -P)/ds has 40 SNPs and 600 samples" --load-model mh \
        --test-bfile te --out e
    krr_error "tile 1 (resealed)" "mt1/model.tsv: tile 1: below 16" --load-model mt1 \
        --pheno ds.pheno --test-bfile te --out e
    krr_error "factor.bin tile of 2^63 - 1 bytes (resealed)" \
        "mz/factor.bin: tile (0, 0) has 9223372036854775807 bytes, expected 64 × 64 fp64" \
        --load-model mz --test-bfile te --out e
    krr_error "weights.tsv without its last line (resealed)" \
        "mv/weights.tsv: 600 lines, but model.tsv describes 601 (a header and 600 training" \
        --load-model mv --test-bfile te --out e
    krr --load-model m --test-bfile te --test-pheno te.pheno --out l3 &&
        cmp -s l.pred.tsv l3.pred.tsv
    report $? "the model those were copied from still loads and predicts identically"
else
    echo "ok $((n + 1)) # SKIP no xxhsum (Debian's xxhash): crafted models"
    n=$((n + 1))
fi

# Two saves into one folder at once, three times: the folder ends up holding one of the two
# models, whole (its predictions are one fit's, bit for bit), never a mix
fitA="--gamma 0.03 --alpha 0.1 --tile 64 --diag fp64 --precisions fp64"
fitB="--gamma 0.05 --alpha 1 --tile 32 --diag fp64 --precisions fp64"
ok=0
for t in 1 2 3; do
    # shellcheck disable=SC2086
    { "$TG_BIN" krr --quiet --ngpu 0 --ncpu 1 --bfile ds --pheno ds.pheno $fitA --test-bfile te \
        --save-model race --out ra 2>ra.err &
      "$TG_BIN" krr --quiet --ngpu 0 --ncpu 1 --bfile ds --pheno ds.pheno $fitB --test-bfile te \
        --save-model race --out rb 2>rb.err
      wait $!; } || { ok=1; cat ra.err rb.err; }
    krr --load-model race --test-bfile te --out rl || { ok=1; cat krr.err; }
    { cmp -s rl.pred.tsv ra.pred.tsv || cmp -s rl.pred.tsv rb.pred.tsv; } || ok=1
    [ "$(ls -A | grep -c '^\.')" -eq 0 ] || ok=1
done
[ $ok -eq 0 ]
report $? "two concurrent --save-model into one folder, 3 times: both exit 0, the folder loads \
and predicts as one of the two fits, no temporary folder left"

# a full disk (a file size limit of 8 MB, above what MPI's shared memory files need: the write
# of a 10 MB factor fails with EFBIG): the error names the model and the file, the model in the
# folder is untouched and nothing is left beside it
sim --out big --n-samples 1600
cp -r m mfull
# shellcheck disable=SC2086
(trap '' XFSZ && ulimit -f 8000 &&
    expect_error "full disk while saving" "--save-model mfull: error writing factor.bin: " \
        "$TG_BIN" krr --quiet --ngpu 0 --bfile big --pheno big.pheno $fit64 --test-frac 0.1 \
        --save-model mfull --out e && echo "n=$n fail=$fail" >n.txt)
. ./n.txt
cmp -s mfull/factor.bin m/factor.bin && cmp -s mfull/model.tsv m/model.tsv &&
    [ "$(ls -A | grep -c '^\.')" -eq 0 ]
report $? "full disk: the model in the folder is untouched, no temporary folder left"

tap_end
