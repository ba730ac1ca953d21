# tilegwas restarts itself with OPENBLAS_CORETYPE when OpenBLAS runs older kernels than the CPU
# has (src/runtime/blas.c): the test hook TG_TEST_BLAS_CORE makes OpenBLAS seem to run its
# generic Prescott kernels. Nothing on stderr (under mpiexec neither): the command runs as usual
# on the kernels the CPU calls for, with OPENBLAS_CORETYPE set, and the runtime line says that
# tilegwas set it and what OpenBLAS had chosen (the restarted process saw both); a user's
# OPENBLAS_CORETYPE is kept.
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
    line="OpenBLAS kernels $want (OPENBLAS_CORETYPE=$want, set by tilegwas: OpenBLAS chose its"
    [ $rc -eq 0 ] && [ ! -s one/err.txt ] &&
        grep -qF "$line Prescott kernels on this CPU);" one/out.txt
    report $? "Prescott kernels on a CPU that calls for $want: restarted on $want, quietly, \
the runtime line says why" one/err.txt
else
    [ ! -s one/err.txt ]
    report $? "Prescott kernels on a CPU without AVX2 and FMA: no restart" one/err.txt
fi

OPENBLAS_CORETYPE=Haswell TG_TEST_BLAS_CORE=Prescott ranked 0 user info
[ ! -s user/err.txt ] && grep -q "OpenBLAS kernels Haswell (OPENBLAS_CORETYPE=Haswell);" user/out.txt
report $? "a user's OPENBLAS_CORETYPE is kept (no restart)" user/err.txt

if [ -n "$want" ] && [ -n "${MPIEXEC:-}" ] && "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
    TG_TEST_BLAS_CORE=Prescott ranked 2 two info
    [ ! -s two/err.txt ] &&
        grep -q "OpenBLAS kernels $want (OPENBLAS_CORETYPE=$want, set by tilegwas" two/out.txt &&
        grep -q ", 2 ranks," two/out.txt
    report $? "under mpiexec: quietly, the run on 2 ranks on $want" two/err.txt
fi
tap_end
