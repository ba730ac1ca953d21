# Progress on stderr, redirected to a file (not a terminal): krr shows the kernel builds, the
# Cholesky, the solve and the prediction, grm its ceil(n/512) row blocks, epistasis its C(M, 2)
# pairs, each phase ending with a line whose done equals its total; whole lines only (no \r);
# --quiet shows none.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

"$TG_BIN" simulate --quiet --out ds --trait qt --n-samples 700 --n-snps 120 --seed 5 \
    >/dev/null 2>&1 &&
    "$TG_BIN" simulate --quiet --out cc --n-samples 200 --n-snps 37 --seed 7 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

# last_lines FILE: the last progress line of each phase, "PHASE DONE TOTAL UNIT STATE" (STATE:
# done, or the ETA of a phase cut short), in the order the phases ended
last_lines() {
    awk '/^[a-z]+: [0-9.]+[kMGTPE]?\/[0-9.]+[kMGTPE]? [a-z]+ \([0-9.]+%\), / {
            ph = substr($1, 1, length($1) - 1); split($2, dt, "/")
            if (!(ph in last)) order[++k] = ph
            last[ph] = ph " " dt[1] " " dt[2] " " $3 " " $NF }
         END { for (i = 1; i <= k; i++) print last[order[i]] }' "$1"
}

# phases_done FILE PHASE...: every PHASE has progress lines and its last one has done = total
phases_done() {
    local f=$1 ph
    shift
    last_lines "$f" >"$f.last"
    for ph in "$@"; do
        awk -v ph="$ph" '$1 == ph && $2 == $3 && $5 == "done" { found = 1 }
            END { exit !found }' "$f.last" || return 1
    done
}

"$TG_BIN" krr --bfile ds --pheno ds.pheno --gamma 0.01 --alpha 1 --test-frac 0.2 --tile 64 \
    --out k >k.out 2>k.err
rc=$?
phases_done k.err kernel cholesky solve predict
st=$?
report $st "krr (exit $rc): kernel, cholesky, solve, predict end with done = total: $(
    tr '\n' ';' <k.err.last)" k.err
! grep -q $'\r' k.err && [ "$(tail -c 1 k.err | od -An -c | tr -d ' ')" = '\n' ]
report $? "krr: stderr not a terminal: whole lines, no \\r"

"$TG_BIN" grm --bfile ds --out g >g.out 2>g.err
rc=$?
want=$(((700 + 511) / 512))
phases_done g.err grm && grep -q "^grm $want $want blocks done$" g.err.last &&
    ! grep -q $'\r' g.err
st=$?
report $st "grm (exit $rc): ceil(700/512) = $want blocks, last line done = total, no \\r: $(
    cat g.err.last)" g.err

"$TG_BIN" epistasis --bfile cc --order 2 --out e >e.out 2>e.err
rc=$?
pairs=$((37 * 36 / 2))
phases_done e.err epistasis && grep -q "^epistasis $pairs $pairs combinations done$" e.err.last &&
    ! grep -q $'\r' e.err
st=$?
report $st "epistasis (exit $rc): C(37, 2) = $pairs pairs, last line done = total, no \\r: $(
    cat e.err.last)" e.err

"$TG_BIN" krr --quiet --bfile ds --pheno ds.pheno --gamma 0.01 --alpha 1 --test-frac 0.2 \
    --tile 64 --out kq >kq.out 2>kq.err &&
    "$TG_BIN" grm --quiet --bfile ds --out gq >gq.out 2>gq.err
rc=$?
last_lines kq.err >kq.last
last_lines gq.err >gq.last
[ $rc -eq 0 ] && [ -f kq.krr.tsv ] && [ ! -s kq.last ] && [ ! -s gq.last ]
report $? "--quiet (exit $rc): krr and grm print no progress"

tap_end
