#!/bin/sh
# launch.sh: runs a program directly, under csnrun, or under the MPI launcher with the flags this machine needs.
# usage: launch.sh direct|csn|mpi|lean NP PROGRAM [ARGS...]   (CSNRUN and MPIEXEC name the launchers;
# lean: nettest-lean, which forks its LEAN_NP ranks itself)
set -eu
kind=$1 np=$2
shift 2
case $kind in
direct) exec "$@" ;;
csn) exec "${CSNRUN:?CSNRUN is not set}" -np "$np" "$@" ;;
lean) LEAN_NP=$np exec "$@" ;;
mpi)
    if "${MPIEXEC:?MPIEXEC is not set}" --version 2>&1 | grep -q -e "Open MPI" -e "OpenRTE"; then
        # Open MPI refuses root without these, and more ranks than cores without --oversubscribe.
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 exec "$MPIEXEC" --oversubscribe -n "$np" "$@"
    fi
    exec "$MPIEXEC" -n "$np" "$@"
    ;;
*) echo "launch.sh: unknown kind $kind" >&2; exit 2 ;;
esac
