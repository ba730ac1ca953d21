# tilegwas grm against plink2 --make-rel on the same filesets (plink2 is an independent
# implementation; skipped when it is not installed).
# What plink2 computes, found by trying it (PLINK v2.00a3.5) against a naive reference:
# - --make-rel: Z_ik = (x_ik − 2p_k)/sqrt(2p_k(1−p_k)), p over non-missing calls; K_ij is the
#   sum over SNPs called in both i and j, divided by the number of such SNPs.
# - --make-rel meanimpute: missing calls imputed by the mean (0 after centering), divided by m,
#   every SNP counted (monomorphic and all-missing ones too). This is what tilegwas computes.
# - 'cov': the same without the division by sqrt(2p(1−p)) (tilegwas grm --cov).
# The three agree without missing calls; with missing calls only meanimpute matches, and the
# default differs (checked below, so the user guide's statement stays true).
# Text .rel holds 6 significant digits, so values are compared through 'square bin' (float64).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi

# maxdiff A.rel.bin B.rel.bin: the largest |a − b| over the float64 entries ("size" if the
# sizes differ)
maxdiff() {
    if [ "$(wc -c <"$1")" -ne "$(wc -c <"$2")" ] || [ ! -s "$1" ]; then echo size; return; fi
    paste <(od -An -v -tf8 -w8 "$1") <(od -An -v -tf8 -w8 "$2") |
        awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.3g\n", m + 0}'
}
# within D TOL: D is a number not above TOL
within() { awk -v d="$1" -v t="$2" 'BEGIN {exit !(d != "size" && d + 0 <= t + 0)}'; }

tg() { "$TG_BIN" grm --quiet "$@" 2>tg.err || sed 's/^/# /' tg.err; }
p2() {
    "$PLINK2" --bfile "$1" --out "$2" --make-rel "${@:3}" >/dev/null 2>&1 || echo "# plink2 failed"
}

"$TG_BIN" simulate --quiet --out full --n-samples 203 --n-snps 157 --seed 31 2>/dev/null &&
    "$TG_BIN" simulate --quiet --out miss --n-samples 203 --n-snps 157 --missing 0.05 --seed 32 \
        2>/dev/null || { echo "Bail out! tilegwas simulate failed"; exit 1; }

tg --bfile full --out t_full --bin
p2 full p_full square bin
d=$(maxdiff t_full.rel.bin p_full.rel.bin)
within "$d" 1e-6
report $? "no missing calls: grm = plink2 --make-rel square bin (max |diff| $d)"
cmp -s t_full.rel.id p_full.rel.id
report $? "no missing calls: .rel.id identical to plink2's"

tg --bfile full --out t_text
p2 full p_text square
# plink2 prints 6 significant digits: |ours − plink2| ≤ 5e-6·|plink2| + 1e-12 entry by entry,
# and the same number of rows and columns
paste t_text.rel p_text.rel | awk -v n=203 '
    NF != 2 * n { bad = 1 }
    { for (j = 1; j <= n; j++) { a = $j; b = $(j + n); d = a - b; if (d < 0) d = -d
        s = b < 0 ? -b : b; if (d > 5e-6 * s + 1e-12) bad = 1 } }
    END { exit bad || NR != n }'
report $? "no missing calls: text .rel = plink2 --make-rel square to its 6 digits, same layout"

tg --bfile full --out t_cov --bin --cov
p2 full p_cov cov square bin
d=$(maxdiff t_cov.rel.bin p_cov.rel.bin)
within "$d" 1e-6
report $? "--cov = plink2 --make-rel cov square bin (max |diff| $d)"

tg --bfile miss --out t_miss --bin
p2 miss p_mi meanimpute square bin
p2 miss p_def square bin
d=$(maxdiff t_miss.rel.bin p_mi.rel.bin)
within "$d" 1e-6
report $? "5% missing calls: grm = plink2 --make-rel meanimpute square bin (max |diff| $d)"
d=$(maxdiff t_miss.rel.bin p_def.rel.bin)
! within "$d" 1e-3
report $? "5% missing calls: plink2's default (pairwise) differs, as documented (max |diff| $d)"

# bad input: one error line, non-zero exit
for args in "--out x" "--bfile nothere --out x" "--bfile full --out x --bogus"; do
    # shellcheck disable=SC2086
    "$TG_BIN" grm $args >/dev/null 2>err.txt
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$(grep -c . err.txt)" -eq 1 ] &&
        grep -q "error: " err.txt
    report $? "grm $args: one error line, exit $rc: $(cat err.txt)"
done

tap_end
