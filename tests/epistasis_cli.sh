# tilegwas epistasis through the command line: a good run writes PREFIX.epi<k>.tsv (header, top
# rows, tables of 3^k cells that add up to N) and a log; bad input ends with exactly one clear
# error line on stderr and a non-zero exit, never a crash, a sanitizer report or a hang.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"


"$TG_BIN" simulate --quiet --out good --n-samples 300 --n-snps 30 --seed 7 --missing 0.02 \
    --epistasis 2:1 --epi-effect 0.2 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

# a good run at order 3: 4060 combinations, top 7
"$TG_BIN" epistasis --bfile good --order 3 --top 7 --block 8 --out run >run.out 2>run.err
report $? "order 3 run succeeds"
awk -F'\t' 'NR == 1 { ok = $0 == "RANK\tSNP1\tSNP2\tSNP3\tCHR1\tCHR2\tCHR3\tBP1\tBP2\tBP3\tREF1\tREF2\tREF3\tALT1\tALT2\tALT3\tK2_LNBF\tN\tCONTROLS\tCASES"; next }
    { rows++; nc = split($19, c, ","); na = split($20, a, ","); s = 0
      for (i = 1; i <= nc; i++) s += c[i]; for (i = 1; i <= na; i++) s += a[i]
      if ($1 != rows || nc != 27 || na != 27 || s != $18 || (rows > 1 && $17 > prev)) ok = 0; prev = $17 }
    END { exit !(ok && rows == 7) }' run.epi3.tsv
report $? "run.epi3.tsv: header, 7 ranked rows, K2_LNBF non-increasing, 27 cells per class adding up to N"
grep -q "C(30" run.log || grep -q "4060 combinations" run.log
report $? "log names the combinations (4060)"
grep -q "with missing genotypes" run.log && grep -q "block 8 SNPs, 20 rounds" run.log &&
    grep -q "combinations\*samples/s" run.log && grep -q -- "^--bfile good: 300 samples, 30 variants" run.log
report $? "log: options, mode, block, rounds (C(4 + 2, 3) = 20 for 4 blocks), rate"
grep -q "^epistasis: 4060/4060 combinations (100.0%), .*, done$" run.err && ! grep -q $'\r' run.err
report $? "progress on stderr ends with a whole line at 4060/4060, no \\r in a file"
"$TG_BIN" epistasis --bfile good --order 2 --top 3 --score mi --quiet --out q >q.out 2>q.err
report $(( $? || $(grep -c . q.err) )) "--quiet: nothing on stderr"
head -1 q.epi2.tsv | grep -q "	MI	DF	P	N	"
report $? "--score mi names the columns MI, DF, P"
# the DF of a pair: (non-empty cells − 1) × (non-empty classes − 1) of its row's table
awk -F'\t' 'NR > 1 { split($16, c, ","); split($17, a, ","); n = 0; r0 = 0; r1 = 0
      for (g = 1; g <= 9; g++) { n += c[g] + a[g] > 0; r0 += c[g]; r1 += a[g] }
      if ($13 != (n - 1) * ((r0 > 0) + (r1 > 0) - 1) || $14 < 0 || $14 > 1) bad++ }
    END { exit !(NR == 4 && !bad) }' q.epi2.tsv
report $? "--score mi: DF from each row's table, P in [0, 1]"
grep -q "P values: 435 combinations tested; Bonferroni: P <= 0.05 / 435 = 0.000115" q.log
report $? "log: combinations tested and the Bonferroni threshold"

# --p-threshold: the rows of a full --top run with P <= 0.05, in the same order (RANK renumbered)
"$TG_BIN" epistasis --bfile good --order 2 --top 435 --score chi2 --quiet --out all >/dev/null 2>&1 &&
    "$TG_BIN" epistasis --bfile good --order 2 --score chi2 --p-threshold 0.05 --quiet --out pt \
        >/dev/null 2>pt.err
awk -F'\t' -v OFS='\t' 'NR == 1 || $14 <= 0.05 { $1 = NR == 1 ? $1 : ++r; print }' all.epi2.tsv >want.tsv
rows=$(($(wc -l <pt.epi2.tsv) - 1))
cmp -s want.tsv pt.epi2.tsv && [ "$rows" -gt 0 ] &&
    grep -q -- "--p-threshold 0.05: $rows of 435 combinations have P <= 0.05" pt.log
report $? "--p-threshold 0.05: the $rows rows of a full run with P <= 0.05, in score order; log counts them" pt.err
# --set: the rows of the full run holding snp3 or snp17, C(30,2) - C(28,2) = 57, in the same order
printf 'snp17\n  snp3 snp17\n' >set.txt
"$TG_BIN" epistasis --bfile good --order 2 --top 1024 --score chi2 --set set.txt --quiet --out st \
    >/dev/null 2>st.err
awk -F'\t' -v OFS='\t' 'NR == 1 || $2 == "snp3" || $3 == "snp3" || $2 == "snp17" || $3 == "snp17" {
    $1 = NR == 1 ? $1 : ++r; print }' all.epi2.tsv >want.tsv
cmp -s want.tsv st.epi2.tsv && [ "$(wc -l <st.epi2.tsv)" -eq 58 ] &&
    grep -q "^--set set.txt: 2 SNPs; C(30, 2) - C(28, 2) combinations hold one" st.log &&
    grep -q " 57 combinations (those holding a SNP of the set)" st.log
report $? "--set (snp3, snp17; one repeated): the 57 rows of the full run holding one, in order; log" st.err
"$TG_BIN" epistasis --bfile good --order 2 --score chi2 --set set.txt --p-threshold 0.2 --quiet \
    --out sp >/dev/null 2>sp.err
awk -F'\t' -v OFS='\t' 'NR == 1 || (($2 == "snp3" || $3 == "snp3" || $2 == "snp17" || $3 == "snp17") &&
    $14 <= 0.2) { $1 = NR == 1 ? $1 : ++r; print }' all.epi2.tsv >want.tsv
cmp -s want.tsv sp.epi2.tsv && [ "$(wc -l <sp.epi2.tsv)" -gt 2 ]
report $? "--set with --p-threshold 0.2: the full run's rows holding snp3 or snp17 with P <= 0.2" sp.err
printf 'snp3\nsnp999\n' >badset.txt
expect_error "--set with an unknown SNP" "badset.txt line 2: SNP snp999 is not in good.bim" \
    "$TG_BIN" epistasis --bfile good --set badset.txt --out e
expect_error "--p-threshold with k2" "no P value" "$TG_BIN" epistasis --bfile good --p-threshold 0.05 --out e
expect_error "--p-threshold 0" "--p-threshold" "$TG_BIN" epistasis --bfile good --score mi --p-threshold 0 --out e

expect_error "order 5" "--order" "$TG_BIN" epistasis --bfile good --order 5 --out e
expect_error "order 1" "--order" "$TG_BIN" epistasis --bfile good --order 1 --out e
expect_error "block not a multiple of 8" "multiple of 8" "$TG_BIN" epistasis --bfile good --block 12 --out e
expect_error "block too large" "--block" "$TG_BIN" epistasis --bfile good --block 8192 --out e
expect_error "unknown score" "--score" "$TG_BIN" epistasis --bfile good --score bic --out e
expect_error "missing --bfile" "--bfile" "$TG_BIN" epistasis --out e
expect_error "unknown option" "--bogus" "$TG_BIN" epistasis --bfile good --bogus --out e
expect_error "--pheno-name without --pheno" "--pheno-name needs --pheno" "$TG_BIN" epistasis --bfile good --pheno-name P --out e

"$TG_BIN" simulate --quiet --out three --n-samples 50 --n-snps 3 --seed 1 >/dev/null 2>&1
expect_error "fewer SNPs than the order" "3 SNPs" "$TG_BIN" epistasis --bfile three --order 4 --out e

cp good.bed nocase.bed; cp good.bim nocase.bim
awk '{ $6 = 1; print }' good.fam >nocase.fam
expect_error "no cases" "0 cases" "$TG_BIN" epistasis --bfile nocase --out e
cp good.bed noctl.bed; cp good.bim noctl.bim
awk '{ $6 = 2; print }' good.fam >noctl.fam
expect_error "no controls" "0 controls" "$TG_BIN" epistasis --bfile noctl --out e
cp good.bed qt.bed; cp good.bim qt.bim
awk '{ $6 = (NR == 5 ? 3.25 : 1 + NR % 2); print }' good.fam >qt.fam
expect_error "quantitative .fam phenotype" "qt.fam column 6: sample F4 I4 has phenotype 3.25" \
    "$TG_BIN" epistasis --bfile qt --out e
"$TG_BIN" simulate --quiet --out qtsim --n-samples 300 --n-snps 30 --seed 2 --trait qt \
    --additive 2 >/dev/null 2>&1
expect_error "quantitative --pheno" "quantitative" \
    "$TG_BIN" epistasis --bfile good --pheno qtsim.pheno --out e
awk 'NR == 1 { print "FID IID A B"; next } { print $1, $2, 1 + NR % 2, (NR == 9 ? 0.5 : 2) }' \
    good.pheno >two.pheno
expect_error "--pheno-name picks the quantitative column" "two.pheno column B: sample F7 I7 has phenotype 0.5" \
    "$TG_BIN" epistasis --bfile good --pheno two.pheno --pheno-name B --out e
"$TG_BIN" epistasis --bfile good --pheno two.pheno --pheno-name A --quiet --out a >/dev/null 2>&1
report $? "--pheno-name A (case-control column) runs"
expect_error "--pheno-name not in the file" "no column named NOPE" \
    "$TG_BIN" epistasis --bfile good --pheno two.pheno --pheno-name NOPE --out e
tap_end
