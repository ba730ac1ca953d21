# tilegwas.1 (written at build time by scripts/make-man) against the binary's own help texts:
# every command that `tilegwas --help` lists has its section, and that section names every
# option its `tilegwas COMMAND --help` prints; groff renders the page without a warning.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

man=$(dirname "$TG_BIN")/tilegwas.1
# the page's source with roff's escaped hyphens as typed
sed 's/\\-/-/g' "$man" >page.txt 2>err.txt
report $? "tilegwas.1 exists next to the binary" err.txt

"$TG_BIN" --help >top.txt 2>&1
commands=$(sed -n '/^commands:/,$s/^  \([a-z][a-z0-9-]*\) .*/\1/p' top.txt)
[ "$(wc -w <<<"$commands")" -ge 8 ]
report $? "tilegwas --help lists the commands: $(echo $commands)" top.txt

for c in $commands; do
    # the command's section: from its .SS heading to the next heading
    awk -v h=".SS \"tilegwas $c\"" '$0 == h { on = 1; next } on && /^\.S[SH] / { exit } on' \
        page.txt >section.txt
    "$TG_BIN" "$c" --help >help.txt 2>&1
    opts=$(grep -o -- '--[a-z0-9][a-z0-9-]*' help.txt | sort -u)
    missing=
    for o in $opts; do grep -q -- "$o" section.txt || missing="$missing $o"; done
    [ -s section.txt ] && [ -n "$opts" ] && [ -z "$missing" ]
    report $? "tilegwas.1 has '$c' and its $(wc -w <<<"$opts") options${missing:+ (missing:$missing)}"
done

if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$man" >groff.txt 2>&1 && [ ! -s groff.txt ]
    report $? "groff renders tilegwas.1 without warnings" groff.txt
fi
tap_end
