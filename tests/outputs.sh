# The file layer through the command line: outputs appear whole or not at all (a run killed by
# SIGTERM, SIGINT or SIGKILL while writing, a full disk, a file size limit), the log says which
# outputs were completed and whether the run finished, a second run on one prefix refuses, --zst
# outputs decompress to the plain ones and compressed inputs read as the plain ones, and inputs
# that are not regular files, endless lines and byte order marks end in one clear line.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

run() { "$TG_BIN" "$@" >out.txt 2>err.txt; }
sim() { "$TG_BIN" simulate --quiet --seed 11 "$@" >/dev/null 2>&1; }
no_tmp() { ! compgen -G "$1*.tmp-*" >/dev/null; } # PREFIX: no temporary of PREFIX's outputs
if ! sim --out small --n-samples 60 --n-snps 50 --missing 0.02 ||
    ! sim --out big --n-samples 3000 --n-snps 200; then
    echo "Bail out! tilegwas simulate failed"
    exit 1
fi
# the big GRM's square text is ~9 million values: long enough to be caught while it is written
G=(grm --grm-format square --threads 2 --ngpu 0)

# ---- a run that completes: no temporaries, the log lists the outputs and ends with the time
run "${G[@]}" --bfile small --out ok
no_tmp ok && [ -s ok.rel ] && tail -n 3 ok.log | head -n 2 | tr '\n' ' ' |
    grep -qx 'wrote ok.rel wrote ok.rel.id ' && tail -n 1 ok.log | grep -q '^total time '
report $? "a complete run: ok.rel, no temporary, the log ends 'wrote ok.rel', 'wrote ok.rel.id'" \
    ok.log

# ---- killed while writing: start a big GRM, wait for its temporary .rel to have bytes, kill it
# kill_mid_write SIG PREFIX: echoes the run's exit status and the temporary's name (SIGINT set
# back to its default: a script's background jobs start with it ignored, which a run keeps)
kill_mid_write() {
    env --default-signal=INT "$TG_BIN" "${G[@]}" --bfile big --out "$2" >/dev/null 2>&1 &
    local pid=$! tmpf=
    for _ in $(seq 600); do
        tmpf=$(compgen -G "$2.rel.tmp-*" | head -n 1)
        [ -n "$tmpf" ] && [ -s "$tmpf" ] && break
        sleep 0.05
    done
    kill -"$1" $pid
    wait $pid
    echo "$? $tmpf"
}
# (not SIGHUP: the MPI library's UCX may take it for its debug mode, and the run goes on)
for sig in TERM INT; do
    read -r rc tmpf <<<"$(kill_mid_write $sig k$sig)"
    code=$((128 + $(kill -l $sig)))
    [ "$rc" -eq "$code" ] && [ -n "$tmpf" ] && [ ! -e "k$sig.rel" ] && [ ! -e "$tmpf" ] &&
        no_tmp "k$sig" &&
        tail -n 1 "k$sig.log" |
        grep -qx "did not finish: stopped by SIG$sig; unfinished outputs removed"
    report $? "SIG$sig while writing $tmpf: exit $rc, no k$sig.rel, the temporary removed, the log \
says so" "k$sig.log"
done
read -r rc tmpf <<<"$(kill_mid_write KILL kKILL)"
[ "$rc" -eq 137 ] && [ -n "$tmpf" ] && [ -e "$tmpf" ] && [ ! -e kKILL.rel ] &&
    [ ! -e kKILL.rel.id ] &&
    ! tail -n 1 kKILL.log | grep -q '^total time'
report $? "SIGKILL while writing: only the temporary $tmpf is left, never kKILL.rel" kKILL.log
# the killed run's lock died with it
run "${G[@]}" --bfile small --out kKILL && [ -s kKILL.rel ] &&
    tail -n 1 kKILL.log | grep -q '^total time'
report $? "a run on the prefix of a SIGKILLed one is not blocked by its lock" err.txt

# ---- two runs on one prefix: the second refuses at once, the first's log stays its own
"$TG_BIN" "${G[@]}" --bfile big --out two >/dev/null 2>&1 &
first=$!
for _ in $(seq 600); do grep -q '^command:' two.log 2>/dev/null && break; sleep 0.05; done
expect_error "a second run on the prefix of a running one" \
    "two.log is locked by another tilegwas run (process $first)" \
    "$TG_BIN" "${G[@]}" --bfile small --out two
kill -TERM $first
wait $first
[ "$(grep -c '^command:' two.log)" -eq 1 ] && grep -q '^command: .* --bfile big ' two.log &&
    ! grep -q 'small' two.log
report $? "the running one's log holds its own lines only" two.log

# ---- full disk: a 1 MiB tmpfs where unprivileged user namespaces allow one, and a file size limit
# full_disk DESC DIR WHY Z COMMAND...: COMMAND runs a big GRM into DIR/g (with Z: --zst), then
# leaves DIR's listing in ls.txt and the log in log.txt. It must fail with exit 1 and one error
# line naming DIR/g.rel (.zst) and WHY, leaving only DIR/g.log, whose end line says it failed.
full_disk() {
    local desc=$1 dir=$2 why=$3 z=$4
    shift 4
    "$@" >out.txt 2>err.txt
    local rc=$?
    [ $rc -eq 1 ] && [ "$(grep -c 'error' err.txt)" -eq 1 ] &&
        grep -q "error: error writing $dir/g.rel${z:+.zst}: $why" err.txt &&
        [ "$(cat ls.txt)" = g.log ] && tail -n 1 log.txt | grep -q '^did not finish: failed'
    report $? "$desc ${z:-(plain)}: exit $rc, only the log left, which says so: \
$(grep error err.txt)" err.txt
}
# a 1 MiB tmpfs, where unprivileged user namespaces allow one; a file size limit (above the
# 16 MiB or so the MPI library's shared memory takes at start, below the outputs)
mkdir -p full lim
for z in "" --zst; do
    if unshare -rm true 2>/dev/null; then
        # shellcheck disable=SC2016
        full_disk "a full disk (1 MiB tmpfs)" full "No space left on device" "$z" \
            unshare -rm sh -c 'mount -t tmpfs -o size=1m none full &&
                "$0" "$@" --bfile big --out full/g
                rc=$?; ls full >ls.txt; cp full/g.log log.txt; exit $rc' "$TG_BIN" "${G[@]}" $z
    fi
    rm -f lim/*
    # shellcheck disable=SC2016
    full_disk "a file size limit (ulimit -f 32768)" lim "File too large" "$z" \
        bash -c 'ulimit -f 32768 && "$0" "$@" --bfile big --out lim/g; rc=$?; ls lim >ls.txt
            cp lim/g.log log.txt; exit $rc' "$TG_BIN" "${G[@]}" $z
done

# ---- --zst: the outputs decompress to the plain ones; compressed inputs read as plain ones
run "${G[@]}" --bfile small --out ok --zst-level 5
grep -q -- '--zst-level 5 without --zst' err.txt
report $? "--zst-level without --zst is refused" err.txt
run "${G[@]}" --bfile small --out z --zst && [ ! -e z.rel ] &&
    zstd -qdc z.rel.zst | cmp -s - ok.rel &&
    zstd -qdc z.rel.id.zst | cmp -s - ok.rel.id && grep -qx 'wrote z.rel.zst' z.log
report $? "grm --zst: zstd -d of z.rel.zst and z.rel.id.zst equal the plain outputs" err.txt
B=(grm --grm-format square,bin --threads 2 --ngpu 0)
run "${B[@]}" --bfile small --out ok && run "${B[@]}" --bfile small --out zb --zst &&
    cmp -s zb.rel.bin ok.rel.bin && [ ! -e zb.rel.bin.zst ] &&
    zstd -qdc zb.rel.id.zst | cmp -s - ok.rel.id
report $? "grm --bin --zst: the binary .rel.bin is written as it is, the .rel.id compressed" err.txt
run "${G[@]}" --bfile small --out zt --trace zt --zst && zstd -qt zt.trace.tsv.zst &&
    [ "$(head -c 4 zt.gantt.png | od -An -tx1 | tr -d ' ')" = 89504e47 ] &&
    [ ! -e zt.gantt.png.zst ]
report $? "grm --trace T --zst: T.trace.tsv.zst is zstd, T.gantt.png a PNG as it is" err.txt
sim --out zs --n-samples 60 --n-snps 50 --missing 0.02 --zst && cmp -s zs.bed small.bed &&
    zstd -qdc zs.pheno.zst | cmp -s - small.pheno &&
    zstd -qdc zs.truth.tsv.zst | cmp -s - small.truth.tsv
report $? "simulate --zst: .pheno.zst, .truth.tsv.zst decompress to the plain files, same .bed"
# the compressed phenotypes read back: the same fit as from the plain file
run rr --threads 2 --ngpu 0 --bfile small --pheno small.pheno --lambda 10 --out rp &&
    run rr --threads 2 --ngpu 0 --bfile small --pheno zs.pheno.zst --lambda 10 --out rz --zst &&
    zstd -qdc rz.beta.tsv.zst | cmp -s - rp.beta.tsv
report $? "rr --pheno PHENO.zst --zst: its output decompresses to the plain run's" err.txt
# .bim and .fam compressed in place (plink2 reads them so), a gzipped matrix
zstd -qc small.bim >cz.bim && gzip -c small.fam >cz.fam && cp small.bed cz.bed &&
    run "${G[@]}" --bfile cz --out cz && cmp -s cz.rel ok.rel && cmp -s cz.rel.id ok.rel.id
report $? "a zstd .bim and a gzip .fam read as the plain ones (same GRM)" err.txt
awk '{print NR % 7 - 3, NR % 5}' small.bim >m.txt && gzip -c m.txt >m.txt.gz &&
    run snpmm --threads 2 --ngpu 0 --bfile small --matrix m.txt --out mp &&
    run snpmm --threads 2 --ngpu 0 --bfile small --matrix m.txt.gz --out mz &&
    cmp -s mp.snpmm.tsv mz.snpmm.tsv
report $? "snpmm --matrix M.gz gives the plain matrix's result" err.txt

# ---- inputs that are not regular files end at once, naming the file and what it is
quick_error() { # DESC SUBSTRING COMMAND...: one error line within 10 s
    local desc=$1 want=$2 rc
    shift 2
    timeout 10 "$@" >out.txt 2>err.txt
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c . err.txt)" -eq 1 ] &&
        grep -qF -- "$want" err.txt
    report $? "$desc (exit $rc): $(head -c 300 err.txt)" err.txt
}
cp small.bed dz.bed && cp small.bim dz.bim && ln -s /dev/zero dz.fam
quick_error "a .fam that is /dev/zero" \
    "cannot read dz.fam: it is a character device, not a regular file" \
    "$TG_BIN" info --bfile dz
mkfifo ff.fam && cp small.bed ff.bed && cp small.bim ff.bim
quick_error "a .fam that is a FIFO nobody writes" "cannot read ff.fam: it is a FIFO (named pipe)" \
    "$TG_BIN" info --bfile ff
mkfifo fb.bed && cp small.bim fb.bim && cp small.fam fb.fam
quick_error "a .bed that is a FIFO" "cannot read fb.bed: it is a FIFO" "$TG_BIN" info --bfile fb
mkfifo p.fifo
for opt in pheno keep; do
    quick_error "--$opt FIFO" "cannot read p.fifo: it is a FIFO" \
        "$TG_BIN" info --bfile small --$opt p.fifo
done
quick_error "--vcf FIFO" "cannot read p.fifo: it is a FIFO" "$TG_BIN" info --vcf p.fifo
mkdir adir
quick_error "--pheno a folder" "cannot read adir: it is a folder" \
    "$TG_BIN" info --bfile small --pheno adir
# an endless line (compressed, so that the test writes 10 kB, not 300 MB): refused at 256 MiB
head -c 300000000 /dev/zero | tr '\0' 'x' | zstd -q -1 >long.zst
quick_error "--pheno of one 300 MB line" "long.zst line 1: no line break in its first 256 MiB" \
    "$TG_BIN" info --bfile small --pheno long.zst
cp long.zst lf.fam && cp small.bed lf.bed && cp small.bim lf.bim
quick_error "a .fam of one 300 MB line" "lf.fam line 1: no line break in its first 256 MiB" \
    "$TG_BIN" info --bfile lf

# ---- a UTF-8 byte order mark is skipped: the first FID, chromosome and header read as without
bom() { printf '\357\273\277'; cat "$1"; }
bom small.fam >bom.fam && bom small.bim >bom.bim && cp small.bed bom.bed &&
    bom small.pheno >bom.pheno
run "${G[@]}" --bfile bom --out bom && cmp -s bom.rel.id ok.rel.id && cmp -s bom.rel ok.rel
report $? "a BOM before the .fam and the .bim: the same GRM and sample IDs" err.txt
run rr --threads 2 --ngpu 0 --bfile small --pheno bom.pheno --lambda 10 --out rb &&
    cmp -s rb.beta.tsv rp.beta.tsv
report $? "a BOM before the phenotype header: the same fit" err.txt

# ---- --out naming a folder would write hidden files
mkdir -p res
expect_error "--out dir/" "--out res/: the prefix names a folder" \
    "$TG_BIN" "${G[@]}" --bfile small --out res/
expect_error "--out ." "--out .: the prefix names a folder" \
    "$TG_BIN" "${G[@]}" --bfile small --out .
[ -z "$(ls -A res)" ]
report $? "nothing written in res/"
tap_end
