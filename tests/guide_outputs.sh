# docs/USER-GUIDE.md's "Outputs" section against the files: its `sh` block (commands run at the
# top of the source tree, ending with `head -n1 FILES`) is run here on examples/, and what `head`
# prints must equal the section's `text` block byte for byte (tabs included). The `head` must
# name every .tsv the commands wrote, so that no output of theirs goes undocumented.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
guide="$TG_SRCDIR/docs/USER-GUIDE.md"
ln -s "$TG_SRCDIR/examples" examples
# block LANG: the first fenced block of LANG in the Outputs section (up to the next heading)
block() {
    awk -v lang="$1" '/^#+ / { on = $0 == "### Outputs"; next }
        on && !done && $0 == "```" lang { inside = 1; next }
        inside && $0 == "```" { inside = 0; done = 1 }
        inside' "$guide"
}
block sh >cmds.sh
block text >want.txt
grep -q "^head -n1 " cmds.sh && [ "$(grep -c '^==> ' want.txt)" -ge 5 ] && grep -q '	' want.txt
report $? "the Outputs section has its commands, a head of $(grep -c '^==> ' want.txt) files \
and tab-separated header lines" cmds.sh

# the guide's commands, with this build's binary; only head writes to got.txt
tilegwas() { "$TG_BIN" "$@" >>run.txt 2>&1 || echo "tilegwas $* failed" >>failed.txt; }
# shellcheck disable=SC1091
. ./cmds.sh >got.txt 2>head.err
[ ! -e failed.txt ] && [ ! -s head.err ]
report $? "the guide's commands run ($(grep -c '^tilegwas' cmds.sh) commands)" run.txt

diff want.txt got.txt >d.txt
report $? "the guide's header lines equal the files' byte for byte" d.txt

# every .tsv written is in the guide's head (names as head prints them)
find . -name '*.tsv' -newer cmds.sh | sed 's|^\./||' | sort >written.txt
sed -n 's/^==> \(.*\) <==$/\1/p' want.txt | sort >shown.txt
[ -s written.txt ] && diff shown.txt written.txt >d.txt
report $? "the guide shows every .tsv its commands wrote ($(wc -l <written.txt))" d.txt

tap_end
