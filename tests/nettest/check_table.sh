#!/bin/sh
# check_table.sh: checks a nettest output file against the seed's format: header, table rows, total time, best values = column maxima.
# usage: check_table.sh FILE ROWS CHAOS_LINKS   (CHAOS_LINKS "off" when the Chaos tests were off)
set -eu
file=$1 rows=$2 links=$3
[ -s "$file" ] || { echo "check_table: $file is missing or empty" >&2; exit 1; }
awk -v rows="$rows" -v links="$links" '
function fail(msg) { print "check_table: line " NR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
NR == 1 {
    if ($0 !~ /^NETTEST\/(csn|MPI|lean) of [0-9][0-9][0-9][0-9]\/[0-9][0-9]\/[0-9][0-9] is running with following parameters:$/)
        fail("bad first line: " $0)
    next
}
/^\tMessage length unit is 1/ { unit = 1 }
/^\tMessages: [0-9]+ to [0-9]+ units, step [0-9]+, multiplier [0-9]+$/ { msgs = 1 }
/^\t[0-9]+ times for each test routine, [0-9]+ iterations for whole test$/ { times = 1 }
/^\tRunning chaos test with [0-9]+ logical links used\.$/ { chaos = $5 }
/^\tChaos test is off\.$/ { chaos = "off" }
/^\tNodes: / { nodes = NF - 1 }
/^\tNetwork throughput values in MB\/sec/ { thr = 1 }
/^Size,[bKM]\tStar\tStar2\tChaos\tChaos2\tRing\tRing2$/ { intable = 1; next }
intable && /^$/ { intable = 0; next }
intable {
    n = split($0, f, "\t")
    if (n != 7) fail("a table row needs 7 tab-separated fields: " $0)
    if (f[1] !~ /^[0-9]+$/) fail("bad size " f[1])
    for (i = 2; i <= 7; i++) {
        if (f[i] == "-") { if (links != "off" || (i != 4 && i != 5)) fail("unexpected - in column " i); continue }
        if (f[i] !~ /^[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$/) fail("bad value " f[i])
        if (f[1] + 0 > 0 && f[i] + 0 <= 0) fail("zero rate for size " f[1])
        if (f[1] + 0 == 0 && f[i] + 0 != 0) fail("non-zero rate for size 0")
        if (!(i in max) || f[i] + 0 > max[i]) max[i] = f[i] + 0
    }
    nrows++
    next
}
/^(CSN|MPI|LEAN) Network Test complete in [0-9]+\.[0-9][0-9] sec$/ { done = 1 }
/^\tBest network throughput values in MB\/sec$/ { best = NR }
best && NR == best + 1 && $0 != "\tStar\tStar2\tChaos\tChaos2\tRing\tRing2" { fail("bad best heading") }
best && NR == best + 2 {
    n = split($0, f, "\t")
    if (n != 7 || f[1] != "") fail("bad best values line: " $0)
    for (i = 2; i <= 7; i++) {
        if (f[i] == "-") { if (i in max) fail("best is - but the column has values"); continue }
        if (!(i in max) || f[i] + 0 != max[i]) fail("best value " f[i] " of column " i " is not the column maximum " max[i])
    }
    bestok = 1
}
END {
    if (bad) exit 1
    if (!unit || !msgs || !times || !thr) { print "check_table: a parameter header line is missing" > "/dev/stderr"; exit 1 }
    if (chaos != links) { print "check_table: chaos line says " chaos ", expected " links > "/dev/stderr"; exit 1 }
    if (nodes < 2) { print "check_table: no node list" > "/dev/stderr"; exit 1 }
    if (nrows != rows) { print "check_table: " nrows " table rows, expected " rows > "/dev/stderr"; exit 1 }
    if (!done) { print "check_table: no \"Network Test complete\" line" > "/dev/stderr"; exit 1 }
    if (!bestok) { print "check_table: no best values" > "/dev/stderr"; exit 1 }
}' "$file"
