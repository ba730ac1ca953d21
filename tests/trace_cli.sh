# --trace on a small epistasis search and a small krr fit: T.trace.tsv has its header and one row
# per task (ids 0..n-1), every task ends after it starts and after its predecessors end, and
# T.gantt.png is a PNG; a folder that cannot be written is refused before the work.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

"$TG_BIN" simulate --quiet --out epi --n-samples 300 --n-snps 30 --seed 7 >/dev/null 2>&1 &&
    "$TG_BIN" simulate --quiet --out ds --trait qt --n-samples 300 --n-snps 40 --seed 5 \
        >/dev/null 2>&1 ||
    { echo "Bail out! tilegwas simulate failed"; exit 1; }

# check_trace NAME TASKS_MIN: the table and the picture of trace NAME
check_trace() {
    head -1 "$1.trace.tsv" | grep -qx "id	kernel	worker	worker_name	submit	start	end	predicted	work	preds"
    report $? "$1.trace.tsv: header"
    # one row per task, ids in order; end ≥ start; predecessors (listed before) end by the start
    awk -F'\t' -v min="$2" 'NR == 1 { next }
        { if ($1 != NR - 2 || $7 < $6 || $3 < 0 || $2 == "") bad++; e[$1] = $7
          if ($10 != "-") { k = split($10, p, ","); edges += k
              for (i = 1; i <= k; i++) if (!(p[i] in e) || e[p[i]] > $6 + 1e-6) late++ } }
        END { printf "%d tasks, %d edges, %d bad rows, %d late predecessors\n", NR - 1, edges,
                     bad, late
              exit !(NR - 1 >= min && !bad && !late) }' "$1.trace.tsv" >"$1.check" 2>&1
    report $? "$1.trace.tsv: $(cat "$1.check")" "$1.check"
    [ "$(head -c 8 "$1.gantt.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        [ "$(wc -c <"$1.gantt.png")" -gt 1000 ]
    report $? "$1.gantt.png: PNG signature, $(wc -c <"$1.gantt.png") bytes"
    if command -v python3 >/dev/null; then # an independent decoder: CRCs, zlib, the row count
        python3 - "$1.gantt.png" <<'EOF'
import binascii, struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
i, idat, w, h = 8, b'', 0, 0
while i < len(b):
    n, = struct.unpack('>I', b[i:i + 4])
    t, d = b[i + 4:i + 8], b[i + 8:i + 8 + n]
    assert binascii.crc32(t + d) & 0xffffffff == struct.unpack('>I', b[i + 8 + n:i + 12 + n])[0]
    if t == b'IHDR': w, h = struct.unpack('>II', d[:8])
    idat += d if t == b'IDAT' else b''
    i += 12 + n
raw = zlib.decompress(idat)
assert w == 1200 and h > 50 and len(raw) == h * (1 + 3 * w)
row = 1 + 3 * w
colours = {raw[y * row + 1 + 3 * x:y * row + 4 + 3 * x] for y in range(h) for x in range(0, w, 3)}
assert len(colours) >= 4  # background, row stripes, text, a kernel: not blank
EOF
        report $? "$1.gantt.png decodes: CRC-32, zlib, 1200 pixels wide, bars and text"
    fi
}

"$TG_BIN" epistasis --quiet --bfile epi --order 3 --block 8 --out e --trace et >e.out 2>e.err
report $? "epistasis --trace runs" e.err
grep -q "trace: 20 tasks in et.trace.tsv and et.gantt.png" e.log
report $? "the log names the trace (20 rounds: C(4 + 2, 3) block triples)" e.log
check_trace et 20

"$TG_BIN" krr --quiet --bfile ds --pheno ds.pheno --kernel gaussian --gamma 0.02 --alpha 1 \
    --test-frac 0.2 --tile 64 --out k --trace kt >k.out 2>k.err
report $? "krr --trace runs" k.err
check_trace kt 50
awk -F'\t' 'NR > 1 && $10 != "-"' kt.trace.tsv | grep -q .
report $? "krr's tile Cholesky has dependencies"

expect_error "--trace into a missing folder" "--trace nowhere/t" "$TG_BIN" epistasis --bfile epi \
    --out e2 --trace nowhere/t
tap_end
