# Shared by the shell tests (source it first): a private working directory removed at exit, TAP
# results, and the bad-input check every command is held to. End the script with tap_end.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
n=0
fail=0

# report STATUS DESCRIPTION [FILE]: ok when STATUS is 0; on failure FILE is shown as comments.
report() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        [ $# -lt 3 ] || sed 's/^/# /' "$3" | head -20
        fail=1
    fi
}

# expect_error DESCRIPTION SUBSTRING COMMAND...: the command exits non-zero (not killed, not timed
# out) with exactly one stderr line, an "error: " line containing SUBSTRING, and no sanitizer
# report.
expect_error() {
    local desc=$1 want=$2
    shift 2
    timeout 120 "$@" >out.txt 2>err.txt
    local rc=$? lines
    lines=$(grep -c . err.txt)
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$lines" -eq 1 ] && grep -q "error: " err.txt &&
        grep -qF -- "$want" err.txt && ! grep -qE "Sanitizer|runtime error" err.txt
    if [ $? -eq 0 ]; then
        report 0 "$desc: $(cat err.txt)"
    else
        report 1 "$desc (exit $rc, $lines stderr lines, wanted '$want')" err.txt
    fi
}

# agree A B TOL: two tables with a header line and the same shape agree when, in every column,
# max |a − b| / max |b| ≤ TOL; prints "worst W".
agree() {
    paste "$1" "$2" | awk -v tol="$3" -F'\t' 'NR == 1 { k = NF / 2; next }
        { for (c = 1; c <= k; c++) { d = $c - $(c + k); if (d < 0) d = -d; if (d > dm[c]) dm[c] = d
              s = $(c + k); if (s < 0) s = -s; if (s > sm[c]) sm[c] = s } }
        END { for (c = 1; c <= k; c++) if (sm[c] > 0 && dm[c] / sm[c] > w) w = dm[c] / sm[c]
              printf "worst %.3g", w; exit !(NR > 1 && w <= tol) }'
}

# skip_without_mpi: ends the script, skipped, when tilegwas is built without MPI or configure
# found no mpiexec.
skip_without_mpi() {
    if [ -z "${MPIEXEC:-}" ] || ! "$TG_BIN" info 2>/dev/null | grep -q '^mpi	yes'; then
        echo "1..0 # SKIP no MPI build or no mpiexec"
        exit 0
    fi
}

# ranked N DIR ARGS...: `tilegwas ARGS` on N ranks (N = 0: without mpiexec), rank R in its own
# folder DIR/rankR (ARGS name files of the working directory as ../../), so that a file written
# by a rank other than 0 shows; stdout and stderr in DIR/out.txt and DIR/err.txt. Returns the
# exit status (124 after 300 s).
ranked() {
    local nr=$1 dir=$2
    shift 2
    mkdir -p "$dir/rank0"
    if [ "$nr" -eq 0 ]; then
        (cd "$dir/rank0" && timeout 300 "$TG_BIN" "$@") >"$dir/out.txt" 2>"$dir/err.txt"
    else
        # MPICH's hydra gives each process its rank in PMI_RANK, which the rank's shell expands
        # shellcheck disable=SC2016
        (cd "$dir" && timeout 300 "$MPIEXEC" -n "$nr" sh -c \
            'mkdir -p "rank$PMI_RANK" && cd "rank$PMI_RANK" && exec "$@"' sh "$TG_BIN" "$@") \
            >"$dir/out.txt" 2>"$dir/err.txt"
    fi
}

tap_end() {
    echo "1..$n"
    exit $fail
}
