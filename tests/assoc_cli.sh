# tilegwas assoc end to end.
# (a) Against plink2 --glm omit-ref (linear regression, A1 the ALT allele as ours, the same two
#     covariates) with --ignore-pred: plink2's BETA is the least-squares coefficient g̃ᵀy/g̃ᵀg̃,
#     ours; its T_STAT uses the residual variance after the
#     SNP is fitted, ours (the score test) before it: with Y = yᵀMy, U²/G = S·Y/(n−p) for
#     S = CHISQ, and T² = U²/G / ((Y − U²/G)/(n − p − 1)) = (n − p − 1)·S / (n − p − S), p the
#     fixed effects (3 here). Both to plink2's printed precision (6 significant digits: half a
#     unit of the last, a relative 5e-6 at most); the keys, A1 and N (OBS_CT) equal.
# (b) With LOCO (the default grid, 5 folds) on 3000 unrelated samples × 20,000 SNPs and 10
#     planted additive SNPs: every planted SNP with a variance share of at least 0.04 reaches
#     P < 5e-8 (its expected CHISQ is about 125), no null SNP does, and the null SNPs' λ_GC is
#     within 1 ± 0.05 (its sampling sd at 20,000 SNPs is about 0.012).
# (c) Outputs: the files, headers and plots, the same bytes on one thread as on two; bad inputs
#     as one error line.
# (d) Case/control against plink2 --glm omit-ref no-firth (logistic regression, the same two
#     covariates) with --ignore-pred: plink2's Z_STAT is a Wald test (the SNP's coefficient
#     fitted), our CHISQ a score test (the null model's). With I(b) the information along the
#     SNP's effect, U(0) = ∫₀^β I, so CHISQ = U(0)²/I(0) and Z² = β²I(β) agree to first order
#     in β and differ by a relative (I'/I)²β²/4 + O(β³): |CHISQ − Z²| ≤ 0.25·BETA²·Z² + 0.001
#     (I'/I ≤ 1 per allele; 0.001 for plink2's 6 digits and its IRLS tolerance); BETA (the
#     score's one-step log odds ratio) has plink2's sign where |Z| > 1. Keys, A1 and N equal.
#     The same phenotype coded 0/1 gives the same bytes; a quantitative phenotype beside it
#     the same bytes as alone.
# (e) Case/control with LOCO on 3000 unrelated samples × 20,000 SNPs, 10 planted additive SNPs
#     on the liability scale: every planted SNP with a liability variance share of at least
#     0.04 reaches P < 5e-8, no null SNP does, and the null SNPs' λ_GC is within 1 ± 0.05
#     (about 4 of its sampling sd at 20,000 SNPs, 0.012; tighter than the ±0.1 the offset's
#     approximation could be allowed, since that costs power, not calibration).
# (f) Known relatives (--kinship, --grm-sparse): CHISQ changed by exactly the c computed here
#     from plink2 --make-king-table's pairs, no pair the same bytes, the other forms of the
#     same pairs the same bytes, unknown samples counted, bad files refused by file and line.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
assoc() { "$TG_BIN" assoc --quiet --ncpu 1 "$@" 2>assoc.err; }
# planted TRUTH TESTS: of simulate's TRUTH (.truth.tsv) and assoc's TESTS (.assoc.tsv), the
# strong planted SNPs (variance share >= 0.04) in strong.txt, the hits at P < 5e-8 in hits.txt;
# sets missed (strong, not hit), false (hit, not planted) and gc (the null SNPs' lambda_GC)
planted() {
    awk -F'\t' '$2 == "additive" && $4 * $4 >= 0.04 { print $3 }' "$1" | sort >strong.txt
    awk -F'\t' '$2 == "additive" { print $3 }' "$1" | sort >planted.txt
    awk -F'\t' 'NR > 1 && $12 > -log(5e-8) / log(10) { print $3 }' "$2" | sort >hits.txt
    missed=$(comm -23 strong.txt hits.txt | wc -l)
    false=$(comm -13 planted.txt hits.txt | wc -l)
    gc=$(awk -F'\t' 'NR == FNR { planted[$1] = 1; next } FNR > 1 && !($3 in planted) &&
            $11 != "NA" { print $11 }' planted.txt "$2" | sort -g |
        awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.4f", m / 0.4549364 }')
}

"$TG_BIN" simulate --quiet --out ds --trait qt --n-pheno 2 --n-samples 600 --n-snps 300 \
    --additive 5 --h2 0.5 --missing 0 --seed 7 2>/dev/null ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
# plink2 2.00a3 refuses a --pheno column named as the .fam's (PHENO1)
sed '1s/PHENO/Y/g' ds.pheno >y.pheno
awk 'BEGIN { srand(4) } NR == 1 { print "#FID\tIID\tAGE\tPC1"; next }
     { print $1 "\t" $2 "\t" int(20 + 50 * rand()) "\t" rand() - 0.5 }' ds.pheno >ds.cov

# ---- (a) plink2 --glm
assoc --bfile ds --pheno y.pheno --covar ds.cov --ignore-pred --out ig
rc=$?
plink2 --bfile ds --pheno y.pheno --covar ds.cov --glm omit-ref hide-covar --out pl \
    >pl.out 2>&1
report $((rc + $?)) "assoc --ignore-pred and plink2 --glm ran (exit $rc)" assoc.err
for y in Y1 Y2; do
    # ours: key, A1, N, BETA, CHISQ; plink2's: key, A1, OBS_CT, BETA, T_STAT
    paste <(cut -f1-6,8,9,11 ig.$y.assoc.tsv) <(cut -f1-6,8,9,11 pl.$y.glm.linear) |
        awk -F'\t' -v p=3 'NR == 1 { next }
        function abs(x) { return x < 0 ? -x : x }
        # half a unit of the 6th significant digit of x
        function ulp(x) {
            x = abs(x); return x ? 0.5 * 10 ^ (int(log(x) / log(10) + 100) - 105) : 1e-300 }
        { for (c = 1; c <= 7; c++) if ($c != $(c + 9)) key++
          n = $7; s = $9; t2 = (n - p - 1) * s / (n - p - s); t = ($8 < 0 ? -1 : 1) * sqrt(t2)
          et = abs(t - $18) / ulp($18); eb = abs($8 - $17) / ulp($17)
          if (et > wt) wt = et; if (eb > wb) wb = eb; rows++ }
        END { printf "%d %d %.3f %.3f\n", rows, key, wt, wb }' >cmp.txt
    read -r rows key wt wb <cmp.txt
    [ "$rows" -eq 300 ] && [ "$key" -eq 0 ] &&
        awk -v a="$wt" -v b="$wb" 'BEGIN { exit !(a <= 1.000001 && b <= 1.000001) }'
    report $? "$y: T from CHISQ by the closed form and BETA equal plink2's T_STAT and BETA on \
$rows SNPs, to $wt and $wb half-units of its 6th digit; keys, A1, N equal ($key differ)" cmp.txt
done

# ---- (b) planted SNPs and λ_GC with LOCO
"$TG_BIN" simulate --quiet --out big --trait qt --n-samples 3000 --n-snps 20000 --additive 10 \
    --h2 0.5 --seed 11 2>/dev/null
assoc --bfile big --pheno big.pheno --out lo
rc=$?
planted big.truth.tsv lo.PHENO1.assoc.tsv
[ $rc -eq 0 ] && [ "$(wc -l <strong.txt)" -ge 3 ] && [ "$missed" -eq 0 ]
report $? "LOCO: the $(wc -l <strong.txt) planted SNPs with a variance share >= 0.04 reach \
P < 5e-8 ($missed missed; $(wc -l <hits.txt) hits in all)" assoc.err
[ "$false" -eq 0 ]
report $? "LOCO: no null SNP reaches P < 5e-8 ($false do)"
awk -v g="$gc" 'BEGIN { exit !(g >= 0.95 && g <= 1.05) }'
report $? "LOCO: the null SNPs' lambda_GC $gc is within 1 +- 0.05"
grep -q "PHENO1: lambda_GC" lo.log && grep -q "PHENO1: 3000 samples, 1 fixed effect(s), h2 " lo.log
report $? "the log has h2, lambda and lambda_GC" lo.log
# (b2) the LOCO offset against plink2 --glm on the same data: for a null SNP of chromosome c, ours
# is the score of g̃ against r_c = M(y − LOCO_c), plink2's (to first order) against My; g̃ has
# independent entries, so over the null SNPs of c the two z-scores are bivariate normal with
# correlation cos(My, r_c) = rho_c, computed here from y and the .loco.tsv column of c. Their
# sample correlation over M_c SNPs has sd ≈ (1 − rho_c²)/√M_c; asked: within 5 sd on every
# chromosome. Without the offset (a correlation near 1) it would be √M_c/(1 + rho_c) ≈ 15 sd off
# here, although the offset is small (rho_c ≈ 0.99: a ridge on 3,000 samples predicts little).
sed '1s/PHENO1/Y/' big.pheno >by.pheno
plink2 --bfile big --pheno by.pheno --glm allow-no-covars omit-ref --out pb >pb.out 2>&1
rc=$?
res=$(awk -F'\t' '
    FILENAME == ARGV[1] { if (FNR > 1) for (k = split($3, s, ","); k; k--) planted[s[k]] = 1
                          next }
    FILENAME == ARGV[2] { if (FNR > 1) y[$1 " " $2] = $3; next }
    FILENAME == ARGV[3] { if (FNR == 1) { nc = NF - 2; next }
                          v = y[$1 " " $2]; n++; sy += v; syy += v * v
                          for (c = 1; c <= nc; c++) { r = v - $(c + 2); sr[c] += r
                              srr[c] += r * r; syr[c] += v * r }
                          next }
    FILENAME == ARGV[4] { if (FNR > 1) { id[FNR] = $3; chr[FNR] = $1
                          z[FNR] = ($9 < 0 ? -1 : 1) * sqrt($11) }
                          next }
    FNR > 1 && !($3 in planted) {
        if ($3 != id[FNR]) bad = 1
        c = chr[FNR]; a = z[FNR]; b = $11; m[c]++
        sa[c] += a; sb[c] += b; saa[c] += a * a; sbb[c] += b * b; sab[c] += a * b }
    function corr(k, x, y, xx, yy, xy) {
        return (xy - x * y / k) / sqrt((xx - x * x / k) * (yy - y * y / k)) }
    END {
        worst = 0; lo = 1; hi = 0
        for (c = 1; c <= nc; c++) {
            rho = corr(n, sy, sr[c], syy, srr[c], syr[c])
            got = corr(m[c], sa[c], sb[c], saa[c], sbb[c], sab[c])
            dev = (got - rho) / ((1 - rho * rho) / sqrt(m[c]))
            if (dev < 0) dev = -dev
            if (dev > worst) worst = dev
            if (rho < lo) lo = rho
            if (rho > hi) hi = rho }
        printf "%d %.2f %.3f %.3f\n", bad || nc != 22, worst, lo, hi }
    ' big.truth.tsv big.pheno lo.loco.tsv lo.PHENO1.assoc.tsv pb.Y.glm.linear)
read -r bad worst rlo rhi <<<"$res"
[ $rc -eq 0 ] && [ "$bad" = 0 ] && awk -v w="$worst" 'BEGIN { exit !(w < 5) }'
report $? "LOCO against plink2 --glm: over each chromosome's null SNPs, the z-scores correlate as \
cos(My, r_c) predicts (worst $worst sd; rho_c $rlo-$rhi)" pb.out
# --loco-refit on unrelated samples: the same calls, step 1 solved again per chromosome left out
# (1 phenotype x 5 folds x the .bim's chromosomes)
nchr=$(cut -f1 big.bim | sort -u | wc -l)
assoc --bfile big --pheno big.pheno --loco-refit --out lr
rc=$?
planted big.truth.tsv lr.PHENO1.assoc.tsv
[ $rc -eq 0 ] && [ "$missed" -eq 0 ] && [ "$false" -eq 0 ] &&
    awk -v g="$gc" 'BEGIN { exit !(g >= 0.95 && g <= 1.05) }' &&
    grep -q "then $((5 * nchr)) refitting LOCO without each chromosome" lr.log
report $? "--loco-refit: the planted SNPs found ($missed missed), no null one ($false), \
lambda_GC $gc; the log counts $((5 * nchr)) refit columns" assoc.err

# ---- (c) outputs and bad inputs
want=$(printf '#CHROM\tPOS\tID\tREF\tALT\tA1\tA1_FREQ\tN\tBETA\tSE\tCHISQ\tLOG10P\tP')
[ "$(head -1 lo.PHENO1.assoc.tsv)" = "$want" ] &&
    [ "$(wc -l <lo.PHENO1.assoc.tsv)" -eq 20001 ] &&
    [ "$(head -1 lo.loco.tsv | cut -f1-4)" = "$(printf 'FID\tIID\tPHENO1.1\tPHENO1.2')" ] &&
    [ "$(head -1 lo.loco.tsv | awk -F'\t' '{ print NF }')" -eq 24 ] &&
    [ "$(head -c 4 lo.PHENO1.manhattan.png | tail -c 3)" = PNG ] &&
    [ "$(head -c 4 lo.PHENO1.qq.png | tail -c 3)" = PNG ] && [ ! -e ig.loco.tsv ]
report $? "assoc.tsv keyed with BETA SE CHISQ LOG10P P, loco.tsv a column per chromosome (22), \
both PNGs; no loco.tsv with --ignore-pred"
assoc --bfile ds --pheno y.pheno --pheno-name Y2 --ignore-pred --zst --out z &&
    [ -e z.Y2.assoc.tsv.zst ] && [ ! -e z.Y1.assoc.tsv.zst ] &&
    [ "$(zstd -dc z.Y2.assoc.tsv.zst | wc -l)" -eq 301 ]
report $? "--pheno-name Y2 --zst: one file, compressed" assoc.err

# the outputs written on every core (the LOCO table in row blocks, the phenotypes' files and
# plots at once) equal those of a run on one CPU, where every loop runs serially
assoc --bfile ds --pheno y.pheno --covar ds.cov --out par &&
    taskset -c 0 "$TG_BIN" assoc --quiet --ncpu 1 --bfile ds --pheno y.pheno --covar ds.cov \
        --out one 2>>assoc.err
rc=$?
same=0
for f in loco.tsv Y1.assoc.tsv Y1.manhattan.png Y1.qq.png Y2.assoc.tsv Y2.manhattan.png \
    Y2.qq.png; do
    cmp -s "par.$f" "one.$f" && same=$((same + 1))
done
threads=$(sed -n "s/.*plots (.*; \([0-9]*\) thread(s))/\1/p" par.log)
[ $rc -eq 0 ] && [ $same -eq 7 ] && grep -q "; 1 thread(s))" one.log
report $? "the 7 outputs written on $threads thread(s) equal those of one thread ($same equal)" \
    assoc.err

# ---- (d) case/control against plink2 --glm logistic
"$TG_BIN" simulate --quiet --out cc --trait cc --n-samples 2000 --n-snps 2000 --additive 5 \
    --h2 0.5 --missing 0 --seed 3 2>/dev/null
awk 'BEGIN { srand(5) } NR == 1 { print "FID\tIID\tCC\tQT"; next }
     { print $1 "\t" $2 "\t" $3 "\t" rand() }' cc.pheno >cc2.pheno
awk 'BEGIN { srand(6) } NR == 1 { print "#FID\tIID\tAGE\tPC1"; next }
     { print $1 "\t" $2 "\t" int(20 + 50 * rand()) "\t" rand() - 0.5 }' cc.pheno >cc.cov
assoc --bfile cc --pheno cc2.pheno --covar cc.cov --ignore-pred --out bt
rc=$?
plink2 --bfile cc --pheno cc2.pheno --pheno-name CC --covar cc.cov \
    --glm omit-ref hide-covar no-firth --out plb >plb.out 2>&1
report $((rc + $?)) "case/control: assoc --ignore-pred and plink2 --glm logistic ran" assoc.err
# ours: key, A1, N, BETA, CHISQ; plink2's: key, A1, OBS_CT, Z_STAT
paste <(cut -f1-6,8,9,11 bt.CC.assoc.tsv) <(cut -f1-6,8,11 plb.CC.glm.logistic) |
    awk -F'\t' 'NR == 1 { next }
    function abs(x) { return x < 0 ? -x : x }
    { for (c = 1; c <= 7; c++) if ($c != $(c + 9)) key++
      z2 = $17 * $17; e = abs($9 - z2) / (0.25 * $8 * $8 * z2 + 0.001)
      if (e > we) we = e; if (abs($17) > 1 && $8 * $17 < 0) sign++; rows++ }
    END { printf "%d %d %d %.3f\n", rows, key, sign, we }' >cmpb.txt
read -r rows key sign we <cmpb.txt
[ "$rows" -eq 2000 ] && [ "$key" -eq 0 ] && [ "$sign" -eq 0 ] &&
    awk -v a="$we" 'BEGIN { exit !(a <= 1) }'
report $? "case/control: CHISQ within 0.25 BETA^2 Z^2 + 0.001 of plink2's Wald Z^2 on $rows \
SNPs (at $we of the bound), BETA's sign its Z's; keys, A1, N equal ($key differ)" cmpb.txt
awk 'NR == 1 { print "FID\tIID\tCC"; next } { print $1 "\t" $2 "\t" $3 - 1 }' cc.pheno >cc01.pheno
awk 'NR == 1 { print "FID\tIID\tQT"; next } { print $1 "\t" $2 "\t" $4 }' cc2.pheno >qt.pheno
assoc --bfile cc --pheno cc01.pheno --covar cc.cov --ignore-pred --out b01 &&
    assoc --bfile cc --pheno qt.pheno --covar cc.cov --ignore-pred --out bq &&
    cmp b01.CC.assoc.tsv bt.CC.assoc.tsv && cmp bq.QT.assoc.tsv bt.QT.assoc.tsv &&
    grep -q "CC: case/control (1 = control, 2 = case, 0 missing), logistic score test" bt.log &&
    grep -q "CC: case/control (0 = control, 1 = case), logistic score test" b01.log &&
    grep -q "CC: logistic score test: $(awk '$3 == 2' cc.pheno | wc -l) cases, \
$(awk '$3 == 1' cc.pheno | wc -l) controls" bt.log
report $? "case/control coded 0/1 and 1/2: the same tests; the quantitative phenotype beside \
it as alone; the log names the coding, cases and controls" assoc.err

# ---- (e) case/control: planted SNPs and λ_GC with LOCO
"$TG_BIN" simulate --quiet --out bigc --trait cc --n-samples 3000 --n-snps 20000 \
    --additive 10 --h2 0.5 --seed 11 2>/dev/null
assoc --bfile bigc --pheno bigc.pheno --out lc
rc=$?
planted bigc.truth.tsv lc.PHENO1.assoc.tsv
[ $rc -eq 0 ] && [ "$(wc -l <strong.txt)" -ge 3 ] && [ "$missed" -eq 0 ] && [ "$false" -eq 0 ]
report $? "case/control, LOCO: the $(wc -l <strong.txt) planted SNPs with a liability \
variance share >= 0.04 reach P < 5e-8 ($missed missed), no null SNP does ($false do)" assoc.err
awk -v g="$gc" 'BEGIN { exit !(g >= 0.95 && g <= 1.05) }'
report $? "case/control, LOCO: the null SNPs' lambda_GC $gc is within 1 +- 0.05"

# ---- (f) --kinship: known relatives from plink2 --make-king-table's .kin0. On ds (unrelated,
# 300 SNPs) KING's noise leaves pairs above the 0.025 cutoff: with --ignore-pred and no
# covariates the residual is y minus its mean, so c = 1 + 2 sum K r_i r_i' / r'r (K = 2
# KINSHIP) is computed here from the .kin0 and y.pheno, and every CHISQ must be CHISQ without
# --kinship over c; BETA unchanged.
plink2 --bfile ds --make-king-table --out kin >kin.out 2>&1
plink2 --bfile ds --make-king-table --king-table-filter 0.4 --out none >>kin.out 2>&1
report $? "plink2 --make-king-table wrote ds's .kin0" kin.out
assoc --bfile ds --pheno y.pheno --pheno-name Y1 --ignore-pred --out kb &&
    assoc --bfile ds --pheno y.pheno --pheno-name Y1 --ignore-pred --kinship kin.kin0 --out kq
rc=$?
awk 'NR == FNR { if (FNR > 1) { y[$2] = $3; s += $3; n++ } next }
     FNR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; next }
     $col["KINSHIP"] >= 0.025 { k[++np] = 2 * $col["KINSHIP"]; a[np] = $col["IID1"]
                                b[np] = $col["IID2"] }
     END { m = s / n; for (i in y) rr += (y[i] - m) ^ 2
           for (p = 1; p <= np; p++) kr += k[p] * (y[a[p]] - m) * (y[b[p]] - m)
           printf "%d %.17g\n", np, 1 + 2 * kr / rr }' y.pheno kin.kin0 >c.txt
read -r np c <c.txt
paste <(cut -f9,11 kb.Y1.assoc.tsv) <(cut -f9,11 kq.Y1.assoc.tsv) |
    awk -F'\t' -v c="$c" 'NR == 1 { next }
    function abs(x) { return x < 0 ? -x : x }
    { if ($1 != $3) beta++; e = abs($2 / $4 / c - 1); if (e > w) w = e; rows++ }
    END { printf "%d %d %.3g\n", rows, beta, w }' >ck.txt
read -r rows beta w <ck.txt
[ $rc -eq 0 ] && [ "$np" -gt 0 ] && [ "$rows" -eq 300 ] && [ "$beta" -eq 0 ] &&
    awk -v w="$w" 'BEGIN { exit !(w < 1e-12) }' &&
    grep -q "kin.kin0: $np pair(s) of relatives used" kq.log &&
    grep -q "Y1: relatives' variance factor c $(printf '%.4f' "$c") (chromosome 1)" kq.log
report $? "--kinship: $np pairs of KINSHIP >= 0.025 (as awk counts them) used; CHISQ times \
c = $c (from the .kin0 and the phenotype here) equals CHISQ without it on $rows SNPs \
(rel $w), BETA the same ($beta differ); c in the log" assoc.err
assoc --bfile ds --pheno y.pheno --pheno-name Y1 --ignore-pred --kinship none.kin0 --out k0 &&
    cmp k0.Y1.assoc.tsv kb.Y1.assoc.tsv && grep -q "none.kin0: 0 pair(s)" k0.log
report $? "--kinship with no pair above the cutoff (plink2 --king-table-filter 0.4): the same \
bytes as without it" assoc.err
# the same pairs without FIDs, compressed, one of them naming a sample not in the .fam
awk -F'\t' -v OFS='\t' 'NR == 1 { print "#IID1", "IID2", "NSNP", "KINSHIP"; next }
     { print $2, $4, $5, $8 } END { print "nobody", "I1", 300, 0.3 }' kin.kin0 |
    gzip >nofid.kin0.gz
assoc --bfile ds --pheno y.pheno --pheno-name Y1 --ignore-pred --kinship nofid.kin0.gz \
    --out kn && cmp kn.Y1.assoc.tsv kq.Y1.assoc.tsv &&
    grep -q "nofid.kin0.gz: $np pair(s) of relatives used.*; 1 pair(s) naming a sample not \
analysed skipped (the first, line $(($(wc -l <kin.kin0) + 1)): nobody)" kn.log
report $? "--kinship: the #IID1 IID2 form, gzipped, gives the same bytes; a pair naming an \
unknown IID skipped and counted in the log" assoc.err
# the same pairs as GCTA's sparse GRM: .grm.id in the reverse of the .fam's order and one
# sample more, .grm.sp with 2 KINSHIP, the diagonal, and a pair of the sample not in the .fam
tac ds.fam | awk '{ print $1 "\t" $2 } END { print "X\tnobody" }' >sp.grm.id
awk -F'\t' 'NR == FNR { row[$2] = FNR - 1; next } FNR == 1 { next }
     { printf "%d\t%d\t%.17g\n", row[$2], row[$4], 2 * $8 }
     END { print "0\t0\t1.01"; print row["I3"] "\t600\t0.5" }' sp.grm.id kin.kin0 >sp.grm.sp
assoc --bfile ds --pheno y.pheno --pheno-name Y1 --ignore-pred --grm-sparse sp --out ks &&
    cmp ks.Y1.assoc.tsv kq.Y1.assoc.tsv &&
    grep -q "sp.grm.sp: $np pair(s) of relatives used (relatedness the GRM's value).*; 1 \
pair(s) naming a sample not analysed skipped (the first, line $(wc -l <sp.grm.sp): row 600 of \
sp.grm.id)" ks.log
report $? "--grm-sparse: the same pairs as GCTA's sparse GRM (rows in another order, the \
diagonal ignored) give the same bytes as --kinship; a row not in the .fam skipped, counted" \
    assoc.err
printf '#FID1\tIID1\tFID2\tIID2\tKINSHIP\nF0\tI0\tF1\tI1\t0.25\nF2\tI2\tF3\tI3\t0.1\n' >dup.kin0
printf 'F1\tI1\tF0\tI0\t0.24\n' >>dup.kin0
sed 's/0\.1$/0.1x/' dup.kin0 | head -3 >badk.kin0
printf '#FID1\tIID1\tKINSHIP\nF0\tI0\t0.25\n' >nohead.kin0

bad() { expect_error "$1" "$2" "$TG_BIN" assoc --quiet --bfile ds --out e "${@:3}"; }
bad "--kinship: a pair listed twice" "dup.kin0 line 4: the pair 'F0 I0' and 'F1 I1' (FID IID) \
again, first on line 2" --pheno y.pheno --kinship dup.kin0
bad "--kinship: a KINSHIP that is not a number" "badk.kin0 line 3: KINSHIP '0.1x': expected a \
number" --pheno y.pheno --kinship badk.kin0
printf '0\t1\t0.5\n1\t601\t0.5\n' >badsp.grm.sp
cp sp.grm.id badsp.grm.id
bad "--grm-sparse: an index past .grm.id" "badsp.grm.sp line 2: expected 'i j value', i and j \
rows 0 to 600 of badsp.grm.id" --pheno y.pheno --grm-sparse badsp
bad "--loco-refit with --ignore-pred" "--loco-refit refits step 1, which --ignore-pred leaves \
out: give one of them" --pheno y.pheno --ignore-pred --loco-refit
bad "--kinship with --grm-sparse" "--kinship and --grm-sparse: give one of them" \
    --pheno y.pheno --kinship kin.kin0 --grm-sparse sp
bad "--kinship: no IID2 column" "nohead.kin0 line 1: expected a header naming the columns \
IID1, IID2 and KINSHIP" --pheno y.pheno --kinship nohead.kin0
awk 'NR == 1 { print "FID\tIID\tCC"; next } { print $1 "\t" $2 "\t" 2 * (NR % 2) }' ds.pheno \
    >c02.pheno
bad "a phenotype of 0 and 2 only" "phenotype CC takes the values 0 and 2 only" --pheno c02.pheno
# case status plus noise: separates cases (1 to 1.5) from controls (0 to 0.5), not collinear
awk 'BEGIN { srand(7) } NR == 1 { print "FID\tIID\tSEP"; next }
     { print $1 "\t" $2 "\t" $3 - 1 + rand() / 2 }' cc.pheno >sep.cov
expect_error "a covariate that separates cases from controls" \
    "phenotype CC: the null logistic model separates cases from controls" \
    "$TG_BIN" assoc --quiet --bfile cc --pheno cc01.pheno --covar sep.cov --ignore-pred --out e
awk 'NR == 1 { print "FID\tIID\tFLAT"; next } { print $1 "\t" $2 "\t3.5" }' ds.pheno >flat.pheno
bad "a phenotype without variance" "phenotype FLAT has no variance" --pheno flat.pheno
bad "--h2 out of range" "--h2 0.5,1.5" --h2 0.5,1.5
bad "--cv 1" "--cv" --pheno y.pheno --cv 1
head -4 ds.pheno >three.pheno
bad "3 samples for 3 fixed effects" "at least 5" --pheno three.pheno --covar ds.cov
head -9 ds.pheno >eight.pheno
bad "more folds than samples" "fold 9 of 10" --pheno eight.pheno --cv 10
tap_end
