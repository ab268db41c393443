#!/bin/bash
# run.sh: runs a csn program under a PMIx launcher (mpirun.openmpi, or srun of a private Slurm) and checks that it leaves no socket, directory or shared-memory file behind; 77 when a piece is missing.
# Usage: run.sh mpirun|slurm HAVE_PMIX NP PROGRAM [ARGS...]   (RUN_TIMEOUT: seconds, default 100)
#   HAVE_PMIX: whether libcsn was built with PMIx (CMake's PMIX_FOUND: 1 or empty)
set -u
how=${1:-}
have=${2:-}
np=${3:-}
shift 3 || { echo "usage: run.sh mpirun|slurm HAVE_PMIX NP PROGRAM [ARGS...]" >&2; exit 2; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$have" = 1 ] || skip "libcsn was built without PMIx (package libpmix-dev, pkg-config pmix)"
[ -x "${1:-}" ] || skip "program ${1:-?} is not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/csn-pmixtest-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/tmp" "$T/shm"
# Every rank's job directory and shared-memory files go here, so leftovers show.
export TMPDIR="$T/tmp" CSN_SHM_DIR="$T/shm" CSN_LOOKUP_TIMEOUT=${CSN_LOOKUP_TIMEOUT:-30}
unset CSN_RANK CSN_SIZE CSN_NS CSN_JOBKEY CSN_JOBID CSN_JOBDIR CSN_HOST CSN_ADDR
here=$(cd "$(dirname "$0")" && pwd)
# What a rank killed with -9 under an earlier mpirun leaves (issue 17): its job directory with
# its socket, nobody listening. The job's first local rank removes it; a live one stays.
mkdir "$T/tmp/csn-deadjob-r3-AbCdEf" "$T/tmp/csn-livejob-r0-AbCdEf"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
    "$T/tmp/csn-deadjob-r3-AbCdEf/p3.sock" || exit 1
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); time.sleep(300)' \
    "$T/tmp/csn-livejob-r0-AbCdEf/p0.sock" &
live=$!
trap 'kill $live 2>/dev/null; wait $live 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 50); do [ -S "$T/tmp/csn-livejob-r0-AbCdEf/p0.sock" ] && break; sleep 0.1; done
# Under -DCSN_SANITIZER=address: libpmix's own leftovers are not csn's.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/lsan.supp"
case "$how" in
mpirun)
    command -v mpirun.openmpi >/dev/null 2>&1 || skip "mpirun.openmpi not installed (openmpi-bin)"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout "${RUN_TIMEOUT:-100}" mpirun.openmpi --oversubscribe -np "$np" "$@"
    rc=$?
    ;;
slurm)
    timeout "${RUN_TIMEOUT:-100}" "$here/with_slurm.sh" srun --mpi=pmix --overcommit -n "$np" "$@"
    rc=$?
    [ $rc = 77 ] && exit 77
    ;;
*)
    echo "run.sh: unknown launcher '$how' (mpirun or slurm)" >&2
    exit 2
    ;;
esac
if [ $rc != 0 ]; then
    echo "FAIL: $how -np $np $* exited $rc"
    exit 1
fi
[ -d "$T/tmp/csn-livejob-r0-AbCdEf" ] || { echo "FAIL: a live job's directory was removed"; exit 1; }
kill $live 2>/dev/null
wait $live 2>/dev/null
rm -rf "$T/tmp/csn-livejob-r0-AbCdEf"
left=$(ls -A "$T/tmp" "$T/shm" | grep -v '^openmpi-sessions' | grep -v '^ompi\.' | grep -v '^$' | grep -v ':$')
if [ -n "$left" ]; then
    echo "FAIL: left behind: $(ls -AR "$T/tmp" "$T/shm")"
    exit 1
fi
echo "ok ($how -np $np $*)"
