# tilegwas restarts itself with OPENBLAS_CORETYPE when OpenBLAS runs older kernels than the CPU
# has (src/runtime/blas.c): the test hook TG_TEST_BLAS_CORE makes OpenBLAS seem to run its
# generic Prescott kernels. One notice on stderr (one under mpiexec too), then the command runs
# as usual on the kernels the CPU calls for, with OPENBLAS_CORETYPE set (the runtime line shows
# it: the restarted process saw it); a user's OPENBLAS_CORETYPE is kept.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
unset OPENBLAS_CORETYPE

# what src/runtime/blas.c asks for on this CPU (from its flags), or nothing
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
want=
if has avx2 fma; then
    want=Haswell
    if has avx512f avx512bw avx512dq avx512vl; then
        want=SkylakeX
        has avx512_bf16 && want=Cooperlake
    fi
fi

TG_TEST_BLAS_CORE=Prescott ranked 0 one info
rc=$?
if [ -n "$want" ]; then
    [ $rc -eq 0 ] && [ "$(grep -c . one/err.txt)" -eq 1 ] &&
        grep -q "OpenBLAS chose its Prescott kernels.*restarting with OPENBLAS_CORETYPE=$want" one/err.txt &&
        grep -q "OpenBLAS kernels $want (OPENBLAS_CORETYPE=$want);" one/out.txt
    report $? "Prescott kernels on a CPU that calls for $want: one notice, then $want" one/err.txt
else
    [ ! -s one/err.txt ]
    report $? "Prescott kernels on a CPU without AVX2 and FMA: no restart" one/err.txt
fi

OPENBLAS_CORETYPE=Haswell TG_TEST_BLAS_CORE=Prescott ranked 0 user info
[ ! -s user/err.txt ] && grep -q "OpenBLAS kernels Haswell (OPENBLAS_CORETYPE=Haswell);" user/out.txt
report $? "a user's OPENBLAS_CORETYPE is kept (no restart)" user/err.txt

if [ -n "$want" ] && [ -n "${MPIEXEC:-}" ] && "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
    TG_TEST_BLAS_CORE=Prescott ranked 2 two info
    [ "$(grep -c . two/err.txt)" -eq 1 ] && grep -q "OPENBLAS_CORETYPE=$want" two/err.txt &&
        grep -q "OpenBLAS kernels $want (OPENBLAS_CORETYPE=$want);" two/out.txt &&
        grep -q ", 2 ranks," two/out.txt
    report $? "under mpiexec: one notice, the run on 2 ranks on $want" two/err.txt
fi
tap_end
