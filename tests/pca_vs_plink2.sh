# tilegwas pca against plink2 --pca (an independent implementation; skipped without plink2 or
# python3) on planted population structure: three populations whose allele frequencies drift
# from shared ones (Balding-Nichols, F = 0.05), so PC1 and PC2 separate them and the rest is
# noise; 2% missing calls, a monomorphic SNP and SNPs on X (which plink2 --pca leaves out).
# Missing calls are mean-imputed, as plink2 --pca meanimpute and --pca approx do; plink2's
# default exact --pca divides each pair by the SNPs both samples have called instead (checked to
# differ, as the user guide says), and without missing calls the two are the same (checked).
# - exact mode (n ≤ 5000): every PC and eigenvalue equals plink2's to its 6 printed digits, up
#   to each PC's sign; the header and ID columns are plink2's byte for byte.
# - approx mode (--pca approx): the structured PCs correlate with plink2's exact ones at
#   |r| ≥ 0.9999, and every eigenvalue agrees to 1e-5 relative (a Ritz value whose residual is
#   r errs by about r² over the gap; the run stops at r ≤ 1e-6·λ₁). The noise PCs' vectors are
#   not compared: with gaps of ~1% between them, a 1e-6 residual moves them by ~1e-3.
#   plink2's own approx (k + 1 unorthogonalised blocks) is looser on the noise eigenvalues:
#   ours must be at least as close there. On few SNPs (K's rank below the basis) approx is
#   exact.
# - two MPI ranks give one rank's results in both modes (when the build has MPI).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ] || ! command -v python3 >/dev/null; then
    echo "1..0 # SKIP plink2 or python3 not found"
    exit 0
fi

# pops PREFIX N M SEED MISSING: the fileset described above (N samples in 3 populations, M
# SNPs, a rate MISSING of missing calls)
pops() {
    python3 - "$@" <<'EOF'
import random, sys
prefix, n, m, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
miss = float(sys.argv[5])
rng = random.Random(seed)
F = 0.05
pop = [i * 3 // n for i in range(n)]
with open(prefix + '.fam', 'w') as f:
    for i in range(n):
        f.write('P%d\tS%d\t0\t0\t0\t-9\n' % (pop[i], i))
code = {0: 3, 1: 2, 2: 0, None: 1}  # .bed: A1 count 2 -> 00, 1 -> 10, 0 -> 11, missing -> 01
with open(prefix + '.bim', 'w') as b, open(prefix + '.bed', 'wb') as bed:
    bed.write(bytes([0x6c, 0x1b, 0x01]))
    for j in range(m):
        chrom = 'X' if j >= m - 20 else '1' if j < m // 2 else '2'
        b.write('%s\tv%d\t0\t%d\tA\tC\n' % (chrom, j, j + 1))
        p = rng.uniform(0.1, 0.9)
        pp = [rng.betavariate(p * (1 - F) / F, (1 - p) * (1 - F) / F) for _ in range(3)]
        row = bytearray((n + 3) // 4)
        for i in range(n):
            if j == 5:
                g = 2  # monomorphic
            elif rng.random() < miss:
                g = None
            else:
                g = (rng.random() < pp[pop[i]]) + (rng.random() < pp[pop[i]])
            row[i // 4] |= code[g] << (2 * (i % 4))
        bed.write(bytes(row))
EOF
}

# same_pcs A.eigenvec B.eigenvec K: each of the K PC columns of A equals B's or its negation
# entry by entry to 6 significant digits (|a ∓ b| ≤ 1.5e-5·max|.| + 2e-9, since both are
# rounded), and the ID columns are the same
same_pcs() {
    paste "$1" "$2" | awk -v k="$3" -F'\t' '
        NR == 1 { next }
        { if ($1 != $(k + 3) || $2 != $(k + 4)) bad = 1
          for (j = 1; j <= k; j++) { a = $(j + 2); b = $(j + k + 4)
              dp = a - b; dm = a + b; if (dp < 0) dp = -dp; if (dm < 0) dm = -dm
              s = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? (a < 0 ? -a : a) : (b < 0 ? -b : b)
              t = 1.5e-5 * s + 2e-9
              if (dp > t) plus[j] = 1; if (dm > t) minus[j] = 1 } }
        END { for (j = 1; j <= k; j++) if (plus[j] && minus[j]) { bad = 1; print "PC" j }
              exit bad }'
}
# corr A.eigenvec B.eigenvec J: |Pearson r| of PC J in the two files
corr() {
    paste "$1" "$2" | awk -v j="$3" -F'\t' 'NR == 1 { k = (NF - 4) / 2; next }
        { a = $(j + 2); b = $(j + k + 4); n++; sa += a; sb += b; saa += a * a; sbb += b * b
          sab += a * b }
        END { c = (sab - sa * sb / n) / sqrt((saa - sa * sa / n) * (sbb - sb * sb / n))
              printf "%.6f\n", c < 0 ? -c : c }'
}
# eigdiff A.eigenval B.eigenval FIRST LAST: the largest relative difference of lines FIRST..LAST
eigdiff() {
    paste "$1" "$2" | awk -v f="$3" -v l="$4" 'NR >= f && NR <= l {
        d = ($1 - $2) / $2; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.3g\n", m }'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

pops s 600 1500 5 0.02 && pops full 300 800 6 0 ||
    { echo "Bail out! python3 could not write the filesets"; exit 1; }
p2() { "$PLINK2" --threads 2 "$@" >/dev/null 2>&1 || echo "# plink2 $* failed"; }
p2 --bfile s --pca 6 meanimpute --out p
p2 --bfile s --pca 6 --out pdef
p2 --bfile full --pca 4 --out pfull

"$TG_BIN" pca --quiet --bfile s --pca 6 --out t 2>t.err
report $? "pca --bfile s --pca 6 runs" t.err
cmp -s <(head -1 t.eigenvec) <(head -1 p.eigenvec)
report $? "header as plink2's: $(head -1 t.eigenvec)"
same_pcs t.eigenvec p.eigenvec 6 >t.diff
report $? "exact: the 6 PCs = plink2's to 6 digits, up to sign (FID, IID the same)" t.diff
[ "$(wc -l <t.eigenval)" -eq 6 ] && le "$(eigdiff t.eigenval p.eigenval 1 6)" 1e-5
report $? "exact: eigenvalues = plink2's to 6 digits ($(tr '\n' ' ' <t.eigenval))"
grep -q "20 variants not on chromosomes 1-22 left out" t.log && grep -q "^exact PCA" t.log &&
    grep -q "1 monomorphic" t.log
report $? "the log: X left out, exact mode, the monomorphic SNP" t.log
d=$(eigdiff pdef.eigenval p.eigenval 1 6)
! le "$d" 1e-3
report $? "missing calls: plink2's default --pca (pairwise) differs, as documented ($d)"
"$TG_BIN" pca --quiet --bfile full --pca 4 --out tfull 2>tfull.err && same_pcs tfull.eigenvec \
    pfull.eigenvec 4 >tfull.diff && le "$(eigdiff tfull.eigenval pfull.eigenval 1 4)" 1e-5
report $? "no missing calls: PCs and eigenvalues = plink2's default --pca" tfull.err tfull.diff

"$TG_BIN" pca --quiet --bfile s --pca 6 approx --out a 2>a.err
report $? "pca --pca 6 approx runs" a.err
p2 --bfile s --pca 6 approx --out pa
r1=$(corr a.eigenvec p.eigenvec 1) r2=$(corr a.eigenvec p.eigenvec 2)
e=$(eigdiff a.eigenval p.eigenval 1 6)
le 0.9999 "$r1" && le 0.9999 "$r2" && le "$e" 1e-5
report $? "approx: |r| with the exact PC1 $r1, PC2 $r2; eigenvalues within $e"
e6=$(eigdiff a.eigenval p.eigenval 3 6) pe6=$(eigdiff pa.eigenval p.eigenval 3 6)
le "$e6" "$pe6"
report $? "approx: noise eigenvalues 3-6 within $e6 of exact, plink2 --pca approx's within $pe6"
grep -q "^approximate PCA (--pca approx): block Krylov" a.log
report $? "the log names the approximation: $(grep -m1 '^approximate' a.log)" a.log

# few SNPs (19 polymorphic autosomal ones: K has rank 19 < the 26 columns of two blocks at
# --pca 3): the third block's columns that K·Y cannot fill are replaced by random ones, and the
# basis then spans K's range, so approx equals exact (and plink2) to the printed digits
pops few 150 40 8 0
"$TG_BIN" pca --quiet --bfile few --pca 3 approx --out fa 2>fa.err
rc=$?
p2 --bfile few --pca 3 meanimpute --out pfew
[ $rc -eq 0 ] && same_pcs fa.eigenvec pfew.eigenvec 3 >fa.diff &&
    le "$(eigdiff fa.eigenval pfew.eigenval 1 3)" 1e-5 && grep -q "^approximate PCA" fa.log
report $? "rank 19 < basis: approx = plink2 to 6 digits ($(grep -o '[0-9]* blocks of [0-9]*' \
    fa.log), residual $(grep -o 'top 3: [^ ]*' fa.log))" fa.err fa.diff

# two MPI ranks (with an MPI build and mpiexec): each rank holds its samples' rows; the files
# are one rank's to the printed digits, up to sign, and rank 0 alone writes them
if [ -n "${MPIEXEC:-}" ] && "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
    for mode in exact:t approx:a; do
        one=${mode#*:} mode=${mode%:*}
        ranked 2 m$mode pca --quiet --bfile ../../s --pca 6 $mode --ncpu 1 --out o
        rc=$?
        [ $rc -eq 0 ] && same_pcs m$mode/rank0/o.eigenvec $one.eigenvec 6 >m$mode.diff &&
            le "$(eigdiff m$mode/rank0/o.eigenval $one.eigenval 1 6)" 1e-5 &&
            [ -z "$(ls m$mode/rank1)" ]
        report $? "$mode on 2 ranks: one rank's PCs and eigenvalues, rank 1 wrote nothing" \
            m$mode/err.txt m$mode.diff
    done
fi

# a .psam without family IDs: plink2's header and lines start with IID
p2 --bfile s --make-pgen --out s2
cut -f2- s2.psam | sed '1s/^/#/' >s2.tmp && mv s2.tmp s2.psam
p2 --pfile s2 --pca 3 meanimpute --out p2
"$TG_BIN" pca --quiet --pfile s2 --pca 3 --out t2 2>t2.err
cmp -s <(head -1 t2.eigenvec) <(head -1 p2.eigenvec) && [ "$(head -1 t2.eigenvec)" = \
    "$(printf '#IID\tPC1\tPC2\tPC3')" ] && cmp -s <(cut -f1 t2.eigenvec) <(cut -f1 p2.eigenvec)
report $? ".psam without FID: header and IDs as plink2's ($(head -1 t2.eigenvec))" t2.err

# bad input: one error line naming what was expected, non-zero exit
for args in "--pca 0" "--pca 7 foo" "--pca 601" "--pca 2 --seed -1"; do
    # shellcheck disable=SC2086
    "$TG_BIN" pca --bfile s --out x $args >/dev/null 2>err.txt
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$(grep -c . err.txt)" -eq 1 ] &&
        grep -q "error: " err.txt && [ ! -e x.eigenvec ]
    report $? "pca $args: one error line, exit $rc: $(cat err.txt)"
done
awk -F'\t' -v OFS='\t' '{ $1 = "X" } 1' s.bim >sx.bim && cp s.bed sx.bed && cp s.fam sx.fam
"$TG_BIN" pca --quiet --bfile sx --out x >/dev/null 2>err.txt
[ $? -eq 2 ] && grep -q "none of the 1500 variants is on an autosome" err.txt
report $? "no autosomal variant: $(cat err.txt)"
tap_end
