# tilegwas rr --solver cg end to end on simulated data with planted additive SNPs: outputs and
# their layout, the per-iteration residuals in the log, the planted SNPs found, a phenotype with
# missing values solved alone equal to its column of the joint solve, --test-bfile,
# non-convergence written and flagged with exit 1, and bad options refused with one error line.
# --solver cholesky: β equal to cg's (the same model on complete phenotypes), FP32/FP16 tiles
# within the mixed-precision target, samples with a missing phenotype dropped and counted,
# --test-bfile, its bad options. (The numbers themselves are checked against LAPACK in
# tests/test_cg and tests/test_rr_chol.)
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
rr() { "$TG_BIN" rr --quiet "$@" 2>rr.err; }

"$TG_BIN" simulate --quiet --out ds --trait qt --n-pheno 2 --n-samples 400 --n-snps 300 \
    --additive 5 --h2 0.7 --missing 0.02 --seed 21 2>/dev/null ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
# PHENO2 missing for every 7th sample
awk 'NR > 1 && NR % 7 == 0 { $4 = "NA" } { print }' OFS='\t' ds.pheno >ds2.pheno

"$TG_BIN" rr --help >help.txt 2>&1
rc=$?
missing_opts=
for o in --bfile --pheno --pheno-name --pheno-col-nums --test-bfile --lambda --solver --scale \
    --tol --max-iter \
    --tile --accuracy --precisions --diag --out --ncpu --ngpu; do
    grep -q -- "$o" help.txt || missing_opts="$missing_opts $o"
done
[ $rc -eq 0 ] && [ -z "$missing_opts" ]
report $? "--help exits 0 and lists every option${missing_opts:+ (missing:$missing_opts)}"

rr --bfile ds --pheno ds2.pheno --lambda 150 --scale --solver cg --out r
rc=$?
sed 's/^/# /' rr.err
[ $rc -eq 0 ] && [ "$(head -1 r.beta.tsv)" = \
    "$(printf '#CHROM\tPOS\tID\tREF\tALT\tA1\tA1_FREQ\tN\tPHENO1\tPHENO2')" ] &&
    [ "$(wc -l <r.beta.tsv)" -eq 301 ] && [ "$(awk -F'\t' 'NF != 10' r.beta.tsv | wc -l)" -eq 0 ] &&
    [ "$(awk -v OFS='\t' '{ print $1, $4, $2, $6, $5, $5 }' ds.bim)" = \
        "$(tail -n +2 r.beta.tsv | cut -f1-6)" ]
report $? "beta.tsv: header #CHROM POS ID REF ALT A1 A1_FREQ N PHENO1 PHENO2, one line per SNP in \
.bim order, REF = A2, ALT = A1 (exit $rc)"
[ "$(head -1 r.pred.tsv)" = "$(printf 'FID\tIID\tPHENO1\tPHENO2')" ] &&
    [ "$(wc -l <r.pred.tsv)" -eq 401 ] && [ "$(awk -F'\t' 'NF != 4' r.pred.tsv | wc -l)" -eq 0 ]
report $? "pred.tsv: header FID IID PHENO1 PHENO2, one line per sample (missing ones too)"
it1=$(awk -F'\t' '$1 == "PHENO1" { print $4 }' r.cg.tsv)
conv=$(awk -F'\t' 'NR > 1 && $5 == 1 && $6 <= 1e-8 && $7 <= 1e-6' r.cg.tsv | wc -l)
nobs2=$(awk -F'\t' '$1 == "PHENO2" { print $2 }' r.cg.tsv)
[ "$conv" -eq 2 ] && [ "$nobs2" -eq $((400 - 57)) ]
report $? "cg.tsv: both phenotypes converged to 1e-8, PHENO2 with its 343 observed samples"
lines=$(grep -c "cg iteration [0-9]*: relative residual.*PHENO1 [0-9.e+-]*" r.log)
[ -n "$it1" ] && [ "$lines" -ge "$it1" ] && grep -q "cg iteration $it1: .*PHENO1" r.log
report $? "log: one residual line per iteration ($lines lines, PHENO1 converged at $it1)"

# planted SNPs: those explaining ≥ 4% of the variance (|effect| ≥ 0.2; smaller ones are within
# the noise at n = 400) are exactly the largest |β| of their phenotype
found=0 strong=0
for p in PHENO1 PHENO2; do
    col=$([ $p = PHENO1 ] && echo 9 || echo 10)
    awk -F'\t' -v p=$p '$1 == p && $2 == "additive" && ($4 >= 0.2 || $4 <= -0.2) { print $3 }' \
        ds.truth.tsv | sort >truth.$p
    k=$(wc -l <truth.$p)
    tail -n +2 r.beta.tsv | awk -F'\t' -v c=$col '{ b = $c < 0 ? -$c : $c; print b "\t" $3 }' |
        sort -g -r | head -n "$k" | cut -f2 | sort >top.$p
    cmp -s top.$p truth.$p && found=$((found + 1))
    strong=$((strong + k))
    echo "# $p: planted $(tr '\n' ' ' <truth.$p); largest |beta| $(tr '\n' ' ' <top.$p)"
done
[ $found -eq 2 ] && [ $strong -ge 3 ]
report $? "the $strong strongly planted SNPs have the largest |beta| of their phenotype"
# fitted values correlate with the observed phenotype
r=$(paste <(tail -n +2 ds2.pheno) <(tail -n +2 r.pred.tsv) | awk -F'\t' '$4 != "NA" {
    x = $4; y = $8; n++; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y }
    END { print (n * sxy - sx * sy) / sqrt((n * sxx - sx * sx) * (n * syy - sy * sy)) }')
awk -v r="$r" 'BEGIN { exit !(r > 0.7) }'
report $? "in-sample fitted PHENO2 correlates with its observed values (r = $r)"

rr --bfile ds --pheno ds2.pheno --pheno-name PHENO2 --lambda 150 --scale --out r2
rc=$?
paste <(cut -f10 r.beta.tsv) <(cut -f9 r2.beta.tsv) | awk -F'\t' 'NR == 1 { ok = $1 == $2; next }
    { d = $1 - $2; s += d * d; t += $2 * $2 } END { exit !(ok && NR == 301 && sqrt(s / t) < 1e-6) }'
report $? "--pheno-name PHENO2 alone gives the same beta as in the joint solve (exit $rc)"

# the training cohort through --test-bfile: same frequencies, so the in-sample fitted values
rr --bfile ds --pheno ds2.pheno --lambda 150 --scale --test-bfile ds --out rt
rc=$?
paste <(cut -f3,4 r.pred.tsv) <(cut -f3,4 rt.pred.tsv) | awk -F'\t' 'NR == 1 { next }
    { for (c = 1; c <= 2; c++) { d = $c - $(c + 2); s += d * d; t += $c * $c } }
    END { exit !(NR == 401 && sqrt(s / t) < 1e-12) }'
report $? "--test-bfile with the training fileset reproduces the in-sample fitted values (exit $rc)"
# a test cohort with SNPs 2 and 3 swapped, in the .bim and in the .bed (400 samples: 100
# bytes a SNP after the 3 magic bytes), and one more SNP at the end: its variants are matched to
# the training ones by chromosome, position and ID, so the predictions are those of ds
cp ds.fam sw.fam
{ head -c 103 ds.bed; tail -c +204 ds.bed | head -c 100; tail -c +104 ds.bed | head -c 100
  tail -c +304 ds.bed; tail -c 100 ds.bed; } >sw.bed
awk 'NR == 2 { l = $0; next } NR == 3 { print; print l; next } { print } END { $2 = "extra"; $4 += 1
    print }' OFS='\t' ds.bim >sw.bim
rr --bfile ds --pheno ds2.pheno --lambda 150 --scale --test-bfile sw --out rsw
rc=$?
cmp -s rt.pred.tsv rsw.pred.tsv && grep -q "sw: 1 variant not among the training variants" rsw.log
report $? "--test-bfile with SNPs in another order and one more: the same predictions (exit $rc)"
awk -v OFS='\t' 'NR == 2 { $2 = "renamed" } { print }' ds.bim >sm.bim
cp ds.bed sm.bed; cp ds.fam sm.fam
rr --bfile ds --pheno ds.pheno --lambda 150 --test-bfile sm --out rs
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c . rr.err)" -eq 1 ] && grep -q "sm has no variant snp1" rr.err
report $? "--test-bfile without a training SNP refused, naming it: $(cat rr.err)"

rr --bfile ds --pheno ds.pheno --lambda 150 --out rc --tol 1e-13 --max-iter 2
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c . rr.err)" -eq 1 ] && grep -q "did not reach" rr.err &&
    [ "$(wc -l <rc.beta.tsv)" -eq 301 ] && [ "$(wc -l <rc.pred.tsv)" -eq 401 ] &&
    [ "$(awk -F'\t' 'NR > 1 && $5 == 0 && $4 == 2' rc.cg.tsv | wc -l)" -eq 2 ] &&
    grep -q "NOT CONVERGED" rc.log
report $? "--max-iter 2: exit 1, last residual named, results written and flagged: $(cat rr.err)"

# --solver cholesky against cg converged far below the 1e-6 compared (complete phenotypes: the
# same model, the same samples); tiles of 64 SNPs, the last one 44
rr --bfile ds --pheno ds.pheno --lambda 150 --scale --solver cg --tol 1e-12 --out g
rr --bfile ds --pheno ds.pheno --lambda 150 --scale --solver cholesky --tile 64 --out c
rc=$?
sed 's/^/# /' rr.err
w=$(agree <(cut -f9,10 c.beta.tsv) <(cut -f9,10 g.beta.tsv) 1e-6)
[ $? -eq 0 ] && [ $rc -eq 0 ] && [ "$(head -1 c.beta.tsv)" = "$(head -1 g.beta.tsv)" ] &&
    [ "$(cut -f1-8 c.beta.tsv)" = "$(cut -f1-8 g.beta.tsv)" ]
report $? "--solver cholesky: beta.tsv equal to cg's within 1e-6 relative ($w, exit $rc)"
w=$(agree <(cut -f3,4 c.pred.tsv) <(cut -f3,4 g.pred.tsv) 1e-6)
[ $? -eq 0 ] && [ "$(cut -f1,2 c.pred.tsv)" = "$(cut -f1,2 g.pred.tsv)" ]
report $? "--solver cholesky: pred.tsv equal to cg's fitted values within 1e-6 ($w)"
[ "$(head -1 c.rr.tsv)" = "$(printf 'pheno\tn_obs\tmean\tlambda\tsolver')" ] &&
    [ "$(awk -F'\t' 'NR > 1 && $2 == 400 && $4 == 150 && $5 == "cholesky"' c.rr.tsv |
        wc -l)" -eq 2 ] &&
    grep -q "precision map (diagonal fp64, accuracy 1e-08): fp64 15, fp32 0" c.log &&
    grep -q "factorisation .* s" c.log && [ ! -e c.cg.tsv ]
report $? "--solver cholesky: rr.tsv per phenotype (400 samples, lambda, solver), map in the log"
# without --precisions: fp64,fp32 on CPUs (fp16 tiles cost time there), fp64,fp32,fp16 with GPUs
if grep -q "^runtime: .*, 0 GPUs" c.log; then want="precisions fp64,fp32 (CPU only"
else want="precisions fp64,fp32,fp16 (GPUs in use"; fi
grep -q "^$want" c.log
report $? "--solver cholesky: default precisions by the workers: $(grep -m1 '^precisions' c.log)"
# FP32 diagonal and FP16 tiles: ε = 1e-2 lowers every off-diagonal tile here; the issue's target
# for the mixed map is 1e-3 relative (test_rr_chol derives the bound on its data)
rr --bfile ds --pheno ds.pheno --lambda 150 --scale --solver cholesky --tile 32 --diag fp32 \
    --precisions fp32,fp16 --accuracy 1e-2 --out c16
rc=$?
w=$(agree <(cut -f9,10 c16.beta.tsv) <(cut -f9,10 c.beta.tsv) 1e-3)
[ $? -eq 0 ] && [ $rc -eq 0 ] && grep -q "precision map (diagonal fp32, .*fp16 45," c16.log
report $? "--diag fp32 --precisions fp32,fp16 --accuracy 1e-2: 45 fp16 tiles, beta vs fp64 $w"
rr --bfile ds --pheno ds2.pheno --lambda 150 --scale --solver cholesky --out c2
rc=$?
[ $rc -eq 0 ] && grep -q "warning: 57 sample(s) with a selected phenotype missing dropped" c2.log &&
    [ "$(awk -F'\t' 'NR > 1 && $2 == 343' c2.rr.tsv | wc -l)" -eq 2 ] &&
    [ "$(wc -l <c2.pred.tsv)" -eq 401 ] && [ "$(awk -F'\t' 'NF != 4' c2.pred.tsv | wc -l)" -eq 0 ]
report $? "--solver cholesky drops the 57 samples missing PHENO2 (logged), predicts all 400"
rr --bfile ds --pheno ds2.pheno --lambda 150 --scale --solver cholesky --test-bfile ds --out c2t
rc=$?
w=$(agree <(cut -f3,4 c2t.pred.tsv) <(cut -f3,4 c2.pred.tsv) 1e-12)
[ $? -eq 0 ] && [ $rc -eq 0 ]
report $? "--solver cholesky --test-bfile with the training fileset: the fitted values ($w)"

rr_error() { expect_error "$1" "$2" "$TG_BIN" rr "${@:3}"; } # DESCRIPTION SUBSTRING ARGS...
printf 'FID\tIID\tP\n' >allna.pheno
awk 'NR > 1 { print $1 "\t" $2 "\tNA" }' ds.pheno >>allna.pheno
rr_error "--solver foo" "--solver foo" --bfile ds --pheno ds.pheno --lambda 1 --solver foo \
    --out e
rr_error "--tile 0" "--tile 0" --bfile ds --pheno ds.pheno --lambda 1 --solver cholesky \
    --tile 0 --out e
rr_error "bad precision name" "fp7" --bfile ds --pheno ds.pheno --lambda 1 --solver cholesky \
    --precisions fp32,fp7 --out e
rr_error "an integer precision" "int8" --bfile ds --pheno ds.pheno --lambda 1 \
    --solver cholesky --precisions int8 --out e
rr_error "--diag fp16" "--diag fp16" --bfile ds --pheno ds.pheno --lambda 1 --solver cholesky \
    --diag fp16 --out e
rr_error "--accuracy -1" "--accuracy" --bfile ds --pheno ds.pheno --lambda 1 \
    --solver cholesky --accuracy -1 --out e
rr_error "unknown solver" "--solver qr" --bfile ds --pheno ds.pheno --lambda 1 --solver qr \
    --out e
rr_error "no --lambda" "--lambda" --bfile ds --pheno ds.pheno --out e
rr_error "--lambda 0" "--lambda" --bfile ds --pheno ds.pheno --lambda 0 --out e
rr_error "--lambda -1" "--lambda" --bfile ds --pheno ds.pheno --lambda -1 --out e
rr_error "--pheno-col-nums without --pheno" "--pheno-col-nums needs --pheno" --bfile ds \
    --pheno-col-nums 3 --lambda 1 --out e
rr_error "--pheno-name with --pheno-col-nums" "give one of them" --bfile ds --pheno ds.pheno \
    --pheno-name PHENO1 --pheno-col-nums 3 --lambda 1 --out e
rr_error "--pheno-col-nums past the file's columns" "outside the value columns" --bfile ds \
    --pheno ds.pheno --pheno-col-nums 5 --lambda 1 --out e
cp ds.bed nofamph.bed; cp ds.bim nofamph.bim
awk '{ $6 = -9; print }' OFS='\t' ds.fam >nofamph.fam
rr_error "no --pheno and no phenotype in the .fam" "give --pheno" --bfile nofamph --lambda 1 \
    --out e
rr_error "no --bfile" "--bfile" --pheno ds.pheno --lambda 1 --out e
rr_error "unknown phenotype name" "NOPE" --bfile ds --pheno ds.pheno --pheno-name PHENO1,NOPE \
    --lambda 1 --out e
rr_error "a phenotype without values" "phenotype P" --bfile ds --pheno allna.pheno --lambda 1 \
    --out e
rr_error "--tol abc" "--tol" --bfile ds --pheno ds.pheno --lambda 1 --tol abc --out e
rr_error "--max-iter 0" "--max-iter" --bfile ds --pheno ds.pheno --lambda 1 --max-iter 0 --out e
rr_error "missing .bed" "nothere.bed" --bfile nothere --pheno ds.pheno --lambda 1 --out e
rr_error "unknown option" "--bogus" --bfile ds --pheno ds.pheno --lambda 1 --bogus

# plink2's conventions: without --pheno the .fam's column 6 (PHENO1: simulate writes the first
# phenotype there), and --pheno-col-nums counting the file's columns from FID as 1
rr --bfile ds --lambda 150 --out fam && rr --bfile ds --pheno ds.pheno --pheno-name PHENO1 \
    --lambda 150 --out named && cmp -s fam.beta.tsv named.beta.tsv &&
    grep -q "^phenotype: the .fam's column 6 (PHENO1), 400 of 400 samples observed$" fam.log
report $? "no --pheno: the .fam's column 6, the same betas as --pheno-name PHENO1 of the file" rr.err
rr --bfile ds --pheno ds.pheno --pheno-col-nums 4 --lambda 150 --out cols &&
    rr --bfile ds --pheno ds.pheno --pheno-name PHENO2 --lambda 150 --out named2 &&
    cmp -s cols.beta.tsv named2.beta.tsv
report $? "--pheno-col-nums 4 (FID is column 1): the same betas as --pheno-name PHENO2" rr.err

tap_end
