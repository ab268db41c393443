#!/bin/bash
# with_slurm.sh: runs COMMAND... against a private one-node Slurm (slurmctld + slurmd, no munge) started here and stopped after; exit 77 when Slurm or its PMIx plugin is missing.
# Usage: with_slurm.sh COMMAND [ARGS...]   (COMMAND sees SLURM_CONF; e.g. srun --mpi=pmix -n 2 prog)
set -u
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs jobs as root here)"
for t in slurmctld slurmd srun sinfo; do
    command -v "$t" >/dev/null 2>&1 || skip "$t not installed (packages slurmctld slurmd slurm-client)"
done
D=$(mktemp -d "${TMPDIR:-/tmp}/csn-slurm-XXXXXX") || exit 1
mkdir -p "$D/state" "$D/spool" "$D/run" "$D/log"
# Two ports nobody listens on, so that two runs of this test do not meet.
port=$((17000 + ($$ % 4000) * 2))
while ss -ltn 2>/dev/null | grep -qE ":($port|$((port + 1)))\b"; do port=$((port + 2)); done
cat >"$D/slurm.conf" <<CONF
ClusterName=csntest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$D/slurm.conf"
stop() {
    local f pid
    for f in "$D/run/slurmd.pid" "$D/run/slurmctld.pid"; do
        pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
    for _ in $(seq 50); do
        local alive=0
        for f in "$D/run/slurmd.pid" "$D/run/slurmctld.pid"; do
            pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
        done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for f in "$D/run/slurmd.pid" "$D/run/slurmctld.pid"; do
        pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    done
    rm -rf "$D"
}
trap stop EXIT
trap 'exit 130' INT TERM
slurmctld -c -f "$SLURM_CONF" >"$D/log/ctld.out" 2>&1 || { cat "$D/log/ctld.out"; echo "FAIL: slurmctld did not start"; exit 1; }
slurmd -N localhost -f "$SLURM_CONF" >"$D/log/d.out" 2>&1 || { cat "$D/log/d.out"; echo "FAIL: slurmd did not start"; exit 1; }
state=
for _ in $(seq 100); do
    state=$(sinfo -h -n localhost -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.1
done
if [ "$state" != idle ]; then
    tail -5 "$D/log/slurmctld.log" "$D/log/slurmd.log" 2>/dev/null
    echo "FAIL: the test Slurm node did not become idle (state '$state')"
    exit 1
fi
srun --mpi=list 2>&1 | grep -q pmix || skip "Slurm has no PMIx plugin (srun --mpi=list)"
"$@"
