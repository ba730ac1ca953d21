# Bad input through the command line: each case must end with exactly one clear error line on
# stderr naming what is wrong, and a non-zero exit — never a crash, a sanitizer report or a hang.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

"$TG_BIN" simulate --out good --n-samples 41 --n-snps 30 --seed 7 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

expect_error "unknown command" "unknown command" "$TG_BIN" frobnicate
expect_error "unknown option" "--bogus" "$TG_BIN" info --bfile good --bogus
expect_error "missing .bed" "nothere.bed" "$TG_BIN" info --bfile nothere
cp good.bed nobim.bed; cp good.fam nobim.fam
expect_error "missing .bim" "nobim.bim" "$TG_BIN" info --bfile nobim
cp good.bed nofam.bed; cp good.bim nofam.bim
expect_error "missing .fam" "nofam.fam" "$TG_BIN" info --bfile nofam
cp good.bim magic.bim; cp good.fam magic.fam
{ printf 'XYZ'; tail -c +4 good.bed; } >magic.bed
expect_error "wrong magic bytes" "magic.bed" "$TG_BIN" info --bfile magic
cp good.bim short.bim; cp good.fam short.fam
head -c 100 good.bed >short.bed
expect_error ".bed size not matching .fam × .bim" "short.bed" "$TG_BIN" info --bfile short
cp good.bed dup.bed; cp good.bim dup.bim
{ head -n -1 good.fam; head -n 1 good.fam; } >dup.fam
expect_error "duplicate sample IDs" "duplicate" "$TG_BIN" info --bfile dup
# a row of a sample not in the .fam is skipped (as plink2 and REGENIE do); only a file with no
# sample of the .fam is refused
printf 'FID IID P\nF0 I0 1.5\nNOPE NOPE 2\n' >unknown.pheno
"$TG_BIN" info --bfile good --pheno unknown.pheno >out.txt 2>err.txt &&
    grep -q "^pheno_P	n 1	mean 1.5	" out.txt
report $? "phenotype row of a sample not in the .fam skipped, the other read" err.txt
# the commands that fit say so in their log (rr here: the .fam's phenotypes, then two rows more)
awk '{print $1, $2, ($6 == "-9" ? "NA" : $6)}' good.fam >extra.pheno
printf 'NOPE1 NOPE1 1\nNOPE2 NOPE2 2\n' >>extra.pheno
"$TG_BIN" rr --bfile good --pheno extra.pheno --lambda 10 --out extra >/dev/null 2>err.txt
grep -q "^extra.pheno: 2 row(s) of samples not in the genotypes' .fam skipped$" extra.log
report $? "rr logs the 2 phenotype rows of samples not in the .fam that it skipped" err.txt
printf 'FID IID P\nNOPE NOPE 2\n' >alien.pheno
expect_error "phenotype file with no sample of the .fam" "none of its 1 samples" \
    "$TG_BIN" info --bfile good --pheno alien.pheno
gzip -c unknown.pheno >unknown.pheno.gz
"$TG_BIN" info --bfile good --pheno unknown.pheno.gz >out.txt 2>err.txt &&
    grep -q "^pheno_P	n 1	mean 1.5	" out.txt
report $? "gzip phenotype file" err.txt
head -c 20 unknown.pheno.gz >cut.pheno.gz
expect_error "truncated gzip phenotype file" "cut.pheno.gz: the gzip data ends early" \
    "$TG_BIN" info --bfile good --pheno cut.pheno.gz
printf 'FID IID P\nF0 I0 abc\n' >nonnum.pheno
expect_error "non-numeric phenotype" "line 2" "$TG_BIN" info --bfile good --pheno nonnum.pheno
expect_error "unwritable --out folder" "no/such/dir" "$TG_BIN" simulate --out no/such/dir/x --n-samples 10 --n-snps 10
expect_error "negative size" "--n-samples" "$TG_BIN" simulate --out neg --n-samples -5 --n-snps 10
expect_error "non-numeric size" "--n-snps" "$TG_BIN" simulate --out neg --n-samples 5 --n-snps ten
expect_error "simulate --fst 0" "--fst 0: must be strictly between 0 and 1" \
    "$TG_BIN" simulate --out pop --n-snps 10 --populations 3 --fst 0
expect_error "simulate --fst 1" "--fst 1: must be strictly between 0 and 1" \
    "$TG_BIN" simulate --out pop --n-snps 10 --populations 3 --fst 1
expect_error "simulate --populations 0" "--populations 0" \
    "$TG_BIN" simulate --out pop --n-snps 10 --populations 0
expect_error "simulate, more populations than samples" \
    "--populations 11: must be between 1 and --n-samples 10" \
    "$TG_BIN" simulate --out pop --n-samples 10 --n-snps 10 --populations 11
expect_error "simulate --fst without --populations" "--fst needs --populations K > 1" \
    "$TG_BIN" simulate --out pop --n-snps 10 --fst 0.1
expect_error "simulate --fst with --populations 1" "--fst needs --populations K > 1" \
    "$TG_BIN" simulate --out pop --n-snps 10 --populations 1 --fst 0.2
if [ "$("$TG_BIN" info | awk '$1=="cuda"{print $2}')" = no ]; then
    expect_error "--ngpu 2 on a CPU-only build" "no CUDA" "$TG_BIN" info --ngpu 2
else
    expect_error "--ngpu beyond the GPUs present" "--ngpu" "$TG_BIN" info --ngpu 99
fi
expect_error "negative --ncpu" "--ncpu" "$TG_BIN" info --ncpu -1
expect_error "unknown scheduler" "unknown StarPU scheduler" "$TG_BIN" info --sched nope
tap_end
