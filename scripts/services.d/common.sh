# shellcheck shell=bash
# Shared helpers for scripts/services. Sourced, never executed.

FERRY_ROOT=${FERRY_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SERVICES_D="$FERRY_ROOT/scripts/services.d"

# Where state lives (pid files, logs, downloaded jars, Kafka data). Git-ignored.
SERVICES_DIR=${FERRY_SERVICES_DIR:-$FERRY_ROOT/.services}
mkdir -p "$SERVICES_DIR"
SERVICES_DIR=$(cd "$SERVICES_DIR" && pwd)

# Endpoints. Always 127.0.0.1 (never localhost: avoids ::1 surprises).
HOST=127.0.0.1
PG_PORT=${FERRY_PG_PORT:-5432}
PG_DATABASE=${FERRY_PG_DATABASE:-test}
RABBITMQ_PORT=${FERRY_RABBITMQ_PORT:-5672}
KAFKA_PORT=${FERRY_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${FERRY_KAFKA_CONTROLLER_PORT:-9093}
SQS_PORT=${FERRY_SQS_PORT:-9324}

# Readiness deadlines (seconds).
KAFKA_WAIT=${FERRY_KAFKA_WAIT:-90}
DEFAULT_WAIT=${FERRY_WAIT:-60}

export FERRY_HOST=$HOST FERRY_PG_PORT=$PG_PORT FERRY_PG_DATABASE=$PG_DATABASE \
  FERRY_RABBITMQ_PORT=$RABBITMQ_PORT FERRY_KAFKA_PORT=$KAFKA_PORT FERRY_SQS_PORT=$SQS_PORT

ALL_SERVICES=(postgres rabbitmq kafka elasticmq)

# ---------------------------------------------------------------- output

# One line per service: name, state, version, endpoint, free text.
report() { # name state version endpoint detail...
  local name=$1 state=$2 version=${3:--} endpoint=$4
  shift 4
  printf '%-10s %-8s %-10s %-16s %s\n' "$name" "$state" "$version" "$endpoint" "$*"
}

# Failure message on stderr, naming the service and its log file, with the log's tail.
fail_report() { # name endpoint logfile message
  local name=$1 endpoint=$2 log=$3 msg=$4
  report "$name" FAILED - "$endpoint" "$msg" >&2
  echo "  $name: see log file $log" >&2
  if [[ -s $log ]]; then
    echo "  --- last lines of $log ---" >&2
    tail -n 15 "$log" | sed 's/^/  | /' >&2
  fi
}

# ---------------------------------------------------------------- readiness (real protocol calls)

# readiness check|wait <service> [--pid N] [--deadline S]
# readiness.js prints one line "ok|fail<TAB>version<TAB>detail"; sets RD_OK, RD_VERSION, RD_DETAIL.
readiness() {
  local out rc
  out=$(node "$SERVICES_D/readiness.js" "$@" 2>>"$SERVICES_DIR/readiness.err" 9>&-)
  rc=$?
  local status=""
  RD_VERSION="" RD_DETAIL=""
  IFS=$'\t' read -r status RD_VERSION RD_DETAIL <<<"$out"
  if [[ $rc -eq 0 && $status == ok ]]; then
    RD_OK=1
    return 0
  fi
  RD_OK=0
  [[ -z $RD_DETAIL ]] && RD_DETAIL="readiness check failed (exit $rc), see $SERVICES_DIR/readiness.err"
  return 1
}

# ---------------------------------------------------------------- process identity

proc_starttime() { # pid -> field 22 of /proc/pid/stat (clock ticks since boot)
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  # comm (field 2) may contain spaces and parentheses: cut after the last ') '
  local rest=${stat##*) }
  local -a f
  read -r -a f <<<"$rest"
  # rest starts at field 3 (state), so field 22 is index 19
  echo "${f[19]}"
}

proc_cmdline() { # pid -> command line with NULs turned into spaces
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null
}

# alive and not a zombie
pid_alive() {
  [[ -n ${1:-} ]] || return 1
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  local rest=${stat##*) }
  [[ ${rest:0:1} != Z ]]
}

# write_pidfile file pid: records pid and its start time, so a later `down` can tell
# the process it started from an unrelated process that reused the PID.
write_pidfile() {
  local st
  st=$(proc_starttime "$2") || return 1
  printf '%s %s\n' "$2" "$st" >"$1"
}

# owned_pid pidfile marker...: prints the pid and succeeds only if the pid file exists, the
# process is alive, its start time equals the recorded one and its command line contains
# every marker (main class + our config file path).
owned_pid() {
  local file=$1
  shift
  [[ -f $file ]] || return 1
  local pid st
  read -r pid st <"$file" || true
  [[ $pid =~ ^[0-9]+$ && $st =~ ^[0-9]+$ ]] || return 1
  pid_alive "$pid" || return 1
  [[ $(proc_starttime "$pid") == "$st" ]] || return 1
  local cmd m
  cmd=$(proc_cmdline "$pid")
  for m in "$@"; do
    [[ $cmd == *"$m"* ]] || return 1
  done
  echo "$pid"
}

# stop_owned name pidfile marker...: stops the process only if owned_pid confirms it is ours.
stop_owned() {
  local name=$1 file=$2
  shift 2
  if [[ ! -f $file ]]; then
    STOP_RESULT="no pid file: not started by this script, nothing stopped"
    return 0
  fi
  local pid
  if ! pid=$(owned_pid "$file" "$@"); then
    local recorded
    recorded=$(awk '{print $1; exit}' "$file" 2>/dev/null)
    rm -f "$file"
    STOP_RESULT="stale pid file (pid ${recorded:-?} is not the process this script started): removed it, killed nothing"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null
  local deadline=$((SECONDS + ${STOP_TIMEOUT:-30}))
  while pid_alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
  if pid_alive "$pid"; then
    # still the same process? (start time unchanged) then force it
    if [[ $(proc_starttime "$pid") == "$(awk '{print $2}' "$file")" ]]; then
      kill -KILL "$pid" 2>/dev/null
      sleep 0.5
    fi
  fi
  rm -f "$file"
  STOP_RESULT="stopped (pid $pid)"
}

# Start a command fully detached (own session, no inherited stdio or lock fd) and print its pid.
# setsid execs in place (the background subshell is not a group leader), so $! is the pid of the
# final program: setsid -> nohup -> program all keep the same pid.
launch_detached() { # logfile cmd...
  local log=$1
  shift
  setsid nohup "$@" </dev/null >>"$log" 2>&1 9>&- &
  echo $!
}

# pid listening on a TCP port on 127.0.0.1 (needs root to see other users' sockets).
listener_pid() {
  ss -ltnpH "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2
}

# key=value record files (started-by-ferry markers)
marker_get() { # file key
  sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1
}

# ---------------------------------------------------------------- java / maven

find_java() {
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    JAVA=$JAVA_HOME/bin/java
  else
    JAVA=$(command -v java || true)
  fi
  [[ -n $JAVA ]] || { JAVA_ERROR="java not found (install a JDK 17+, e.g. apt-get install openjdk-17-jre-headless)"; return 1; }
  local v
  v=$("$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2}')
  JAVA_MAJOR=${v%%.*}
  if [[ ${1:-0} -gt 0 && ${JAVA_MAJOR:-0} -lt $1 ]]; then
    JAVA_ERROR="java $v at $JAVA is too old (need Java $1+)"
    return 1
  fi
}

# pom_property pom name -> value of <name> in the pom's <properties>
pom_property() {
  sed -n "s:.*<$2>\(.*\)</$2>.*:\1:p" "$1" | head -n1
}

# fetch_libs name pom libsdir version-property version jar: copies the pom's runtime dependencies
# from Maven Central into libsdir unless they are already there (marker file + main jar).
fetch_libs() {
  local name=$1 pom=$2 libs=$3 prop=$4 version=$5 jar=$6
  if [[ -f $libs/.complete && -f $libs/$jar ]]; then
    FETCHED=0
    return 0
  fi
  local mvn
  mvn=$(command -v mvn || true)
  [[ -n $mvn ]] || { FETCH_ERROR="Maven (mvn) not found; install it (apt-get install maven) to download $name"; return 1; }
  local log
  log="$(dirname "$libs")/fetch.log"
  local tmp="$libs.tmp.$$"
  rm -rf "$tmp"
  echo "$name: downloading $name $version from Maven Central (first run only) ..." >&2
  if ! "$mvn" -B -q -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
    -D"$prop=$version" -DincludeScope=runtime -DoutputDirectory="$tmp" >"$log" 2>&1 9>&-; then
    rm -rf "$tmp"
    FETCH_ERROR="mvn dependency:copy-dependencies failed (see $log)"
    return 1
  fi
  if [[ ! -f $tmp/$jar ]]; then
    rm -rf "$tmp"
    FETCH_ERROR="Maven did not produce $jar (see $log)"
    return 1
  fi
  touch "$tmp/.complete"
  rm -rf "$libs"
  mv "$tmp" "$libs"
  FETCHED=1
}
