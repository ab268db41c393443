#!/bin/sh
# install_check.sh: installs csn into a temporary prefix, builds the README's hello with pkg-config and with the CMake package, and runs it under the installed csnrun.
set -eu
build=$1 san=${2:-}
flags=""
[ -n "$san" ] && flags="-fsanitize=$san" # an instrumented library needs an instrumented program
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cat >"$tmp/hello.c" <<'EOC'
#include <csn.h>
#include <stdio.h>
int main(void)
{
    csn_transport *t;
    csn_netid peer = CSN_NULL_NETID;
    char buf[32];
    size_t got;
    if (csn_open(&t) != CSN_OK)
        return 1;
    if (csn_job_rank() == 0) {
        if (csn_register_name(t, "sink") != CSN_OK || csn_rx(t, &peer, buf, sizeof buf, &got) != CSN_OK)
            return 1;
        printf("sink received string: %s\n", buf);
    } else if (csn_lookup_name(&peer, "sink") != CSN_OK || csn_tx(t, peer, "Hello world", 12) != CSN_OK) {
        return 1;
    }
    return csn_close(&t) == CSN_OK ? 0 : 1;
}
EOC
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" \
    cc $flags "$tmp/hello.c" -o "$tmp/hello" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs csn) \
    -Wl,-rpath,"$tmp/prefix/lib"
"$tmp/prefix/bin/csnrun" -np 2 "$tmp/hello" | grep -q "sink received string: Hello world"
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.18)
project(hello C)
find_package(csn REQUIRED)
add_executable(hello2 $tmp/hello.c)
target_link_libraries(hello2 csn::csn)
EOC
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
"$tmp/prefix/bin/csnrun" -np 2 "$tmp/cm/b/hello2" | grep -q "sink received string: Hello world"
echo "install: pkg-config and CMake package builds run"
