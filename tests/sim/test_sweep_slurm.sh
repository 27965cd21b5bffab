#!/usr/bin/env bash
# tests/sim/test_sweep_slurm.sh COWSIM - a sweep planned, run as a Slurm job
# array on a one-node cluster on localhost, and merged (TAP).
#
# The test brings the cluster up itself, in its scratch folder: a munge key
# (mungekey), munged on its own socket, a minimal slurm.conf (one node, this
# host at 127.0.0.1, two ports of its own), slurmctld and slurmd in the
# foreground as root; and stops them at the end, whatever happens. It is
# skipped (exit 77) only where the daemons cannot start: not root, the
# Debian packages missing (tools/setup.sh installs slurmctld, slurmd,
# slurm-client and munge), or the node never coming up.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

pids=()
stop_daemons() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  pids=()
}
trap 'stop_daemons; rm -rf "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

skip_all() {
  echo "1..0 # SKIP $1"
  [ $# -gt 1 ] && printf '%s\n' "$2" | tail -15 | sed 's/^/# /'
  exit 77
}

[ "$(id -u)" = 0 ] || skip_all "slurmd runs jobs as their user and needs root here"
for tool in mungekey munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || skip_all "no $tool (bash tools/setup.sh installs it)"
done
export PATH="$PATH:/usr/sbin"

# --- munge --------------------------------------------------------------------------
m="$work/munge"
mkdir -m 700 "$m" "$work/state" "$work/spool"
mungekey -c -k "$m/munge.key" -b 1024 || skip_all "mungekey cannot make a key"
chmod 600 "$m/munge.key"
munged -F --force --key-file="$m/munge.key" --socket="$m/munge.sock" --pid-file="$m/munged.pid" \
  --log-file="$m/munged.log" --seed-file="$m/seed" >"$m/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -S "$m/munge.sock" ] && break; sleep 0.05; done
[ -S "$m/munge.sock" ] || skip_all "munged did not start" "$(cat "$m/munged.log" 2>/dev/null)"

# --- slurm ----------------------------------------------------------------------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
host=$(hostname)
for _ in $(seq 1 20); do
  ctld_port=$((20000 + RANDOM % 20000)); d_port=$((ctld_port + 1))
  port_free $ctld_port && port_free $d_port && break
done
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=cowsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$m/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=cowsim Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -c -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 1 150); do
  state=$(sinfo -h -o %t 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || skip_all "the one-node cluster did not come up (node state '$state')" \
  "$(tail -n 8 "$work/slurmctld.log" "$work/slurmd.log" "$work/slurmctld.out" "$work/slurmd.out" 2>&1)"
ok "a one-node Slurm cluster runs on localhost (ports $ctld_port, $d_port)"

# --- the sweep as a job array -------------------------------------------------------------
"$cowsim" gen seed-experiment --files 300 --snapshots 3 -o "$work/seed.trace"
grid=(--vary nodesize=4K,16K --policies inline,side-table)
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" -q -o "$work/local" 2>"$work/err"
check "the same sweep run here exits 0" "[ $? = 0 ]" "$(cat "$work/err")"
"$cowsim" sweep plan "$work/seed.trace" "${grid[@]}" -q -o "$work/sw" 2>"$work/err"
check "sweep plan writes a Slurm array script" "[ $? = 0 ] && grep -qx '#SBATCH --array=0-3' \"$work/sw/sweep.sbatch\"" \
  "$(cat "$work/err")"
timeout 120 sbatch --wait --time=5 "$work/sw/sweep.sbatch" >"$work/sbatch.out" 2>&1
status=$?
check "sbatch --wait runs the array to the end" "[ $status = 0 ]" \
  "status $status: $(cat "$work/sbatch.out"; tail -n 5 "$work/slurmctld.log" "$work"/sw/slurm-*.out 2>&1)"
check "each of the 4 tasks wrote its point" "[ \$(ls \"$work/sw/points\"/*.point 2>/dev/null | wc -l) = 4 ]"
check "and its Slurm log" "[ \$(ls \"$work/sw\"/slurm-*_*.out 2>/dev/null | wc -l) = 4 ]"
"$cowsim" sweep merge "$work/sw" -q 2>"$work/err"
check "sweep merge exits 0" "[ $? = 0 ]" "$(cat "$work/err")"
check "the merged sweep.csv is the one the sweep wrote here, byte for byte" \
  "cmp -s \"$work/local/sweep.csv\" \"$work/sw/sweep.csv\""
check "the merge wrote the plot and the report" "[ -s \"$work/sw/sweep.png\" ] && [ -s \"$work/sw/report.html\" ]"

stop_daemons
echo "1..$n"
[ $failed = 0 ]
