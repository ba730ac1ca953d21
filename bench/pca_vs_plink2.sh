#!/usr/bin/env bash
# bench/pca_vs_plink2.sh PREFIX PAIRS [TILEGWAS_ARGS...]: tilegwas pca and plink2 --pca on the
# fileset PREFIX (.bed/.bim/.fam), run alternately PAIRS times with 2 threads each (plink2
# first in each pair), /usr/bin/time's wall and user+sys seconds per run; then how close the
# last tilegwas PCs are to plink2's (|Pearson r| per PC, largest relative eigenvalue
# difference). Extra arguments go to tilegwas pca (default: --pca 10, whose mode is chosen by
# the sample count). Run from a scratch folder; TG_BIN and PLINK2 name the binaries.
set -euo pipefail
prefix=$1 pairs=$2
shift 2
tg=${TG_BIN:-tilegwas} p2=${PLINK2:-plink2}
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--pca 10)
k=$(printf '%s\n' "${args[@]}" | grep -m1 -x '[0-9]*' || echo 10)
for i in $(seq "$pairs"); do
    /usr/bin/time -f "pair $i plink2 --pca $k: wall %e s, cpu %U+%S s" \
        "$p2" --bfile "$prefix" --pca "$k" --threads 2 --out bp >/dev/null
    /usr/bin/time -f "pair $i tilegwas pca ${args[*]}: wall %e s, cpu %U+%S s" \
        "$tg" pca --quiet --bfile "$prefix" "${args[@]}" --threads 2 --out bt >/dev/null
done 2>&1 | grep '^pair'
grep -m1 -E '^(exact|approximate) PCA' bt.log
for j in $(seq "$k"); do
    paste bt.eigenvec bp.eigenvec | awk -v j="$j" -v k="$k" -F'\t' 'NR > 1 {
        a = $(j + 2); b = $(j + k + 4); n++; sa += a; sb += b; saa += a * a; sbb += b * b
        sab += a * b }
        END { c = (sab - sa * sb / n) / sqrt((saa - sa * sa / n) * (sbb - sb * sb / n))
              printf "PC%d |r| %.6f\n", j, c < 0 ? -c : c }'
done | paste -sd' '
paste bt.eigenval bp.eigenval | awk '{ d = ($1 - $2) / $2; if (d < 0) d = -d; if (d > m) m = d }
    END { printf "eigenvalues: largest relative difference %.3g\n", m }'
