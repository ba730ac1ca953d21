# tilegwas epistasis under MPICH's mpiexec: on 1 (no mpiexec), 2 and 4 ranks the .epi<k>.tsv
# files are identical at orders 2, 3 and 4; the log says how many ranks ran; every rank runs in
# its own folder, where only rank 0 may write. One rank failing (the TG_TEST_FAIL_RANK hook) or
# ranks started with other arguments end every rank within seconds with one error line.
# Skipped when tilegwas is built without MPI or no mpiexec was found.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
skip_without_mpi

# a planted pair, 2% missing calls; a tiny fileset for order 4
for sim in "pair --n-samples 300 --n-snps 40 --seed 11 --missing 0.02" \
    "tiny --n-samples 120 --n-snps 12 --seed 5"; do
    # shellcheck disable=SC2086
    "$TG_BIN" simulate --quiet --out $sim --epistasis 2:1 --epi-effect 0.2 >/dev/null 2>&1 ||
        { echo "Bail out! tilegwas simulate --out $sim failed"; exit 1; }
done

# order, data, options: --block 8 gives 15 (order 2) and 35 (order 3) rounds over the ranks; the
# order-4 search is 1 round at its default block, so ranks 1 to 3 have none
cases=("2 pair --block 8 --score k2" "3 pair --block 8 --score chi2" "4 tiny --score mi")
for c in "${cases[@]}"; do
    read -r k data opts <<<"$c"
    # shellcheck disable=SC2206
    args=(epistasis --bfile "../../$data" --order "$k" --top 25 $opts --ncpu 1 --out e)
    ranked 0 "o$k-n0" "${args[@]}"
    report $? "order $k ($opts) without mpiexec runs" "o$k-n0/err.txt"
    for nr in 1 2 4; do
        d=o$k-n$nr
        ranked "$nr" "$d" "${args[@]}"
        report $? "order $k on $nr rank(s) runs" "$d/err.txt"
        cmp -s "o$k-n0/rank0/e.epi$k.tsv" "$d/rank0/e.epi$k.tsv"
        report $? "order $k on $nr rank(s): e.epi$k.tsv identical to the run without mpiexec"
        files=$(cd "$d" && find rank* -type f | sort | tr '\n' ' ')
        [ "$files" = "rank0/e.epi$k.tsv rank0/e.log " ]
        report $? "order $k on $nr rank(s): rank 0 alone wrote (files: $files)"
        log=$d/rank0/e.log
        if [ "$nr" -gt 1 ]; then
            grep -q "^runtime: .*, $nr ranks," "$log" &&
                grep -q "^$nr MPI ranks: block round i runs on rank i mod $nr" "$log"
        else
            grep -q "^runtime: .*, 1 rank," "$log" && ! grep -q "MPI ranks" "$log"
        fi
        report $? "order $k on $nr rank(s): the log names the ranks and their rounds" "$log"
        [ "$(grep -c '^wrote e\.epi' "$d/err.txt")" -eq 1 ] && [ ! -s "$d/out.txt" ] &&
            ! grep -q "error" "$d/err.txt"
        report $? "order $k on $nr rank(s): one rank's lines on stderr, none on stdout" "$d/err.txt"
    done
done
grep -q "snp" o2-n0/rank0/e.epi2.tsv && [ "$(wc -l <o2-n0/rank0/e.epi2.tsv)" -eq 26 ]
report $? "the compared order-2 table has its 25 rows"

# fail_fast DESC RANK N: TG_TEST_FAIL_RANK=RANK on N ranks ends every rank within 30 s, with
# exactly one error line, naming that rank
fail_fast() {
    local t0 ms rc
    t0=$(date +%s%N)
    TG_TEST_FAIL_RANK=$2 timeout 60 "$MPIEXEC" -n "$3" "$TG_BIN" epistasis --bfile pair --order 3 \
        --ncpu 1 --out f >f.out 2>f.err
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ $ms -lt 30000 ] &&
        [ "$(grep -c 'error: ' f.err)" -eq 1 ] &&
        grep -q "^tilegwas epistasis: error: rank $2: TG_TEST_FAIL_RANK=$2: " f.err
    report $? "$1: every rank ended (exit $rc) in $ms ms: $(grep 'error: ' f.err)" f.err
}
fail_fast "rank 1 of 2 fails" 1 2
fail_fast "rank 2 of 4 fails" 2 4

# MPMD: rank 1 started with another --top
t0=$SECONDS
timeout 60 "$MPIEXEC" -n 1 "$TG_BIN" epistasis --bfile pair --ncpu 1 --top 5 --out mm : \
    -n 1 "$TG_BIN" epistasis --bfile pair --ncpu 1 --top 6 --out mm >mm.out 2>mm.err
rc=$?
[ $rc -eq 2 ] && [ $((SECONDS - t0)) -lt 30 ] && [ "$(grep -c . mm.err)" -eq 1 ] &&
    grep -q "^tilegwas: error: rank 1: started with other arguments than rank 0" mm.err &&
    [ ! -e mm.log ]
report $? "ranks with different arguments (--top 5 : --top 6): exit $rc, $(cat mm.err)" mm.err
tap_end
