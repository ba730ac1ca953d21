# tilegwas snpmm, rr --solver cg and grm under MPICH's mpiexec: on 2 and 4 ranks (each rank
# holding only its own samples' genotypes) the outputs equal those of a run without mpiexec:
# products (Z·L and Zᵀ·L, centered and --scale, 5% missing calls, 2,503 samples: blocks of
# 1,024 and a partial one on 1 and 2 ranks) within 1e-12 relative (FP32: 1e-4), rr --solver cg
# β and predictions within 1e-8 with --tol 1e-10 and the same iteration counts within 1
# (phenotypes with missing values, --test-bfile), the GRM byte for byte. Rank 0 alone writes
# and logs; every rank runs in its own folder. Then the library level: tests/test_geno_ranks on
# 2 and 4 ranks with one TG_SEED (small blocks, the products, Jacobi, CG, fitted values and the
# GRM against dense references, results with the same bits on every rank). snpmm Z'*L and
# rr --solver cg on 2 ranks log the bytes each rank passed to MPI sums, equal to their closed
# form. Skipped when
# tilegwas is built without MPI or no mpiexec was found.
# the comparisons (products, ridge, grm) are called through same_as_one:
# shellcheck disable=SC2317
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
skip_without_mpi

sim() {
    "$TG_BIN" simulate --quiet "$@" >/dev/null 2>&1 || { echo "Bail out! simulate $*"; exit 1; }
}
sim --out d --n-samples 2503 --n-snps 310 --seed 4 --missing 0.05 --trait qt --n-pheno 2 \
    --additive 3
sim --out g --n-samples 301 --n-snps 200 --seed 6 --missing 0.05
# a test cohort on the same SNPs (the .bim only names them); PHENO2 missing for every 7th sample
sim --out t --n-samples 203 --n-snps 310 --seed 8 --missing 0.05
cp d.bim t.bim
awk 'NR > 1 && NR % 7 == 0 { $4 = "NA" } { print }' OFS='\t' d.pheno >d2.pheno
awk 'BEGIN { srand(3); print "SNP A B C" } { print $2, rand() - 0.5, 2 * rand(), NR % 7 - 3 }' \
    d.bim >l.txt
awk 'BEGIN { srand(5); print "FID IID A B" } { print $1, $2, rand() - 0.5, 3 * rand() }' \
    d.fam >lt.txt

# files DIR: the files the ranks wrote, space-separated
files() { (cd "$1" && find rank* -type f | sort | tr '\n' ' '); }

# same_as_one DESC WANT COMPARE ARGS...: ARGS on 0 (without mpiexec), 2 and 4 ranks; each run
# on ranks writes WANT (the files of rank 0, space-separated) and nothing else, its log names
# the ranks and the split, stderr has one rank's lines and no error, and `COMPARE base other`
# (a shell function, printing what it found) succeeds on its outputs.
same_as_one() {
    local desc=$1 want=$2 compare=$3 nr d got
    shift 3
    ranked 0 base "$@" --ncpu 1 --out o
    report $? "$desc without mpiexec runs" base/err.txt
    for nr in 2 4; do
        d=n$nr
        ranked "$nr" "$d" "$@" --ncpu 1 --out o
        report $? "$desc on $nr ranks runs" "$d/err.txt"
        got=$("$compare" base/rank0 "$d/rank0")
        report $? "$desc on $nr ranks equals one rank: $got"
        [ "$(files "$d")" = "$want" ] && grep -q "^runtime: .*, $nr ranks," "$d/rank0/o.log" &&
            grep -q "^$nr MPI ranks: each holds the genotypes" "$d/rank0/o.log" &&
            [ "$(grep -c '^wrote ' "$d/err.txt")" -eq 1 ] && ! grep -q "error" "$d/err.txt"
        report $? "$desc on $nr ranks: rank 0 alone wrote and logged ($(files "$d"))" "$d/err.txt"
        rm -rf "$d"
    done
    rm -rf base
}

products() { agree "$1/o.snpmm.tsv" "$2/o.snpmm.tsv" 1e-12; }
# FP32: each rank sums its samples, then the ranks are summed: within the error bound of one
# rank, (n + 10)·2^-24 relative to the terms (1.5e-4 here)
products_fp32() { agree "$1/o.snpmm.tsv" "$2/o.snpmm.tsv" 1e-4; }
mm="rank0/o.log rank0/o.snpmm.tsv "
same_as_one "snpmm Z*L" "$mm" products snpmm --bfile ../../d --matrix ../../l.txt
same_as_one "snpmm Z*L --scale" "$mm" products snpmm --bfile ../../d --matrix ../../l.txt --scale
same_as_one "snpmm Z'*L" "$mm" products snpmm --bfile ../../d --matrix ../../lt.txt --transpose
same_as_one "snpmm Z'*L --scale" "$mm" products \
    snpmm --bfile ../../d --matrix ../../lt.txt --transpose --scale
same_as_one "snpmm Z'*L --float" "$mm" products_fp32 \
    snpmm --bfile ../../d --matrix ../../lt.txt --transpose --float
# snpmm Z'*L on 2 ranks logs one sum over the ranks, of the m × 2 output (8 bytes a value, 4
# with --float), and no StarPU-MPI bytes line (nothing goes through it)
for f in fp64:8 fp32:4; do
    es=${f#*:} f=${f%:*}
    flag=$([ "$f" = fp32 ] && echo --float)
    # shellcheck disable=SC2086
    ranked 2 sums snpmm --bfile ../../d --matrix ../../lt.txt --transpose $flag --ncpu 1 --out o
    rc=$?
    want="$(($(wc -l <d.bim) * 2 * es)) per rank"
    line=$(grep '^bytes summed over the ranks' sums/rank0/o.log)
    [ $rc -eq 0 ] && case $line in *": $want "*" in 1 sum") true ;; *) false ;; esac &&
        ! grep -q '^bytes sent between ranks' sums/rank0/o.log
    report $? "snpmm Z'*L $f on 2 ranks (exit $rc) logs the bytes summed: $line (want $want)" \
        sums/rank0/o.log
    rm -rf sums
done

# β and predictions within 1e-8, the same convergence, iterations within 1
ridge() {
    local b p
    b=$(agree "$1/o.beta.tsv" "$2/o.beta.tsv" 1e-8) &&
        p=$(agree "$1/o.pred.tsv" "$2/o.pred.tsv" 1e-8) &&
        paste "$1/o.cg.tsv" "$2/o.cg.tsv" | awk -F'\t' 'NR > 1 { d = $4 - $11
            if (d > 1 || d < -1 || $5 != 1 || $12 != 1 || $2 != $9) bad = 1 } END { exit bad }'
    local rc=$?
    echo "beta $b, predictions $p, iterations $(cut -f4 "$2/o.cg.tsv" | tail -n +2 | tr '\n' ' ')"
    return "$rc"
}
rr="rank0/o.beta.tsv rank0/o.cg.tsv rank0/o.log rank0/o.pred.tsv "
same_as_one "rr --solver cg --scale" "$rr" ridge \
    rr --bfile ../../d --pheno ../../d2.pheno --lambda 300 --scale --tol 1e-10
same_as_one "rr --solver cg --test-bfile" "$rr" ridge \
    rr --bfile ../../d --pheno ../../d2.pheno --lambda 300 --tol 1e-10 --test-bfile ../../t

# one rank computes the GRM from FP64 tiles, several ranks by products: within 1e-12
grm() {
    cmp -s "$1/o.rel.id" "$2/o.rel.id" &&
        [ "$(wc -c <"$1/o.rel.bin")" -eq "$(wc -c <"$2/o.rel.bin")" ] &&
        paste <(od -An -v -tf8 -w8 "$1/o.rel.bin") <(od -An -v -tf8 -w8 "$2/o.rel.bin") |
        awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d }
            END { printf "max |diff| %.3g\n", m; exit !(NR > 0 && m <= 1e-12) }'
}
rel="rank0/o.log rank0/o.rel.bin rank0/o.rel.id "
same_as_one "grm --bin --meanimpute" "$rel" grm grm --bfile ../../g --bin --meanimpute
same_as_one "grm --cov --bin --meanimpute" "$rel" grm grm --bfile ../../g --cov --bin --meanimpute
# without --meanimpute (plink2's pairwise divisor), several ranks refuse, saying what to add
ranked 2 pw grm --bfile ../../g --ncpu 1 --out o
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q "error: .*--meanimpute only" pw/err.txt
report $? "grm on 2 ranks without --meanimpute refused (exit $rc): $(grep -m1 error: pw/err.txt)" \
    pw/err.txt

# CG not converging: every rank stops at the same iteration; rank 0 writes the flagged results
# and says it once, every rank exits 1 without MPI_Abort
ranked 2 nc rr --bfile ../../d --pheno ../../d2.pheno --lambda 300 --max-iter 3 --ncpu 1 --out o
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'error' nc/err.txt)" -eq 1 ] &&
    grep -q "^tilegwas rr: error: PHENO1 did not reach relative residual" nc/err.txt &&
    [ "$(files nc)" = "$rr" ] &&
    [ "$(awk -F'\t' 'NR > 1 && $5 == 0' nc/rank0/o.cg.tsv | wc -l)" -eq 2 ]
report $? "rr --max-iter 3 on 2 ranks: exit $rc, one line: $(grep -m1 error nc/err.txt)" \
    nc/err.txt

# cg_sums DIR: rank 0's log in DIR (rr --solver cg on d.bim's m SNPs, k phenotypes, without
# --test-bfile) has the bytes each rank passed to MPI sums, exactly: the allele counts (2m
# int64), the Jacobi counts (3mk int64), Z'ỹ (mk doubles); per iteration the column sums of
# the centering and Z'Q of the active phenotypes, m + 1 doubles each (phenotype c is active in
# its iterations, column 4 of o.cg.tsv); the recomputed residuals (m + 1 per phenotype that
# iterated) and the predictions' intercepts (k doubles). One sum each, two per iteration.
# Prints the line and the expected counts.
cg_sums() {
    local line got want
    line=$(grep '^bytes summed over the ranks (MPI reductions): ' "$1/rank0/o.log")
    got=$(echo "$line" | sed -n 's/.*: \([0-9]*\) per rank .* in \([0-9]*\) sums$/\1 \2/p')
    want=$(awk -F'\t' -v m="$(wc -l <d.bim)" '
        NR > 1 { k++; s += $4; p += $4 > 0; if ($4 > it) it = $4 }
        END { print 16 * m + 32 * m * k + 8 * (m + 1) * (s + p) + 8 * k, 4 + 2 * it + 2 * (p > 0) }
        ' "$1/rank0/o.cg.tsv")
    echo "$line (want bytes, sums: $want)"
    [ -n "$got" ] && [ "$got" = "$want" ]
}
got=$(cg_sums nc)
report $? "rr --max-iter 3 on 2 ranks logs the bytes summed over the ranks: $got" nc/rank0/o.log
ranked 2 cg rr --bfile ../../d --pheno ../../d2.pheno --lambda 300 --tol 1e-10 --ncpu 1 --out o
rc=$?
got=$(cg_sums cg) && [ $rc -eq 0 ]
report $? "rr --solver cg on 2 ranks (exit $rc) logs the bytes summed over the ranks: $got" \
    cg/rank0/o.log
ranked 0 cg1 rr --bfile ../../d --pheno ../../d2.pheno --lambda 300 --tol 1e-10 --ncpu 1 --out o
rc=$?
[ $rc -eq 0 ] && ! grep -q "bytes summed" cg1/rank0/o.log
report $? "rr --solver cg without mpiexec (exit $rc) logs no bytes summed" cg1/rank0/o.log

# more ranks than samples: every rank fails alike, before any collective
"$TG_BIN" simulate --quiet --out s3 --n-samples 3 --n-snps 20 --seed 2 >/dev/null 2>&1
ranked 4 few grm --bfile ../../s3 --meanimpute --ncpu 1 --out o
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 124 ] &&
    grep -q "error: rank [0-3]: .*3 samples for 4 MPI ranks" few/err.txt
report $? "grm of 3 samples on 4 ranks refused (exit $rc): $(grep -m1 error: few/err.txt)" \
    few/err.txt
# test_geno_ranks: every rank prints its plan and passes (its exit status; hydra's rank labels
# may split a line, so lines are not counted)
seed=${TG_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# TG_SEED=$seed"
for nr in 2 4; do
    TG_SEED=$seed timeout 300 "$MPIEXEC" -l -n "$nr" "$TG_TESTS/test_geno_ranks" >unit.txt 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '\] 1\.\.34$' unit.txt)" -eq "$nr" ] &&
        ! grep -q 'not ok' unit.txt
    report $? "test_geno_ranks on $nr ranks: every rank passed (exit $rc)" unit.txt
done
tap_end
