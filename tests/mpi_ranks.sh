# Ranks that read different inputs (issue 30): under mpiexec -n 2 and -n 4, every rank in its
# own folder with its own copy of the fileset (in.bed/.bim/.fam), of its phenotypes (in.pheno)
# and of snpmm's matrix (l.txt). Rank 1 (ranks 1 and 3 of 4) given a stale copy: a fileset of
# another SNP count, of another sample count, of the same sizes with other genotypes, or the same
# fileset with another phenotype or matrix file. Every command that reads them (info, epistasis,
# snpmm, grm, pca, rr, krr) ends within 10 s, exit 2, with one stderr line naming those ranks, the
# file and what differs, and writes no result. The same copies on every rank run (exit 0, the
# check logged). A rank killed with SIGKILL mid-run ends every rank within seconds.
# Skipped when tilegwas is built without MPI or no mpiexec was found.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
skip_without_mpi

sim() {
    "$TG_BIN" simulate --quiet "$@" >/dev/null 2>&1 || { echo "Bail out! simulate $*"; exit 1; }
}
# a: the fileset of rank 0; b: 10 SNPs more; c: 20 samples fewer; g: a's .bim and .fam with the
# genotypes of another seed
sim --out a --n-samples 200 --n-snps 300 --seed 1 --additive 2
sim --out b --n-samples 200 --n-snps 310 --seed 1 --additive 2
sim --out c --n-samples 180 --n-snps 300 --seed 1 --additive 2
sim --out g --n-samples 200 --n-snps 300 --seed 2 --additive 2
cp a.bim g.bim
cp a.fam g.fam
cp a.pheno g.pheno
# snpmm's matrix of each fileset (a row per SNP), and copies of a's files with one value changed
for f in a b c g; do
    awk 'BEGIN { print "SNP A" } { print $2, (NR % 7) - 3 }' "$f.bim" >"$f.l.txt"
done
awk 'NR == 5 { $3 = 3 - $3 } { print }' OFS='\t' a.pheno >p.pheno
awk 'NR == 5 { $2 = $2 + 1 } { print }' a.l.txt >p.l.txt
if cmp -s a.pheno p.pheno || cmp -s a.l.txt p.l.txt ||
    [ "$(wc -c <a.pheno)" -ne "$(wc -c <p.pheno)" ]; then
    echo "Bail out! the changed phenotype and matrix files are not what the tests need"
    exit 1
fi

# setup DIR N ODD FILESET PHENO MATRIX: DIR/rank0..N-1 hold a's files as in.bed/.bim/.fam,
# in.pheno and l.txt; ranks 1 and 3 (the odd ones) hold FILESET's, PHENO's .pheno and MATRIX's
# .l.txt instead.
setup() {
    local dir=$1 nr=$2 fs=a ph=a mx=a r
    rm -rf "$dir"
    for ((r = 0; r < nr; r++)); do
        mkdir -p "$dir/rank$r"
        [ $((r % 2)) -eq 1 ] && fs=$3 ph=$4 mx=$5
        for e in bed bim fam; do cp "$fs.$e" "$dir/rank$r/in.$e"; done
        cp "$ph.pheno" "$dir/rank$r/in.pheno"
        cp "$mx.l.txt" "$dir/rank$r/l.txt"
        fs=a ph=a mx=a
    done
}

# on_ranks N DIR ARGS...: tilegwas ARGS on N ranks, rank R in DIR/rankR (its pid in
# DIR/rankR/pid), for at most $limit seconds; stdout, stderr, exit status and milliseconds in
# DIR/out.txt, DIR/err.txt, DIR/rc and DIR/ms.
limit=10
on_ranks() {
    local nr=$1 dir=$2 t0
    shift 2
    t0=$(date +%s%N)
    # shellcheck disable=SC2016
    (cd "$dir" && timeout "$limit" "$MPIEXEC" -n "$nr" sh -c \
        'cd "rank$PMI_RANK" && echo $$ >pid && exec "$@"' sh "$TG_BIN" "$@") \
        >"$dir/out.txt" 2>"$dir/err.txt"
    echo $? >"$dir/rc"
    echo $((($(date +%s%N) - t0) / 1000000)) >"$dir/ms"
}

# results DIR: the files the ranks wrote besides their inputs and pid (a log is allowed)
results() {
    (cd "$1" && find rank* -type f ! -name 'in.*' ! -name l.txt ! -name pid ! -name o.log)
}

# the commands, each reading in.* and, where it takes one, in.pheno or l.txt; --quiet keeps
# their log lines off stderr, where the error must be the only line
c="--ncpu 1 --quiet --out o"
declare -A cmds=(
    [info]="info --bfile in --pheno in.pheno"
    [epistasis]="epistasis --bfile in --pheno in.pheno --order 2 $c"
    [snpmm]="snpmm --bfile in --matrix l.txt $c"
    [grm]="grm --bfile in --meanimpute $c"
    [pca]="pca --bfile in --pca 2 $c"
    [rr]="rr --bfile in --pheno in.pheno --lambda 300 --tol 1e-4 $c"
    [krr]="krr --bfile in --pheno in.pheno --kernel linear --alpha 1 --test-frac 0.2 $c"
)
order=(info epistasis snpmm grm pca rr krr)

# The same copies everywhere: every command runs on 2 ranks and logs the check.
limit=120
for cmd in "${order[@]}"; do
    setup same 2 a a a
    # shellcheck disable=SC2086
    on_ranks 2 same ${cmds[$cmd]}
    rc=$(cat same/rc)
    [ "$rc" -eq 0 ] && ! grep -q "error" same/err.txt &&
        { [ "$cmd" = info ] || grep -q "^the 2 ranks read the same inputs (" same/rank0/o.log; }
    report $? "$cmd, the same inputs on 2 ranks: exit $rc, $(grep -ho 'the 2 ranks read.*' \
        same/rank0/o.log 2>/dev/null)" same/err.txt
done
limit=10

# check_case NAME FILESET PHENO MATRIX FILE WHAT: the odd ranks' copy differs; FILE (in.bim,
# ...) and WHAT (an extended regular expression) are what the line must say.
check_case() {
    local name=$1 fs=$2 ph=$3 mx=$4 file=$5 what=$6 nr cmd who rc ms want
    for nr in 2 4; do
        who="rank 1"
        [ "$nr" -eq 4 ] && who="ranks 1 and 3"
        for cmd in "${order[@]}"; do
            # grm and pca read no phenotype; only snpmm reads the matrix, and not in.pheno
            [ "$name" = pheno ] && { [ "$cmd" = grm ] || [ "$cmd" = pca ] || [ "$cmd" = snpmm ]; } &&
                continue
            [ "$name" = matrix ] && [ "$cmd" != snpmm ] && continue
            setup run "$nr" "$fs" "$ph" "$mx"
            # shellcheck disable=SC2086
            on_ranks "$nr" run ${cmds[$cmd]}
            rc=$(cat run/rc) ms=$(cat run/ms)
            want="^tilegwas $cmd: error: $who read a different $file than rank 0 \($what\): "
            want+="every rank must read the same files$"
            [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && [ "$ms" -lt 10000 ] &&
                [ "$(grep -c . run/err.txt)" -eq 1 ] && grep -qE "$want" run/err.txt &&
                [ -z "$(results run)" ]
            report $? "$name, $cmd on $nr ranks: exit $rc in $ms ms, $(head -c 300 run/err.txt)" \
                run/err.txt
        done
    done
}
check_case snps b b b in.bim "310 variants against 300"
check_case samples c c c in.fam "180 samples against 200"
check_case genotypes g g g in.bed "the same 60000 genotypes, other content"
check_case pheno a p a in.pheno "the same [0-9]+ bytes, other content"
check_case matrix a a p l.txt "the same [0-9]+ bytes, other content"

# A rank killed with SIGKILL in the middle of an epistasis search (order 3 of 1500 SNPs, far
# longer than the test waits): every rank ends within 10 s of the kill, none left running.
sim --out big --n-samples 400 --n-snps 1500 --seed 3
killed() {
    local nr=$1 victim=$2 t0 ms rc r left=0 i
    rm -rf kill
    for ((r = 0; r < nr; r++)); do
        mkdir -p "kill/rank$r"
        for e in bed bim fam; do cp "big.$e" "kill/rank$r/in.$e"; done
    done
    # shellcheck disable=SC2016
    (cd kill && timeout 120 "$MPIEXEC" -n "$nr" sh -c \
        'cd "rank$PMI_RANK" && echo $$ >pid && exec "$@"' sh "$TG_BIN" epistasis --bfile in \
        --order 3 --ncpu 1 --out o) >kill/out.txt 2>kill/err.txt &
    local job=$!
    # the search has started when rank 0 logs the runtime; a second more, and the kill
    for ((i = 0; i < 600; i++)); do
        grep -q "^runtime:" kill/rank0/o.log 2>/dev/null && [ -s "kill/rank$victim/pid" ] && break
        sleep 0.1
    done
    sleep 1
    t0=$(date +%s%N)
    kill -KILL "$(cat "kill/rank$victim/pid")"
    wait $job
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    for ((r = 0; r < nr; r++)); do
        kill -0 "$(cat "kill/rank$r/pid")" 2>/dev/null && left=$((left + 1))
    done
    [ "$i" -lt 600 ] && [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ $ms -lt 10000 ] && [ $left -eq 0 ] &&
        [ ! -e kill/rank0/o.epi3.tsv ]
    report $? "rank $victim of $nr killed mid-search: every rank ended in $ms ms (exit $rc, \
$left left)" kill/err.txt
}
killed 2 1
killed 4 2
tap_end
