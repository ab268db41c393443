#!/bin/bash
# install_check.sh: installs csn into a temporary prefix and, with no environment variables set
# (no PATH additions, LD_LIBRARY_PATH, PKG_CONFIG_PATH or CMAKE_PREFIX_PATH), builds the README's
# hello with pkg-config (shared and -static) and with find_package(csn) (csn::csn and
# csn::csn_static), runs each under the installed csnrun, checks that libcsn.so needs only the C
# library, runs every installed program's --help and checks the man pages and docs.
set -euo pipefail
build=$1 src=$2 san=${3:-}
flags=""
[ -n "$san" ] && flags="-fsanitize=$san" # an instrumented library needs an instrumented program
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install: FAIL: $*" >&2; exit 1; }
P=$tmp/prefix
cmake --install "$build" --prefix "$P" >/dev/null
# A clean environment for everything the user does after the install.
clean() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" "$@"; }

# The README's program, taken from the README itself (the block after "A complete program").
awk '/^A complete program/ { on = 1 } on && /^```c$/ { inblk = 1; next }
     inblk && /^```$/ { exit } inblk { print }' "$src/README.md" >"$tmp/hello.c"
grep -q csn_job_size "$tmp/hello.c" || fail "no hello program in README.md"
pc=$P/lib/pkgconfig/csn.pc
expect() { # expect N OUTPUT: N-1 lines of "sink received string: Hello world"
    local n
    n=$(grep -c "^sink received string: Hello world$" "$2" || true)
    [ "$n" = "$(($1 - 1))" ] || { cat "$2" >&2; fail "$3: $n of $(($1 - 1)) messages"; }
}

# pkg-config, shared.
clean cc $flags "$tmp/hello.c" -o "$tmp/hello" $(clean pkg-config --cflags --libs "$pc")
clean "$P/bin/csnrun" -np 3 "$tmp/hello" >"$tmp/out" || fail "pkg-config shared hello exited $?"
expect 3 "$tmp/out" "pkg-config shared"

# pkg-config, fully static (the sanitizers' runtimes do not link statically).
if [ -z "$san" ]; then
    clean cc -static "$tmp/hello.c" -o "$tmp/hello-static" \
        $(clean pkg-config --static --cflags --libs "$pc") 2>"$tmp/ld.err" ||
        { cat "$tmp/ld.err" >&2; fail "cc -static with pkg-config --static failed"; }
    if readelf -d "$tmp/hello-static" 2>/dev/null | grep -q NEEDED; then
        fail "the -static hello has shared-library dependencies"
    fi
    clean "$P/bin/csnrun" -np 2 "$tmp/hello-static" >"$tmp/out" || fail "static hello exited $?"
    expect 2 "$tmp/out" "pkg-config static"
fi

# A program written for the free CSN's API, unchanged, with pkg-config csn-meiko.
clean cc $flags "$src/tests/compat/rxhello.c" -o "$tmp/rxhello" $(clean pkg-config --cflags --libs "$P/lib/pkgconfig/csn-meiko.pc") ||
    fail "rxhello does not build with pkg-config csn-meiko"
clean cc $flags "$src/tests/compat/txhello.c" -o "$tmp/txhello" $(clean pkg-config --cflags --libs "$P/lib/pkgconfig/csn-meiko.pc") ||
    fail "txhello does not build with pkg-config csn-meiko"
printf '1 %s\n1 %s\n' "$tmp/rxhello" "$tmp/txhello" >"$tmp/meiko.spec"
clean "$P/bin/csnrun" "$tmp/meiko.spec" >"$tmp/out" || fail "the free CSN hello exited $?"
grep -q "^sink answered 42$" "$tmp/out" || fail "the free CSN hello: $(cat "$tmp/out")"

# libcsn.so depends on the C library alone (PMIx is a dlopened component).
needed=$(readelf -d "$P/lib/libcsn.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
         grep -v -E '^(libc|libpthread)\.so' | grep -v -E '^lib(asan|tsan|ubsan|m|gcc_s)\.so' || true)
[ -z "$needed" ] || fail "libcsn.so needs $needed"

# The CMake package, shared and static.
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.18)
project(hello C)
find_package(csn REQUIRED)
add_executable(hello-shared $tmp/hello.c)
target_link_libraries(hello-shared csn::csn)
add_executable(hello-static $tmp/hello.c)
target_link_libraries(hello-static csn::csn_static)
EOC
clean cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$flags" \
    >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log" >&2; fail "find_package(csn) failed"; }
clean cmake --build "$tmp/cm/b" >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log" >&2; fail "CMake build failed"; }
for h in hello-shared hello-static; do
    clean "$P/bin/csnrun" -np 3 "$tmp/cm/b/$h" >"$tmp/out" || fail "$h exited $?"
    expect 3 "$tmp/out" "find_package $h"
done

# Every installed program answers --help (exit 0, a usage line on stdout) and --version.
for prog in "$P"/bin/*; do
    name=$(basename "$prog")
    case $name in *-mpi) env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) ;; *) env=() ;; esac
    out=$(clean "${env[@]}" timeout 20 "$prog" --help 2>"$tmp/err") ||
        { cat "$tmp/err" >&2; fail "$name --help exited $?"; }
    grep -qi "usage" <<<"$out" || fail "$name --help printed no usage"
done
for prog in csnrun nettest pingpong logp pipeline threadtest; do
    [ -x "$P/bin/$prog" ] || fail "bin/$prog not installed"
    v=$(clean timeout 20 "$P/bin/$prog" --version) || fail "$prog --version exited $?"
    grep -q "[0-9]\.[0-9]" <<<"$v" || fail "$prog --version printed '$v'"
done

# Man pages: csn(3) with a page per call, and one per program; docs.
for page in man3/csn.3 man3/csn_open.3 man3/csn_test.3 man1/csnrun.1 man1/nettest.1 \
    man1/pingpong.1 man1/logp.1 man1/pipeline.1 man1/threadtest.1; do
    [ -f "$P/share/man/$page" ] || fail "man page $page not installed"
done
if command -v groff >/dev/null; then
    for f in "$P"/share/man/man*/*; do
        if head -1 "$f" | grep -q '^\.so '; then # a page name of csn(3)
            [ -f "$P/share/man/$(head -1 "$f" | cut -d' ' -f2)" ] || fail "$(basename "$f"): dangling .so"
            continue
        fi
        w=$(groff -man -Tutf8 -ww -z "$f" 2>&1 || true)
        [ -z "$w" ] || fail "$(basename "$f"): $w"
    done
fi
[ -f "$P/share/doc/csn/api.md" ] || fail "docs not installed"
echo "install: pkg-config (shared, static), find_package (shared, static), --help of $(ls "$P/bin" | wc -l) programs, man pages"
