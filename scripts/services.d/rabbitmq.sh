# shellcheck shell=bash
# RabbitMQ: reuse 127.0.0.1:$RABBITMQ_PORT (guest/guest) if an AMQP connection succeeds; otherwise
# start the machine's server (rabbitmq-server -detached) and wait for an AMQP connection.

RABBITMQ_DIR="$SERVICES_DIR/rabbitmq"
RABBITMQ_MARKER="$RABBITMQ_DIR/started-by-ferry"
RABBITMQ_LOG="$RABBITMQ_DIR/rabbitmq.log" # output of rabbitmq-server -detached; server logs: /var/log/rabbitmq

rabbitmq_begin() {
  mkdir -p "$RABBITMQ_DIR"
  local endpoint="$HOST:$RABBITMQ_PORT"
  if readiness check rabbitmq; then
    report rabbitmq reused "$RD_VERSION" "$endpoint" "$(rabbitmq_owner)"
    return 0
  fi
  local first_error=$RD_DETAIL
  if ! command -v rabbitmq-server >/dev/null; then
    fail_report rabbitmq "$endpoint" "$RABBITMQ_LOG" "no AMQP server on $endpoint ($first_error) and rabbitmq-server is not installed"
    return 1
  fi
  echo "rabbitmq: not answering on $endpoint ($first_error); starting rabbitmq-server -detached" >&2
  if ! (cd / && setsid rabbitmq-server -detached </dev/null >>"$RABBITMQ_LOG" 2>&1 9>&-); then
    fail_report rabbitmq "$endpoint" "$RABBITMQ_LOG" "rabbitmq-server -detached failed (server logs in /var/log/rabbitmq/)"
    return 1
  fi
  if ! readiness wait rabbitmq --deadline "$DEFAULT_WAIT"; then
    fail_report rabbitmq "$endpoint" "$RABBITMQ_LOG" "started rabbitmq-server but no AMQP connection: $RD_DETAIL (server logs in /var/log/rabbitmq/)"
    return 1
  fi
  local pid
  pid=$(listener_pid "$RABBITMQ_PORT")
  {
    echo "pid=$pid"
    [[ -n $pid ]] && echo "starttime=$(proc_starttime "$pid")"
  } >"$RABBITMQ_MARKER"
  report rabbitmq started "$RD_VERSION" "$endpoint" "machine rabbitmq-server started by ferry (pid ${pid:-?}); log $RABBITMQ_LOG"
}

rabbitmq_finish() { :; }

rabbitmq_owned() {
  [[ -f $RABBITMQ_MARKER ]] || return 1
  local pid st
  pid=$(marker_get "$RABBITMQ_MARKER" pid)
  st=$(marker_get "$RABBITMQ_MARKER" starttime)
  [[ -n $pid && -n $st ]] && pid_alive "$pid" && [[ $(proc_starttime "$pid") == "$st" ]] || return 1
  [[ $(proc_cmdline "$pid") == *rabbit* ]] || return 1
  echo "$pid"
}

rabbitmq_owner() {
  if rabbitmq_owned >/dev/null; then
    echo "started by ferry; log $RABBITMQ_LOG"
  else
    echo "not started by ferry (left alone by down)"
  fi
}

rabbitmq_down() {
  local endpoint="$HOST:$RABBITMQ_PORT"
  if [[ ! -f $RABBITMQ_MARKER ]]; then
    report rabbitmq left - "$endpoint" "not started by ferry: left running"
    return 0
  fi
  local pid
  if ! pid=$(rabbitmq_owned); then
    rm -f "$RABBITMQ_MARKER"
    report rabbitmq left - "$endpoint" "the server ferry started is gone (stale record removed); nothing stopped"
    return 0
  fi
  if ! rabbitmqctl stop </dev/null >>"$RABBITMQ_LOG" 2>&1 9>&-; then
    fail_report rabbitmq "$endpoint" "$RABBITMQ_LOG" "rabbitmqctl stop failed"
    return 1
  fi
  rm -f "$RABBITMQ_MARKER"
  report rabbitmq stopped - "$endpoint" "rabbitmq-server started by ferry (pid $pid)"
}

rabbitmq_status() {
  local endpoint="$HOST:$RABBITMQ_PORT"
  if readiness check rabbitmq; then
    report rabbitmq healthy "$RD_VERSION" "$endpoint" "$(rabbitmq_owner)"
  else
    report rabbitmq down - "$endpoint" "$RD_DETAIL"
    return 1
  fi
}
