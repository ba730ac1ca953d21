# The tiled matrix under StarPU-MPI: tests/test_matrix on 2 and 4 ranks (grids 2×1 and 2×2),
# every rank with the same data (TG_SEED), so tile ownership, StarPU-MPI tags, conversion tasks
# inserted with starpu_mpi_task_insert and the gather of tg_matrix_to_dense are exercised; and
# tests/test_runtime_ranks on 2 ranks: the runtime's sums right after StarPU-MPI's sends.
# Skipped when tilegwas is built without MPI or no mpiexec was found.
set -u
if [ -z "${MPIEXEC:-}" ] || ! "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
    echo "1..0 # SKIP no MPI build or no mpiexec"
    exit 0
fi
seed=${TG_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# TG_SEED=$seed"
n=0 fail=0
for run in test_matrix:2 test_matrix:4 test_runtime_ranks:2; do
    prog=${run%:*} ranks=${run#*:}
    n=$((n + 1))
    out=$(TG_SEED=$seed timeout 300 "$MPIEXEC" -l -n "$ranks" "$TG_TESTS/$prog" 2>&1)
    rc=$?
    plans=$(grep -c '\] 1\.\.' <<<"$out")
    bad=$(grep -c '\] not ok' <<<"$out")
    if [ $rc -eq 0 ] && [ "$plans" -eq "$ranks" ] && [ "$bad" -eq 0 ]; then
        echo "ok $n - $prog on $ranks ranks: every rank passed"
    else
        echo "not ok $n - $prog on $ranks ranks (exit $rc, $plans plans, $bad failures)"
        sed 's/^/# /' <<<"$out" | grep -v '\] ok' | head -30
        fail=1
    fi
done
echo "1..$n"
exit $fail
