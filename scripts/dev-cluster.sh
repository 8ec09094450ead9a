#!/usr/bin/env bash
# dev-cluster.sh: a real single-node Slurm 22.05 on 127.0.0.1 for migadvisor's
# integration tests and demos. Debian's packages, no systemd: each daemon runs
# in the foreground under setsid, its PID is recorded in $STATE, and it is
# stopped only through that PID.
#
#   scripts/dev-cluster.sh up       install what is missing, write the configs, start the daemons
#   scripts/dev-cluster.sh down     cancel every job, then stop the daemons this script started
#   scripts/dev-cluster.sh status   one line per daemon, then the node and the queue
#
# The node models a Wulver MIG node with the built-in site's GRES types:
# a100_10g x2, a100_20g, a100_40g and a100 (fake device files, symlinks to /dev/null).
# Partitions gpu (default), debug_gpu and general; QoS standard, low and debug.
#
# MariaDB also holds the databases of the site store's tests (migadvisor_test
# and migadvisor_test*, for user migadvisor), and $STATE/migadvisor-site-store.cnf
# is their option file.
#
# Environment:
#   DEV_CLUSTER_STATE   state directory (default /var/tmp/slurm-local)
#   SLURM_LOCAL_NOCGROUP=1  do not use cgroups even if the kernel allows them
set -euo pipefail

STATE=${DEV_CLUSTER_STATE:-/var/tmp/slurm-local}
CLUSTER=migdev
ACCOUNT=abc123
NODE=$(hostname -s)
CONF=/etc/slurm
FAKEGPU=/var/lib/slurm/fakegpu
# python3-torch (CPU-only PyTorch, ~150 MB) runs the reference workloads in the
# 'bench run' integration test; the jobs find it as /usr/bin/python3. ruby
# renders the Open OnDemand snippets (scripts/ood) as OnDemand does.
PACKAGES=(slurm-wlm slurmctld slurmd slurm-client slurmdbd mariadb-server munge python3-torch ruby lua5.1)
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd) # start order; stop is the reverse

log() { printf 'dev-cluster: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# poll SECONDS CMD...: run CMD every 0.1 s until it succeeds; false on timeout.
poll() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# wait_for DESCRIPTION SECONDS CMD...: poll, or give up with where to look.
wait_for() {
	local what=$1 secs=$2
	shift 2
	poll "$secs" "$@" || die "$what not ready after ${secs}s (logs: $STATE/*.out, /var/log/slurm/)"
}

need_root() {
	[[ $(id -u) -eq 0 ]] || die "must run as root (it installs packages and starts daemons); run: sudo $0 $*"
}

install_packages() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
	log "installing ${missing[*]}"
	local made_policy=0
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		# Keep the packages' init scripts from starting daemons we start ourselves.
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 0755 /usr/sbin/policy-rc.d
		made_policy=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || apt-get update
	apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
	((made_policy)) && rm -f /usr/sbin/policy-rc.d
	return 0
}

# memory_cgroup_usable: can Slurm's task/cgroup enforce --mem here?
memory_cgroup_usable() {
	[[ ${SLURM_LOCAL_NOCGROUP:-0} == 1 ]] && return 1
	if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
		grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null || return 1
		CGROUP_PLUGIN=cgroup/v2
		return 0
	fi
	local probe=/sys/fs/cgroup/memory/migadvisor-probe.$$
	mkdir "$probe" 2>/dev/null || return 1
	local ok=1
	echo $((64 << 20)) >"$probe/memory.limit_in_bytes" 2>/dev/null && ok=0
	rmdir "$probe" 2>/dev/null || true
	CGROUP_PLUGIN=cgroup/v1
	return $ok
}

# install_file PATH MODE OWNER: write stdin to PATH only when it differs; report changes.
install_file() {
	local path=$1 mode=$2 owner=$3 tmp
	tmp=$(mktemp "$path.XXXXXX")
	cat >"$tmp"
	chmod "$mode" "$tmp"
	chown "$owner" "$tmp"
	if [[ -f $path ]] && cmp -s "$tmp" "$path"; then
		rm -f "$tmp"
		return 0
	fi
	mv -f "$tmp" "$path"
	CONFIG_CHANGED=1
}

write_configs() {
	local proctrack task gather gather_params=""
	if memory_cgroup_usable; then
		proctrack=proctrack/cgroup task=task/cgroup gather=jobacct_gather/cgroup
	else
		log "no usable memory cgroup: --mem is enforced by polling (jobs over it end FAILED, not OUT_OF_MEMORY)"
		proctrack=proctrack/linuxproc task=task/none gather=jobacct_gather/linux
		gather_params="JobAcctGatherParams=OverMemoryKill"
		CGROUP_PLUGIN=autodetect
	fi
	install -d -o slurm -g slurm -m 0755 "$CONF" /var/lib/slurm /var/log/slurm
	install -d -m 0755 "$FAKEGPU"
	local i
	for i in 0 1 2 3 4; do ln -sfn /dev/null "$FAKEGPU/nvidia$i"; done

	install_file "$CONF/slurm.conf" 0644 root:root <<EOF
# Written by migadvisor scripts/dev-cluster.sh; rewritten on every 'up'.
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=$proctrack
TaskPlugin=$task
PrologFlags=Contain
ReturnToService=2
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=5
MinJobAge=300
OverTimeLimit=0
MessageTimeout=10
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageTRES=gres/gpu,gres/gpu:a100_10g,gres/gpu:a100_20g,gres/gpu:a100_40g,gres/gpu:a100
AccountingStoreFlags=job_script
JobAcctGatherType=$gather
${gather_params:-#JobAcctGatherParams is unset}
JobAcctGatherFrequency=task=1
JobCompType=jobcomp/none
SlurmctldDebug=info
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdDebug=info
SlurmdLogFile=/var/log/slurm/slurmd.log
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=8192 Gres=gpu:a100_10g:2,gpu:a100_20g:1,gpu:a100_40g:1,gpu:a100:1 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=3-00:00:00 State=UP
PartitionName=debug_gpu Nodes=ALL MaxTime=8:00:00 State=UP
PartitionName=general Nodes=ALL MaxTime=3-00:00:00 State=UP
EOF

	install_file "$CONF/gres.conf" 0644 root:root <<EOF
AutoDetect=off
NodeName=$NODE Name=gpu Type=a100_10g File=$FAKEGPU/nvidia[0-1]
NodeName=$NODE Name=gpu Type=a100_20g File=$FAKEGPU/nvidia2
NodeName=$NODE Name=gpu Type=a100_40g File=$FAKEGPU/nvidia3
NodeName=$NODE Name=gpu Type=a100 File=$FAKEGPU/nvidia4
EOF

	install_file "$CONF/cgroup.conf" 0644 root:root <<EOF
CgroupPlugin=$CGROUP_PLUGIN
IgnoreSystemd=yes
CgroupAutomount=yes
ConstrainCores=yes
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
ConstrainDevices=no
EOF

	# slurmdbd refuses a config that is not 0600 and owned by SlurmUser.
	install_file "$CONF/slurmdbd.conf" 0600 slurm:slurm <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
DebugLevel=info
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurm/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StoragePort=3306
StorageUser=slurm
StoragePass=slurmdbpass
StorageLoc=slurm_acct_db
EOF

	install_file /etc/mysql/mariadb.conf.d/99-slurmdbd.cnf 0644 root:root <<EOF
[mysqld]
innodb_buffer_pool_size=512M
innodb_lock_wait_timeout=900
EOF
}

pidfile() { echo "$STATE/$1.pid"; }

# running NAME: the recorded daemon is alive and is still that program.
running() {
	local pid
	pid=$(cat "$(pidfile "$1")" 2>/dev/null) || return 1
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$1" ]]
}

# start NAME CMD...: run CMD in its own session, stdio detached, PID recorded.
start() {
	local name=$1
	shift
	running "$name" && return 0
	# setsid execs in place here (the subshell is not a group leader), so $! is the daemon.
	setsid "$@" >"$STATE/$name.out" 2>&1 </dev/null &
	echo $! >"$(pidfile "$name")"
	START_COUNT=$((START_COUNT + 1))
}

stop() {
	local name=$1 pid
	running "$name" || { rm -f "$(pidfile "$name")"; return 0; }
	pid=$(cat "$(pidfile "$name")")
	kill "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name ($pid) did not stop in 30s; killing it"
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$(pidfile "$name")"
}

munge_ok() { munge -n | unmunge; }
slurmdbd_ok() { sacctmgr -n -P show cluster format=cluster; }
slurmctld_ok() { scontrol ping | grep -q UP; }
node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1; }
node_ok() { [[ $(node_state) == idle || $(node_state) == mixed || $(node_state) == allocated ]]; }

setup_database() {
	mariadb <<'EOF'
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmdbpass';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY 'slurmdbpass';
GRANT ALL PRIVILEGES ON slurm_acct_db.* TO 'slurm'@'localhost';
CREATE DATABASE IF NOT EXISTS migadvisor_test;
CREATE USER IF NOT EXISTS 'migadvisor'@'localhost' IDENTIFIED BY 'migadvisor-dev';
ALTER USER 'migadvisor'@'localhost' IDENTIFIED BY 'migadvisor-dev';
GRANT ALL PRIVILEGES ON `migadvisor\_test%`.* TO 'migadvisor'@'localhost';
FLUSH PRIVILEGES;
EOF
	# The site store's integration tests (TestMariaDB*, in make test) connect as that
	# user, with an option file as a site's admin would keep it.
	install_file "$STATE/migadvisor-site-store.cnf" 0600 root:root <<EOF
[client]
user = migadvisor
password = migadvisor-dev
socket = /run/mysqld/mysqld.sock
database = migadvisor_test
EOF
}

# setup_accounts: the cluster, an account, QoS names the site's scripts use, and root's association.
setup_accounts() {
	local have
	have=$(sacctmgr -n -P show cluster format=cluster)
	grep -qx "$CLUSTER" <<<"$have" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
	local q
	for q in standard low debug; do
		sacctmgr -n -P show qos "$q" format=name | grep -qx "$q" || sacctmgr -i add qos "$q" >/dev/null
	done
	sacctmgr -n -P show account "$ACCOUNT" format=account | grep -qx "$ACCOUNT" ||
		sacctmgr -i add account "$ACCOUNT" Description=migadvisor Organization=dev >/dev/null
	sacctmgr -n -P show assoc where user=root account="$ACCOUNT" format=user | grep -qx root ||
		sacctmgr -i add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" >/dev/null
	sacctmgr -i modify user where name=root set DefaultAccount="$ACCOUNT" QOS=normal,standard,low,debug >/dev/null 2>&1 || true
}

cmd_up() {
	need_root up
	local t0=$SECONDS
	install -d -m 0700 "$STATE"
	install_packages
	CONFIG_CHANGED=0
	write_configs
	if ((CONFIG_CHANGED)) && running slurmctld; then
		log "configuration changed: restarting slurmd and slurmctld"
		stop slurmd
		stop slurmctld
	fi
	install -d -o munge -g munge -m 0755 /run/munge
	install -d -o mysql -g root -m 0755 /run/mysqld
	install -d -o slurm -g slurm -m 0755 /run/slurm
	START_COUNT=0

	start munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F
	wait_for munged 10 munge_ok
	start mariadbd /usr/sbin/mariadbd --user=mysql
	wait_for mariadbd 30 mariadb-admin ping
	setup_database
	start slurmdbd /usr/sbin/slurmdbd -D
	wait_for slurmdbd 30 slurmdbd_ok
	setup_accounts
	start slurmctld /usr/sbin/slurmctld -D
	wait_for slurmctld 30 slurmctld_ok
	if ! start_node && [[ ${SLURM_LOCAL_NOCGROUP:-0} != 1 ]] && grep -q '^TaskPlugin=task/cgroup' "$CONF/slurm.conf"; then
		# Slurm's cgroup plugins do not work on every kernel setup (cgroup v2 without
		# systemd is untested): run without them rather than not at all.
		log "slurmd did not come up with cgroups; falling back to memory enforcement by polling"
		stop slurmd
		stop slurmctld
		SLURM_LOCAL_NOCGROUP=1 write_configs
		start slurmctld /usr/sbin/slurmctld -D
		wait_for slurmctld 30 slurmctld_ok
		start_node || die "node $NODE not ready (logs: $STATE/slurmd.out, /var/log/slurm/slurmd.log)"
	fi
	log "up in $((SECONDS - t0))s (cluster $CLUSTER, node $NODE, $START_COUNT daemons started)"
}

# start_node starts slurmd and waits for the node to be usable, clearing a stale drain.
start_node() {
	start slurmd /usr/sbin/slurmd -D
	poll 20 sinfo -h -n "$NODE" -o %T || return 1
	local state
	state=$(node_state)
	if [[ $state == *drain* || $state == *inval* || $state == down* ]]; then
		# A drain reason survives restarts in StateSaveLocation; clear it.
		scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
	fi
	poll 20 node_ok && running slurmd
}

cmd_down() {
	need_root down
	if running slurmctld; then
		local ids
		ids=$(squeue -h -o %i 2>/dev/null || true)
		if [[ -n $ids ]]; then
			# shellcheck disable=SC2086 # one argument per job id
			scancel $ids 2>/dev/null || true
			local deadline=$((SECONDS + 30))
			while [[ -n $(squeue -h -o %i 2>/dev/null) ]] && ((SECONDS < deadline)); do sleep 0.2; done
		fi
	fi
	local i
	for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do stop "${DAEMONS[i]}"; done
	log "down"
}

cmd_status() {
	local name up=0
	for name in "${DAEMONS[@]}"; do
		if running "$name"; then
			printf '%-10s running (pid %s)\n' "$name" "$(cat "$(pidfile "$name")")"
			up=$((up + 1))
		else
			printf '%-10s stopped\n' "$name"
		fi
	done
	if ((up == ${#DAEMONS[@]})); then
		sinfo -o '%P %a %D %T %G' 2>/dev/null || true
		squeue 2>/dev/null || true
		return 0
	fi
	return 1
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
*)
	echo "usage: $0 up|down|status" >&2
	exit 2
	;;
esac
