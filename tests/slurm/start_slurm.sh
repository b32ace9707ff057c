#!/usr/bin/env bash
# Starts a single-node Slurm (munged, slurmctld, slurmd) on this machine, everything under DIR
# (created; must not exist or be empty): a generated slurm.conf, a private munge key and socket,
# state, spool and logs. Nothing in /etc or /run is read or written. Prints the line to source
# (`export SLURM_CONF=DIR/slurm.conf`) once `sinfo` shows the node idle; exits non-zero, with
# the daemons' logs on stderr, if it does not come up within 30 s. Stop it with stop_slurm.sh DIR.
# Usage: start_slurm.sh DIR [CTLD_PORT [SLURMD_PORT]]   (defaults 16817 16818)
# Needs root and Debian's slurm-wlm and munge (slurm-notes.md has the configuration it follows).
set -euo pipefail
S=$1
ctld_port=${2:-16817}
slurmd_port=${3:-16818}
for port in "$ctld_port" "$slurmd_port"; do
  # Another Slurm on the port would answer our clients (with another munge key).
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "start_slurm.sh: port $port is in use (another Slurm?); give other ports" >&2
    exit 1
  fi
done
mkdir -p "$S"/{state,spool,log,munge}
S=$(cd "$S" && pwd)
chmod 700 "$S/munge"
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$S/munge/munge.key"
munged --key-file="$S/munge/munge.key" --socket="$S/munge/sock" --pid-file="$S/munge/pid" \
       --log-file="$S/munge/log" --seed-file="$S/munge/seed" -f
H=$(hostname -s)
cpus=$(nproc)
cat > "$S/slurm.conf" <<CONF
ClusterName=dtsimtest
SlurmctldHost=$H
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/ctld.log
SlurmdLogFile=$S/log/d.log
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
NodeName=$H CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$S/slurm.conf
slurmctld -f "$S/slurm.conf"
slurmd -f "$S/slurm.conf"
for _ in $(seq 60); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qx idle && kill -0 "$(cat "$S/slurmctld.pid")" &&
     kill -0 "$(cat "$S/slurmd.pid")"; then
    echo "export SLURM_CONF=$S/slurm.conf"
    exit 0
  fi
  sleep 0.5
done
echo "start_slurm.sh: the node did not become idle within 30 s; sinfo says:" >&2
sinfo >&2 || true
for log in "$S/log/ctld.log" "$S/log/d.log" "$S/munge/log"; do
  echo "--- $log" >&2
  tail -n 20 "$log" >&2 || true
done
exit 1
