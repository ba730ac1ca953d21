# The installed tree as another project uses it: `make install DESTDIR=...` into a temporary
# folder, then a small C program built with cc and nothing but `pkg-config --cflags --libs
# tilegwas` (prefix redirected into DESTDIR) links the shared library, runs without
# LD_LIBRARY_PATH (the .pc's rpaths), starts and stops the runtime on one CPU worker, and gets
# IEEE binary16 values right; the man page, docs and perfmodels are installed.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

build=$(dirname "$TG_BIN")
make -C "$build" install DESTDIR="$tmp/root" >install.txt 2>&1
report $? "make install DESTDIR=..." install.txt
prefix=$(sed -n 's/^prefix=//p' "$build/tilegwas.pc")
root=$tmp/root$prefix
pcdir=$(dirname "$(find "$root" -name tilegwas.pc | head -1)")
pc() { PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$root" "$@" tilegwas; }

lib=$(pc --variable=libdir)
so=$(readlink -f "$lib/libtilegwas.so")
[ -f "$so" ] && [ "$so" != "$lib/libtilegwas.so" ] && [ -f "$lib/libtilegwas.a" ] &&
    readelf -d "$so" | grep -q 'SONAME.*\[libtilegwas\.so\.4\]'
report $? "libtilegwas.so -> $(basename "$so") (SONAME libtilegwas.so.4) beside libtilegwas.a"

for f in share/man/man1/tilegwas.1 share/doc/tilegwas/README.md share/doc/tilegwas/USER-GUIDE.md \
    include/tilegwas.h bin/tilegwas; do
    [ -s "$root/$f" ] || missing="${missing:-} $f"
done
report "$([ -z "${missing:-}" ]; echo $?)" "installed: man page, docs, header, CLI${missing:+ (missing:$missing)}"

cat >prog.c <<'C'
#include <stdio.h>
#include <tilegwas.h>
int main(void) {
    /* binary16: 1 = 0x3C00, 1/3 rounds to 0x3555 = 1365/4096 */
    if (tg_fp16_from_double(1.0) != 0x3C00 || tg_fp16_from_double(1.0 / 3) != 0x3555 ||
        tg_fp16_to_double(0x3555) != 1365.0 / 4096) {
        fprintf(stderr, "fp16 conversions wrong\n");
        return 1;
    }
    tg_runtime_opts o = tg_runtime_defaults();
    o.ncpu = 1;
    o.ngpu = 0;
    tg_error err;
    if (tg_runtime_start(&o, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int ncpu = tg_runtime_ncpu();
    tg_runtime_stop();
    printf("ncpu %d\n", ncpu);
    return ncpu != 1;
}
C
# shellcheck disable=SC2046
cc -o prog prog.c $(pc --cflags --libs) >cc.txt 2>&1
report $? "cc prog.c \$(pkg-config --cflags --libs tilegwas)" cc.txt
readelf -d prog 2>/dev/null | grep -q 'NEEDED.*\[libtilegwas\.so\.4\]'
report $? "the program links libtilegwas.so.4"
env -u LD_LIBRARY_PATH ./prog >prog.txt 2>&1 && grep -qx 'ncpu 1' prog.txt
report $? "it runs: binary16 values, runtime started on 1 CPU worker and stopped" prog.txt
tap_end
