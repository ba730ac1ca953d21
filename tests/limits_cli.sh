# Work and memory bounded before they start, and messages that stay one readable line: tiles
# below the smallest the workers use well, or too many a side, refused with the bound; a krr
# under ulimit -v, runs bigger than --memory and filesets declaring more than the machine
# holds, refused with the estimate within seconds; bytes of a bad input line escaped in the
# message; snpmm --float products beyond fp32's range refused, not written as inf or nan.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

sim() { "$TG_BIN" simulate --quiet --trait qt --seed 5 "$@" >/dev/null 2>&1; }
{ sim --out ds --n-samples 120 --n-snps 30 && sim --out wide --n-samples 40 --n-snps 17000 &&
    sim --out tall --n-samples 20000 --n-snps 10; } ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

# --tile below 16, and more than 1024 tiles a side, whose bound is ceil(rows / 1024)
expect_error "krr --tile 1" "--tile 1: below 16, the smallest tile the workers use well" \
    "$TG_BIN" krr --quiet --ngpu 0 --bfile ds --pheno ds.pheno --gamma 0.1 --alpha 1 \
    --test-frac 0.2 --tile 1 --out e
expect_error "rr --solver cholesky --tile 1" "--tile 1: below 16" "$TG_BIN" rr --quiet \
    --ngpu 0 --bfile ds --pheno ds.pheno --lambda 1 --solver cholesky --tile 1 --out e
ntrain=$(awk 'END { print NR - int(0.1 * NR + 0.5) }' tall.fam)
expect_error "krr --tile 16 on $ntrain training samples" "--tile 16: \
$(((ntrain + 15) / 16)) tiles a side for $ntrain rows, more than 1024" "$TG_BIN" krr --quiet \
    --ngpu 0 --bfile tall --pheno tall.pheno --gamma 0.1 --alpha 1 --test-frac 0.1 --tile 16 \
    --out e
grep -q "use --tile $(((ntrain + 1023) / 1024)) or more" err.txt
report $? "the message names the smallest tile that fits: $(((ntrain + 1023) / 1024))" err.txt
expect_error "rr --solver cholesky --tile 16 on 17,000 SNPs" "--tile 16: 1063 tiles a side for \
17000 rows, more than 1024 (2e+08 Cholesky tasks): use --tile 17 or more" "$TG_BIN" rr --quiet \
    --ngpu 0 --bfile wide --pheno wide.pheno --lambda 1 --solver cholesky --tile 16 --out e

# krr under ulimit -v 4 GB with K built in fp64 (--build-precision diag): K alone (18,000
# training samples) is 1.2 GB, K_t 0.3 GB... more than the address space left once MPI and
# StarPU are mapped (by default the fit would build K in its map's fp32 and run, slowly);
# AddressSanitizer's shadow memory cannot be mapped under any such limit: skipped in the
# sanitizer build
sim --out big --n-samples 25000 --n-snps 10
if grep -qa __asan_init "$TG_BIN"; then
    echo "ok $((n + 1)) # SKIP AddressSanitizer build: no ulimit -v"
    n=$((n + 1))
else
    start=$(date +%s)
    (ulimit -v 4000000 && expect_error "krr under ulimit -v 4000000" "not enough memory: the \
run needs about" "$TG_BIN" krr --quiet --ngpu 0 --bfile big --pheno big.pheno --gamma 0.1 \
        --alpha 1 --test-frac 0.1 --build-precision diag --out e &&
        echo "n=$n fail=$fail" >n.txt)
    . ./n.txt
    secs=$(($(date +%s) - start))
    grep -q "MiB are available (ulimit -v)" err.txt && [ $secs -lt 30 ]
    report $? "the memory message names ulimit -v; ended in $secs s (< 30)" err.txt
fi

# --memory (MiB, as plink2): a run estimated above it is refused, one below it runs
expect_error "rr --memory 10" "MiB are available (--memory)" "$TG_BIN" rr --quiet --ngpu 0 \
    --bfile ds --pheno ds.pheno --lambda 1 --memory 10 --out e
"$TG_BIN" rr --quiet --ngpu 0 --bfile ds --pheno ds.pheno --lambda 1 --memory 4096 --out m \
    2>err.txt && grep -q "^memory: about [0-9]* MiB at the peak (genotypes .*), 4096 MiB \
available (--memory)$" m.log
report $? "rr --memory 4096 runs and logs its estimate" err.txt
sim --out cc --trait cc --n-samples 400 --n-snps 40 || { echo "Bail out! simulate failed"; exit 1; }
expect_error "epistasis --memory 10" "MiB are available (--memory)" "$TG_BIN" epistasis --quiet \
    --ngpu 0 --bfile cc --order 3 --memory 10 --out e
"$TG_BIN" epistasis --quiet --ngpu 0 --bfile cc --order 3 --memory 4096 --out m 2>err.txt &&
    grep -q "^memory: about [0-9]* MiB at the peak (genotype planes .*), 4096 MiB available" m.log
report $? "epistasis --memory 4096 runs and logs its estimate" err.txt
expect_error "pca --memory 10" "MiB are available (--memory)" "$TG_BIN" pca --quiet --ngpu 0 \
    --bfile ds --memory 10 --out e
expect_error "assoc --memory 10" "MiB are available (--memory)" "$TG_BIN" assoc --quiet \
    --ngpu 0 --bfile ds --pheno ds.pheno --memory 10 --out e

# A fileset declaring a million samples and a million SNPs (a sparse .bed of 250 GB): 400 GB
# of genotypes, more than this machine has; every command refuses it within seconds
avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
if [ "${avail:-0}" -lt 300 ]; then
    awk 'BEGIN { for (i = 1; i <= 1000000; i++) printf "F%d\tI%d\t0\t0\t1\t%.3f\n", i, i, i % 7
                 for (j = 1; j <= 1000000; j++) printf "1\tsnp%d\t0\t%d\tA\tG\n", j, j >"huge.bim"
                 for (j = 1; j <= 1000000; j++) print 1 >"L.txt" }' >huge.fam
    printf '\x6c\x1b\x01' >huge.bed && truncate -s $((3 + 250000 * 1000000)) huge.bed
    for cmd in "snpmm --matrix L.txt" "rr --lambda 1" "krr --gamma 0.1 --alpha 1 \
--test-frac 0.1" grm; do
        start=$(date +%s)
        # shellcheck disable=SC2086
        expect_error "${cmd%% *} on 10^6 samples and SNPs" "not enough memory: the run needs \
about" "$TG_BIN" $cmd --quiet --ngpu 0 --bfile huge --out e
        secs=$(($(date +%s) - start))
        [ $secs -lt 30 ] && grep -q "MiB are available (" err.txt
        report $? "${cmd%% *}: the estimate against what the machine has, in $secs s (< 30)"
    done
else
    echo "ok $((n + 1)) # SKIP $avail GB available: a fileset of 400 GB could fit"
    n=$((n + 1))
fi

# Bytes of a phenotype line in the message: control characters and bytes that are not UTF-8 as
# \xNN, a long value cut with its length; the message is one line on stderr and in the log
first=$(awk 'NR == 1 { print $1, $2 }' ds.fam)
printf 'FID IID P\n%s \033[31mred\a\001\xff\n' "$first" >esc.pheno
expect_error "control characters in a phenotype value" "column 3 (P): '\\x1b[31mred\\x07" \
    "$TG_BIN" rr --quiet --ngpu 0 --bfile ds --pheno esc.pheno --lambda 1 --out esc
grep -qF "red\\x07\\x01\\xff' is not a number" err.txt &&
    ! LC_ALL=C grep -q "[[:cntrl:]]" err.txt &&
    grep -qxF "$(sed 's/^tilegwas rr: //' err.txt)" esc.log &&
    ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' esc.log
report $? "no control byte on stderr nor in the log, which has the same line" err.txt
awk -v id="$first" 'BEGIN { s = id " "; for (i = 0; i < 5000; i++) s = s "x"
                            print "FID IID P"; print s }' >long.pheno
expect_error "a 5,000-byte phenotype value" "'$(printf 'x%.0s' {1..60})… (5000 bytes)' is not" \
    "$TG_BIN" rr --quiet --ngpu 0 --bfile ds --pheno long.pheno --lambda 1 --out e

# snpmm --float: L near fp32's largest value gives products beyond it: refused, no output; in
# fp64 the same product is finite (checked against the sum of |Z| · 1e38 as a bound)
awk '{ print 3e38 }' ds.bim >big.txt
expect_error "snpmm --float beyond fp32's range" "beyond fp32's range (largest 3.40282e+38); \
without --float the product is in fp64: no output written" "$TG_BIN" snpmm --quiet --ngpu 0 \
    --bfile ds --matrix big.txt --float --out f32
[ ! -e f32.snpmm.tsv ]
report $? "no f32.snpmm.tsv written"
"$TG_BIN" snpmm --quiet --ngpu 0 --bfile ds --matrix big.txt --out f64 2>err.txt &&
    awk -F'\t' 'NR > 1 && ($3 + 0 != $3 || $3 ~ /inf|nan/ || $3 > 2 * 30 * 3e38 ||
        $3 < -2 * 30 * 3e38) { bad++ } END { exit bad || NR != 121 }' f64.snpmm.tsv
report $? "without --float: 120 finite products within |Z|'s bound" err.txt

tap_end
