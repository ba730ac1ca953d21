# tilegwas snpmm end to end: products of a simulated fileset with missing calls against a
# reference computed here in awk from plink1.9's --recode A (an independent reader of the .bed),
# in both orientations, scaled, FP32, with and without header / ID columns; a hand-made .bed
# with a monomorphic and an all-missing SNP (zero rows, counted in the log); rr's beta.tsv read
# back through its SNP key; bad matrix files give one error line naming the line, column or ID.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"


"$TG_BIN" simulate --quiet --out d --n-samples 67 --n-snps 43 --missing 0.08 --seed 3 >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }
# L for Z*L (one line per SNP, header and IDs) and for Z'*L (one line per sample)
awk 'BEGIN { srand(5); print "SNP\tbeta\tgamma\tdelta" }
     { printf "%s\t%.6f\t%.6f\t%.6f\n", $2, rand() - 0.5, 2 * rand(), -rand() }' d.bim >L.tsv
awk 'BEGIN { srand(7); print "FID\tIID\tu" } { printf "%s\t%s\t%.6f\n", $1, $2, rand() - 0.3 }' \
    d.fam >Lt.tsv
awk 'BEGIN { srand(9) } { printf "%.6f %.6f\n", rand() - 0.5, rand() }' d.bim >Lplain.tsv

run() { "$TG_BIN" snpmm --quiet "$@" >run.out 2>&1; }

"$TG_BIN" snpmm --help >help.txt 2>&1
rc=$?
missing_opts=
for o in --bfile --matrix --transpose --scale --float --out --ngpu; do
    grep -q -- "$o" help.txt || missing_opts="$missing_opts $o"
done
[ $rc -eq 0 ] && [ -z "$missing_opts" ]
report $? "--help exits 0 and lists every option${missing_opts:+ (missing:$missing_opts)}"

# reference: REF TRANSPOSE SCALE MATRIX_FILE SKIP_COLS SKIP_HEADER > ref.tsv (values only)
reference() {
    awk -v tr="$1" -v sc="$2" -v skip="$4" -v hdr="$5" '
        FNR == 1 { file++ }
        file == 1 && FNR > 1 {                    # .raw: FID IID PAT MAT SEX PHENO then SNPs
            ns++
            for (j = 7; j <= NF; j++) { x[ns, j - 6] = $j; if ($j != "NA") { s[j - 6] += $j; o[j - 6]++ } }
            m = NF - 6
        }
        file == 2 && !(hdr && FNR == 1) {
            nr++; k = NF - skip
            for (c = 1; c <= k; c++) L[nr, c] = $(c + skip)
        }
        END {
            for (j = 1; j <= m; j++) {
                p[j] = o[j] ? s[j] / (2 * o[j]) : 0
                w[j] = (o[j] == 0 || p[j] == 0 || p[j] == 1) ? 0 : (sc ? 1 / sqrt(2 * p[j] * (1 - p[j])) : 1)
            }
            rows = tr ? m : ns; inner = tr ? ns : m
            for (r = 1; r <= rows; r++) {
                line = ""
                for (c = 1; c <= k; c++) {
                    v = 0
                    for (t = 1; t <= inner; t++) {
                        i = tr ? t : r; j = tr ? r : t
                        if (x[i, j] != "NA") v += (x[i, j] - 2 * p[j]) * w[j] * L[t, c]
                    }
                    line = line (c > 1 ? "\t" : "") sprintf("%.12g", v)
                }
                print line
            }
        }' d.raw "$3"
}

# compare OUT.snpmm.tsv (ID_COLS id columns) with ref.tsv: max |diff| / max(1, |ref|) <= TOL
compare() {
    tail -n +2 "$1.snpmm.tsv" | cut -f"$(($2 + 1))"- | paste - ref.tsv |
        awk -v tol="$3" '{ k = NF / 2; for (c = 1; c <= k; c++) {
                d = $c - $(c + k); if (d < 0) d = -d; s = $(c + k); if (s < 0) s = -s; if (s < 1) s = 1
                if (d / s > worst) worst = d / s } rows++ }
            END { printf "%d rows, worst relative difference %.3g\n", rows, worst; exit !(rows > 0 && worst <= tol) }'
}

if [ -n "${PLINK19:-}" ]; then
    "$PLINK19" --bfile d --keep-allele-order --recode A --out d >plink.log 2>&1 ||
        { echo "Bail out! plink1.9 --recode A failed"; exit 1; }
    check() { # check DESC OUT ID_COLS TOL TRANSPOSE SCALE MATRIX SKIP HDR -- SNPMM OPTIONS
        desc=$1 out=$2 idc=$3 tol=$4 tr=$5 sc=$6 mat=$7 skip=$8 hdr=$9
        shift 10
        if run --bfile d --out "$out" "$@"; then
            reference "$tr" "$sc" "$mat" "$skip" "$hdr" >ref.tsv
            msg=$(compare "$out" "$idc" "$tol")
            report $? "$desc: $msg"
        else
            sed 's/^/# /' run.out
            report 1 "$desc (snpmm failed)"
        fi
    }
    check "Z*L, header and SNP IDs, fp64" zl 2 1e-9 0 0 L.tsv 1 1 -- --matrix L.tsv
    head -1 zl.snpmm.tsv | grep -q "^FID	IID	beta	gamma	delta$"
    report $? "Z*L header: FID IID then the column names of the matrix file"
    check "Z'*L, FID IID columns, scaled" ztl 8 1e-9 1 1 Lt.tsv 2 1 -- --matrix Lt.tsv --transpose --scale
    head -1 ztl.snpmm.tsv | grep -q "^#CHROM	POS	ID	REF	ALT	A1	A1_FREQ	N	u$"
    report $? "Z'*L header: the SNP key #CHROM POS ID REF ALT A1, A1_FREQ N, then the column name"
    check "Z*L, no header, scaled, fp64" plain 2 1e-9 0 1 Lplain.tsv 0 0 -- --matrix Lplain.tsv --scale
    check "Z*L --float within the FP32 bound" f32 2 1e-4 0 0 L.tsv 1 1 -- --matrix L.tsv --float
    grep -q "product Z\*L (fp64, k = 3)" zl.log && grep -q "5codes genotypes prepared" zl.log
    report $? "log: preparation and product times"
else
    for d in "Z*L vs plink1.9" "Z*L header" "Z'*L vs plink1.9" "Z'*L header" "no header" "--float" "log"; do
        n=$((n + 1))
        echo "ok $n # SKIP plink1.9 not found ($d)"
    done
fi

# a hand-made fileset: 5 samples, SNP a polymorphic, b monomorphic, c all missing
printf 'f1 s1 0 0 1 -9\nf2 s2 0 0 2 -9\nf3 s3 0 0 1 -9\nf4 s4 0 0 2 -9\nf5 s5 0 0 1 -9\n' >h.fam
printf '1 a 0 1 A C\n1 b 0 2 A C\n1 c 0 3 A C\n' >h.bim
# per SNP 2 bytes; codes 00 hom A1, 10 het, 11 hom A2, 01 missing (sample 1 in the low bits)
printf '\x6c\x1b\x01\x2c\x00\xff\x03\x55\x01' >h.bed
printf '1\n2\n3\n4\n5\n' >h5.tsv
"$TG_BIN" snpmm --quiet --bfile h --matrix h5.tsv --transpose --out h >run.out 2>&1
rc=$?
# SNP a: genotypes 2 (00), 0 (11), 1 (10), 2 (00), 2 (00): p = 0.7, Z'*L = Σ_i (x_i − 1.4)·i
want_a=$(awk 'BEGIN { x[1]=2; x[2]=0; x[3]=1; x[4]=2; x[5]=2; for (i=1;i<=5;i++) v += (x[i]-1.4)*i; printf "%.10f", v }')
got=$(awk 'NR > 1 { printf "%s %s %s:%s:%s=%.10f ", $2, $4, $3, $7, $8, $9 }' h.snpmm.tsv)
# b: A2/A2 everywhere (p = 0 over 5 calls); c: no call (A1_FREQ NA, N 0)
want="1 C a:0.7:5=$want_a 2 C b:0:5=0.0000000000 3 C c:NA:0=0.0000000000 "
[ $rc -eq 0 ] && [ "$got" = "$want" ] &&
    grep -q "warning: 2 monomorphic or all-missing SNPs" h.log
report $? "monomorphic and all-missing SNPs: zero rows, A1_FREQ 0 and NA, counted in the log \
($got)"

# the SNP key read back: rr's beta.tsv (key, A1_FREQ, N, two betas) as L gives Z*beta, which
# is the in-sample fit less the intercept, a constant per phenotype (complete phenotypes)
"$TG_BIN" simulate --quiet --out q --n-samples 67 --n-snps 43 --missing 0.08 --seed 3 \
    --n-pheno 2 --trait qt --additive 3 >/dev/null 2>&1 &&
    "$TG_BIN" rr --quiet --bfile q --pheno q.pheno --lambda 20 --tol 1e-13 --out r \
        >/dev/null 2>&1 &&
    run --bfile q --matrix r.beta.tsv --out zb
rc=$?
got=$(paste r.pred.tsv zb.snpmm.tsv | awk -F'\t' 'NR == 1 { ok = $3 $4 == $7 $8; next }
    { for (c = 3; c <= 4; c++) { d = $c - $(c + 4); if (NR == 2) d0[c] = d
          e = d - d0[c]; e = e < 0 ? -e : e; if (e > m) m = e } }
    END { printf "%s %.3g", ok && NR == 68 ? "ok" : "bad", m; exit !(ok && NR == 68 && m < 1e-9) }')
report $(( rc || $? )) "Z*L with rr's beta.tsv as L (the SNP key, A1_FREQ, N as ID columns): \
fit - Z beta constant per phenotype ($got)"

# snpmm_error DESCRIPTION SUBSTRING SNPMM_OPTIONS...: one error line naming the fault
snpmm_error() { expect_error "$1" "$2" "$TG_BIN" snpmm "${@:3}"; }
awk -F'\t' -v OFS='\t' 'NR == 3 { $4 = $4 "T" } { print }' r.beta.tsv >ref.tsv
ref=$(sed -n 3p r.beta.tsv | cut -f4)
snpmm_error "the key with another REF" "ref.tsv line 3: REF '${ref}T' but SNP 2 of q.bim (snp1) \
has REF $ref" --bfile q --matrix ref.tsv --out e
{ head -1 r.beta.tsv; sed -n 3p r.beta.tsv; sed -n 2p r.beta.tsv; tail -n +4 r.beta.tsv; } \
    >kswap.tsv
snpmm_error "the key out of .bim order" "kswap.tsv line 2: POS" --bfile q --matrix kswap.tsv \
    --out e
{ head -1 L.tsv; sed -n 3p L.tsv; sed -n 2p L.tsv; tail -n +4 L.tsv; } >swapped.tsv
id2=$(sed -n 3p L.tsv | cut -f1)
snpmm_error "SNP IDs out of .bim order" "line 2: SNP '$id2'" --bfile d --matrix swapped.tsv --out e
awk 'NR == 5 { $3 = "nan" } { print }' OFS='\t' L.tsv >nan.tsv
snpmm_error "NaN value" "line 5, column 3 (gamma)" --bfile d --matrix nan.tsv --out e
awk 'NR == 4 { $2 = "x1" } { print }' OFS='\t' L.tsv >text.tsv
snpmm_error "non-numeric value" "line 4, column 2" --bfile d --matrix text.tsv --out e
cut -f1 L.tsv >ids.tsv
snpmm_error "no value columns (k = 0)" "k = 0" --bfile d --matrix ids.tsv --out e
head -n 20 L.tsv >short.tsv
snpmm_error "fewer lines than SNPs" "19 data lines, expected 43" --bfile d --matrix short.tsv --out e
snpmm_error "a per-sample matrix without --transpose" "column 1 (FID)" --bfile d --matrix Lt.tsv --out e
awk 'NR == 7 { NF = 3 } { print }' OFS='\t' L.tsv >ragged.tsv
snpmm_error "short line" "line 7: 3 fields, expected 4" --bfile d --matrix ragged.tsv --out e
tail -n +2 L.tsv >noheader.tsv
snpmm_error "IDs without a header" "ID columns need a header" --bfile d --matrix noheader.tsv --out e
awk '{ printf "%s", $2; for (c = 0; c < 65; c++) printf " 1"; print "" }' d.bim >wide.tsv
snpmm_error "65 columns" "at most 64" --bfile d --matrix wide.tsv --out e
snpmm_error "missing --matrix" "--matrix" --bfile d --out e
snpmm_error "missing matrix file" "nothere.tsv" --bfile d --matrix nothere.tsv --out e
tap_end
