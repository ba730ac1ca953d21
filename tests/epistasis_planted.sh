# Planted interactions from tilegwas simulate (pure epistasis: no effect of any proper subset of
# the set) must come first in tilegwas epistasis: a pair among 60 SNPs with 3% missing calls,
# under every score, and a quad among 24 SNPs (order 4, complete data). EPI_ARGS adds options
# to every search (tests/device/epistasis.sh runs it with --ncpu 0: GPU rounds only).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
read -r -a extra <<<"${EPI_ARGS:-}"


# first_hit FILE K: the SNPs of rank 1, comma-separated
first_hit() { awk -F'\t' -v k="$2" 'NR == 2 { s = $2; for (i = 3; i <= k + 1; i++) s = s "," $i; print s }' "$1"; }
truth() { awk -F'\t' 'NR == 2 { print $3 }' "$1.truth.tsv"; }

"$TG_BIN" simulate --quiet --out pair --n-samples 2000 --n-snps 60 --epistasis 2:1 \
    --epi-effect 0.25 --missing 0.03 --seed 9 >/dev/null 2>&1 || { echo "Bail out! simulate failed"; exit 1; }
for score in k2 mi chi2; do
    "$TG_BIN" epistasis --bfile pair --order 2 --top 5 --score "$score" --block 16 --quiet \
        --out "pair-$score" "${extra[@]}" >/dev/null 2>err.txt
    got=$(first_hit "pair-$score.epi2.tsv" 2 2>/dev/null)
    [ -n "$got" ] && [ "$got" = "$(truth pair)" ]
    report $? "order 2, $score, 3% missing: planted pair $(truth pair) ranked first (got '$got')" err.txt
done

"$TG_BIN" simulate --quiet --out quad --n-samples 3000 --n-snps 24 --epistasis 4:1 \
    --epi-effect 0.3 --seed 5 >/dev/null 2>&1 || { echo "Bail out! simulate failed"; exit 1; }
"$TG_BIN" epistasis --bfile quad --order 4 --top 3 --quiet --out quad "${extra[@]}" >/dev/null 2>err.txt
got=$(first_hit quad.epi4.tsv 4 2>/dev/null)
[ -n "$got" ] && [ "$got" = "$(truth quad)" ]
report $? "order 4, k2: planted quad $(truth quad) ranked first among C(24,4) = 10626 (got '$got')" err.txt
awk -F'\t' 'NR == 2 { exit !(split($24, c, ",") == 81 && split($25, a, ",") == 81) }' quad.epi4.tsv 2>/dev/null
report $? "order 4 rows carry 81 control and 81 case counts" err.txt
tap_end
