#!/bin/sh
# hostfile.sh: csnrun reads the host files of the common launchers (Open MPI's slots= and
# max_slots=, MPICH's host:N, Slurm's node[01-02] lists and repeated lines), placing ranks on
# the hosts they name; other hosts are reached through a stand-in for ssh that runs here.
set -u
CSNRUN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/csnrun-hosts.XXXXXX")
trap 'rm -rf "$T"' EXIT
RSH="sh $HERE/fake_rsh.sh"
fail() { echo "FAIL: $*"; cat "$T/err" 2>/dev/null; exit 1; }

# hosts FILE NP EXPECTED: the ranks' hosts in rank order, space-separated.
hosts() {
    timeout -k 5 60 "$CSNRUN" --rsh "$RSH" --hostfile "$1" -np "$2" \
        sh -c 'echo "$CSN_RANK $CSN_HOST"' >"$T/out" 2>"$T/err" || fail "$1: csnrun exited $?"
    got=$(sort -n "$T/out" | cut -d' ' -f2 | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$3" ] || fail "$(basename "$1"): ranks on '$got', wanted '$3'"
}

printf 'localhost:2\n' >"$T/mpich"
hosts "$T/mpich" 2 "localhost localhost" # not a host called "localhost:2"

printf '# Open MPI\nfarA slots=2 max_slots=4\nlocalhost slots=1\n' >"$T/ompi"
hosts "$T/ompi" 3 "farA farA localhost"

printf 'far[08-10]\n' >"$T/slurm"
hosts "$T/slurm" 3 "far08 far09 far10"

printf 'farB\nfarB\nlocalhost\n' >"$T/repeat"
hosts "$T/repeat" 3 "farB farB localhost"

printf 'farC:2 max-slots=3\n' >"$T/mixed"
hosts "$T/mixed" 2 "farC farC"

# Bad forms: one line naming the file and line, exit 2.
for bad in 'far[3-1]' 'far[x]' 'far[1-2' 'farD slots=0' 'farE:0' 'farF cpus=2' 'farG max_slots=x'; do
    printf '%s\n' "$bad" >"$T/bad"
    timeout 20 "$CSNRUN" --rsh "$RSH" --hostfile "$T/bad" -np 1 true >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "'$bad': exit $rc, wanted 2"
    grep -q "bad:1:" "$T/err" || fail "'$bad': no line naming the file"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$bad': more than one line"
done
echo "hostfile: Open MPI, MPICH, Slurm forms"
