# tilegwas krr and rr --solver cholesky under MPICH's mpiexec: with the tiles spread 2D
# block-cyclic over 1, 2 and 4 ranks (grids 1x1, 2x1, 1x2, 2x2, 1x4) the outputs equal those of
# a run without mpiexec: predictions with an all-FP64 precision map within 1e-10 relative, with
# the adaptive FP32/FP16 map within 1e-3 for RR (the mixed map's target in tests/rr_cli.sh; the
# same map and the same tasks give the same bits on CPUs) and 2e-3 for KRR (below), RR's β and predictions likewise (Z'y is
# summed over the ranks, so the last bits may differ). Rank 0 alone writes and logs the grid and,
# with 2 ranks, the bytes StarPU-MPI sent (at least the tiles that must cross a 2x1 grid; no such
# line on one rank); a tile larger than the matrix works as on one rank. tests/test_rr_ranks on
# 2 and 4 ranks: a rank decodes only its samples and its panels' SNPs for RR. Bad input (--grid not matching the ranks or
# malformed, --save-model on several ranks, a matrix that is not SPD) gives one error line and
# every rank exits non-zero within seconds. Skipped when tilegwas is built without MPI or no
# mpiexec was found.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
skip_without_mpi

seed=${TG_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# TG_SEED=$seed"
sim() {
    "$TG_BIN" simulate --quiet "$@" >/dev/null 2>&1 || { echo "Bail out! simulate $*"; exit 1; }
}
# 300 samples (240 training with --test-frac 0.2: 8 tile rows of 32, the last one 16), 2%
# missing calls; a test cohort on the same SNPs
sim --out d --n-samples 300 --n-snps 200 --seed "$seed" --missing 0.02 --trait qt --n-pheno 2
sim --out t --n-samples 70 --n-snps 200 --seed $((seed + 1)) --missing 0.02 --trait qt --n-pheno 2
cp d.bim t.bim
# 1 SNP: 3 distinct genotypes, so K has rank 3 and alpha 0 leaves it singular
sim --out d1 --n-samples 100 --n-snps 1 --seed 2 --trait qt

files() { (cd "$1" && find rank* -type f | sort | tr '\n' ' '); }

# same_as_one DESC TOL WANT FILES -- RUNS -- ARGS...: ARGS without mpiexec, then for each run
# ("N" or "N:PxQ") on N ranks (with --grid PxQ); each must exit 0, write WANT (rank 0's files)
# and nothing else, log the grid (2 ranks and more), and its FILES (tables with a header) agree
# with the run without mpiexec within TOL relative in every column. The run without mpiexec is
# kept in base/ and rank 0's log of each run in nN.log or nNPxQ.log until the next call.
same_as_one() {
    local desc=$1 tol=$2 want=$3 tables=$4 r nr grid d got worst f
    shift 4
    local runs=()
    while [ "$1" != -- ]; do runs+=("$1"); shift; done
    shift
    rm -rf base
    ranked 0 base "$@" --ncpu 1 --out o
    report $? "$desc without mpiexec runs" base/err.txt
    for r in "${runs[@]}"; do
        nr=${r%%:*}
        grid=()
        [ "$r" != "$nr" ] && grid=(--grid "${r#*:}")
        d=n$nr${grid[1]:-}
        ranked "$nr" "$d" "$@" "${grid[@]}" --ncpu 1 --out o
        report $? "$desc on $r ranks runs" "$d/err.txt"
        worst=
        got=0
        for f in $tables; do
            worst="$worst $f $(agree "base/rank0/$f" "$d/rank0/$f" "$tol")" || got=1
        done
        report $got "$desc on $r ranks equals one rank within $tol:$worst"
        [ "$(files "$d")" = "$want" ] && ! grep -q "error" "$d/err.txt" &&
            { [ "$nr" -eq 1 ] || grep -q "^$nr MPI ranks, process grid ${grid[1]:-[0-9]*x[0-9]*}:" \
                "$d/rank0/o.log"; }
        report $? "$desc on $r ranks: rank 0 alone wrote ($(files "$d")) and logged the grid" \
            "$d/err.txt"
        cp "$d/rank0/o.log" "$d.log"
        rm -rf "$d"
    done
}

# comm_bytes LOG N NB: LOG, rank 0's of a run on a 2x1 grid with an all-FP64 map of an N × N
# matrix in tiles of NB, has the line of bytes StarPU-MPI sent: the total is the sum of the two
# ranks', both sent some, and it is at least what must cross: the inverse of each diagonal tile
# L_kk but the last (NB² doubles) goes from the owner of tile row k to the other rank, which
# holds tile row k + 1 of panel k. Prints the line and the bound.
comm_bytes() {
    local log=$1 n=$2 nb=$3 line total sum bound
    bound=$((((n + nb - 1) / nb - 1) * nb * nb * 8))
    line=$(grep '^bytes sent between ranks (StarPU-MPI): ' "$log")
    total=$(echo "$line" | sed -n 's/.*: \([0-9]*\) in all.*/\1/p')
    sum=$(echo "$line" | grep -o 'rank [0-9]* [0-9]*' |
        awk '$3 > 0 { s += $3; k++ } END { if (k == 2) print s }')
    echo "$line (at least $bound)"
    grep -q "process grid 2x1:" "$log" && [ -n "$total" ] && [ "$total" = "$sum" ] &&
        [ "$total" -ge "$bound" ]
}
no_comm_bytes() { ! grep -q "bytes sent between ranks" "$@"; }

kf="rank0/o.krr.tsv rank0/o.log rank0/o.pred.tsv "
krr="krr --bfile ../../d --pheno ../../d.pheno --test-frac 0.2 --tile 32"
# shellcheck disable=SC2086
{
    same_as_one "krr fp64 map" 1e-10 "$kf" o.pred.tsv 1 2 2:1x2 4 -- \
        $krr --gamma 0.004 --alpha 1 --precisions fp64
    # 240 training samples in tiles of 32; 2 ranks take the 2x1 grid
    got=$(comm_bytes n2.log 240 32)
    report $? "krr fp64 on 2 ranks logs the bytes sent: $got" n2.log
    ! grep -q "starpu_comm_stats" n2/err.txt n2/out.txt
    report $? "StarPU-MPI's own statistics table stays out of the output" n2/err.txt
    no_comm_bytes base/rank0/o.log n1.log
    report $? "krr on one rank, with or without mpiexec, logs no bytes sent"
    # kept dot products (several gamma and alpha), the test-train kernel from another fileset
    same_as_one "krr fp64, 2 gamma x 2 alpha, --test-bfile" 1e-10 "$kf" o.pred.tsv 2 4:2x2 -- \
        krr --bfile ../../d --pheno ../../d.pheno --test-bfile ../../t --test-pheno ../../t.pheno \
        --tile 32 --gamma 0.003,0.006 --alpha 0.5,1 --precisions fp64
    same_as_one "krr ibs kernel, fp64" 1e-10 "$kf" o.pred.tsv 2:1x2 -- \
        $krr --kernel ibs --alpha 1 --precisions fp64
    # on a GPU node the tiles of each run go to GPUs or cores as the scheduler places them, and
    # FP16 products round otherwise on each: two runs within 1e-3 of the exact predictions
    # agree within 2e-3 (seen: 1.3e-3 with 4 ranks over 4 H200s, 0 on CPUs)
    same_as_one "krr adaptive fp32/fp16 map" 2e-3 "$kf" o.pred.tsv 2 4 4:1x4 -- \
        $krr --gamma 0.004 --alpha 1 --diag fp32 --precisions fp32,fp16 --accuracy 1e-3
    grep -q "tiles fp64 0, fp32 [0-9]*, fp16 [1-9]" base/rank0/o.log
    report $? "the adaptive map has fp16 tiles: $(grep -o 'tiles fp64.*fp8 [0-9]*' base/rank0/o.log)"
    # one tile: rank 0 owns it, the other rank reads no genotypes and computes nothing
    same_as_one "krr --tile 4096 (one tile)" 1e-10 "$kf" o.pred.tsv 2 -- \
        $krr --kernel linear --alpha 1 --precisions fp64 --tile 4096
}
rf="rank0/o.beta.tsv rank0/o.log rank0/o.pred.tsv rank0/o.rr.tsv "
rr="rr --bfile ../../d --pheno ../../d.pheno --lambda 50 --solver cholesky --tile 32"
# shellcheck disable=SC2086
{
    same_as_one "rr --solver cholesky fp64" 1e-10 "$rf" "o.beta.tsv o.pred.tsv" 2 4 4:1x4 -- \
        $rr --precisions fp64
    # Z'Z of 200 SNPs in tiles of 32
    got=$(comm_bytes n2.log 200 32)
    report $? "rr --solver cholesky fp64 on 2 ranks logs the bytes sent: $got" n2.log
    no_comm_bytes base/rank0/o.log
    report $? "rr --solver cholesky without mpiexec logs no bytes sent"
    same_as_one "rr --solver cholesky fp32/fp16 map" 1e-3 "$rf" "o.beta.tsv o.pred.tsv" 2:1x2 4 -- \
        $rr --scale --diag fp32 --precisions fp32,fp16 --accuracy 1e-2 --test-bfile ../../t
}

# test_rr_ranks: what each rank decodes for rr --solver cholesky (exactly its samples and its
# panels' SNPs); every rank prints its plan and passes (its exit status; hydra's rank labels may
# split a line, so results are not counted)
for nr in 2 4; do
    TG_SEED=$seed timeout 300 "$MPIEXEC" -l -n "$nr" "$TG_TESTS/test_rr_ranks" >unit.txt 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '\] 1\.\.7$' unit.txt)" -eq "$nr" ] && ! grep -q 'not ok' unit.txt
    report $? "test_rr_ranks on $nr ranks: every rank passed (exit $rc; $(grep -m1 -o \
        'rank 0 of.*genotypes' unit.txt))" unit.txt
done

# bad_ranks DESC NR SUBSTRING ARGS...: on NR ranks (0: without mpiexec) every rank exits
# non-zero within 60 s, stderr has exactly one error line, containing SUBSTRING, and no file but
# the log (written before the error) exists.
bad_ranks() {
    local desc=$1 nr=$2 want=$3 rc t0
    shift 3
    t0=$(date +%s)
    ranked "$nr" bad "$@" --quiet --ncpu 1 --out o
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ $(($(date +%s) - t0)) -lt 60 ] &&
        [ "$(grep -c . bad/err.txt)" -eq 1 ] && grep -qF -- "$want" bad/err.txt &&
        ! ls bad/rank*/o.pred.tsv >/dev/null 2>&1 && ! grep -qE "Sanitizer|runtime error" bad/err.txt
    report $? "$desc (exit $rc): $(head -1 bad/err.txt)" bad/err.txt
    rm -rf bad
}
# shellcheck disable=SC2086
{
    bad_ranks "--grid 2x2 on 2 ranks" 2 "--grid 2x2: 4 places for 2 MPI ranks" \
        $krr --gamma 0.004 --alpha 1 --grid 2x2
    bad_ranks "--grid 2x1 without mpiexec" 0 "--grid 2x1: 2 places for 1 MPI rank:" \
        $krr --gamma 0.004 --alpha 1 --grid 2x1
    bad_ranks "--grid 2by1" 2 "--grid 2by1: expected PxQ" $krr --gamma 0.004 --alpha 1 --grid 2by1
    bad_ranks "--grid 0x2" 2 "--grid 0x2: expected PxQ" $rr --grid 0x2
    bad_ranks "rr --grid with --solver cg" 2 "--grid goes with --solver cholesky" \
        rr --bfile ../../d --pheno ../../d.pheno --lambda 50 --grid 2x1
    bad_ranks "--save-model on 2 ranks" 2 "--save-model runs on one MPI rank only" \
        $krr --gamma 0.004 --alpha 1 --save-model m
    # alpha 0 and a kernel of rank ≤ 3 (one SNP): the not-SPD error, reached by every rank alike
    bad_ranks "not SPD on 2 ranks" 2 "is not positive definite" \
        krr --bfile ../../d1 --pheno ../../d1.pheno --test-frac 0.2 --tile 16 --gamma 0.1 --alpha 0
}
tap_end
