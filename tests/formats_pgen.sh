# --pfile end to end: a simulated cohort with missing calls converted by plink2 --make-pgen (an
# independent writer) gives every command the same outputs as the .bed it came from (byte for
# byte, every file but the log); a .pvar.zst (--make-pgen vzs) reads too; a .pgen with dosages
# reads its hard calls, as plink2 --make-bed does, and says so in the log; a multi-allelic
# variant is skipped and counted, the rest read as plink2 --max-alleles 2 reads them; bad
# inputs give one error line each. Skipped without plink2.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi
p2() { "$PLINK2" --threads 1 "$@" >p2.out 2>&1 || { echo "# plink2 $*: failed"; sed 's/^/# /' p2.out | tail -3; }; }

"$TG_BIN" simulate --quiet --out d --n-samples 151 --n-snps 123 --missing 0.05 --seed 11 \
    >/dev/null 2>&1 || { echo "Bail out! tilegwas simulate failed"; exit 1; }
p2 --bfile d --make-pgen --out p

# untimed FILE: FILE without the column headed "seconds", if any
untimed() {
    awk -F'\t' 'NR == 1 { for (c = 1; c <= NF; c++) if ($c == "seconds") skip = c }
        { l = ""; for (c = 1; c <= NF; c++) if (c != skip) l = l (l == "" ? "" : "\t") $c; print l }' "$1"
}

# same NAME ARGS...: `tilegwas ARGS` on --bfile d and on --pfile p; every output file but the log
# is the same (and there is at least one), but for a column of timings ("seconds")
same() {
    local name=$1 f bad= nfiles=0
    shift
    "$TG_BIN" "$@" --bfile d --out "b_$name" >"b_$name.stdout" 2>"b_$name.err" &&
        "$TG_BIN" "$@" --pfile p --out "p_$name" >"p_$name.stdout" 2>"p_$name.err" || bad=" (failed)"
    for f in b_"$name".*; do
        case $f in *.log | *.err | *.stdout) continue ;; esac
        nfiles=$((nfiles + 1))
        cmp -s "$f" "p_${f#b_}" || cmp -s <(untimed "$f") <(untimed "p_${f#b_}") ||
            bad="$bad ${f#b_} differs"
    done
    [ -z "$bad" ] && [ $nfiles -gt 0 ]
    report $? "$name: $nfiles output files identical from --bfile and --pfile$bad" "p_$name.err"
}

# info prints to stdout: the same summary but for the lines naming the input
"$TG_BIN" info --bfile d 2>/dev/null | grep -v '^fileset\|^--bfile' >b_info.txt &&
    "$TG_BIN" info --pfile p 2>/dev/null | grep -v '^fileset\|^--pfile' >p_info.txt && cmp -s b_info.txt p_info.txt &&
    [ -s b_info.txt ]
report $? "info: the same summary from --bfile and --pfile"
same grm grm --quiet --ncpu 1
awk 'BEGIN { srand(5); print "SNP\tbeta\tgamma" } { printf "%s\t%.6f\t%.6f\n", $2, rand() - 0.5, 2 * rand() }' d.bim >L.tsv
awk 'BEGIN { srand(7); print "FID\tIID\tu" } { printf "%s\t%s\t%.6f\n", $1, $2, rand() - 0.3 }' d.fam >Lt.tsv
same snpmm snpmm --quiet --ncpu 1 --matrix L.tsv
same snpmm_t snpmm --quiet --ncpu 1 --matrix Lt.tsv --transpose
same rr rr --quiet --ncpu 1 --pheno d.pheno --solver cg --lambda 500
same epistasis epistasis --quiet --ncpu 1 --order 2 --top 20
same krr krr --quiet --ncpu 1 --pheno d.pheno --gamma 2e-4 --alpha 1 --test-frac 0.2

# the log says what was read
grep -q "^--pfile p: 151 samples, 123 variants" p_grm.log
report $? "the log names the .pgen read, with its counts" p_grm.log

# a compressed .pvar (plink2 --make-pgen vzs): read like the plain one
p2 --bfile d --make-pgen vzs --out z
if [ -f z.pvar.zst ] && [ ! -f z.pvar ]; then
    "$TG_BIN" info --pfile z 2>err.txt | grep -v '^fileset\|^--pfile' >z_info.txt
    cmp -s z_info.txt p_info.txt
    report $? "--make-pgen vzs: the .pvar.zst reads as the .pvar" err.txt
else
    report 0 "# SKIP this plink2 writes no .pvar.zst"
fi

# dosages: a VCF with DS values, imported by plink2 (hard calls by its --hard-call-threshold);
# tilegwas reads the hard calls, which plink2 --make-bed writes too, and logs the dosages
awk 'BEGIN { srand(3); OFS = "\t"
        print "##fileformat=VCFv4.3"; print "##contig=<ID=1>"
        print "##FORMAT=<ID=DS,Number=1,Type=Float,Description=\"dosage\">"
        h = "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT"
        for (i = 0; i < 21; i++) h = h "\ts" i; print h
        for (j = 0; j < 30; j++) {
            l = "1\t" (100 + j) "\tv" j "\tA\tG\t.\t.\t.\tDS"
            for (i = 0; i < 21; i++) l = l "\t" sprintf("%.3f", 2 * rand())
            print l } }' >dos.vcf
p2 --vcf dos.vcf dosage=DS --make-pgen --out dos
p2 --pfile dos --make-bed --out dosb
"$TG_BIN" grm --quiet --ncpu 1 --pfile dos --out dos_p 2>err.txt &&
    "$TG_BIN" grm --quiet --ncpu 1 --bfile dosb --out dos_b 2>>err.txt &&
    cmp -s dos_p.rel dos_b.rel
report $? "dosages: grm on the hard calls, = plink2 --make-bed's .bed" err.txt
grep -q "30 of 30 variants store dosages; their hard calls are read" dos_p.log
report $? "dosages: the log says how many variants had them and that hard calls were read" dos_p.log

# a multi-allelic record: skipped and counted; the others as plink2 --max-alleles 2 reads them
awk 'BEGIN { srand(4); OFS = "\t"
        print "##fileformat=VCFv4.3"; print "##contig=<ID=1>"
        print "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"genotype\">"
        h = "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT"
        for (i = 0; i < 17; i++) h = h "\ts" i; print h
        for (j = 0; j < 12; j++) {
            l = "1\t" (100 + j) "\tv" j "\tA\t" (j == 5 ? "G,T" : "G") "\t.\t.\t.\tGT"
            for (i = 0; i < 17; i++) {
                a = int(rand() * (j == 5 ? 3 : 2)); b = int(rand() * (j == 5 ? 3 : 2))
                l = l "\t" (rand() < 0.05 ? "./." : a "/" b) }
            print l } }' >multi.vcf
p2 --vcf multi.vcf --make-pgen --out multi
p2 --pfile multi --max-alleles 2 --make-bed --out multib
"$TG_BIN" grm --quiet --ncpu 1 --pfile multi --out multi_p 2>err.txt &&
    "$TG_BIN" grm --quiet --ncpu 1 --bfile multib --out multi_b 2>>err.txt &&
    cmp -s multi_p.rel multi_b.rel
report $? "multi-allelic: the 11 biallelic variants read, = plink2 --max-alleles 2" err.txt
grep -q "^multi-allelic: 1 variant removed, 11 remaining$" multi_p.log &&
    grep -q "multi.pvar: 1 multi-allelic variant skipped" multi_p.log
report $? "multi-allelic: the skip counted in the log, with what to do" multi_p.log

# bad inputs: one clear error line each
cp p.pvar trunc.pvar; cp p.psam trunc.psam
head -c $(($(wc -c <p.pgen) - 10)) p.pgen >trunc.pgen
expect_error "truncated .pgen" "trunc.pgen: truncated" "$TG_BIN" info --pfile trunc
cp p.pgen short.pgen; cp p.pvar short.pvar
head -n -1 p.psam >short.psam
expect_error ".psam one sample short" "short.psam lists 150" "$TG_BIN" info --pfile short
cp p.pgen fewv.pgen; cp p.psam fewv.psam
head -n -1 p.pvar >fewv.pvar
expect_error ".pvar one variant short" "fewv.pvar lists 122" "$TG_BIN" info --pfile fewv
cp p.pvar magic.pvar; cp p.psam magic.psam
{ printf 'XYZ'; tail -c +4 p.pgen; } >magic.pgen
expect_error "bad magic" "magic.pgen is not a .pgen" "$TG_BIN" info --pfile magic
cp p.pgen cols.pgen; cp p.psam cols.psam
awk 'NR == 7 { $5 = ""; sub(/[ \t]+$/, "") } { print }' OFS='\t' p.pvar >cols.pvar
expect_error ".pvar with too few columns" "cols.pvar line 7: expected 5 columns" \
    "$TG_BIN" info --pfile cols
cp p.pgen pos.pgen; cp p.psam pos.psam
awk 'NR == 4 { $2 = "12x" } { print }' OFS='\t' p.pvar >pos.pvar
expect_error ".pvar with a position that is not a number" "pos.pvar line 4: position '12x'" \
    "$TG_BIN" info --pfile pos
expect_error "missing .pgen" "cannot open nothere.pgen" "$TG_BIN" info --pfile nothere
cp p.pgen nopsam.pgen; cp p.pvar nopsam.pvar
expect_error "missing .psam" "nopsam.psam" "$TG_BIN" grm --pfile nopsam --out x

tap_end
