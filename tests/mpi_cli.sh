# Every command under MPICH's mpiexec on 2 ranks, each rank in its own folder: rank 0 alone
# writes files and prints results (simulate, info, --help give what one rank gives); an error in
# the options is one line, as without MPI, and so is an MPI without MPI_THREAD_MULTIPLE (snpmm,
# rr --solver cg and grm on several ranks: tests/mpi_snpmm.sh; krr and rr --solver cholesky:
# tests/mpi_krr.sh).
# Skipped when tilegwas is built without MPI or no mpiexec was found.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
skip_without_mpi

"$TG_BIN" simulate --quiet --out d --n-samples 80 --n-snps 24 --seed 3 --additive 2 \
    >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }

# files DIR: the files the ranks wrote, space-separated
files() { (cd "$1" && find rank* -type f | sort | tr '\n' ' '); }

sim=(simulate --out s --n-samples 50 --n-snps 20 --seed 9 --epistasis 2:1)
ranked 0 sim0 "${sim[@]}" && ranked 2 sim2 "${sim[@]}"
report $? "simulate on 2 ranks runs" sim2/err.txt
want="rank0/s.bed rank0/s.bim rank0/s.fam rank0/s.log rank0/s.pheno rank0/s.truth.tsv "
[ "$(files sim2)" = "$want" ] &&
    cmp -s sim0/rank0/s.bed sim2/rank0/s.bed && cmp -s sim0/rank0/s.pheno sim2/rank0/s.pheno &&
    diff -q <(grep -v ' elapsed' sim0/err.txt) <(grep -v ' elapsed' sim2/err.txt) >/dev/null &&
    [ "$(grep -c ' elapsed' sim2/err.txt)" = 1 ]
report $? "simulate on 2 ranks: rank 0 alone wrote the same dataset and log lines, and one \
progress line ($(files sim2))"

# what may differ: the rank count, StarPU's start time, and the host loops' threads (2 ranks
# on one node share its CPUs)
same() {
    sed -E 's/, 2 ranks,/, 1 rank,/; s/ \(started in [0-9.]+ s\)//; s/host loops on [0-9]+ threads?//' \
        "$1"
}
for args in "info --bfile ../../d" "info --ncpu 1" "--help" "grm --help"; do
    # shellcheck disable=SC2086
    ranked 0 one $args && ranked 2 two $args && [ -s one/out.txt ] &&
        diff <(same one/out.txt) <(same two/out.txt) >/dev/null &&
        [ -z "$(files two)" ]
    report $? "$args on 2 ranks: printed once, as by one rank" two/out.txt
    rm -rf one two
done

# expect_one DIR DESC EXIT PATTERN: the run in DIR exited EXIT with one stderr line matching
# PATTERN (an extended regular expression) and wrote no file
expect_one() {
    local rc
    rc=$(cat "$1/rc")
    [ "$rc" -eq "$3" ] && [ "$(grep -c . "$1/err.txt")" -eq 1 ] && grep -qE "$4" "$1/err.txt" &&
        [ -z "$(files "$1")" ]
    report $? "$2: exit $rc, $(head -1 "$1/err.txt")" "$1/err.txt"
}
ranked 2 opt epistasis --bfile ../../d --order 9 --out e
echo $? >opt/rc
expect_one opt "an option error on 2 ranks" 2 "^tilegwas epistasis: error: --order 9: "
ranked 2 cmd frobnicate --out e
echo $? >cmd/rc
expect_one cmd "an unknown command on 2 ranks" 2 "^tilegwas: error: unknown command 'frobnicate'"
# MPI giving one rank less than MPI_THREAD_MULTIPLE (the TG_TEST_SERIALIZED_RANK hook): every
# rank refuses before the command runs, rank 0 says it once
TG_TEST_SERIALIZED_RANK=1 ranked 2 thr epistasis --bfile ../../d --ncpu 1 --out e
echo $? >thr/rc
expect_one thr "MPI_THREAD_SERIALIZED on rank 1 of 2" 1 \
    "^tilegwas: error: MPI gives rank 1 only MPI_THREAD_SERIALIZED; .* needs MPI_THREAD_MULTIPLE"
# rank 0 alone writes, so it alone checks the --out folder (rank 1 runs on, until it waits)
ranked 2 dir epistasis --bfile ../../d --ncpu 1 --out no/such/dir/e
echo $? >dir/rc
grep -v '^Abort(' dir/err.txt >dir/errors.txt
mv dir/errors.txt dir/err.txt
expect_one dir "an unwritable --out folder on 2 ranks" 1 "^tilegwas epistasis: error: rank 0: --out"

tap_end
