# Shared nodes: under taskset the runtime keeps to the CPUs it is given. `info` and an epistasis
# run under `taskset -c 0` start one CPU worker, bound to CPU 0, and a host pool of one thread
# (the log's runtime line names them; tests/test_affinity checks the threads' own masks); the
# search gives the same top list as an unrestricted run; --ncpu beyond the mask is refused with
# one line naming the mask and the most allowed.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
if ! command -v taskset >/dev/null; then
    echo "1..0 # SKIP no taskset"
    exit 0
fi
last=$(awk '/^Cpus_allowed_list/ { n = split($2, r, /[,-]/); print r[n] }' /proc/self/status)

taskset -c 0 "$TG_BIN" info >info.txt 2>info.err
grep -q "^runtime	.*, 1 CPU worker on CPU 0, .*; host loops on 1 thread;" info.txt
report $? "info under taskset -c 0: 1 CPU worker on CPU 0, host loops on 1 thread" info.txt
if [ "$last" -gt 0 ]; then
    taskset -c "$last" "$TG_BIN" info >info.txt 2>info.err
    grep -q "^runtime	.*, 1 CPU worker on CPU $last, .*; host loops on 1 thread;" info.txt
    report $? "info under taskset -c $last: 1 CPU worker on CPU $last" info.txt
fi

expect_error "--ncpu 2 under taskset -c 0" \
    "--ncpu 2: this process may use 1 CPU (affinity mask 0); use at most 1" \
    taskset -c 0 "$TG_BIN" info --ncpu 2
"$TG_BIN" simulate --quiet --out cc --trait cc --epistasis 2:1 --n-samples 400 --n-snps 60 \
    --seed 5 2>/dev/null || { echo "Bail out! tilegwas simulate failed"; exit 1; }
expect_error "epistasis --ncpu 64 under taskset -c 0" "use at most 1" \
    taskset -c 0 "$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 2 --ncpu 64 --out big

"$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 2 --top 10 --out all 2>all.err &&
    taskset -c 0 "$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 2 --top 10 --out one \
        2>one.err && cmp -s all.epi2.tsv one.epi2.tsv
report $? "epistasis under taskset -c 0: the same top 10 as without it" one.err
grep -q "^runtime: .*, 1 CPU worker on CPU 0, .*; host loops on 1 thread;" one.log
report $? "its log: 1 CPU worker on CPU 0, host loops on 1 thread" one.log
tap_end
