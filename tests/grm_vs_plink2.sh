# tilegwas grm against plink2's own outputs on the same filesets (plink2 is an independent
# implementation; skipped when it is not installed): every --make-rel layout (triangle, square,
# square0 × text, bin, bin4), GCTA's format (--make-grm-bin, and its pairs through
# --make-grm-list read back with tests/gcta_grm, a reader written from GCTA's description),
# the kinds (default standardised, cov, VanRaden from plink2's cov and its --freq), both
# divisors (pairwise, meanimpute), with and without missing calls (5%, and all-missing SNPs).
# What plink2 computes (PLINK v2.00a3.5, checked against a naive reference): Z_ik =
# (x_ik − 2p_k)/sqrt(2p_k(1−p_k)) (cov: not divided), p over the calls, a missing call 0;
# K_ij the sum over SNPs divided by the SNPs both samples called (meanimpute: by every SNP).
# Text holds 6 significant digits: ours must print the same digits (a different summation order
# may move one entry in a thousand by one unit of the 6th digit, on another BLAS: allowed).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi
GCTA_GRM="${TG_TESTS:?set TG_TESTS to the folder of the built test programs}/gcta_grm"

# maxdiff A B TYPE: the largest |a − b| over the entries (od type f8 or f4; "size" if the sizes
# differ or the files are empty)
maxdiff() {
    if [ "$(wc -c <"$1")" -ne "$(wc -c <"$2")" ] || [ ! -s "$1" ]; then echo size; return; fi
    local w=${3#f}
    paste <(od -An -v -t"$3" -w"$w" "$1") <(od -An -v -t"$3" -w"$w" "$2") |
        awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.3g\n", m + 0}'
}
# within D TOL: D is a number not above TOL
within() { awk -v d="$1" -v t="$2" 'BEGIN {exit !(d != "size" && d + 0 <= t + 0)}'; }
# same_text A B: the same lines and fields; every field printed alike, but at most one in a
# thousand differing by at most one unit of its 6th digit. Prints "fields F, differ D".
same_text() {
    paste "$1" "$2" | awk -F'\t' '
        { n = NF / 2; if (NF % 2 || (NR > 1 && n != prev_n && shape == "square")) bad = 1
          for (j = 1; j <= n; j++) { f++; a = $j; b = $(j + n); if (a == b) continue
            diff++; d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b
            if (d > 1.01e-5 * s) bad = 1 } }
        END { printf "fields %d, differ %d\n", f, diff; exit bad || diff > f / 1000 }' &&
        [ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ]
}

tg() { "$TG_BIN" grm --quiet "$@" 2>tg.err || sed 's/^/# /' tg.err; }
p2() {
    local in=$1 out=$2
    shift 2
    "$PLINK2" --bfile "$in" --out "$out" "$@" >/dev/null 2>&1 || echo "# plink2 $* failed"
}

"$TG_BIN" simulate --quiet --out full --n-samples 203 --n-snps 157 --seed 31 \
    --maf-min 0.005 2>/dev/null &&
    "$TG_BIN" simulate --quiet --out miss --n-samples 203 --n-snps 157 --missing 0.05 \
        --missing-snps 0.03:0.9 --seed 32 2>/dev/null ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
# SNP 4 of miss: every call missing (01 in each 2-bit .bed code; 51 bytes a SNP)
printf '\x55%.0s' $(seq 51) | dd of=miss.bed bs=1 seek=$((3 + 3 * 51)) conv=notrunc 2>/dev/null

# every layout and encoding of --make-rel, on both filesets, default kind and divisor
for d in full miss; do
    for fmt in triangle square square0; do
        tg --bfile $d --out t_${d}_$fmt --grm-format $fmt,text
        p2 $d p_${d}_$fmt --make-rel $fmt
        r=$(same_text t_${d}_$fmt.rel p_${d}_$fmt.rel)
        report $? "$d: --grm-format $fmt,text = plink2 --make-rel $fmt ($r)"
    done
    tg --bfile $d --out t_${d}_def
    p2 $d p_${d}_def --make-rel
    cmp -s t_${d}_def.rel p_${d}_def.rel && cmp -s t_${d}_def.rel.id p_${d}_def.rel.id
    report $? "$d: the default = plink2 --make-rel's default (triangle text), .rel.id too"
    for enc in bin bin4; do
        t=f8
        [ $enc = bin4 ] && t=f4
        for fmt in "" triangle square square0; do
            tg --bfile $d --out "t_$d$fmt$enc" --grm-format "${fmt:+$fmt,}$enc"
            p2 $d "p_$d$fmt$enc" --make-rel $fmt $enc
            m=$(maxdiff "t_$d$fmt$enc.rel.bin" "p_$d$fmt$enc.rel.bin" $t)
            within "$m" "$([ $enc = bin ] && echo 1e-12 || echo 1e-6)"
            report $? "$d: --grm-format ${fmt:+$fmt,}$enc = plink2 --make-rel ${fmt:+$fmt }$enc \
(max |diff| $m)"
        done
    done
done

# kinds and divisors, through float64 (the definitions, beyond the 6 printed digits)
for d in full miss; do
    tg --bfile $d --out t_cov --grm-format bin --cov
    p2 $d p_cov --make-rel cov bin
    m=$(maxdiff t_cov.rel.bin p_cov.rel.bin f8)
    within "$m" 1e-12
    report $? "$d: --cov = plink2 --make-rel cov (max |diff| $m)"
    tg --bfile $d --out t_mi --grm-format bin --meanimpute
    p2 $d p_mi --make-rel meanimpute bin
    m=$(maxdiff t_mi.rel.bin p_mi.rel.bin f8)
    within "$m" 1e-12
    report $? "$d: --meanimpute = plink2 --make-rel meanimpute (max |diff| $m)"
    tg --bfile $d --out t_cmi --grm-format bin --grm-kind centred --meanimpute
    p2 $d p_cmi --make-rel cov meanimpute bin
    m=$(maxdiff t_cmi.rel.bin p_cmi.rel.bin f8)
    within "$m" 1e-12
    report $? "$d: --grm-kind centred --meanimpute = plink2 cov meanimpute (max |diff| $m)"
    # VanRaden: plink2's cov meanimpute (Σ Z Z / m) times m / Σ 2p(1 − p), p from the allele
    # counts of its --freq counts (exact, where .afreq rounds)
    p2 $d p_frq --freq counts
    s=$(awk 'NR > 1 && $6 > 0 { p = $5 / $6; if (p > 0 && p < 1) s += 2 * p * (1 - p) }
        END { printf "%.17g", s }' p_frq.acount)
    m=$(wc -l <$d.bim)
    tg --bfile $d --out t_vr --grm-format bin --grm-kind vanraden
    od -An -v -tf8 -w8 p_cmi.rel.bin | awk -v m="$m" -v s="$s" \
        '{ printf "%.17g\n", $1 * m / s }' >vr_ref.txt
    m=$(paste <(od -An -v -tf8 -w8 t_vr.rel.bin) vr_ref.txt |
        awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > x) x = d } END { printf "%.3g", x + 0 }')
    [ "$(grep -c . vr_ref.txt)" -eq $((203 * 203)) ] && within "$m" 1e-12
    report $? "$d: --grm-kind vanraden = plink2 cov meanimpute × m / Σ2p(1-p) of its \
--freq (max |diff| $m)"
done

# GCTA's format: the files of plink2 --make-grm-bin, and read back by the reader
for d in full miss; do
    for mi in "" meanimpute; do
        tg --bfile $d --out t_g --grm-format gcta ${mi:+--$mi}
        p2 $d p_g --make-grm-bin $mi
        p2 $d p_l --make-grm-list $mi
        m=$(maxdiff t_g.grm.bin p_g.grm.bin f4)
        within "$m" 1e-6 && cmp -s t_g.grm.N.bin p_g.grm.N.bin && cmp -s t_g.grm.id p_g.grm.id
        report $? "$d${mi:+, $mi}: .grm.bin (max |diff| $m), .grm.N.bin and .grm.id = plink2 \
--make-grm-bin's"
        # the list holds "i j N value": N exact, the value to plink2's 6 digits (and float32)
        "$GCTA_GRM" t_g >t_list.txt 2>gcta.err
        r=$(paste t_list.txt p_l.grm | awk -F'\t' '
            NF != 8 || $1 != $5 || $2 != $6 || $3 != $7 { bad = 1 }
            { d = $4 - $8; if (d < 0) d = -d; s = $8 < 0 ? -$8 : $8
              if (d > 6e-6 * s + 1e-7) bad = 1 }
            END { printf "%d pairs", NR; exit bad || NR != 203 * 204 / 2 }')
        report $? "$d${mi:+, $mi}: ours read by the GCTA-format reader = plink2 --make-grm-list \
($r)" gcta.err
    done
done

# round trips between our own layouts: the triangle text, the square text's lower half, the
# square0 text's lower half, the GCTA file read back
tg --bfile miss --out rt_t --grm-format triangle
tg --bfile miss --out rt_s --grm-format square
tg --bfile miss --out rt_z --grm-format square0
awk -F'\t' '{ for (j = 1; j <= NR; j++) printf "%s%s", $j, j < NR ? "\t" : "\n" }' rt_s.rel \
    >rt_s.low
awk -F'\t' '{ for (j = NR + 1; j <= NF; j++) if ($j != "0") bad = 1
    for (j = 1; j <= NR; j++) printf "%s%s", $j, j < NR ? "\t" : "\n" } END { exit bad }' \
    rt_z.rel >rt_z.low && cmp -s rt_t.rel rt_s.low && cmp -s rt_t.rel rt_z.low
report $? "triangle = the lower half of square and of square0 (zeros above)"
awk -F'\t' '{ for (j = 1; j <= NF; j++) v[NR, j] = $j; n = NF }
    END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[i, j] != v[j, i]) bad = 1
          exit bad || NR != n }' rt_s.rel
report $? "square text: symmetric, n rows of n fields"
tg --bfile miss --out rt_g --grm-format gcta
"$GCTA_GRM" rt_g | awk -F'\t' '{ row[$1] = row[$1] (row[$1] == "" ? "" : "\t") $4 }
    END { for (i = 1; i in row; i++) print row[i] }' >rt_g.txt
r=$(paste rt_g.txt rt_t.rel | awk -F'\t' '{ n = NF / 2; for (j = 1; j <= n; j++) {
        d = $j - $(j + n); if (d < 0) d = -d; s = $(j + n) < 0 ? -$(j + n) : $(j + n)
        if (d > 6e-6 * s + 1e-7 || NF % 2) bad = 1 } } END { printf "%d rows", NR; exit bad }')
report $? "GCTA file read back = the triangle text, to float32 and 6 digits ($r)"

# bad input: one error line naming the option, non-zero exit, nothing written
for args in "--out x" "--bfile nothere --out x" "--bfile full --out x --bogus" \
    "--bfile full --out x --grm-format triangle,square" "--bfile full --out x --grm-format hex" \
    "--bfile full --out x --grm-format gcta,square" "--bfile full --out x --grm-kind additive" \
    "--bfile full --out x --cov --grm-kind vanraden" \
    "--bfile full --out x --bin --grm-format bin4"; do
    rm -f x.rel x.rel.bin x.grm.bin
    # shellcheck disable=SC2086
    "$TG_BIN" grm $args >/dev/null 2>err.txt
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$(grep -c . err.txt)" -eq 1 ] &&
        grep -q "error: " err.txt && [ ! -e x.rel ] && [ ! -e x.rel.bin ] && [ ! -e x.grm.bin ]
    report $? "grm $args: one error line, exit $rc: $(cat err.txt)"
done

tap_end
