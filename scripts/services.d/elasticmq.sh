# shellcheck shell=bash
# SQS endpoint: ElasticMQ server (org.elasticmq:elasticmq-server_2.13) from Maven Central.
#   .services/elasticmq/libs/           jars (mvn dependency:copy-dependencies of scripts/elasticmq/pom.xml)
#   .services/elasticmq/elasticmq.pid   "pid starttime" of the server this script started
#   .services/elasticmq/elasticmq.log   server log (logback) + JVM stdout/stderr
# Config: scripts/services.d/elasticmq.conf (127.0.0.1:$SQS_PORT, queue URLs on 127.0.0.1:$SQS_PORT).

ELASTICMQ_DIR="$SERVICES_DIR/elasticmq"
ELASTICMQ_LIBS="$ELASTICMQ_DIR/libs"
ELASTICMQ_PIDFILE="$ELASTICMQ_DIR/elasticmq.pid"
ELASTICMQ_LOG="$ELASTICMQ_DIR/elasticmq.log"
ELASTICMQ_POM="$FERRY_ROOT/scripts/elasticmq/pom.xml"
ELASTICMQ_CONF="$SERVICES_D/elasticmq.conf"
ELASTICMQ_VERSION=${FERRY_ELASTICMQ_VERSION:-$(pom_property "$ELASTICMQ_POM" elasticmq.version)}
ELASTICMQ_HEAP=${FERRY_ELASTICMQ_HEAP:--Xms64m -Xmx256m}
ELASTICMQ_PENDING_PID=""
ELASTICMQ_STATE=""

# The process is ours only if its command line has the main class and our log file path
# (the log path includes the state folder, so another checkout's server does not match).
elasticmq_markers() { echo "org.elasticmq.server.Main"; echo "-Delasticmq.log.file=$ELASTICMQ_LOG"; }

elasticmq_owned() {
  local -a m
  mapfile -t m < <(elasticmq_markers)
  owned_pid "$ELASTICMQ_PIDFILE" "${m[@]}"
}

elasticmq_begin() {
  mkdir -p "$ELASTICMQ_DIR"
  local endpoint="$HOST:$SQS_PORT" pid
  ELASTICMQ_PENDING_PID="" ELASTICMQ_STATE=""
  if pid=$(elasticmq_owned); then
    export FERRY_ELASTICMQ_LIBS=$ELASTICMQ_LIBS
    if readiness check elasticmq; then
      ELASTICMQ_STATE=reused
      report elasticmq reused "$RD_VERSION" "$endpoint" "started by ferry (pid $pid); log $ELASTICMQ_LOG"
      return 0
    fi
    ELASTICMQ_PENDING_PID=$pid ELASTICMQ_STATE=reused
    return 0
  fi
  if FERRY_ELASTICMQ_LIBS="" readiness check elasticmq; then
    ELASTICMQ_STATE=reused
    report elasticmq reused "$RD_VERSION" "$endpoint" "not started by ferry (left alone by down)"
    return 0
  fi
  rm -f "$ELASTICMQ_PIDFILE"
  if ! find_java 11; then
    fail_report elasticmq "$endpoint" "$ELASTICMQ_LOG" "$JAVA_ERROR"
    return 1
  fi
  if ! fetch_libs elasticmq "$ELASTICMQ_POM" "$ELASTICMQ_LIBS" elasticmq.version "$ELASTICMQ_VERSION" \
    "elasticmq-server_2.13-$ELASTICMQ_VERSION.jar"; then
    fail_report elasticmq "$endpoint" "$ELASTICMQ_DIR/fetch.log" "$FETCH_ERROR"
    return 1
  fi
  # shellcheck disable=SC2206
  local -a heap=($ELASTICMQ_HEAP)
  pid=$(launch_detached "$ELASTICMQ_LOG" "$JAVA" "${heap[@]}" -Djava.awt.headless=true \
    "-Dconfig.file=$ELASTICMQ_CONF" "-Dlogback.configurationFile=$SERVICES_D/elasticmq-logback.xml" \
    "-Delasticmq.log.file=$ELASTICMQ_LOG" -cp "$ELASTICMQ_LIBS/*" org.elasticmq.server.Main)
  if ! write_pidfile "$ELASTICMQ_PIDFILE" "$pid"; then
    fail_report elasticmq "$endpoint" "$ELASTICMQ_LOG" "the server process (pid $pid) exited immediately"
    return 1
  fi
  ELASTICMQ_PENDING_PID=$pid ELASTICMQ_STATE=started
}

elasticmq_finish() {
  [[ -n $ELASTICMQ_PENDING_PID ]] || return 0
  local endpoint="$HOST:$SQS_PORT" pid=$ELASTICMQ_PENDING_PID
  ELASTICMQ_PENDING_PID=""
  export FERRY_ELASTICMQ_LIBS=$ELASTICMQ_LIBS
  if readiness wait elasticmq --deadline "$DEFAULT_WAIT" --pid "$pid"; then
    report elasticmq "$ELASTICMQ_STATE" "$RD_VERSION" "$endpoint" "started by ferry (pid $pid); log $ELASTICMQ_LOG"
    return 0
  fi
  local why=$RD_DETAIL
  if elasticmq_owned >/dev/null; then
    local -a m
    mapfile -t m < <(elasticmq_markers)
    STOP_TIMEOUT=10 stop_owned elasticmq "$ELASTICMQ_PIDFILE" "${m[@]}"
    why="$why; the unready server was stopped"
  fi
  rm -f "$ELASTICMQ_PIDFILE"
  fail_report elasticmq "$endpoint" "$ELASTICMQ_LOG" "ElasticMQ did not become ready: $why"
  return 1
}

elasticmq_down() {
  local -a m
  mapfile -t m < <(elasticmq_markers)
  stop_owned elasticmq "$ELASTICMQ_PIDFILE" "${m[@]}"
  local state=stopped
  [[ $STOP_RESULT == stopped* ]] || state=left
  report elasticmq "$state" - "$HOST:$SQS_PORT" "$STOP_RESULT"
}

elasticmq_status() {
  local endpoint="$HOST:$SQS_PORT" pid owner
  if pid=$(elasticmq_owned); then
    export FERRY_ELASTICMQ_LIBS=$ELASTICMQ_LIBS
    owner="started by ferry (pid $pid); log $ELASTICMQ_LOG"
  else
    export FERRY_ELASTICMQ_LIBS=""
    owner="not started by ferry"
  fi
  if readiness check elasticmq; then
    report elasticmq healthy "$RD_VERSION" "$endpoint" "$owner"
  else
    report elasticmq down - "$endpoint" "$RD_DETAIL"
    return 1
  fi
}
