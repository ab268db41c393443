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
left=$(ls -A "$T/tmp" "$T/shm" | grep -v '^openmpi-sessions' | grep -v '^ompi\.' | grep -v '^$' | grep -v ':$')
if [ -n "$left" ]; then
    echo "FAIL: left behind: $(ls -AR "$T/tmp" "$T/shm")"
    exit 1
fi
echo "ok ($how -np $np $*)"
