# shellcheck shell=bash
# One Maven-fetched JVM service, started from its jars: the shared begin / finish / down / status
# of Kafka and ElasticMQ. A service <name> (variable prefix <P> = <name> in capitals) sets
#   <P>_DIR <P>_LIBS <P>_PIDFILE <P>_LOG  state folder, jars, "pid starttime" file, log
#   <P>_POM <P>_VERSION_PROPERTY <P>_VERSION <P>_JAR   what to fetch, and the jar proving it is there
#   <P>_JAVA_MIN <P>_ENDPOINT <P>_WAIT     lowest Java, host:port, readiness deadline (seconds)
#   <P>_LABEL <P>_PROCESS <P>_LIBS_ENV    "Kafka", "broker", the variable readiness.js reads
# and defines <name>_markers (what our process's command line contains), <name>_launch_args
# (the java arguments after $JAVA, one a line) and, if it needs one, <name>_prepare (runs after
# the fetch, before the launch; on failure it sets PREPARE_ERROR and returns non-zero).
# <P>_PENDING_PID and <P>_STATE carry a launch from begin to finish.

jvm_var() { # name field -> value of <P>_<field>
  local var="${1^^}_$2"
  printf '%s' "${!var}"
}

jvm_set() { # name field value
  printf -v "${1^^}_$2" '%s' "$3"
}

jvm_owned() { # name -> pid of the process this state folder started, if it is alive
  local -a m
  mapfile -t m < <("$1_markers")
  owned_pid "$(jvm_var "$1" PIDFILE)" "${m[@]}"
}

# readiness.js reads the client jars of a process we started from <P>_LIBS_ENV; empty for one
# we did not start.
jvm_use_libs() { # name [libs]
  export "$(jvm_var "$1" LIBS_ENV)=${2-$(jvm_var "$1" LIBS)}"
}

# Reuses a running process (ours, or one someone else started that answers), otherwise fetches
# the jars and launches one; jvm_finish then waits for it.
jvm_begin() { # name
  local name=$1 endpoint log pid
  endpoint=$(jvm_var "$name" ENDPOINT)
  log=$(jvm_var "$name" LOG)
  mkdir -p "$(jvm_var "$name" DIR)"
  jvm_set "$name" PENDING_PID ""
  jvm_set "$name" STATE ""
  if pid=$(jvm_owned "$name"); then
    jvm_use_libs "$name"
    jvm_set "$name" STATE reused
    if readiness check "$name"; then
      report "$name" reused "$RD_VERSION" "$endpoint" "started by ferry (pid $pid); log $log"
    else
      jvm_set "$name" PENDING_PID "$pid" # ours and alive but not answering yet: still starting
    fi
    return 0
  fi
  jvm_use_libs "$name" ""
  if readiness check "$name"; then
    jvm_set "$name" STATE reused
    report "$name" reused "$RD_VERSION" "$endpoint" "not started by ferry (left alone by down)"
    return 0
  fi
  jvm_launch "$name"
}

jvm_launch() { # name
  local name=$1 endpoint log libs pid
  endpoint=$(jvm_var "$name" ENDPOINT)
  log=$(jvm_var "$name" LOG)
  libs=$(jvm_var "$name" LIBS)
  rm -f "$(jvm_var "$name" PIDFILE)"
  if ! find_java "$(jvm_var "$name" JAVA_MIN)"; then
    fail_report "$name" "$endpoint" "$log" "$JAVA_ERROR"
    return 1
  fi
  if ! fetch_libs "$name" "$(jvm_var "$name" POM)" "$libs" "$(jvm_var "$name" VERSION_PROPERTY)" \
    "$(jvm_var "$name" VERSION)" "$(jvm_var "$name" JAR)"; then
    fail_report "$name" "$endpoint" "$(jvm_var "$name" DIR)/fetch.log" "$FETCH_ERROR"
    return 1
  fi
  if declare -F "${name}_prepare" >/dev/null && ! "${name}_prepare"; then
    fail_report "$name" "$endpoint" "$log" "$PREPARE_ERROR"
    return 1
  fi
  local -a args
  mapfile -t args < <("${name}_launch_args")
  pid=$(launch_detached "$log" "$JAVA" "${args[@]}")
  if ! write_pidfile "$(jvm_var "$name" PIDFILE)" "$pid"; then
    fail_report "$name" "$endpoint" "$log" "the $(jvm_var "$name" PROCESS) process (pid $pid) exited immediately"
    return 1
  fi
  jvm_set "$name" PENDING_PID "$pid"
  jvm_set "$name" STATE started
}

# Waits for a process begin launched (or found still starting); one that never answers is
# stopped (only if it is ours) and reported with its log.
jvm_finish() { # name
  local name=$1 pid endpoint log process
  pid=$(jvm_var "$name" PENDING_PID)
  [[ -n $pid ]] || return 0
  jvm_set "$name" PENDING_PID ""
  endpoint=$(jvm_var "$name" ENDPOINT)
  log=$(jvm_var "$name" LOG)
  process=$(jvm_var "$name" PROCESS)
  jvm_use_libs "$name"
  if readiness wait "$name" --deadline "$(jvm_var "$name" WAIT)" --pid "$pid"; then
    report "$name" "$(jvm_var "$name" STATE)" "$RD_VERSION" "$endpoint" "started by ferry (pid $pid); log $log"
    return 0
  fi
  local why=$RD_DETAIL
  if jvm_owned "$name" >/dev/null; then
    local -a m
    mapfile -t m < <("${name}_markers")
    STOP_TIMEOUT=10 stop_owned "$name" "$(jvm_var "$name" PIDFILE)" "${m[@]}"
    why="$why; the unready $process was stopped"
  fi
  rm -f "$(jvm_var "$name" PIDFILE)"
  fail_report "$name" "$endpoint" "$log" "$(jvm_var "$name" LABEL) did not become ready: $why"
  return 1
}

jvm_down() { # name: stops the process only if this state folder started it
  local name=$1
  local -a m
  mapfile -t m < <("${name}_markers")
  stop_owned "$name" "$(jvm_var "$name" PIDFILE)" "${m[@]}"
  local state=stopped
  [[ $STOP_RESULT == stopped* ]] || state=left
  report "$name" "$state" - "$(jvm_var "$name" ENDPOINT)" "$STOP_RESULT"
}

jvm_status() { # name
  local name=$1 endpoint pid owner
  endpoint=$(jvm_var "$name" ENDPOINT)
  if pid=$(jvm_owned "$name"); then
    jvm_use_libs "$name"
    owner="started by ferry (pid $pid); log $(jvm_var "$name" LOG)"
  else
    jvm_use_libs "$name" ""
    owner="not started by ferry"
  fi
  if readiness check "$name"; then
    report "$name" healthy "$RD_VERSION" "$endpoint" "$owner"
  else
    report "$name" down - "$endpoint" "$RD_DETAIL"
    return 1
  fi
}
