# tilegwas krr end to end: on a simulated trait made of non-linear SNP pairs (no marginal
# effects), KRR's test Pearson r exceeds rr's on the same train/test split (the KRR paper's
# claim, Table I); the outputs' layout (pred.tsv, krr.tsv with several gamma/alpha, the
# precision map as TSV and PNG); the default map from --pred-tol and its bound in the log; a
# map that loses positive definiteness recovered; and bad input refused with one error line.
# The numbers themselves are checked against LAPACK in tests/test_krr and tests/test_cholesky.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
krr() { "$TG_BIN" krr --quiet "$@" 2>krr.err; }

# 40 SNPs: with 480 training samples the Gaussian kernel learns 2 planted pairs well (r ≈ 0.6);
# with hundreds of SNPs the pairs drown in the kernel's other directions at this N
"$TG_BIN" simulate --quiet --out ds --trait qt --nonlinear --nl-pairs 2 --h2 0.9 \
    --n-samples 600 --n-snps 40 --seed 5 2>/dev/null ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

"$TG_BIN" krr --help >help.txt 2>&1
rc=$?
missing_opts=
for o in --bfile --pheno --pheno-name --pheno-col-nums --covar --covar-name --kernel --gamma \
    --alpha --test-bfile \
    --test-pheno --test-covar --test-frac --seed --pred-tol --accuracy --precisions --diag --band --tile \
    --precision-map --save-model --load-model --out --ncpu --ngpu --build-precision; do
    grep -q -- "$o" help.txt || missing_opts="$missing_opts $o"
done
[ $rc -eq 0 ] && [ -z "$missing_opts" ]
report $? "--help exits 0 and lists every option${missing_opts:+ (missing:$missing_opts)}"

# pearson FILE COL_PRED COL_Y: r over the lines of FILE (tab-separated, no header)
pearson() {
    awk -F'\t' -v a="$2" -v b="$3" '{ x = $a; y = $b; n++; sx += x; sy += y; sxx += x * x
        syy += y * y; sxy += x * y } END { print (n * sxy - sx * sy) / sqrt((n * sxx - sx * sx) * (n * syy - sy * sy)) }' "$1"
}

if [ -n "${PLINK19:-}" ]; then
    # the same split for both: the first 480 samples train, the last 120 test
    head -480 ds.fam | cut -f1,2 >tr.ids
    tail -120 ds.fam | cut -f1,2 >te.ids
    "$PLINK19" --bfile ds --keep tr.ids --keep-allele-order --make-bed --out tr >/dev/null &&
        "$PLINK19" --bfile ds --keep te.ids --keep-allele-order --make-bed --out te >/dev/null
    head -481 ds.pheno >tr.pheno
    { head -1 ds.pheno; tail -120 ds.pheno; } >te.pheno
    krr --bfile tr --pheno tr.pheno --test-bfile te --test-pheno te.pheno --kernel gaussian \
        --gamma 0.03 --alpha 0.1 --tile 64 --out k
    rc=$?
    r_krr=$(awk -F'\t' 'NR == 2 { print $7 }' k.krr.tsv)
    paste <(tail -n +2 k.pred.tsv) <(tail -n +2 te.pheno) >kp.tsv
    r_check=$(pearson kp.tsv 3 6)
    "$TG_BIN" rr --quiet --bfile tr --pheno tr.pheno --lambda 100 --test-bfile te --out r 2>/dev/null
    paste <(tail -n +2 r.pred.tsv) <(tail -n +2 te.pheno) >rp.tsv
    r_rr=$(pearson rp.tsv 3 6)
    echo "# test Pearson r: krr $r_krr (recomputed $r_check), rr $r_rr"
    awk -v a="$r_krr" -v b="$r_rr" -v c="$r_check" \
        'BEGIN { d = a - c; exit !(a > b + 0.2 && d < 1e-4 && d > -1e-4) }'
    report $? "non-linear trait: krr test r $r_krr > rr test r $r_rr (+0.2) on the same split (exit $rc)"
else
    echo "ok 2 # SKIP plink1.9 not found (splits the fileset for rr)"
    n=$((n + 1))
fi

# several gamma and alpha, --test-frac, N = 480 not a multiple of --tile 64, maps as TSV and PNG
krr --bfile ds --pheno ds.pheno --kernel gaussian --gamma 0.01,0.03 --alpha 0.1,1 \
    --test-frac 0.2 --seed 3 --tile 64 --diag fp32 --precisions fp32,fp16 --accuracy 1e-4 \
    --precision-map m.tsv --out f
rc=$?
hdr=$(printf 'FID\tIID\tPHENO1_g0.01_a0.1\tPHENO1_g0.01_a1\tPHENO1_g0.03_a0.1\tPHENO1_g0.03_a1')
[ $rc -eq 0 ] && [ "$(head -1 f.pred.tsv)" = "$hdr" ] && [ "$(wc -l <f.pred.tsv)" -eq 121 ] &&
    [ "$(awk -F'\t' 'NF != 6' f.pred.tsv | wc -l)" -eq 0 ] &&
    ! grep -qi nan f.pred.tsv
report $? "pred.tsv: FID IID and one column per (gamma, alpha), 120 test samples (exit $rc)"
[ "$(wc -l <f.krr.tsv)" -eq 5 ] &&
    [ "$(awk -F'\t' 'NR > 1 && $4 == 480 && $5 == 120 && $6 > 0 && $7 > -1 && $7 < 1' f.krr.tsv |
        wc -l)" -eq 4 ] && grep -q "TFLOP/s" f.log && grep -q "Tops/s" f.log &&
    grep -q "tiles fp64 0, fp32 [0-9]*, fp16" f.log
report $? "krr.tsv: 4 lines with n_train 480, n_test 120, MSPE, r; log has rates and map counts"
# 8 tile rows (480 = 7·64 + 32): 36 lower tiles
[ "$(head -1 m.tsv)" = "$(printf 'tile_row\ttile_col\tprecision')" ] && [ "$(wc -l <m.tsv)" -eq 37 ] &&
    [ "$(awk -F'\t' 'NR > 1 && ($1 < $2 || ($1 == $2 && $3 != "fp32"))' m.tsv | wc -l)" -eq 0 ]
report $? "precision map TSV: the 36 lower tiles, fp32 on the diagonal"

# the default precisions follow the workers: fp32 at the lowest on CPUs (fp16 tiles are widened
# in every task there: slower and less accurate), fp32,fp16,fp8 with GPUs; at this accuracy the
# same fit takes fp16 tiles when --precisions allows them
krr --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1 --test-frac 0.2 --tile 64 \
    --accuracy 1e-3 --out p0
rc0=$?
krr --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1 --test-frac 0.2 --tile 64 \
    --accuracy 1e-3 --precisions fp32,fp16 --out p1
rc1=$?
if grep -q "^runtime: .*, 0 GPUs" p0.log; then
    want="precisions fp32 (CPU only" fp16="fp16 0,"
else
    want="precisions fp32,fp16,fp8 (GPUs in use" fp16="fp16 [1-9]"
fi
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "^$want" p0.log && grep -q "tiles .*$fp16" p0.log &&
    grep -q "tiles .*fp16 [1-9]" p1.log
report $? "default precisions: '$(grep -m1 '^precisions' p0.log)'; map $(grep -o 'tiles fp64[^)]*' \
    p0.log), with fp16 allowed $(grep -o 'tiles fp64[^)]*' p1.log)"

krr --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1 --test-frac 0.2 --tile 64 \
    --precision-map m.png --out g
rc=$?
ntrain=$(sed -n 's/^split: \([0-9]*\) training.*/\1/p' g.log)
sig=$(od -An -tx1 -N8 m.png | tr -d ' \n')
[ $rc -eq 0 ] && [ "$sig" = 89504e470d0a1a0a ] && [ -n "$ntrain" ] &&
    [ "$(wc -c <m.png)" -lt $((256 * (1 + 3 * 256) / 10)) ]
report $? "precision map PNG: signature, $(wc -c <m.png) bytes (deflated: under a tenth of the \
raw 256 x 256 map alone) (exit $rc)"
if command -v python3 >/dev/null; then # an independent decoder: CRCs, zlib/Adler-32, pixels
    python3 - m.png "$ntrain" <<'EOF'
import binascii, struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
n = int(sys.argv[2])
i, idat = 8, b''
while i < len(b):
    k, = struct.unpack('>I', b[i:i + 4])
    t, d = b[i + 4:i + 8], b[i + 8:i + 8 + k]
    assert binascii.crc32(t + d) & 0xffffffff == struct.unpack('>I', b[i + 8 + k:i + 12 + k])[0]
    if t == b'IHDR': w, h = struct.unpack('>II', d[:8])
    idat += d if t == b'IDAT' else b''
    i += 12 + k
raw = zlib.decompress(idat)
row = 1 + 3 * w
assert len(raw) == h * row
px = lambda x, y: raw[y * row + 1 + 3 * x:y * row + 4 + 3 * x].hex()
# the layout (src/io/precmap.c): tiles of 64 samples, 256 // NT px each, the map's corner
# right of the left axis' widest label "NT n" and 48 px down; the legend 16 px right of it
nt = (n + 63) // 64
x0, y0, side = 12 + len('%d %d' % (nt, n)) * 6, 48, 256 // nt * nt
colours = {'b2182b', 'f4a582', '92c5de', '2166ac'}  # fp64 dark red ... fp8 dark blue
assert px(x0 + side - 1, y0) == 'ffffff' and px(x0, y0 + side - 1) in colours
assert all(px(x0 + x, y0 + y) in colours | {'ffffff'} for x in range(side) for y in range(side))
assert [px(x0 + side + 16 + 5, y0 + 16 * q + 5) for q in range(4)] == \
    ['b2182b', 'f4a582', '92c5de', '2166ac']  # the legend's swatches, fp64 to fp8
ink = lambda x1, x2, y1, y2: any(px(x, y) == '000000' for x in range(x1, x2) for y in range(y1, y2))
assert ink(x0 - 10, x0 + side, y0 - 30, y0 - 4) and ink(0, x0 - 4, y0, y0 + side)  # the axes
EOF
    report $? "precision map PNG decodes (CRC-32, zlib, Adler-32): lower tiles in the four \
colours, upper triangle white, the legend's swatches in order, labelled axes"
fi

# the default map follows --pred-tol (1e-3): the log states the map, its eps and the bound,
# which is at most the tolerance; a smaller tolerance keeps more tiles accurate
krr --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1 --test-frac 0.2 --tile 64 --out t0
rc0=$?
krr --bfile ds --pheno ds.pheno --gamma 0.03 --alpha 0.1 --test-frac 0.2 --tile 64 \
    --pred-tol 1e-12 --out t1
rc1=$?
line=$(grep -m1 "precision map (eps" t0.log)
b0=$(echo "$line" | sed -n 's/.* = \([^ ]*\) relatively.*/\1/p')
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && echo "$line" | grep -q "from --pred-tol 0.001): tiles" &&
    awk -v b="$b0" 'BEGIN { exit !(b > 0 && b <= 1e-3) }' &&
    grep -q "from --pred-tol 1e-12): tiles fp64 36, fp32 0" t1.log
report $? "default map from --pred-tol: bound $b0 <= 1e-3 in the log; --pred-tol 1e-12 all fp64"

# a map too low for positive definiteness (the issue's --band 0 --diag fp32 --precisions fp16
# on a smooth kernel with a small alpha) no longer aborts: the log says what failed and what
# was raised, and the fit goes on
krr --bfile ds --pheno ds.pheno --gamma 0.001 --alpha 1e-3 --test-frac 0.2 --tile 64 --band 0 \
    --diag fp32 --precisions fp16 --out rv
rc=$?
[ $rc -eq 0 ] && grep -q "tile Cholesky: tile ([0-9]*, [0-9]*) not positive definite under the map (tiles fp64 0, fp32 8, fp16 28, fp8 0); raised 28 tiles of fp16 or less to fp32; refactoring" rv.log &&
    grep -q "tiles fp64 0, fp32 36, fp16 0.*after the recoveries above" rv.log &&
    grep -q "1 recovery" rv.log && [ "$(wc -l <rv.pred.tsv)" -eq 121 ] && ! grep -qi nan rv.pred.tsv
report $? "band 0 fp16 map not positive definite: recovered to fp32 and logged (exit $rc)"

# K + alpha I built directly in the map's precisions: the same recovery, the same predictions
# (the same double rounded once either way; after the recovery every tile is fp32); auto
# builds in --diag's precision when K fits, and says so
krr --bfile ds --pheno ds.pheno --gamma 0.001 --alpha 1e-3 --test-frac 0.2 --tile 64 --band 0 \
    --diag fp32 --precisions fp16 --build-precision map --out rm
rc=$?
[ $rc -eq 0 ] && grep -q "raised 28 tiles of fp16 or less to fp32; refactoring" rm.log &&
    grep -q "kernel in the map's precisions" rm.log && cmp -s rv.pred.tsv rm.pred.tsv &&
    grep -q "^build-precision diag (K in the diagonal precision fits: [0-9]* MiB against [0-9]* MiB)" rv.log
report $? "--build-precision map: the recovery and predictions of the build in fp32 (exit $rc); \
auto: '$(grep -m1 '^build-precision' rv.log)'"
krr --bfile ds --pheno ds.pheno --gamma 0.01,0.03 --alpha 0.1,1 --test-frac 0.2 --seed 3 \
    --tile 64 --precisions fp32,fp16 --build-precision map --out gm
rc=$?
krr --bfile ds --pheno ds.pheno --gamma 0.01,0.03 --alpha 0.1,1 --test-frac 0.2 --seed 3 \
    --tile 64 --precisions fp32,fp16 --build-precision diag --out gd
rc2=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "dot products kept for reuse (test x train)" gm.log &&
    grep -q "dot products kept for reuse (train x train, test x train)" gd.log &&
    cmp -s gm.pred.tsv gd.pred.tsv &&
    [ "$(grep -c "kernel in the map's precisions" gm.log)" -eq 4 ]
report $? "a grid built in the map's precisions keeps no training dot products; its \
predictions are diag's (exit $rc, $rc2)"

krr_error() { expect_error "$1" "$2" "$TG_BIN" krr --quiet "${@:3}"; } # DESCRIPTION SUBSTRING ARGS...
base="--bfile ds --pheno ds.pheno --tile 64 --out e"
printf 'FID\tIID\tP\n' >allna.pheno
awk 'NR > 1 { print $1 "\t" $2 "\tNA" }' ds.pheno >>allna.pheno
awk 'NR == 1 { print; next } { print $1 "\t" $2 "\t" (NR == 2 ? $3 : "NA") }' ds.pheno >one.pheno
awk 'NR == 1 { print "FID\tIID\tA\tB\tC"; next }
    { v = NR <= 3 ? $3 : "NA"; print $1 "\t" $2 "\t" v "\t" v "\t" v }' ds.pheno >three.pheno
cp ds.bed sw.bed
cp ds.fam sw.fam
# a test cohort without one of the training SNPs (its ID renamed)
awk -v OFS='\t' 'NR == 2 { $2 = "renamed" } { print }' ds.bim >sw.bim
# 1 SNP: every sample has one of 3 genotypes, so K has rank 3 and alpha 0 leaves it singular
"$TG_BIN" simulate --quiet --out dup --trait qt --n-samples 100 --n-snps 1 --seed 2 2>/dev/null

# shellcheck disable=SC2086
{
    krr_error "--gamma 0" "--gamma 0: must be > 0" $base --gamma 0 --alpha 1 --test-frac 0.2
    krr_error "--gamma -1" "--gamma" $base --gamma 0.1,-1 --alpha 1 --test-frac 0.2
    krr_error "--alpha -1" "--alpha" $base --gamma 0.1 --alpha -1 --test-frac 0.2
    krr_error "no --gamma (gaussian)" "--gamma" $base --alpha 1 --test-frac 0.2
    krr_error "no --alpha" "--alpha" $base --gamma 0.1 --test-frac 0.2
    krr_error "--test-frac 0" "--test-frac" $base --gamma 0.1 --alpha 1 --test-frac 0
    krr_error "--test-frac 1" "--test-frac" $base --gamma 0.1 --alpha 1 --test-frac 1
    krr_error "--test-frac leaving no test sample" "no test sample" $base --gamma 0.1 --alpha 1 \
        --test-frac 0.0001
    krr_error "--test-frac leaving no training sample" "no training sample" $base --gamma 0.1 \
        --alpha 1 --test-frac 0.9999
    krr_error "neither --test-bfile nor --test-frac" "--test-frac" $base --gamma 0.1 --alpha 1
    krr_error "unknown kernel" "poly" $base --kernel poly --gamma 0.1 --alpha 1 --test-frac 0.2
    krr_error "--gamma with ibs" "gaussian kernel only" $base --kernel ibs --gamma 0.1 \
        --alpha 1 --test-frac 0.2
    krr_error "bad --precisions" "fp12" $base --gamma 0.1 --alpha 1 --test-frac 0.2 \
        --precisions fp32,fp12
    krr_error "--pred-tol 0" "--pred-tol 0: must be > 0" $base --gamma 0.1 --alpha 1 \
        --test-frac 0.2 --pred-tol 0
    krr_error "--diag fp16" "--diag" $base --gamma 0.1 --alpha 1 --test-frac 0.2 --diag fp16
    krr_error "--build-precision fp16" "--build-precision fp16: expected auto, diag or map" \
        $base --gamma 0.1 --alpha 1 --test-frac 0.2 --build-precision fp16
    krr_error "--precision-map x.jpg" ".png or .tsv" $base --gamma 0.1 --alpha 1 --test-frac 0.2 \
        --precision-map x.jpg
}
krr_error "phenotype all missing" "phenotype P has no value" --bfile ds --pheno allna.pheno \
    --gamma 0.1 --alpha 1 --test-frac 0.2 --out e
krr_error "1 training sample" "1 training sample" --bfile ds --pheno one.pheno --gamma 0.1 \
    --alpha 1 --test-bfile ds --out e
krr_error "more phenotypes than samples" "more phenotypes than samples" --bfile ds \
    --pheno three.pheno --gamma 0.1 --alpha 1 --test-bfile ds --out e
krr_error ".bim mismatch of the test cohort" "sw has no variant snp1" --bfile ds \
    --pheno ds.pheno --gamma 0.1 --alpha 1 --test-bfile sw --out e
rm -f s.pred.tsv s.krr.tsv
krr_error "alpha 0 with duplicated samples (not SPD)" "alpha" --bfile dup --pheno dup.pheno \
    --gamma 0.1 --alpha 0 --test-frac 0.2 --tile 16 --out s
grep -q "tile (0, 0) is not positive definite" err.txt && [ ! -e s.pred.tsv ] && [ ! -e s.krr.tsv ]
report $? "not SPD: the error names the tile and suggests a larger alpha; no output written"

# plink2's conventions: without --pheno the .fam's column 6 (simulate writes PHENO1 there), and
# --pheno-col-nums counting the file's columns from FID as 1
krr --bfile ds --kernel gaussian --gamma 0.1 --alpha 1 --test-frac 0.2 --tile 64 --out kfam &&
    krr --bfile ds --pheno ds.pheno --pheno-name PHENO1 --kernel gaussian --gamma 0.1 --alpha 1 \
        --test-frac 0.2 --tile 64 --out kname && cmp -s kfam.pred.tsv kname.pred.tsv &&
    krr --bfile ds --pheno ds.pheno --pheno-col-nums 3 --kernel gaussian --gamma 0.1 --alpha 1 \
        --test-frac 0.2 --tile 64 --out kcols && cmp -s kcols.pred.tsv kname.pred.tsv
report $? "no --pheno (the .fam's column 6) and --pheno-col-nums 3: the predictions of \
--pheno-name PHENO1" krr.err
krr_error "--pheno-col-nums without --pheno" "--pheno-col-nums needs --pheno" --bfile ds \
    --pheno-col-nums 3 --gamma 0.1 --alpha 1 --test-frac 0.2 --out e

tap_end
