# The key of every output row that is a SNP (#CHROM POS ID REF ALT A1, then A1_FREQ and N where
# the row has them) against plink2's own reading of the same files (skipped without plink2):
# `plink2 --freq cols=+pos` gives #CHROM POS ID REF ALT ALT_FREQS OBS_CT, from which a row of
# ours must follow byte for byte: A1 = ALT, A1_FREQ = ALT_FREQS (6 significant digits, NA
# without a call, where plink2 prints 0/0 as "nan"), N = OBS_CT / 2 (autosomes); the model's
# A1_FREQ, in full, at those digits. Checked for rr (cg over every sample; cholesky over the
# samples it keeps, against plink2 --keep), snpmm --transpose and the KRR model's snps.tsv, on
# a .bed (with an all-missing and a monomorphic SNP), a .pgen, and a VCF exported by plink2 with
# some IDs set to '.'; and for each SNP of an epistasis row, CHR BP REF ALT against plink2's
# line of that SNP (found by ID, or by position when the ID is '.').
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
PLINK2=${PLINK2:-$(command -v plink2 || true)}
if [ -z "$PLINK2" ]; then
    echo "1..0 # SKIP plink2 not found"
    exit 0
fi
tg() { "$TG_BIN" "$@" --quiet >/dev/null 2>&1; }
p2() { "$PLINK2" "$@" --freq cols=+pos >/dev/null 2>&1; }

# 300 samples (ceil(300 / 4) = 75 bytes a SNP): SNP 5 all missing, SNP 9 homozygous A1 (00)
tg simulate --out s --n-samples 300 --n-snps 240 --missing 0.03 --epistasis 2:1 --seed 3 &&
    printf '\125%.0s' $(seq 75) | dd of=s.bed bs=1 seek=$((3 + 5 * 75)) conv=notrunc 2>/dev/null &&
    printf '\000%.0s' $(seq 75) | dd of=s.bed bs=1 seek=$((3 + 9 * 75)) conv=notrunc 2>/dev/null &&
    p2 --bfile s --out ps ||
    { echo "Bail out! tilegwas simulate or plink2 --freq failed"; exit 1; }
# a VCF of the same cohort with every 7th ID '.', read back by both
"$PLINK2" --bfile s --export vcf --out v0 >/dev/null 2>&1 &&
    awk -F'\t' -v OFS='\t' '/^#/ { print; next } { if (++r % 7 == 0) $3 = "."; print }' \
        v0.vcf >v.vcf && p2 --vcf v.vcf --out pv ||
    { echo "Bail out! plink2 --export vcf or --vcf failed"; exit 1; }

# want AFREQ: the rows plink2's .afreq implies, key A1_FREQ N (its "nan" is NA)
want() {
    awk -F'\t' -v OFS='\t' 'NR > 1 { if ($6 == "nan") $6 = "NA"
        print $1, $2, $3, $4, $5, $5, $6, $7 / 2 }' "$1"
}
# keyed TSV: our first 8 columns, after the header line
keyed() { tail -n +2 "$1" | cut -f1-8; }
hdr="$(printf '#CHROM\tPOS\tID\tREF\tALT\tA1\tA1_FREQ\tN')"
# same DESCRIPTION OURS AFREQ: our rows follow from plink2's, header first
same() {
    rm -f w.txt k.txt d.txt
    [ "$(head -1 "$2" | cut -f1-8)" = "$hdr" ] && want "$3" >w.txt && keyed "$2" >k.txt &&
        [ -s w.txt ] && diff w.txt k.txt >d.txt
    report $? "$1: $(wc -l <k.txt) rows, key, A1_FREQ and N equal plink2's" d.txt
}

[ "$(awk -F'\t' '($3 == "snp5" && $6 == "nan" && $7 == 0) || ($3 == "snp9" && $6 == 1 &&
    $7 == 600)' ps.afreq | wc -l)" -eq 2 ]
report $? "plink2 reads SNP 5 as all missing (nan, 0) and SNP 9 as monomorphic (1, 600 calls)" \
    ps.afreq

tg rr --bfile s --pheno s.pheno --lambda 50 --out r
same "rr --solver cg, .bed: beta.tsv" r.beta.tsv ps.afreq

# cholesky keeps the samples observed for the phenotype: A1_FREQ and N over those
awk 'NR > 1 && NR % 5 == 0 { $3 = "NA" } { print }' OFS='\t' s.pheno >m.pheno
awk 'NR > 1 && $3 != "NA" { print $1 "\t" $2 }' m.pheno >kept.txt
p2 --bfile s --keep kept.txt --out pk
tg rr --bfile s --pheno m.pheno --lambda 50 --solver cholesky --tile 64 --out c
same "rr --solver cholesky (240 of 300 samples kept): beta.tsv vs plink2 --keep" c.beta.tsv \
    pk.afreq

awk 'BEGIN { print "FID\tIID\tu\tv" } { print $1 "\t" $2 "\t" NR % 3 "\t" (-NR / 7) }' s.fam >L.tsv
tg snpmm --bfile s --matrix L.tsv --transpose --out t
same "snpmm --transpose, .bed" t.snpmm.tsv ps.afreq

ex="$TG_SRCDIR/examples/toy"
p2 --pfile "$ex" --out pp
awk 'BEGIN { print "FID\tIID\tu" } { print $1 "\t" $2 "\t" NR % 5 }' "$ex.fam" >Lt.tsv
tg snpmm --pfile "$ex" --matrix Lt.tsv --transpose --out tp
same "snpmm --transpose, .pgen (REF/ALT of the .pvar)" tp.snpmm.tsv pp.afreq

dots=$(awk -F'\t' '!/^#/ && $3 == "."' v.vcf | wc -l)
tg snpmm --vcf v.vcf --id-delim _ --matrix L.tsv --transpose --out tv
same "snpmm --transpose, VCF with $dots IDs '.'" tv.snpmm.tsv pv.afreq
tg rr --vcf v.vcf --id-delim _ --pheno s.pheno --lambda 50 --out rv
same "rr, VCF with $dots IDs '.'" rv.beta.tsv pv.afreq

# the KRR model: every sample trains (the test cohort is the same fileset); A1_FREQ in full
tg krr --bfile s --pheno s.pheno --kernel ibs --alpha 1 --test-bfile s --save-model km --out k
rm -f d.txt
want ps.afreq | cut -f1-7 >w.txt
awk -F'\t' -v OFS='\t' 'NR > 1 { if ($7 != "NA") $7 = sprintf("%.6g", $7); print }' \
    km/snps.tsv >k.txt
[ "$(head -1 km/snps.tsv)" = "$(printf '#CHROM\tPOS\tID\tREF\tALT\tA1\tA1_FREQ')" ] &&
    diff w.txt k.txt >d.txt
report $? "krr --save-model: snps.tsv's key and A1_FREQ equal plink2's" d.txt

# epi_keys EPI AFREQ: each SNP i of each row whose CHRi BPi REFi ALTi (columns found by name)
# differ from plink2's line of that SNP, by ID or, for ID '.', by position
epi_keys() {
    awk -F'\t' 'FNR == NR { if (FNR > 1) { byid[$3] = bypos[$1 ":" $2] = $1 " " $2 " " $4 " " $5 }
                            next }
        FNR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; k = 0; while (("SNP" (k + 1)) in col) k++
                   if (k < 2 || !(("REF" k) in col) || !(("ALT" k) in col)) { print "header"; exit }
                   next }
        { rows++
          for (i = 1; i <= k; i++) {
              id = $col["SNP" i]; key = $col["CHR" i] " " $col["BP" i]
              got = key " " $col["REF" i] " " $col["ALT" i]
              ref = id == "." ? bypos[$col["CHR" i] ":" $col["BP" i]] : byid[id]
              if (got != ref) print "row " rows " SNP" i ": " got " against " ref } }
        END { if (!rows) print "no rows" }' "$2" "$1"
}
tg epistasis --bfile s --pheno s.pheno --top 40 --out e
epi_keys e.epi2.tsv ps.afreq >d.txt
[ ! -s d.txt ]
report $? "epistasis .bed: CHR BP REF ALT of each SNP of 40 rows equal plink2's" d.txt
tg epistasis --vcf v.vcf --id-delim _ --pheno s.pheno --order 3 --top 40 --out ev
epi_keys ev.epi3.tsv pv.afreq >d.txt
[ ! -s d.txt ] && [ "$(awk -F'\t' 'NR > 1 && ($2 == "." || $3 == "." || $4 == ".")' ev.epi3.tsv |
    wc -l)" -gt 0 ]
report $? "epistasis VCF: the same for 40 rows of 3 SNPs, some of ID '.' (found by position)" d.txt

tap_end
