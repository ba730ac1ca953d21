# --covar on rr end to end: a covariate file with a numeric column (AGE), a categorical one
# (GRP: ctrl, trtA, trtB; reference ctrl), a constant one and one collinear with AGE, samples
# missing AGE or GRP. The log names the columns, the reference level, the two dropped columns
# and the samples left out; alpha.tsv has a line per design column; --covar-name and
# --covar-col-nums choose alike; both solvers fit the same model; the test cohort's predictions
# need --test-covar and equal the in-sample ones on the same samples; bad options and files are
# one error line. (The numbers are checked against the dense normal equations in
# tests/test_covar.)
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
rr() { "$TG_BIN" rr --quiet --ncpu 1 "$@" 2>rr.err; }

"$TG_BIN" simulate --quiet --out ds --trait qt --n-pheno 2 --n-samples 300 --n-snps 200 \
    --additive 5 --h2 0.6 --missing 0 --seed 5 2>/dev/null ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
awk 'BEGIN { srand(3); split("trtB ctrl trtA", L, " ") }
     NR == 1 { print "#FID\tIID\tAGE\tGRP\tCONST\tAGE2"; next }
     { a = int(30 + 40 * rand()); g = L[1 + NR % 3]
       if (NR % 37 == 0) print $1 "\t" $2 "\tNA\t" g "\t1\tNA"
       else if (NR % 41 == 0) print $1 "\t" $2 "\t" a "\tNA\t1\t" 2 * a
       else print $1 "\t" $2 "\t" a "\t" g "\t1\t" 2 * a }' ds.pheno >ds.cov
nmiss=$(awk '$3 == "NA" || $4 == "NA"' ds.cov | wc -l)

rr --bfile ds --pheno ds.pheno --covar ds.cov --lambda 100 --out cg
rc=$?
sed 's/^/# /' rr.err
grep -q "ds.cov: 3 covariate column(s) as fixed effects beside the intercept: AGE, GRP=trtA, GRP=trtB" cg.log &&
    grep -q "GRP: categorical, 3 levels, reference level ctrl" cg.log
report $? "log: AGE and GRP's indicators GRP=trtA, GRP=trtB used, reference level ctrl (exit $rc)" cg.log
grep -q "warning: covariate column CONST (constant) dropped" cg.log &&
    grep -q "warning: covariate column AGE2 (collinear with the columns before it) dropped" cg.log
report $? "log: the constant and the collinear column dropped, each with a warning line"
grep -q "ds.cov: $nmiss of 300 sample(s) missing a covariate, left out of the fit" cg.log &&
    [ "$(awk -F'\t' 'NR > 1 { print $2 }' cg.cg.tsv | sort -u)" = $((300 - nmiss)) ] &&
    [ "$(awk -F'\t' '$3 == "NA" && $4 == "NA"' cg.pred.tsv | wc -l)" -eq "$nmiss" ]
report $? "$nmiss samples missing a covariate: counted in the log, left out of cg.tsv's n_obs, NA in pred.tsv"
[ "$(cut -f1 cg.alpha.tsv | tr '\n' ' ')" = "term intercept AGE GRP=trtA GRP=trtB " ] &&
    [ "$(awk -F'\t' 'NF != 3' cg.alpha.tsv | wc -l)" -eq 0 ]
report $? "alpha.tsv: a line per design column, a column per phenotype"

rr --bfile ds --pheno ds.pheno --covar ds.cov --covar-name AGE,GRP --lambda 100 --out byname &&
    rr --bfile ds --pheno ds.pheno --covar ds.cov --covar-col-nums 3-4 --lambda 100 --out bynum &&
    cmp -s byname.alpha.tsv bynum.alpha.tsv && cmp -s byname.beta.tsv bynum.beta.tsv &&
    cmp -s byname.alpha.tsv cg.alpha.tsv && ! grep -q warning bynum.log
report $? "--covar-name AGE,GRP and --covar-col-nums 3-4 choose alike (and as all columns less the dropped ones)"

rr --bfile ds --pheno ds.pheno --covar ds.cov --lambda 100 --solver cholesky --out ch
rc=$?
# the same model on the same samples: the solvers agree to CG's tolerance (without missing calls:
# Z differs between them by each SNP's centring, over all samples or the samples kept, which
# moves the intercept only)
d=$(paste cg.beta.tsv ch.beta.tsv | awk -F'\t' 'NR > 1 { for (c = 9; c <= 10; c++) {
        e = $c - $(c + 10); e = e < 0 ? -e : e; if (e > m) m = e; a = $c < 0 ? -$c : $c
        if (a > s) s = a } } END { print (m <= 1e-6 * s) ? "ok" : m " of " s }')
da=$(paste cg.alpha.tsv ch.alpha.tsv | awk -F'\t' 'NR > 2 { for (c = 2; c <= 3; c++) {
        e = $c - $(c + 3); e = e < 0 ? -e : e; a = $c < 0 ? -$c : $c
        if (e > 1e-6 * a + 1e-9) bad++ } } END { print bad + 0 }')
[ $rc -eq 0 ] && [ "$d" = ok ] && [ "$da" -eq 0 ] &&
    grep -q "warning: $nmiss sample(s) with a selected phenotype or a covariate missing dropped" ch.log
report $? "cholesky: the samples missing a covariate dropped and counted, beta and the covariates' alpha equal to cg's ($d, $da apart)" ch.log

rr --bfile ds --pheno ds.pheno --covar ds.cov --lambda 100 --test-bfile ds --test-covar ds.cov \
    --out t
rc=$?
same=$(paste cg.pred.tsv t.pred.tsv | awk -F'\t' 'NR > 1 { for (c = 3; c <= 4; c++) {
        if ($c == "NA" || $(c + 4) == "NA") { if ($c != $(c + 4)) bad++; continue }
        e = $c - $(c + 4); e = e < 0 ? -e : e; if (e > 1e-9) bad++ } } END { print bad + 0 }')
[ $rc -eq 0 ] && [ "$same" -eq 0 ]
report $? "--test-covar: the training cohort as test cohort predicted as in-sample ($same differ)" t.log

fails() { # one error line naming $1, exit 2
    rr "${@:2}" --out bad
    local rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <rr.err)" -eq 1 ] && grep -q -- "$1" rr.err
}
fails "needs --test-covar" --bfile ds --pheno ds.pheno --covar ds.cov --lambda 1 --test-bfile ds
report $? "--covar with --test-bfile and no --test-covar: $(cat rr.err)"
fails "needs --covar" --bfile ds --pheno ds.pheno --covar-name AGE --lambda 1
report $? "--covar-name without --covar: $(cat rr.err)"
fails "no column named 'WEIGHT'" --bfile ds --pheno ds.pheno --covar ds.cov --covar-name WEIGHT --lambda 1
report $? "an unknown covariate: $(cat rr.err)"
awk 'NR == 5 { $0 = $1 "\t" $2 "\t40" } { print }' ds.cov >short.cov
rr --bfile ds --pheno ds.pheno --covar short.cov --lambda 1 --out bad
rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <rr.err)" -eq 1 ] && grep -q "short.cov line 5" rr.err
report $? "a short line: $(cat rr.err)"

gzip -c ds.cov >ds.cov.gz
rr --bfile ds --pheno ds.pheno --covar ds.cov.gz --lambda 100 --out gz && cmp -s gz.alpha.tsv cg.alpha.tsv
report $? "a gzip covariate file (two passes over the stream for the categorical column) reads alike"

# several MPI ranks (each holds its samples' rows): the same alpha and predictions
differ() { # FILE1 FILE2 FIRST TOL: values (columns FIRST..) apart by more than TOL
    paste "$1" "$2" | awk -F'\t' -v f="$3" -v t="$4" 'NR > 1 { h = NF / 2
        for (c = f; c <= h; c++) { if ($c == "NA" || $(c + h) == "NA") { if ($c != $(c + h)) n++; continue }
            e = $c - $(c + h); e = e < 0 ? -e : e; if (e > t) n++ } } END { print n + 0 }'
}
if [ -n "${MPIEXEC:-}" ] && "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
    bad=
    for s in cg cholesky; do
        timeout 300 "$MPIEXEC" -n 2 "$TG_BIN" rr --quiet --ncpu 1 --bfile ds --pheno ds.pheno \
            --covar ds.cov --lambda 100 --solver $s --out m$s 2>/dev/null || bad="$bad $s:exit"
        ref=$([ $s = cg ] && echo cg || echo ch)
        d=$(($(differ m$s.alpha.tsv $ref.alpha.tsv 2 1e-12) + $(differ m$s.pred.tsv $ref.pred.tsv 3 1e-9)))
        [ "$d" = 0 ] || bad="$bad $s:$d"
    done
    [ -z "$bad" ]
    report $? "2 MPI ranks: alpha and predictions of both solvers as one rank's${bad:+ (differ:$bad)}"
fi

# krr: the same design as fixed effects (its α in alpha.tsv, predictions NA without covariates),
# or as standardised gaussian-kernel confounders with --covar-kernel
krr() { "$TG_BIN" krr --quiet --ncpu 1 --gamma 2e-3 --alpha 1 "$@" 2>krr.err; }
krr --bfile ds --pheno ds.pheno --covar ds.cov --test-bfile ds --test-covar ds.cov \
    --test-pheno ds.pheno --out k
rc=$?
[ $rc -eq 0 ] && [ "$(cut -f1 k.alpha.tsv | tr '\n' ' ')" = "term intercept AGE GRP=trtA GRP=trtB " ] &&
    grep -q "warning: covariate column AGE2 (collinear with the columns before it) dropped" k.log &&
    [ "$(awk -F'\t' '$3 == "NA" && $4 == "NA"' k.pred.tsv | wc -l)" -eq "$nmiss" ] &&
    grep -q "PHENO1: test MSPE [0-9.e+-]*, Pearson r [0-9.e+-]* ($((300 - nmiss)) observed" k.log
report $? "krr --covar: fixed effects in alpha.tsv, the $nmiss samples without covariates NA and out of the metrics (exit $rc)" k.log
krr --bfile ds --pheno ds.pheno --covar ds.cov --covar-name AGE,GRP --covar-kernel \
    --test-bfile ds --test-covar ds.cov --out kk
rc=$?
[ $rc -ne 0 ] && grep -q "confounder column 1 of sample" krr.err
report $? "krr --covar-kernel: a test sample missing a confounder is an error: $(cat krr.err)"
krr --bfile ds --pheno ds.pheno --covar ds.cov --covar-name AGE,GRP --covar-kernel --seed 2 \
    --test-frac 0.2 --out kk
rc=$?
[ $rc -eq 0 ] && [ ! -e kk.alpha.tsv ] && grep -q "PHENO1: test MSPE" kk.log
report $? "krr --covar-kernel: confounders in the kernel, the samples missing one left out of the training, no alpha.tsv (exit $rc)" kk.log
"$TG_BIN" krr --quiet --bfile ds --pheno ds.pheno --covar-kernel --gamma 1 --alpha 1 --test-frac 0.2 --out e 2>krr.err
rc=$?
[ $rc -eq 2 ] && grep -q "needs --covar" krr.err
report $? "--covar-kernel without --covar: $(cat krr.err)"
tap_end
