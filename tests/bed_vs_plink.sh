# tilegwas's PLINK 1 reader and writer against PLINK 1.9 itself:
#  1. a fileset made by `plink1.9 --dummy` (203 samples: not a multiple of 4; 5% missing calls)
#     is decoded by tilegwas and compared with PLINK's own `--recode A` of it;
#  2. a fileset written by tg_bed_write is read by PLINK (`--recode A`) and compared again.
# The TAP lines of each tests/plink_raw_compare run are relayed, renumbered.
# By hand: TG_TESTS=/path/to/build/tests PLINK19=/usr/bin/plink1.9 sh tests/bed_vs_plink.sh
set -u
if [ -z "${PLINK19:-}" ]; then
    echo "1..0 # SKIP plink1.9 not found"
    exit 0
fi
compare="${TG_TESTS:?set TG_TESTS to the folder of the built test programs}/plink_raw_compare"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
n=0

# relay FILE: prints FILE's TAP results renumbered after the ones already printed.
relay() {
    while IFS= read -r l; do
        case $l in
        "ok "*) n=$((n + 1)); echo "ok $n ${l#ok [0-9]* }" ;;
        "not ok "*) n=$((n + 1)); echo "not ok $n ${l#not ok [0-9]* }" ;;
        "1.."*) ;;
        *) echo "$l" ;;
        esac
    done <"$1"
}

# check DESCRIPTION COMMAND...: one TAP line for a step; its output is shown when it fails.
check() {
    desc=$1
    shift
    n=$((n + 1))
    if "$@" >step.log 2>&1; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc (exit $?)"
        sed 's/^/# /' step.log | tail -20
        return 1
    fi
}

# run_compare PREFIX: plink_raw_compare PREFIX PREFIX.raw, relayed; a crash is a failure too.
run_compare() {
    "$compare" "$1" "$1.raw" >cmp.log 2>&1
    rc=$?
    relay cmp.log
    if [ $rc -ne 0 ] && ! grep -q "^not ok" cmp.log; then
        n=$((n + 1))
        echo "not ok $n - plink_raw_compare $1 exited with status $rc"
    fi
}

seed=$(($(date +%s) % 1000000 + $$))
echo "# plink1.9 --seed $seed"
if check "plink1.9 --dummy 203 517 0.05 --make-bed" \
    "$PLINK19" --dummy 203 517 0.05 --seed "$seed" --make-bed --out d &&
    check "plink1.9 --recode A --keep-allele-order of the dummy fileset" \
        "$PLINK19" --bfile d --recode A --keep-allele-order --out d; then
    run_compare d
fi

if check "tg_bed_write of a random 101 × 333 fileset" "$compare" --write w 101 333 "$seed" &&
    check "plink1.9 reads the fileset tilegwas wrote (--recode A --keep-allele-order)" \
        "$PLINK19" --bfile w --recode A --keep-allele-order --out w; then
    run_compare w
fi
echo "1..$n"
