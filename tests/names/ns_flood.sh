#!/bin/sh
# ns_flood.sh CSNRUN NS_FLOOD unix|tcp: the name service under a flood of strangers (issue 16,
# item 5). csnrun runs with 320 descriptors (the name service's connection cap then is 256, below
# the 270 strangers), so a service that keeps strangers until a 30 s idle timeout, or stops
# accepting at its cap, makes the members' requests time out. Also checks that the refusals are
# logged in a few rate-limited lines, not one per connection.
csnrun=$1 prog=$2 mode=$3
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
opt=
[ "$mode" = tcp ] && opt=--ns-tcp
(ulimit -n 320 && exec "$csnrun" $opt --timeout 60 -np 2 "$prog" 270) 2>"$err"
rc=$?
cat "$err" >&2
if [ $rc -ne 0 ]; then
    echo "ns_flood ($mode): csnrun exited $rc" >&2
    exit 1
fi
lines=$(grep -c "did not present the job key" "$err")
echo "ns_flood ($mode): $lines log lines about refused strangers"
if [ "$lines" -lt 1 ] || [ "$lines" -gt 4 ]; then
    echo "ns_flood ($mode): expected 1..4 rate-limited log lines, got $lines" >&2
    exit 1
fi
exit 0
