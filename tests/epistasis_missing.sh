# K2 on incomplete data (issue 21): a combination over fewer samples must not score better for
# that alone. Cohorts from tilegwas simulate with --missing-snps (a few null SNPs with many
# missing calls). Checked against awk's own K2 of the reported tables (ln Γ by Stirling's
# series): the K2_LNBF column equals K2(class margins) − K2(table) over the same samples; on
# null data it does not follow N (|corr| < 0.1) while the plain K2 of the same tables does;
# a planted pair (order 2) and triple (order 3) rank first although the plain K2 ranks a
# combination of high-missingness SNPs first. EPI_ARGS adds options to every search
# (tests/device/epistasis.sh runs it with --ncpu 0: GPU rounds only).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
read -r -a extra <<<"${EPI_ARGS:-}"

# k2cols FILE K: per row, N, the reported K2_LNBF, awk's ln BF and awk's plain K2 (Σ over cells
# of ln Γ(r + 2) − ln Γ(r0 + 1) − ln Γ(r1 + 1); lower is better), and the SNPs
k2cols() {
    awk -F'\t' -v k="$2" '
    function lg(x,  s) { s = 0; while (x < 8) { s -= log(x); x++ }
        return s + (x - 0.5) * log(x) - x + 0.91893853320467274 + 1 / (12 * x) - 1 / (360 * x^3) + 1 / (1260 * x^5) }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { nc = split($(col["CONTROLS"]), c, ","); split($(col["CASES"]), a, ",")
      k2 = 0; r0 = 0; r1 = 0
      for (g = 1; g <= nc; g++) { k2 += lg(c[g] + a[g] + 2) - lg(c[g] + 1) - lg(a[g] + 1); r0 += c[g]; r1 += a[g] }
      s = $2; for (i = 3; i <= k + 1; i++) s = s "," $i
      printf "%d\t%.12g\t%.12g\t%.12g\t%s\n", $(col["N"]), $(col["K2_LNBF"]), lg(r0 + r1 + 2) - lg(r0 + 1) - lg(r1 + 1) - k2, k2, s }' "$1"
}
# corr FILE X Y: Pearson correlation of columns X and Y
corr() {
    awk -F'\t' -v x="$2" -v y="$3" '{ n++; sx += $x; sy += $y; sxx += $x * $x; syy += $y * $y; sxy += $x * $y }
        END { printf "%.3f", (sxy - sx * sy / n) / sqrt((sxx - sx * sx / n) * (syy - sy * sy / n)) }' "$1"
}
truth() { awk -F'\t' 'NR == 2 { print $3 }' "$1.truth.tsv"; }

# null: 20 cohorts of 45 SNPs, 1% missing calls, 9 SNPs of each at 4%; all C(45, 2) = 990 pairs
# of each reported. Pairs share SNPs, so one cohort's correlation varies by about 0.14 from SNP
# to SNP chance alone; over 20 cohorts (each centred on its own means) by about 0.03.
for c in $(seq 1 20); do
    "$TG_BIN" simulate --quiet --out null"$c" --n-samples 2000 --n-snps 45 --missing 0.01 \
        --missing-snps 0.2:0.04 --seed $((100 + c)) >/dev/null 2>&1 ||
        { echo "Bail out! simulate failed"; exit 1; }
    "$TG_BIN" epistasis --bfile null"$c" --order 2 --top 990 --quiet --out null"$c" "${extra[@]}" \
        >/dev/null 2>>err.txt
    k2cols null"$c".epi2.tsv 2 >null"$c".cols 2>>err.txt
    # deviations from the cohort's means: N, K2_LNBF, plain K2
    awk -F'\t' 'NR == FNR { n++; for (i = 1; i <= 4; i++) m[i] += $i; next }
        { printf "%.12g\t%.12g\t%.12g\t%.12g\n", $1 - m[1] / n, $2 - m[2] / n, $3, $4 - m[4] / n }' \
        null"$c".cols null"$c".cols >>null.dev
    cat null"$c".cols >>null.cols
done
awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-6) bad++ } END { exit !(NR == 19800 && !bad) }' null.cols
report $? "null, order 2: 20 × 990 rows, K2_LNBF = K2(margins) - K2(table) of the row's own table" err.txt
c=$(corr null.dev 1 2) raw=$(corr null.dev 1 4)
awk -v c="$c" -v r="$raw" 'BEGIN { exit !(c < 0.1 && c > -0.1 && r > 0.5) }'
report $? "null, order 2: corr(K2_LNBF, N) = $c within 0.1; the plain K2 of the same tables follows N ($raw)"

# a planted pair among 45 SNPs with 1.5% missing calls, 3 null SNPs at 6%
"$TG_BIN" simulate --quiet --out pair --n-samples 2000 --n-snps 45 --epistasis 2:1 \
    --epi-effect 0.1 --missing 0.015 --missing-snps 0.07:0.06 --seed 4 >/dev/null 2>&1 ||
    { echo "Bail out! simulate failed"; exit 1; }
"$TG_BIN" epistasis --bfile pair --order 2 --top 990 --quiet --out pair "${extra[@]}" >/dev/null 2>err.txt
k2cols pair.epi2.tsv 2 >pair.cols 2>>err.txt
got=$(awk -F'\t' 'NR == 1 { print $5 }' pair.cols) plain=$(sort -t$'\t' -k4,4g pair.cols | awk -F'\t' 'NR == 1 { print $5 " (N " $1 ")" }')
[ "$got" = "$(truth pair)" ] && [ "${plain% *}" != "$(truth pair)" ]
report $? "order 2: planted pair $(truth pair) ranked first (got '$got'; the plain K2 ranks $plain first)" err.txt

# a planted triple among 40 SNPs, 3 null SNPs at 6% missing calls
"$TG_BIN" simulate --quiet --out triple --n-samples 3000 --n-snps 40 --epistasis 3:1 \
    --epi-effect 0.12 --missing 0.015 --missing-snps 0.08:0.06 --seed 2 >/dev/null 2>&1 ||
    { echo "Bail out! simulate failed"; exit 1; }
"$TG_BIN" epistasis --bfile triple --order 3 --top 20 --quiet --out triple "${extra[@]}" >/dev/null 2>err.txt
got=$(k2cols triple.epi3.tsv 3 2>>err.txt | awk -F'\t' 'NR == 1 { print $5 }')
[ "$got" = "$(truth triple)" ]
report $? "order 3: planted triple $(truth triple) ranked first (got '$got')" err.txt
tap_end
