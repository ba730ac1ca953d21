# scripts/check-layers: passes on this tree, and fails, naming file and line, on a wrong-way
# include, a StarPU header in io or algo, a CLI file including a library header other than
# io/out.h, a StarPU identifier in algo or geno code, and a function over 150 lines planted in a
# copy of the tree
# (src/geno, when the tree has none yet, included).
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
check="$TG_SRCDIR/scripts/check-layers"

"$check" "$TG_SRCDIR" >out.txt 2>&1
report $? "the tree's includes point down and its functions are short" out.txt

# plant FILE LINE...: a fresh copy of the tree in t/ with LINEs appended to t/FILE; then the
# check must fail with a line starting with FILE:N (N the first planted line) and containing WANT
fails_on() {
    local desc=$1 file=$2 want=$3
    shift 3
    rm -rf t && mkdir t && cp -R "$TG_SRCDIR/src" "$TG_SRCDIR/codelets" "$TG_SRCDIR/tests" t/
    mkdir -p "t/$(dirname "$file")" && touch "t/$file"
    local at=$(($(wc -l <"t/$file") + 1))
    printf '%s\n' "$@" >>"t/$file"
    "$check" t >out.txt 2>&1
    local rc=$?
    [ $rc -eq 1 ] && grep -q "^$file:$at: .*$want" out.txt
    report $? "$desc: $(head -1 out.txt)" out.txt
}
fails_on "runtime including algo" src/runtime/host.c 'wrong-way include "algo/cg.h"' \
    '#include "algo/cg.h"'
fails_on "io including runtime" src/io/out.c 'wrong-way include "runtime/runtime.h"' \
    '#include "runtime/runtime.h"'
fails_on "tile including codelets" src/tile/matrix.c 'wrong-way include "codelets/codelets.h"' \
    '#include "codelets/codelets.h"'
fails_on "codelets including tile" codelets/xtx.c 'wrong-way include "tile/matrix.h"' \
    '#include "tile/matrix.h"'
fails_on "a new geno layer including algo" src/geno/source.c 'wrong-way include "algo/snpmm.h"' \
    '#include "algo/snpmm.h"'
fails_on "base including StarPU" src/base/rng.c 'no StarPU, MPI or CUDA header' \
    '#include <starpu.h>'
fails_on "the api layer including the CLI" src/api.c 'wrong-way include "cli/cli.h"' \
    '#include "cli/cli.h"'
# the CLI parses, calls the library and writes: no runtime header, no io header but out.h, no
# algo header, though each is below it
fails_on "the CLI including the runtime" src/cli/calibrate.c \
    '#include "runtime/runtime.h": the CLI includes only' '#include "runtime/runtime.h"'
fails_on "the CLI including io/idmap.h" src/cli/krr_out.c \
    '#include "io/idmap.h": the CLI includes only' '#include "io/idmap.h"'
fails_on "the CLI including an algo header" src/cli/rr.c \
    '#include "algo/rr.h": the CLI includes only' '#include "algo/rr.h"'
# algorithms and genotypes reach StarPU through the runtime's vocabulary and tg_insert_*
fails_on "an algorithm calling StarPU" src/algo/grm.c \
    'starpu_task_wait_for_all: algo and geno name no StarPU identifier' \
    'static void planted(void) { starpu_task_wait_for_all(); }'
fails_on "geno naming a StarPU constant" src/geno/pass.c \
    'STARPU_MAIN_RAM: algo and geno name no StarPU identifier' \
    'static const int planted = STARPU_MAIN_RAM;'
fails_on "an algorithm including StarPU" src/algo/cg.c 'no StarPU, MPI or CUDA header' \
    '#include <starpu.h>'

# a function of 151 lines fails, one of 150 passes (its body's braces included)
body() { echo "int planted(void) {"; for _ in $(seq $(($1 - 2))); do echo "    ;"; done; echo "}"; }
mapfile -t long < <(body 151)
fails_on "a function of 151 lines" src/algo/grm.c "function planted is 151 lines" "${long[@]}"
rm -rf t && mkdir t && cp -R "$TG_SRCDIR/src" "$TG_SRCDIR/codelets" "$TG_SRCDIR/tests" t/
body 150 >>t/src/algo/grm.c
"$check" t >out.txt 2>&1
report $? "a function of 150 lines passes" out.txt
# what may be included is not flagged: downward includes in a new geno layer and from algo
rm -rf t && mkdir t && cp -R "$TG_SRCDIR/src" "$TG_SRCDIR/codelets" "$TG_SRCDIR/tests" t/
mkdir -p t/src/geno && printf '#include "tile/matrix.h"\n#include "codelets/codelets.h"\n' >t/src/geno/g.c
echo '#include "geno/g.h"' >>t/src/algo/grm.c
printf '#include "io/out.h"\n#include "cli/cli.h"\n#include "config.h"\n' >>t/src/cli/info.c
# a StarPU setting named in a comment or a message, and a name that merely contains starpu_
printf '%s\n' '/* STARPU_NCPU: */' 'static const char *planted = "set STARPU_NCPU"; // starpu_malloc' \
    'int tg_starpu_x;' >>t/src/algo/grm.c
"$check" t >out.txt 2>&1
report $? "geno including tile and codelets, algo including geno, the CLI including io/out.h, \
cli/ and config.h, StarPU named in algo comments and strings: allowed" out.txt
tap_end
