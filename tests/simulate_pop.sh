# tilegwas simulate --populations K --fst F (Balding-Nichols) read back by plink2, an
# independent reader (skipped without it):
# - FIDs pop1..popK, sample i in population i mod K + 1; the log states K and F.
# - F_ST estimated from plink2's per-population frequencies (--keep-fam popQ --freq) is F, for
#   the default F = 0.1 (K = 3) and for --fst 0.3 (K = 4); the planted epistatic SNPs stay at
#   frequency 0.5 in every population.
# - plink2 --pca 3: PC1 and PC2 separate the three populations (between-population share of each
#   PC's variance above 0.9), PC3 does not (below 0.05): K − 1 axes of structure, planted.
# - --populations 1 writes the files of a run without the flag, byte for byte.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi

sim() { "$TG_BIN" simulate --quiet "$@" >sim.out 2>&1; }

# freqs PREFIX K: PREFIX.popQ.afreq, plink2's frequencies in population Q = 1..K
freqs() {
    for q in $(seq "$2"); do
        echo "pop$q" >keep.txt
        "$PLINK2" --threads 2 --bfile "$1" --keep-fam keep.txt --freq --out "$1.pop$q" \
            >plink.out 2>&1 || return 1
    done
}

# fst SKIP FILES...: F_ST from K per-population .afreq files (the SNP ids in SKIP, comma-
# separated, left out). With p the ancestral frequency, the populations' p_q have mean p and
# variance F·p(1−p), and each estimate p̂_q = p_q + ε_q has E[ε²] = p_q(1−p_q)/(2N) from 2N
# alleles, E[p_q(1−p_q)] = p(1−p)(1−F). So the sample variance S² of the K estimates (÷ K−1)
# has E[S²] = c·p(1−p), c = F + (1−F)/(2N), and their mean m has E[m(1−m)] = p(1−p)(1 − c/K).
# Summed over SNPs, R = ΣS² / Σm(1−m) estimates c/(1 − c/K), so c = R/(1 + R/K) and
# F̂ = (c − 1/(2N))/(1 − 1/(2N)). Over seeds, for the two runs below: F = 0.1, K = 3,
# 3000 × 5000: mean 0.0998, sd 0.0015 (30 seeds); F = 0.3, K = 4, 800 × 2000: mean 0.3004, sd
# 0.0044 (100 seeds).
fst() {
    awk -v skip="$1" 'BEGIN { split(skip, s, ","); for (i in s) out[s[i]] = 1 }
        FNR == 1 { k++; next }
        !($2 in out) { p[FNR, k] = $5; alleles += $6; cells++; row[FNR] = 1 }
        END { for (r in row) {
                  m = 0; for (q = 1; q <= k; q++) m += p[r, q]; m /= k
                  v = 0; for (q = 1; q <= k; q++) v += (p[r, q] - m) ^ 2
                  num += v / (k - 1); den += m * (1 - m) }
              R = num / den; c = R / (1 + R / k); e = cells / alleles
              printf "%.4f\n", (c - e) / (1 - e) }' "${@:2}"
}

"$TG_BIN" simulate --help >help.txt 2>&1 && grep -q -- "--populations K" help.txt &&
    grep -q -- "--fst F" help.txt && grep -q "Balding-Nichols" help.txt &&
    grep -q "Epistatic SNPs keep frequency 0.5 in every population" help.txt
report $? "--help lists --populations and --fst, the model and the epistatic SNPs' frequency" \
    help.txt

sim --out p3 --n-samples 3000 --n-snps 5000 --populations 3 --epistasis 2:1 --seed 31
rc=$?
report $rc "simulate --populations 3 (3000 × 5000)" sim.out
awk '$1 != "pop" ((NR - 1) % 3 + 1) { bad++ } END { exit bad || NR != 3000 }' p3.fam
report $? "FIDs pop1, pop2, pop3, pop1, ...: sample i in population i mod 3 + 1" p3.fam
grep -q "^3 populations (Balding-Nichols, F_ST 0.1): FID pop1..pop3" p3.log
report $? "the log states K = 3 and the default F = 0.1" p3.log

epi=$(awk -F'\t' 'NR == 2 { print $3 }' p3.truth.tsv)
freqs p3 3
report $? "plink2 --keep-fam popQ --freq, Q = 1..3" plink.out
# 1000 samples per population: OBS_CT 2000 at every SNP
awk 'FNR > 1 && $6 != 2000 { bad++ } END { exit bad || NR != 3 * 5001 }' p3.pop?.afreq
report $? "each population has 1000 samples (OBS_CT 2000 at each of 5000 SNPs)"
f=$(fst "$epi" p3.pop?.afreq)
awk -v f="$f" 'BEGIN { exit !(f - 0.1 < 0.01 && 0.1 - f < 0.01) }'
report $? "F_ST from plink2's frequencies: $f, want 0.1 ± 0.01 (7 sd)"
# the planted pair at 0.5 in each population: sd √(0.25/2000) = 0.011, so within 0.06 (5 sd);
# a drifted SNP of p = 0.5 has sd √(0.1·0.25) = 0.16 and would stray
awk -v ids="$epi" 'BEGIN { split(ids, s, ","); for (i in s) want[s[i]] = 1 }
    FNR > 1 && ($2 in want) { seen++; d = $5 - 0.5; if (d > 0.06 || d < -0.06) bad++ }
    END { exit bad || seen != 6 }' p3.pop?.afreq
report $? "epistatic SNPs $epi at frequency 0.5 ± 0.06 in each population"

"$PLINK2" --threads 2 --bfile p3 --pca 3 --out pc >plink.out 2>&1
report $? "plink2 --pca 3" plink.out
# between-population share of each PC's variance: Σ_q n_q (mean_q − mean)² / Σ (x − mean)²
share=$(awk 'NR > 1 { for (c = 3; c <= NF; c++) { s[$1, c] += $c; t[c] += $c; tt[c] += $c ^ 2 }
                      n[$1]++; N++ }
    END { for (c = 3; c <= 5; c++) { b = -t[c] ^ 2 / N; for (g in n) b += s[g, c] ^ 2 / n[g]
                                     printf "%.4f ", b / (tt[c] - t[c] ^ 2 / N) } }' pc.eigenvec)
read -r s1 s2 s3 <<<"$share"
awk -v a="$s1" -v b="$s2" -v c="$s3" 'BEGIN { exit !(a > 0.9 && b > 0.9 && c < 0.05) }'
report $? "plink2's PC1, PC2 separate the populations, PC3 does not: between shares $share"

sim --out p4 --n-samples 800 --n-snps 2000 --populations 4 --fst 0.3 --maf-min 0.01 --seed 32 &&
    freqs p4 4
report $? "simulate --populations 4 --fst 0.3 (800 × 2000), plink2 --freq per population" \
    plink.out
f=$(fst "" p4.pop?.afreq)
awk -v f="$f" 'BEGIN { exit !(f - 0.3 < 0.02 && 0.3 - f < 0.02) }'
report $? "F_ST from plink2's frequencies: $f, want 0.3 ± 0.02 (4.5 sd)"
grep -q "^4 populations (Balding-Nichols, F_ST 0.3): FID pop1..pop4" p4.log
report $? "the log states K = 4 and F = 0.3" p4.log

opts="--n-samples 300 --n-snps 400 --additive 3 --epistasis 2:1 --missing 0.02 --seed 33"
# shellcheck disable=SC2086
sim --out k1 $opts --populations 1 && sim --out k0 $opts
rc=$?
for ext in bed bim fam pheno truth.tsv; do cmp "k1.$ext" "k0.$ext" >>cmp.out 2>&1 || rc=1; done
report $rc "--populations 1: .bed/.bim/.fam/.pheno/.truth.tsv identical to no flag" cmp.out

tap_end
