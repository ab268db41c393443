# tests/bench/common.sh: what the tests of bench/'s scripts share (sourced).
fail() { echo "FAIL: $*"; exit 1; }
# refused CMD...: CMD must exit 2 with exactly one line on stderr (an argument error).
refused() {
    err=$("$@" 2>&1 >/dev/null)
    st=$?
    [ "$st" = 2 ] || fail "'$*' exited $st, not 2"
    [ "$(echo "$err" | wc -l)" = 1 ] || fail "'$*' printed more than one line: $err"
}
