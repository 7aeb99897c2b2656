#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A cluster on one machine: N simulated hosts for running MPI jobs over TCP.
#
# Usage:
#   scripts/cluster.sh up N [--slots S] [--bw RATE] [--delay MS] [--subnet A.B.C] [--tag T]
#                           [--cpu-group]
#   scripts/cluster.sh down [--tag T]
#   scripts/cluster.sh status
#   scripts/cluster.sh options            the mpirun options of the cluster that is up
#   scripts/cluster.sh exec HOST CMD...   run CMD on HOST (its namespaces and hostname)
#   scripts/cluster.sh check              can this machine host a cluster? (exit 0 or 77)
#
#   mpirun $(scripts/cluster.sh up 4 | tail -1) -np 8 ./app
#   scripts/cluster.sh down
#
# Each host fwdioc-h0 .. fwdioc-h<N-1> is a network namespace of that name
# holding a loopback and one end of a veth pair (fwdioc-nic, address A.B.C.<i+1>);
# the other ends (fwdioc-h<i>, in the root namespace) are joined by the bridge
# fwdioc-br, which has address A.B.C.254 so that the Open MPI daemons in the
# hosts can reach mpirun, which stays in the root namespace. The subnet is
# 10.213.0.0/24 unless --subnet says otherwise; `up` refuses one that is already
# in use. Commands enter a host through the rsh agent that `up` writes to
# /run/fwdio-cluster/agent: it runs them in the host's network namespace and in a
# fresh UTS namespace whose hostname is the host's name, so Open MPI sees N
# nodes: ranks on different hosts talk TCP over the veths, ranks of one host
# shared memory, and MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) splits by host.
# The host names are added to /etc/hosts (lines ending in "# fwdio-cluster").
#
# CPU (--cpu-group; bench/testbed asks for it): the hosts share this
# machine's cores as the ranks of one job on one node do. Open MPI's daemon
# starts a session of its own on every host, and where the kernel groups CPU
# time by session (sched_autogroup_enabled), each host's ranks are a
# scheduling group of their own: with more slots than cores, the kernel then
# balances the groups' weights instead of the ranks, so one rank may keep a
# core to itself while the others share the other one (a run 10-40x longer
# than it should be, at random: docs/results/local-tier.md). With
# --cpu-group the agent puts every command it runs into one CPU cgroup of
# the cluster's (/sys/fs/cgroup/cpu/fwdio-cluster, or fwdio-cluster under a
# cgroup2 mount whose root delegates the cpu controller), as a batch system
# puts a job's processes into one, weighing as much as the hosts' sessions
# did together (one session's default weight per host); `up` says so, or
# says why it could not. Without it `up` says whether the hosts are groups
# of their own. Not the default: with the group, a cluster job run beside a
# parallel test suite (the ctest fixture's) hung now and then in its first
# TCP connections between hosts (2 of 2 clean-clone runs, 1 of 3 under a
# similar load), which the per-session groups never did; the cause is not
# known (docs/results/local-tier.md).
#
# `up` prints what it made and, as its last line, the options to add to mpirun:
# the hosts with S slots each (default 2), the agent (with tree spawn off, so
# that mpirun itself starts every daemon), pml ob1 with the tcp, self and vader
# BTLs (so that UCX, which would pick its own transports, stays out), and the
# subnet for the BTL and for the daemons' out-of-band channel back to mpirun,
# and, when the hosts' slots outnumber this machine's cores, mpi_yield_when_idle
# (idle ranks yield, as on one oversubscribed host). `status` and `options` print it again while the cluster is up. The hosts
# share this machine's file systems, /dev/shm and process IDs; only the network
# and the hostname are their own.
#
# Link shaping (optional), on every host's veth:
#   --bw RATE    bandwidth of each host's link, in each direction, in tc's
#                syntax: 10gbit, 500mbit, 100mbps (bytes/s) ...; tbf qdiscs.
#   --delay MS   latency added to every packet a host sends (so the round trip
#                between two hosts gains 2 x MS); needs the kernel's netem qdisc.
#
# Everything made is recorded in /run/fwdio-cluster/state as it is made; `down`
# removes exactly what that file lists (after stopping the processes still
# running in the hosts), and nothing else: `up` refuses to start when a name
# it would use (namespace, link, /etc/hosts entry) or its subnet already exists.
# A cluster that is up is left alone by `up`, which says so and fails: run
# `down` first. `down` with no cluster up does nothing and succeeds. A failed
# `up` removes what it had made. `up --tag T` names the cluster's owner (the
# ctest fixture uses its build directory) and `down --tag T` removes a cluster
# only if it carries that tag, so that one user's cleanup cannot take down
# another's cluster.
#
# Needs root, iproute2 (ip, tc), util-linux (unshare, flock), hostname, and a
# kernel that allows network and UTS namespaces, veth pairs and bridges.
# Exit status: 0 done; 1 error; 2 bad usage; 3 (status, options) no cluster is
# up; 4 (up) a cluster is already up; 77 this machine cannot host a cluster (not root, a tool missing,
# namespaces not permitted), with the reason on stderr.
set -euo pipefail

readonly PREFIX=fwdioc
readonly BRIDGE=$PREFIX-br
readonly NIC=$PREFIX-nic
readonly STATE_DIR=/run/fwdio-cluster
readonly STATE=$STATE_DIR/state
readonly AGENT=$STATE_DIR/agent
readonly ETC_HOSTS=/etc/hosts
readonly HOSTS_MARK="# fwdio-cluster"
readonly MAX_HOSTS=64
readonly CGROUP_NAME=fwdio-cluster
readonly EXIT_UNSUPPORTED=77
readonly EXIT_NOT_UP=3
readonly EXIT_ALREADY_UP=4

script=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")

say() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: error: %s\n' "$*" >&2; exit 1; }
unsupported() { printf 'cluster: unavailable here: %s\n' "$*" >&2; exit "$EXIT_UNSUPPORTED"; }
usage_error() { printf 'cluster: %s (see --help)\n' "$*" >&2; exit 2; }
usage() { sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# ---------------------------------------------------------------------------
# What this machine must offer
# ---------------------------------------------------------------------------

# Debian package of each tool the script runs.
declare -A TOOL_PACKAGE=([ip]=iproute2 [tc]=iproute2 [unshare]=util-linux [flock]=util-linux
                         [hostname]=hostname)

require_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 ||
            unsupported "'$tool' not found (Debian package ${TOOL_PACKAGE[$tool]:-?})"
    done
}

require_root() {
    [[ $(id -u) -eq 0 ]] ||
        unsupported "needs root: network namespaces, veth pairs and a bridge need CAP_SYS_ADMIN and CAP_NET_ADMIN (run as root or with sudo)"
}

# Namespaces, a bridge and a veth pair, tried in a throwaway network namespace
# so that nothing outside it is touched.
probe_kernel() {
    local out
    if ! out=$(unshare --net --uts /bin/sh -c 'hostname fwdioc-probe' 2>&1); then
        unsupported "cannot create network and UTS namespaces (unshare --net --uts: ${out:-failed}); a container needs CAP_SYS_ADMIN and CAP_NET_ADMIN (e.g. docker run --privileged)"
    fi
    if ! out=$(unshare --net /bin/sh -c \
        "ip link add $PREFIX-pbr type bridge && ip link add $PREFIX-pa type veth peer name $PREFIX-pb" 2>&1); then
        unsupported "the kernel cannot make a bridge and a veth pair (${out:-failed}): needs CONFIG_BRIDGE and CONFIG_VETH"
    fi
}

# A qdisc kind is available if it can be added to a veth in a throwaway namespace.
probe_qdisc() {
    local kind=$1
    shift
    unshare --net /bin/sh -c \
        "ip link add $PREFIX-pa type veth peer name $PREFIX-pb && tc qdisc add dev $PREFIX-pa root $kind $*" \
        >/dev/null 2>&1
}

check_machine() {
    require_root
    require_tools ip unshare flock hostname
    probe_kernel
}

# ---------------------------------------------------------------------------
# State: /run/fwdio-cluster/state, one "key value..." per line. Keys: hosts,
# slots, subnet, created, shaping, tag, host NAME IP, and `made KIND NAME...` for
# everything made, in the order it was made.
# ---------------------------------------------------------------------------

state_get() { sed -n "s/^$1 //p" "$STATE" | head -n 1; }
state_hosts() { sed -n 's/^host \([^ ]*\) .*/\1/p' "$STATE"; }
state_host_ip() { awk -v h="$1" '$1 == "host" && $2 == h { print $3 }' "$STATE"; }
record() { printf '%s\n' "$*" >>"$STATE"; }
made() { record made "$@"; }

# Serialise up/down/status on a lock of the state directory itself, so that
# nothing but the directory is left while no cluster is up. A `down` may have
# removed the directory while we waited: then take the lock again.
lock_state() {
    local ino
    while :; do
        mkdir -p "$STATE_DIR"
        exec 9<"$STATE_DIR"
        flock -w 120 9 || die "another cluster.sh held $STATE_DIR for 2 minutes"
        ino=$(stat -c %i "$STATE_DIR" 2>/dev/null || echo gone)
        [[ $ino == "$(stat -L -c %i /proc/self/fd/9)" ]] && return 0
        exec 9<&-
    done
}

# The state directory goes when no cluster is up and nothing else is in it.
drop_state_dir() {
    rmdir "$STATE_DIR" 2>/dev/null || true
}

cluster_is_up() { [[ -f $STATE ]]; }

# " (tag T)" for a tagged cluster.
describe_tag() {
    local tag
    tag=$(state_get tag)
    [[ -z $tag ]] || printf ' (tag %s)' "$tag"
}

# ---------------------------------------------------------------------------
# /etc/hosts lines, edited in place: in a container the file is often a bind
# mount, which a rename (sed -i) cannot replace.
# ---------------------------------------------------------------------------

hosts_add_line() {
    # A file that does not end in a newline would join our line to its last.
    if [[ -n $(tail -c 1 "$ETC_HOSTS") ]]; then
        printf '\n' >>"$ETC_HOSTS"
    fi
    printf '%s\t%s\t%s\n' "$1" "$2" "$HOSTS_MARK" >>"$ETC_HOSTS"
}

# Drop the line "IP NAME ... # fwdio-cluster" and keep every other byte.
hosts_remove_line() {
    local ip=$1 name=$2 kept
    kept=$(mktemp "${TMPDIR:-/tmp}/fwdio-cluster-hosts.XXXXXX")
    awk -v ip="$ip" -v name="$name" -v mark="$HOSTS_MARK" '
        !($1 == ip && $2 == name && index($0, mark) > 0) { print }' "$ETC_HOSTS" >"$kept" &&
        cat "$kept" >"$ETC_HOSTS"
    local rc=$?
    rm -f -- "$kept"
    return "$rc"
}

# ---------------------------------------------------------------------------
# Link shaping
# ---------------------------------------------------------------------------

# RATE in tc's syntax (NUMBER[k|m|g|t](bit|bps)) to bytes per second.
rate_bytes_per_s() {
    local r=${1,,}
    [[ $r =~ ^([0-9]+(\.[0-9]+)?)([kmgt]?)(bit|bps)$ ]] || return 1
    awk -v n="${BASH_REMATCH[1]}" -v p="${BASH_REMATCH[3]}" -v u="${BASH_REMATCH[4]}" 'BEGIN {
        m = 1; if (p == "k") m = 1e3; else if (p == "m") m = 1e6; else if (p == "g") m = 1e9;
        else if (p == "t") m = 1e12;
        b = n * m; if (u == "bit") b /= 8;
        if (b < 1000) exit 1;
        printf "%.0f\n", b }'
}

# tbf RATE on one device: a bucket of 4 ms at that rate, and at least 64 KiB so
# that one segment of a TSO/GSO veth fits.
add_tbf() {
    local dev=$1 rate=$2 bytes=$3 netns=${4:-} burst
    burst=$((bytes / 250))
    ((burst >= 65536)) || burst=65536
    tc ${netns:+-n "$netns"} qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
}

# netem: DELAY ms on every packet the host sends (and its bandwidth, if any).
add_netem() {
    local dev=$1 delay=$2 rate=$3 netns=$4
    tc -n "$netns" qdisc add dev "$dev" root netem delay "${delay}ms" ${rate:+rate "$rate"} limit 100000
}

# ---------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------

# Nothing that `up` would make may exist already.
check_names_free() {
    local n=$1 subnet=$2 i name clash=()
    for ((i = 0; i < n; i++)); do
        name=$PREFIX-h$i
        [[ -e /run/netns/$name ]] && clash+=("network namespace $name")
        ip link show dev "$name" >/dev/null 2>&1 && clash+=("link $name")
        awk -v n="$name" '{ for (i = 2; i <= NF && $i !~ /^#/; i++) if ($i == n) f = 1 } END { exit !f }' \
            "$ETC_HOSTS" && clash+=("$ETC_HOSTS entry for $name")
    done
    ip link show dev "$BRIDGE" >/dev/null 2>&1 && clash+=("link $BRIDGE")
    grep -qF "$HOSTS_MARK" "$ETC_HOSTS" && clash+=("$ETC_HOSTS lines marked '$HOSTS_MARK'")
    ip -4 -o addr show | awk '{ print $4 }' | grep -q "^${subnet//./\\.}\\." &&
        clash+=("addresses in $subnet.0/24 on this machine")
    # Routes inside the subnet or covering it (but for the default route).
    [[ -n $({ ip -4 route show table all to root "$subnet.0/24"
              ip -4 route show table all to match "$subnet.0/24"; } |
            awk '$1 != "default" && $2 != "default"') ]] &&
        clash+=("routes into $subnet.0/24: $(ip -4 route show table all to match "$subnet.0/24" | grep -v default | head -n 1)")
    if ((${#clash[@]})); then
        printf 'cluster: error: already present, and not made by a cluster this script knows of (no %s):\n' "$STATE" >&2
        printf '  %s\n' "${clash[@]}" >&2
        die "remove them yourself, or choose another --subnet for an address clash"
    fi
}

make_bridge() {
    local subnet=$1
    ip link add "$BRIDGE" type bridge
    made link "$BRIDGE"
    ip addr add "$subnet.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
}

# Host i: namespace, veth pair into the bridge, addresses, /etc/hosts line.
make_host() {
    local i=$1 subnet=$2
    local name=$PREFIX-h$i ip=$subnet.$((i + 1))
    ip netns add "$name"
    made netns "$name"
    ip link add "$name" type veth peer name "$NIC" netns "$name"
    made link "$name"
    ip link set "$name" master "$BRIDGE" up
    ip -n "$name" link set lo up
    ip -n "$name" addr add "$ip/24" dev "$NIC"
    ip -n "$name" link set "$NIC" up
    record host "$name" "$ip"
    hosts_add_line "$ip" "$name"
    made hosts-line "$ip" "$name"
}

shape_host() {
    local name=$1 rate=$2 bytes=$3 delay=$4
    if [[ -n $delay ]]; then
        add_netem "$NIC" "$delay" "$rate" "$name"
    elif [[ -n $rate ]]; then
        add_tbf "$NIC" "$rate" "$bytes" "$name"
    fi
    [[ -z $rate ]] || add_tbf "$name" "$rate" "$bytes"
}

# The cgroup directory of the cluster's CPU group, if this machine has a place
# for one: a cgroup v1 cpu hierarchy, or a cgroup2 root that delegates cpu.
cgroup_parent() {
    if [[ -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
        echo /sys/fs/cgroup/cpu
        return 0
    fi
    local root
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [[ -f $root/cgroup.subtree_control ]] &&
            grep -qw cpu "$root/cgroup.subtree_control" 2>/dev/null; then
            echo "$root"
            return 0
        fi
    done
    return 1
}

# One CPU group for every process of the hosts (see the header), where the
# kernel would otherwise make one per session. CPU_NOTE says what it did.
CPU_NOTE=""
make_cpu_group() {
    local autogroup parent
    autogroup=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)
    if [[ $autogroup != 1 ]]; then
        CPU_NOTE="cpu: the kernel does not group CPU time by session; no cgroup needed"
        return 0
    fi
    if ! parent=$(cgroup_parent); then
        CPU_NOTE="cpu: WARNING: the kernel groups CPU time by session (kernel.sched_autogroup_enabled=1) and no cpu cgroup can be made here: each host's ranks are a group of their own, which skews CPU sharing when the slots outnumber the cores"
        return 0
    fi
    local dir=$parent/$CGROUP_NAME
    if [[ -d $dir ]]; then
        # Left by a cluster whose down could not remove it (a process still
        # in it then); reused when empty, as nothing else names it.
        [[ -z $(cat "$dir/cgroup.procs" 2>/dev/null) ]] ||
            die "$dir exists and holds processes: not made by a cluster that is up; remove it first"
    else
        mkdir "$dir"
    fi
    made cgroup "$dir"
    record cgroup "$dir"
    # The group weighs what the hosts' sessions weighed together (one
    # session's default weight per host), so that against the machine's
    # other work (a test suite running beside the cluster's jobs) the hosts
    # keep the CPU share they had, while among themselves the ranks are
    # balanced one by one.
    local hosts=$1 weight_note=""
    if [[ -f $dir/cpu.shares ]]; then
        echo $((1024 * hosts)) >"$dir/cpu.shares" && weight_note=", cpu.shares $((1024 * hosts))"
    elif [[ -f $dir/cpu.weight ]]; then
        local w=$((100 * hosts))
        ((w <= 10000)) || w=10000
        echo "$w" >"$dir/cpu.weight" && weight_note=", cpu.weight $w"
    fi
    CPU_NOTE="cpu: the hosts' processes share the CPU group $dir (one job's, not one per host$weight_note)"
}

# Move this process (about to exec a host's command) into the cluster's CPU
# group, if it has one: its children stay in it.
join_cpu_group() {
    local dir
    dir=$(state_get cgroup)
    [[ -z $dir ]] || echo $$ >"$dir/cgroup.procs" ||
        die "cannot join the cluster's CPU group $dir"
}

# Remove the cluster's CPU group once its processes have gone (they were
# stopped with the hosts' processes; an exiting one may take a moment).
remove_cpu_group() {
    local dir=$1 waited
    [[ -d $dir ]] || return 0
    for ((waited = 0; waited < 50; waited++)); do
        rmdir "$dir" 2>/dev/null && return 0
        sleep 0.1
    done
    say "cannot remove $dir: still in it: $(tr '\n' ' ' <"$dir/cgroup.procs")"
    return 1
}

write_agent() {
    cat >"$AGENT" <<EOF
#!/bin/sh
# rsh agent of the fwdio simulated cluster: mpirun runs it as "agent HOST COMMAND...".
exec "$script" agent "\$@"
EOF
    chmod 755 "$AGENT"
    made file "$AGENT"
}

# The options to add to mpirun.
mpirun_options() {
    local slots subnet hosts=() name
    slots=$(state_get slots)
    subnet=$(state_get subnet)
    for name in $(state_hosts); do
        hosts+=("$name:$slots")
    done
    local IFS=,
    printf -- '--host %s' "${hosts[*]}"
    printf -- ' --mca plm_rsh_agent %s --mca plm_rsh_no_tree_spawn 1' "$AGENT"
    printf -- ' --mca pml ob1 --mca btl tcp,self,vader'
    printf -- ' --mca btl_tcp_if_include %s.0/24 --mca oob_tcp_if_include %s.0/24' \
        "$subnet" "$subnet"
    # The hosts share this machine's cores. When their slots outnumber them,
    # idle ranks yield, as Open MPI makes them on one oversubscribed host: it
    # cannot see that here (each host has its slots), and ranks spinning in
    # MPI over TCP would starve the ranks (and threads) that have work.
    if ((${#hosts[@]} * slots > $(nproc))); then
        printf -- ' --mca mpi_yield_when_idle 1'
    fi
    printf '\n'
}

# A.B.C of a private /24: 10.x.y, 172.16-31.y or 192.168.y.
valid_subnet() {
    local a b c
    IFS=. read -r a b c <<<"$1"
    [[ $1 =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] && ((b <= 255 && c <= 255)) || return 1
    ((a == 10 || (a == 172 && b >= 16 && b <= 31) || (a == 192 && b == 168)))
}

# Undo a failed `up`: everything recorded so far.
up_failed() {
    local rc=$?
    trap - EXIT
    if ((rc != 0)) && [[ -f $STATE ]]; then
        say "up failed (status $rc): removing what it made"
        teardown || true
    fi
    drop_state_dir
    exit "$rc"
}

cmd_up() {
    local n="" slots=2 rate="" delay="" subnet=10.213.0 bytes="" tag="" cpu_group=0
    while (($#)); do
        case $1 in
            --slots) slots=${2:-}; shift 2 || usage_error "--slots needs a value" ;;
            --bw) rate=${2:-}; shift 2 || usage_error "--bw needs a value" ;;
            --delay) delay=${2:-}; shift 2 || usage_error "--delay needs a value" ;;
            --subnet) subnet=${2:-}; shift 2 || usage_error "--subnet needs a value" ;;
            --tag) tag=${2:-}; shift 2 || usage_error "--tag needs a value" ;;
            --cpu-group) cpu_group=1; shift ;;
            -*) usage_error "up: unknown option $1" ;;
            *) [[ -z $n ]] || usage_error "up: one host count only"; n=$1; shift ;;
        esac
    done
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1 || n > MAX_HOSTS)); then
        usage_error "up: the host count must be 1..$MAX_HOSTS (got '${n}')"
    fi
    if ! [[ $slots =~ ^[0-9]+$ ]] || ((slots < 1)); then
        usage_error "--slots must be a positive integer"
    fi
    valid_subnet "$subnet" ||
        usage_error "--subnet must be the first three numbers of a private /24 (10.x.y, 172.16-31.y, 192.168.y)"
    if [[ -n $rate ]]; then
        bytes=$(rate_bytes_per_s "$rate") ||
            usage_error "--bw: '$rate' is no rate of at least 8kbit in tc's syntax (e.g. 10gbit, 500mbit, 100mbps)"
    fi
    [[ $tag =~ ^[[:graph:]]*$ ]] || usage_error "--tag must be one word"
    if [[ -n $delay ]]; then
        [[ $delay =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--delay takes milliseconds (e.g. 0.05, 2)"
    fi

    check_machine
    if [[ -n $rate || -n $delay ]]; then
        require_tools tc
        if [[ -n $delay ]]; then
            probe_qdisc netem delay 1ms ||
                unsupported "--delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM); --bw alone works with tbf"
        else
            probe_qdisc tbf rate 1gbit burst 65536 latency 100ms ||
                unsupported "--bw needs the tbf qdisc, which this kernel lacks (CONFIG_NET_SCH_TBF)"
        fi
    fi

    lock_state
    trap drop_state_dir EXIT
    if cluster_is_up; then
        printf "cluster: error: a cluster of %s hosts%s is already up (since %s); run '%s down' first\n" \
            "$(state_get hosts)" "$(describe_tag)" "$(state_get created)" "$0" >&2
        exit "$EXIT_ALREADY_UP"
    fi
    check_names_free "$n" "$subnet"

    trap up_failed EXIT
    : >"$STATE"
    record "# fwdio simulated cluster, made by $script up; removed by its down"
    record created "$(date '+%Y-%m-%d %H:%M:%S')"
    record hosts "$n"
    record slots "$slots"
    record subnet "$subnet"
    record shaping "${rate:+bw $rate }${delay:+delay ${delay}ms}"
    record tag "$tag"
    make_bridge "$subnet"
    local i
    for ((i = 0; i < n; i++)); do
        make_host "$i" "$subnet"
        [[ -z $rate && -z $delay ]] || shape_host "$PREFIX-h$i" "$rate" "$bytes" "$delay"
    done
    if ((cpu_group)); then
        make_cpu_group "$n"
    elif [[ $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0) == 1 ]]; then
        CPU_NOTE="cpu: each host's processes are a CPU group of their own (kernel autogroup; --cpu-group makes one for the cluster, as for one node's ranks)"
    else
        CPU_NOTE="cpu: the kernel does not group CPU time by session"
    fi
    write_agent
    trap - EXIT

    echo "up: $n hosts $PREFIX-h0..$PREFIX-h$((n - 1)) on $subnet.0/24 (mpirun side $subnet.254, bridge $BRIDGE), $slots slots each${rate:+, $rate per link}${delay:+, +${delay} ms per packet sent}"
    echo "$CPU_NOTE"
    echo "run: mpirun \$($0 options) -np $((n * slots)) ./app    then: $0 down"
    mpirun_options
}

# ---------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------

# Is process $1 still running? (A zombie is not: it only waits for its parent.)
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

# Stop the processes left in the hosts (daemons of a killed job): TERM, then
# KILL after 5 s. They run in namespaces this script made.
stop_host_processes() {
    local name pids=() p waited
    for name in $(state_hosts); do
        [[ -e /run/netns/$name ]] || continue
        for p in $(ip netns pids "$name" 2>/dev/null); do
            pids+=("$p")
        done
    done
    ((${#pids[@]})) || return 0
    say "stopping ${#pids[@]} process(es) still running in the hosts: ${pids[*]}"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for ((waited = 0; waited < 50; waited++)); do
        local alive=()
        for p in "${pids[@]}"; do
            running "$p" && alive+=("$p")
        done
        ((${#alive[@]})) || return 0
        sleep 0.1
    done
    say "killing ${alive[*]}"
    kill -KILL "${alive[@]}" 2>/dev/null || true
}

# Remove everything the state lists as made, newest first, then the state.
teardown() {
    local kind a b failed=0
    stop_host_processes
    while read -r kind a b; do
        case $kind in
            file) rm -f -- "$a" || failed=1 ;;
            cgroup) remove_cpu_group "$a" || failed=1 ;;
            hosts-line) hosts_remove_line "$a" "$b" || failed=1 ;;
            link)
                if ip link show dev "$a" >/dev/null 2>&1; then
                    ip link del dev "$a" || failed=1
                fi ;;
            netns)
                if [[ -e /run/netns/$a ]]; then
                    ip netns del "$a" || failed=1
                fi ;;
            *) say "unknown entry 'made $kind $a $b' in $STATE, left alone"; failed=1 ;;
        esac
    done < <(sed -n 's/^made //p' "$STATE" | tac)
    if ((failed)); then
        say "some parts could not be removed; $STATE is kept so that 'down' can try again"
        return 1
    fi
    rm -f -- "$STATE"
    drop_state_dir
}

cmd_down() {
    local tag="" only_tagged=0
    while (($#)); do
        case $1 in
            --tag) tag=${2:-}; only_tagged=1; shift 2 || usage_error "--tag needs a value" ;;
            *) usage_error "down: unknown argument '$1'" ;;
        esac
    done
    require_root
    require_tools ip flock
    lock_state
    if ! cluster_is_up; then
        drop_state_dir
        local left
        left=$(ip netns list 2>/dev/null | awk -v p="$PREFIX-" 'index($1, p) == 1 { print $1 }')
        [[ -z $left ]] ||
            say "note: namespaces named $PREFIX-* exist but no state lists them; left alone: $(tr '\n' ' ' <<<"$left")"
        say "down: no cluster is up"
        return 0
    fi
    if ((only_tagged)) && [[ $(state_get tag) != "$tag" ]]; then
        say "down: the cluster that is up$(describe_tag) is not tagged '$tag': left alone"
        return 0
    fi
    local n
    n=$(state_get hosts)
    teardown || die "down: incomplete (see above)"
    say "down: removed the cluster of $n hosts"
}

# ---------------------------------------------------------------------------
# status, options, exec, agent
# ---------------------------------------------------------------------------

cmd_status() {
    (($# == 0)) || usage_error "status takes no arguments"
    if ! cluster_is_up; then
        echo "no cluster is up"
        return "$EXIT_NOT_UP"
    fi
    local shaping
    shaping=$(state_get shaping)
    echo "cluster of $(state_get hosts) hosts$(describe_tag), $(state_get slots) slots each, subnet $(state_get subnet).0/24, up since $(state_get created)${shaping:+, $shaping}"
    local name ip link nprocs
    for name in $(state_hosts); do
        ip=$(state_host_ip "$name")
        if [[ -e /run/netns/$name ]]; then
            link=$(ip -n "$name" -br link show dev "$NIC" 2>/dev/null | awk '{ print $2 }')
            nprocs=$(ip netns pids "$name" 2>/dev/null | wc -l)
            printf '  %-12s %-15s link %-5s %s process(es)\n' "$name" "$ip" "${link:-gone}" "$nprocs"
        else
            printf '  %-12s %-15s MISSING: its namespace is gone\n' "$name" "$ip"
        fi
    done
    mpirun_options
}

cmd_options() {
    (($# == 0)) || usage_error "options takes no arguments"
    if ! cluster_is_up; then
        say "no cluster is up (run: $0 up N)"
        return "$EXIT_NOT_UP"
    fi
    mpirun_options
}

# The host's namespace must be one this cluster made.
require_host() {
    local host=$1
    cluster_is_up || die "no cluster is up: cannot run on '$host'"
    [[ -n $(state_host_ip "$host") ]] ||
        die "'$host' is no host of the cluster that is up (hosts: $(state_hosts | tr '\n' ' '))"
}

# exec HOST CMD ARGS...: CMD with its arguments as given, on HOST.
cmd_exec() {
    (($# >= 2)) || usage_error "exec needs a host and a command"
    local host=$1
    shift
    require_host "$host"
    join_cpu_group
    # shellcheck disable=SC2016 # expanded by the inner shell
    exec ip netns exec "$host" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

# agent HOST WORDS...: what mpirun's rsh launcher asks of ssh: the words,
# joined by spaces, run by a shell on HOST.
cmd_agent() {
    (($# >= 2)) || usage_error "agent needs a host and a command"
    local host=$1
    shift
    require_host "$host"
    join_cpu_group
    # shellcheck disable=SC2016 # expanded by the inner shell
    exec ip netns exec "$host" unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' \
        "$host" "$*"
}

cmd_check() {
    (($# == 0)) || usage_error "check takes no arguments"
    check_machine
    echo "this machine can host a simulated cluster"
}

main() {
    (($#)) || { usage >&2; exit 2; }
    local cmd=$1
    shift
    case $cmd in
        up) cmd_up "$@" ;;
        down) cmd_down "$@" ;;
        status) cmd_status "$@" ;;
        options) cmd_options "$@" ;;
        exec) cmd_exec "$@" ;;
        agent) cmd_agent "$@" ;;
        check) cmd_check "$@" ;;
        -h|--help|help) usage ;;
        *) usage_error "unknown command '$cmd'" ;;
    esac
}

main "$@"
