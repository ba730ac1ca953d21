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

tap_end() {
    echo "1..$n"
    exit $fail
}
