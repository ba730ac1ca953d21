# VCF and BCF input against PLINK 1 filesets, with plink2 as the independent converter (skipped
# when plink2 is not installed): a simulated cohort with missing calls is exported by plink2 as
# bgzipped VCF and as BCF (sample IDs FID_IID, read back with --id-delim _), and every command
# must write byte-identical outputs (cmp, the .log aside) from --bfile and from --vcf / --bcf.
# plink2's own import (plink2 --vcf --make-bed) must give the same outputs as our --vcf (A1 =
# ALT, A2 = REF, the same IDs). Then bad inputs: one error line each, or, for multi-allelic
# records, a count in the log and the rest read.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi

"$TG_BIN" simulate --quiet --out d --n-samples 150 --n-snps 257 --missing 0.05 --additive 5 \
    --seed 11 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
p2() { "$PLINK2" "$@" >/dev/null 2>&1 || echo "Bail out! plink2 $* failed"; }
p2 --bfile d --export vcf bgz id-paste=fid,iid --out d
p2 --bfile d --export bcf id-paste=fid,iid --out d
p2 --vcf d.vcf.gz --id-delim _ --make-bed --out back

# snpmm's matrices: one row per SNP (by ID) and one per sample (by FID IID)
awk 'BEGIN { srand(5); print "SNP\tb\tc" } { printf "%s\t%.6f\t%.6f\n", $2, rand() - 0.5, rand() }' \
    d.bim >L.tsv
awk 'BEGIN { srand(7); print "FID\tIID\tu" } { printf "%s\t%s\t%.6f\n", $1, $2, rand() - 0.3 }' \
    d.fam >Lt.tsv

# info's summary without the lines that differ by nature: the input's name and the .fam's
# phenotype column (simulate fills it; a VCF has none)
summary() { "$TG_BIN" info "$@" --pheno d.pheno 2>/dev/null | grep -v '^fileset\|^fam_'; }

# run DIR INPUT...: every command on one input, outputs in DIR/ (krr.tsv without its seconds)
run() {
    local dir=$1
    shift
    mkdir -p "$dir"
    summary "$@" >"$dir/info.txt" &&
        "$TG_BIN" grm --quiet "$@" --out "$dir/grm" &&
        "$TG_BIN" snpmm --quiet "$@" --matrix L.tsv --out "$dir/mm" &&
        "$TG_BIN" snpmm --quiet "$@" --matrix Lt.tsv --transpose --out "$dir/mt" &&
        "$TG_BIN" rr --quiet "$@" --pheno d.pheno --solver cg --lambda 500 --out "$dir/rr" &&
        "$TG_BIN" epistasis --quiet "$@" --pheno d.pheno --order 2 --top 20 --out "$dir/epi" &&
        "$TG_BIN" krr --quiet "$@" --pheno d.pheno --kernel gaussian --gamma 0.003 --alpha 1 \
            --test-frac 0.2 --seed 3 --out "$dir/krr" &&
        cut -f1-7 "$dir/krr.krr.tsv" >"$dir/krr.txt" && rm "$dir/krr.krr.tsv"
}

# same A B: every output file of A/ (the logs aside) is in B/ and identical
same() {
    local f bad=
    for f in "$1"/*; do
        case $f in *.log) continue ;; esac
        cmp -s "$f" "$2/${f##*/}" || bad="$bad ${f##*/}"
    done
    [ -z "$bad" ] || echo "differ:$bad" >diff.txt
    [ -z "$bad" ]
}

run bed --bfile d 2>bed.err
report $? "every command runs on --bfile" bed.err
ls bed >files.txt
[ "$(grep -c . files.txt)" -ge 14 ]
report $? "outputs of info, grm, snpmm (both ways), rr, epistasis, krr: $(tr '\n' ' ' <files.txt)"
for input in "vcf --vcf d.vcf.gz" "bcf --bcf d.bcf"; do
    read -r dir flag file <<<"$input"
    run "$dir" "$flag" "$file" --id-delim _ 2>"$dir.err"
    rc=$?
    [ $rc -eq 0 ] && same bed "$dir"
    report $? "$flag $file --id-delim _: outputs identical to --bfile's (exit $rc)" diff.txt
done
grep -q "^--vcf d.vcf.gz: 150 samples, 257 variants" vcf/rr.log
report $? "the log counts what the VCF held" vcf/rr.log

# plink2's import: A1 = ALT, A2 = REF and the IDs, as ours
cut -f1,2,4-6 d.bim >want.bim
cut -f1,2,4-6 back.bim | cmp -s - want.bim && cut -f1,2 back.fam | cmp -s - <(cut -f1,2 d.fam)
report $? "plink2 --vcf --id-delim _ --make-bed gives back the .bim (but cM) and the IDs"
mkdir -p p2
"$TG_BIN" grm --quiet --bfile back --out p2/grm && "$TG_BIN" rr --quiet --bfile back \
    --pheno d.pheno --solver cg --lambda 500 --out p2/rr &&
    summary --bfile back >p2/info.txt
rc=$?
[ $rc -eq 0 ] && same p2 vcf
report $? "grm, rr, info from plink2's own import = from --vcf (A1/A2 orientation, IDs)" diff.txt

# without --id-delim: FID 0 and the whole ID as IID, as plink2 imports them
p2 --bfile d --export vcf bgz id-paste=iid --out iid
p2 --vcf iid.vcf.gz --make-bed --out noid
"$TG_BIN" grm --quiet --vcf iid.vcf.gz --out plain &&
    tail -n +2 plain.rel.id | cmp -s - <(cut -f1,2 noid.fam)
report $? "no --id-delim: FID 0 and IID the VCF's ID, as plink2 imports them" plain.rel.id

# ---- bad inputs
zcat d.vcf.gz >d.vcf
hdr=$(grep -c '^#' d.vcf)
# a multi-allelic record inserted after the first: skipped and counted, the rest as before
awk -F'\t' -v OFS='\t' -v h="$hdr" '{ print } NR == h + 1 { $3 = "multi"; $5 = $5 ",T"; print }' \
    d.vcf >multi.vcf
"$TG_BIN" grm --quiet --vcf multi.vcf --id-delim _ --out multi 2>multi.err &&
    cmp -s multi.rel vcf/grm.rel && grep -q "1 multi-allelic record skipped" multi.log &&
    grep -q "multi-allelic: 1 variant removed, 257 remaining" multi.log &&
    grep -q "258 variants" multi.log
report $? "a multi-allelic record: skipped, counted in the log, the others read as before" multi.err
awk -F'\t' -v OFS='\t' -v h="$hdr" 'NR == h + 3 { $9 = "GQ" } { print }' d.vcf >nogt.vcf
expect_error "a record without GT (and without DS)" "nogt.vcf line $((hdr + 3))" \
    "$TG_BIN" grm --vcf nogt.vcf --out x
awk -v h="$hdr" 'NR == h + 2 { keep = $0; next } { print } NR == h + 3 { print keep }' \
    d.vcf >unsorted.vcf
expect_error "positions out of order" "not sorted" "$TG_BIN" grm --vcf unsorted.vcf --out x
head -c $(($(wc -c <d.vcf.gz) / 2)) d.vcf.gz >cut.vcf.gz
expect_error "a truncated .vcf.gz" "cut.vcf.gz is truncated" "$TG_BIN" grm --vcf cut.vcf.gz --out x
# a flipped byte mid-file: named as a damaged file, not as a short line (htslib hands back the
# text before the bad block); with one thread htslib reads on the caller's thread (its thread
# pool leaks a block on this error in htslib 1.16, which the sanitizer build would report)
mid=$(($(wc -c <d.vcf.gz) / 2)) && v=$(od -An -tu1 -j "$mid" -N1 d.vcf.gz) &&
    cp d.vcf.gz flip.vcf.gz && printf "\\$(printf %o $((255 - v)))" |
    dd of=flip.vcf.gz bs=1 seek="$mid" conv=notrunc status=none
expect_error "a .vcf.gz with a flipped byte, one thread" "flip.vcf.gz: cannot read past line" \
    "$TG_BIN" grm --vcf flip.vcf.gz --ncpu 1 --out x
awk -v h="$hdr" 'NR == h + 4 { sub(/\t[^\t]*$/, "") } { print }' d.vcf >short.vcf
expect_error "a record with a sample column missing" "short.vcf line $((hdr + 4))" \
    "$TG_BIN" grm --vcf short.vcf --out x
expect_error "a .bed given as a VCF" "d.bed is not a VCF" "$TG_BIN" grm --vcf d.bed --out x
expect_error "a .fam given as a VCF" "d.fam is not a VCF" "$TG_BIN" grm --vcf d.fam --out x
expect_error "a BCF given to --vcf" "read it with --bcf" "$TG_BIN" grm --vcf d.bcf --out x
expect_error "a VCF given to --bcf" "read it with --vcf" "$TG_BIN" grm --bcf d.vcf.gz --out x
expect_error "--id-delim on IDs without it" "is not FID_IID" \
    "$TG_BIN" grm --vcf iid.vcf.gz --id-delim _ --out x
tap_end
