# Sourced by lab.sh: fault injectors, each undone by `lab.sh heal KIND TARGET` (or `heal all`, which `down`
# runs too). An injected fault is recorded in $LAB_HOME/faults until healed; `--for SECONDS` arms a timer
# that heals it by itself, so a fault a person injects cannot outlive their attention.
#
#   node-kill N          the node's kubelet, containerd, container shims and containers freeze at once and its
#                        link goes down: nothing on it answers; the node turns NotReady through the real node
#                        lifecycle controller. Healing thaws it as it was (a VM resumed).
#   node-partition N     the node's link goes down: its kubelet and pods keep running but can neither reach nor
#                        be reached by the other nodes, the host or the API server (the split-brain case).
#   zone-outage ZONE     node-kill of every node in the zone.
#   apiserver-blackhole [N]  packets to and from the API server port are dropped, for everyone or for node N
#                        (its kubelet and its pods) only: requests hang instead of failing.
#   slow-member NS/POD [MS]  every container of the pod gets MS milliseconds of CPU a second (default 2; CFS
#                        quota over a 1 s period): once its work exceeds that (any load does; an idle etcd's own
#                        background work may fit), probes time out while it still answers, slowly.
#   fill-volume NS/PVC   the node disk holding the claim's volume is filled to the last block.
#   hang NS/POD          every process of the pod's containers is stopped (SIGSTOP): it keeps its connections and
#                        answers nothing, as a process whose event loop is blocked; healing continues them. A
#                        container the kubelet restarts meanwhile starts unstopped.
#   node-reboot N        (not recorded: it ends by itself) every process of the node is killed at once, what a
#                        power cycle forgets is forgotten, and after a pause containerd, kubelet and kube-proxy
#                        start again: pod sandboxes are recreated (init containers run again); volumes, emptyDir
#                        content and images are kept.
#   crash NS/POD         (not recorded: it ends by itself) every process of the pod's containers is killed at once
#                        (SIGKILL), as a crash; the kubelet starts them again, and their connections start anew.
#   wipe-volume NS/PVC   (not undoable) the claim's volume is emptied under its pod.
#   corrupt-data NS/PVC TEXT  (not undoable) bit rot under a running member: every copy of TEXT in the etcd
#                        database (member/snap/db) on the claim's volume is overwritten, in place, with as many
#                        X's. The database's pages carry no checksum, so etcd serves and hashes the rotten value.
FAULTS_DIR="$LAB_HOME/faults"

fault_record() { echo "$FAULTS_DIR/$1@${2//\//:}"; } # kind target

inject() { # kind target [arg] [--for seconds]
  local kind=${1:-} target=${2:-} seconds="" args=()
  shift $(( $# < 2 ? $# : 2 ))
  while [ $# -gt 0 ]; do
    if [ "$1" = --for ]; then seconds=${2:?--for needs seconds}; shift 2; else args+=("$1"); shift; fi
  done
  case "$kind" in
    node-reboot) node_reboot "$(node_number "$target")"; return ;;
    crash) crash_pod "$target"; return ;;
    wipe-volume) wipe_volume "$target"; return ;;
    corrupt-data) corrupt_data "$target" "${args[@]}"; return ;;
    node-kill|node-partition|zone-outage|apiserver-blackhole|slow-member|fill-volume|hang) ;;
    *) log "unknown fault '$kind'"; return 2 ;;
  esac
  local record; record=$(fault_record "$kind" "$target")
  [ -e "$record" ] && { log "$kind $target is already in force"; return 0; }
  mkdir -p "$FAULTS_DIR"; : > "$record"
  # Should applying it fail halfway (the script exits on the first error), what was applied is undone and the
  # fault forgotten, so that nothing is left behind unhealed.
  # shellcheck disable=SC2064 # expanded now: the trap runs after this function's locals are gone
  trap "fault_${kind//-/_} off $(printf %q "$target") || true; rm -f $(printf %q "$record")
        log $(printf %q "fault $kind $target could not be injected")" EXIT
  "fault_${kind//-/_}" on "$target" "${args[@]}"
  trap - EXIT
  if [ -n "$seconds" ]; then
    setsid bash -c 'sleep "$1"; exec bash "$2" heal "$3" "$4"' _ "$seconds" "$LAB_SRC_DIR/lab.sh" "$kind" "$target" \
      >/dev/null 2>&1 < /dev/null 9>&- &
    echo $! > "$record"
  fi
  log "fault $kind $target injected${seconds:+ for ${seconds}s}"
}

heal() { # kind target | all
  if [ "${1:-}" = all ]; then
    local record name
    for record in "$FAULTS_DIR"/*; do
      [ -e "$record" ] || continue
      name=$(basename "$record"); heal "${name%%@*}" "$(echo "${name#*@}" | tr : /)"
    done
    return 0
  fi
  local kind=${1:-} target=${2:-} record timer
  record=$(fault_record "$kind" "$target")
  [ -e "$record" ] || { log "no fault $kind $target in force"; return 0; }
  timer=$(cat "$record")
  # The timer that would heal it later, unless this is that timer (exec keeps its PID); it may be gone already,
  # and its number another process's since (a record left by a killed run).
  if [ -n "$timer" ] && [ "$timer" != $$ ] && pid_is_ours "$timer" "$record"; then kill "$timer" 2>/dev/null || true; fi
  "fault_${kind//-/_}" off "$target"
  rm -f "$record"
  log "fault $kind $target healed"
}

set_link() { ip link set "$(node_link "$1")" "$2"; } # n up|down
freeze() { echo "$2" > "$(node_cgroup freezer "$1")/freezer.state"; } # n FROZEN|THAWED

fault_node_kill() { # on|off node
  local n; n=$(node_number "$2")
  if [ "$1" = on ]; then set_link "$n" down; freeze "$n" FROZEN; else freeze "$n" THAWED; set_link "$n" up; fi
}

fault_node_partition() { set_link "$(node_number "$2")" "$([ "$1" = on ] && echo down || echo up)"; }

fault_zone_outage() { # on|off zone
  local n found=""
  for n in $(node_numbers); do
    [ "$(node_zone "$n")" = "$2" ] || continue
    found=1; fault_node_kill "$1" "$n"
  done
  [ -n "$found" ] || { log "no node in zone $2"; return 2; }
}

fault_apiserver_blackhole() { # on|off [node]
  local op=-I sources=("") s; [ "$1" = off ] && op=-D
  if [ -n "${2:-}" ]; then
    local n; n=$(node_number "$2"); sources=("$(node_ip "$n")" "$(node_pod_cidr "$n")")
  fi
  for s in "${sources[@]}"; do
    iptables "$op" INPUT -p tcp -d "$LAB_HOST_IP" --dport 6443 ${s:+-s "$s"} -j DROP
    iptables "$op" OUTPUT -p tcp -s "$LAB_HOST_IP" --sport 6443 ${s:+-d "$s"} -j DROP
  done
}

# The cgroup directories (cpu controller) of every container of a pod, found by the pod's UID.
pod_container_cgroups() { # ns/pod
  local uid; uid=$(KUBECTL -n "${1%%/*}" get pod "${1#*/}" -o jsonpath='{.metadata.uid}')
  [ -n "$uid" ] || { log "no pod $1"; return 2; }
  find "$CGROUP_V1"/cpu/lab-node-* -type d -path "*/pod$uid/*" 2>/dev/null
}

signal_pod() { # signal ns/pod: every process of the pod's containers
  local dir pid sent=0
  for dir in $(pod_container_cgroups "$2"); do
    while read -r pid; do
      # The sandbox's pause process holds only the pod's namespaces: signalling it would reach nothing that answers.
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pause ] && continue
      kill "-$1" "$pid" 2>/dev/null && sent=$((sent + 1))
    done < "$dir/cgroup.procs"
  done
  [ "$sent" -gt 0 ] || { log "no process of $2 found to signal"; return 2; }
}

# on|off ns/pod; healing a pod whose processes are gone (deleted, or restarted unstopped) has nothing to do.
fault_hang() { signal_pod "$([ "$1" = on ] && echo STOP || echo CONT)" "$2" || [ "$1" = off ]; }

crash_pod() { signal_pod KILL "$1" && log "every process of $1 killed"; } # ns/pod

# A 1 s CFS period: the member runs MS milliseconds a second, which its own background work mostly takes, so a
# request waits a second or more (past the probes' timeouts) while every request still gets its answer.
fault_slow_member() { # on|off ns/pod [ms]
  local dir
  for dir in $(pod_container_cgroups "$2"); do
    if [ "$1" = on ]; then
      echo 1000000 > "$dir/cpu.cfs_period_us"; echo $(( ${3:-2} * 1000 )) > "$dir/cpu.cfs_quota_us"
    else
      echo -1 > "$dir/cpu.cfs_quota_us"; echo 100000 > "$dir/cpu.cfs_period_us"
    fi
  done
}

# The directory of a claim's volume on its node's disk, from its PersistentVolume. Fails unless the claim is bound
# to a volume of the lab's provisioner: the volume faults delete and fill, and must never touch anything else.
volume_dir() { # ns/pvc
  local pv dir
  pv=$(KUBECTL -n "${1%%/*}" get pvc "${1#*/}" -o jsonpath='{.spec.volumeName}')
  [ -n "$pv" ] || { log "claim $1 is not bound"; return 2; }
  dir=$(KUBECTL get pv "$pv" -o jsonpath='{.spec.local.path}{.spec.hostPath.path}')
  case "$dir" in
    "$LAB_HOME"/nodes/lab-node-*/disk/local-path/?*) echo "$dir" ;;
    *) log "volume $pv of claim $1 is not on a lab node's disk (${dir:-no path})"; return 2 ;;
  esac
}

# The filler file on the disk of the node that holds a claim's volume.
filler_of() { # ns/pvc
  local dir disk; dir=$(volume_dir "$1") || return
  disk="${dir%%/disk/local-path/*}/disk"
  mountpoint -q "$disk" || { log "$disk is not mounted"; return 2; }
  echo "$disk/.fault-fill"
}

fault_fill_volume() { # on|off ns/pvc
  local filler; filler=$(filler_of "$2") || return
  if [ "$1" = off ]; then rm -f "$filler"; return 0; fi
  # fallocate takes all but 1 MiB at once (asking for every free block fails: it needs some for its extent
  # tree); small writes take the rest.
  fallocate -l "$(( $(df --output=avail -B1 "$(dirname "$filler")" | tail -1) - 1048576 ))" "$filler"
  dd if=/dev/zero of="$filler" bs=4k oflag=append conv=notrunc 2>/dev/null || true
}

wipe_volume() { # ns/pvc
  local dir; dir=$(volume_dir "$1") || return
  find "$dir" -mindepth 1 -delete
  log "volume of $1 wiped ($dir)"
}

corrupt_data() { # ns/pvc text
  local text=${2:?corrupt-data needs the text to overwrite} dir db offset hits=0 pass found
  dir=$(volume_dir "$1") || return
  db=$(find "$dir" -path '*/member/snap/db' -type f | head -1)
  [ -n "$db" ] || { log "no etcd database on the volume of $1 ($dir)"; return 2; }
  local rot; rot=$(printf '%*s' "${#text}" '' | tr ' ' X)
  # grep -b gives the byte offset of each copy (bbolt keeps older copies of a page until they are reused). A
  # member under writes commits every 100 ms, each commit writing the page it changed to a new place: a commit
  # between grep's read and dd's write leaves a copy the pass never saw (CI once rotted only freed pages, and
  # etcd never raised CORRUPT). So the passes go on until grep finds no copy left, a bounded number of times.
  for pass in 1 2 3 4 5 6 7 8 9 10; do
    found=0
    while IFS=: read -r offset _; do
      printf '%s' "$rot" | dd of="$db" bs=1 seek="$offset" conv=notrunc status=none
      found=$((found + 1))
    done < <(grep -obaF -- "$text" "$db")
    [ "$found" -gt 0 ] || break
    hits=$((hits + found))
  done
  [ "$hits" -gt 0 ] || { log "$text is not in $db"; return 2; }
  [ "$found" -eq 0 ] || { log "$text kept reappearing in $db after $pass passes"; return 2; }
  log "data of $1 corrupted: $hits copies of $text in $db, in $((pass - 1)) passes"
}

node_reboot() { # n [seconds down]
  local n=$1 down=${2:-3}
  set_link "$n" down
  kill_node_processes "$n"
  forget_runtime_state "$n"
  sleep "$down"
  start_node "$n" # its link comes up first, as a machine's network does when it boots
  log "$(node_name "$n") rebooted"
}
