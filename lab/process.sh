# Sourced by lab.sh: start and stop daemons by the PID recorded when they were started.

# Ticks since boot at which process PID started (field 22 of /proc/PID/stat, counted after its name): unlike a
# start time in seconds since the epoch, no clock step moves it.
proc_start() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }

# Whether PID is still the process recorded in FILE. A record outlives its process when the lab is killed with its
# run (CI's time limit), and its number may since belong to another process or to a thread (kill -0 accepts a
# thread's id: seen when a stale containerd pid was a csi-provisioner thread, so `up` never started that
# containerd). Ours: a live process, not a thread, that started at the ticks FILE.start holds or, without
# one, no later than FILE was written.
pid_is_ours() { # pid file
  local pid=$1 file=$2 ticks
  { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } || return 1
  [ "$(awk '/^Tgid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)" = "$pid" ] || return 1
  grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && return 1
  ticks=$(proc_start "$pid"); [ -n "$ticks" ] || return 1
  if [ -s "$file.start" ]; then [ "$(cat "$file.start")" = "$ticks" ]; return; fi
  [ $(($(awk '/^btime/ {print $2}' /proc/stat) + ticks / $(getconf CLK_TCK))) -le $(($(stat -c %Y "$file") + 2)) ]
}

pid_alive() { local f="$LAB_HOME/run/$1.pid"; [ -s "$f" ] && pid_is_ours "$(cat "$f")" "$f"; } # name

write_if_changed() { # path < content
  local tmp; tmp=$(mktemp)
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

start_daemon() { # name command...
  local name=$1; shift
  pid_alive "$name" && return 0
  mkdir -p "$LAB_HOME/run" "$LAB_HOME/logs"
  # 9>&-: the daemon must not inherit the lab lock, or it would hold it for its whole life.
  setsid "$@" >>"$LAB_HOME/logs/$name.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$LAB_HOME/run/$name.pid"
  proc_start $! > "$LAB_HOME/run/$name.pid.start" || true
  log "started $name (pid $!)"
}

stop_daemon() { # name
  local f="$LAB_HOME/run/$1.pid" pid i
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if pid_alive "$1"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f" "$f.start"
}

wait_for() { # description timeout-seconds command...
  local what=$1 timeout=$2 deadline; shift 2
  deadline=$(( $(date +%s) + timeout ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then log "timed out after ${timeout}s waiting for $what"; return 1; fi
    sleep 0.3
  done
}
