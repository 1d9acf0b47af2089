# shellcheck shell=bash
# PostgreSQL: reuse 127.0.0.1:$PG_PORT if it answers `select version()`; else start the machine's
# cluster (pg_ctlcluster); else initdb a private cluster under .services/postgres. Ensures
# database $PG_DATABASE exists.
#
# FERRY_PG_MODE=auto|cluster|private (default auto) forces one of the start paths;
# FERRY_PG_CLUSTER (default main) names the machine cluster to start.

PG_DIR="$SERVICES_DIR/postgres"
PG_MARKER="$PG_DIR/started-by-ferry" # written only when this script started a server
PG_LOG="$PG_DIR/postgres.log"

pg_check() { # database
  FERRY_PG_CHECK_DATABASE=$1 readiness check postgres
}

pg_wait() { # database
  FERRY_PG_CHECK_DATABASE=$1 readiness wait postgres --deadline "$DEFAULT_WAIT"
}

pg_machine_cluster() { # prints "version name" of the newest machine cluster named $FERRY_PG_CLUSTER (main)
  local name=${FERRY_PG_CLUSTER:-main}
  [[ -d /etc/postgresql ]] || return 1
  command -v pg_ctlcluster >/dev/null || return 1
  local v
  # shellcheck disable=SC2012 # version folder names are plain numbers
  for v in $(ls /etc/postgresql 2>/dev/null | sort -Vr); do
    if [[ -d /etc/postgresql/$v/$name ]]; then
      echo "$v $name"
      return 0
    fi
  done
  return 1
}

pg_bindir() { # directory holding initdb and pg_ctl
  local d
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  # shellcheck disable=SC2012
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -Vr); do
    [[ -x $d/initdb && -x $d/pg_ctl ]] && { echo "$d"; return 0; }
  done
  return 1
}

pg_as_postgres() { # run a command as the postgres OS user when we are root (initdb refuses root)
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { echo "no 'postgres' OS user to run PostgreSQL as" >&2; return 1; }
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

pg_record_start() { # mode extra...: remember that we started the server listening on PG_PORT
  local pid
  pid=$(listener_pid "$PG_PORT")
  {
    echo "mode=$1"
    shift
    local kv
    for kv in "$@"; do echo "$kv"; done
    if [[ -n $pid ]]; then
      echo "pid=$pid"
      echo "starttime=$(proc_starttime "$pid")"
    fi
  } >"$PG_MARKER"
}

postgres_begin() {
  mkdir -p "$PG_DIR"
  local endpoint="$HOST:$PG_PORT" state how=""
  local mode=${FERRY_PG_MODE:-auto}
  if pg_check postgres; then
    state=reused
  else
    local first_error=$RD_DETAIL cluster=""
    if [[ $mode != private ]] && cluster=$(pg_machine_cluster); then
      local ver name
      read -r ver name <<<"$cluster"
      echo "postgres: not answering on $endpoint ($first_error); starting machine cluster $ver/$name" >&2
      if ! pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start </dev/null >>"$PG_LOG" 2>&1 9>&-; then
        fail_report postgres "$endpoint" "$PG_LOG" "pg_ctlcluster $ver $name start failed (cluster log: /var/log/postgresql/postgresql-$ver-$name.log)"
        return 1
      fi
      if ! pg_wait postgres; then
        fail_report postgres "$endpoint" "/var/log/postgresql/postgresql-$ver-$name.log" "started cluster $ver/$name but $endpoint does not answer: $RD_DETAIL"
        return 1
      fi
      pg_record_start cluster "version=$ver" "cluster=$name"
      how="machine cluster $ver/$name"
    elif [[ $mode != cluster ]]; then
      local bindir data="$PG_DIR/data"
      if ! bindir=$(pg_bindir); then
        fail_report postgres "$endpoint" "$PG_LOG" "no PostgreSQL server installed (no pg_ctlcluster cluster, no initdb/pg_ctl)"
        return 1
      fi
      echo "postgres: not answering on $endpoint ($first_error); starting private cluster in $data" >&2
      if [[ $(id -u) -eq 0 ]]; then chown postgres: "$PG_DIR" 2>/dev/null; fi
      touch "$PG_LOG" && { [[ $(id -u) -ne 0 ]] || chown postgres: "$PG_LOG"; }
      if [[ ! -f $data/PG_VERSION ]]; then
        if ! pg_as_postgres "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-sync >>"$PG_LOG" 2>&1 9>&-; then
          fail_report postgres "$endpoint" "$PG_LOG" "initdb of private cluster $data failed"
          return 1
        fi
      fi
      # shellcheck disable=SC2094 # pg_ctl and its stderr both append to the same log
      if ! pg_as_postgres "$bindir/pg_ctl" -D "$data" -l "$PG_LOG" -w -t "$DEFAULT_WAIT" \
        -o "-p $PG_PORT -c listen_addresses=$HOST -k $PG_DIR" start </dev/null >/dev/null 2>>"$PG_LOG" 9>&-; then
        fail_report postgres "$endpoint" "$PG_LOG" "pg_ctl start of private cluster $data failed"
        return 1
      fi
      if ! pg_wait postgres; then
        fail_report postgres "$endpoint" "$PG_LOG" "private cluster started but $endpoint does not answer: $RD_DETAIL"
        return 1
      fi
      pg_record_start private "data=$data" "bindir=$bindir"
      how="private cluster $data"
    else
      fail_report postgres "$endpoint" "$PG_LOG" "no machine cluster under /etc/postgresql (FERRY_PG_MODE=cluster)"
      return 1
    fi
    state=started
  fi
  local dbmsg
  if ! dbmsg=$(node "$SERVICES_D/readiness.js" ensure-db 2>>"$SERVICES_DIR/readiness.err"); then
    fail_report postgres "$endpoint" "$PG_LOG" "cannot create database $PG_DATABASE: $(cut -f3 <<<"$dbmsg")"
    return 1
  fi
  if ! pg_check "$PG_DATABASE"; then
    fail_report postgres "$endpoint" "$PG_LOG" "database $PG_DATABASE does not answer: $RD_DETAIL"
    return 1
  fi
  if [[ $state == reused ]]; then
    how=$(postgres_owner)
  fi
  report postgres "$state" "$RD_VERSION" "$endpoint" "database $PG_DATABASE; $how"
}

postgres_finish() { :; }

# Who runs it, for status/up output.
postgres_owner() {
  if postgres_owned >/dev/null; then
    echo "started by ferry ($(marker_get "$PG_MARKER" mode)); log $PG_LOG"
  else
    echo "not started by ferry (left alone by down)"
  fi
}

# Succeeds (printing the pid) if the server on PG_PORT is the very process this script started.
postgres_owned() {
  [[ -f $PG_MARKER ]] || return 1
  local pid st
  pid=$(marker_get "$PG_MARKER" pid)
  st=$(marker_get "$PG_MARKER" starttime)
  [[ -n $pid && -n $st ]] && pid_alive "$pid" && [[ $(proc_starttime "$pid") == "$st" ]] || return 1
  [[ $(proc_cmdline "$pid") == *postgres* ]] || return 1
  echo "$pid"
}

postgres_down() {
  local endpoint="$HOST:$PG_PORT"
  if [[ ! -f $PG_MARKER ]]; then
    report postgres "left" - "$endpoint" "not started by ferry: left running"
    return 0
  fi
  local pid
  if ! pid=$(postgres_owned); then
    rm -f "$PG_MARKER"
    report postgres "left" - "$endpoint" "the server ferry started is gone (stale record removed); nothing stopped"
    return 0
  fi
  local mode
  mode=$(marker_get "$PG_MARKER" mode)
  if [[ $mode == cluster ]]; then
    pg_ctlcluster --skip-systemctl-redirect "$(marker_get "$PG_MARKER" version)" "$(marker_get "$PG_MARKER" cluster)" stop \
      </dev/null >>"$PG_LOG" 2>&1 9>&-
  else
    pg_as_postgres "$(marker_get "$PG_MARKER" bindir)/pg_ctl" -D "$(marker_get "$PG_MARKER" data)" -m fast -w stop \
      </dev/null >>"$PG_LOG" 2>&1 9>&-
  fi
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    fail_report postgres "$endpoint" "$PG_LOG" "stopping the $mode server failed"
    return 1
  fi
  rm -f "$PG_MARKER"
  report postgres stopped - "$endpoint" "$mode server started by ferry (pid $pid)"
}

postgres_status() {
  local endpoint="$HOST:$PG_PORT"
  if pg_check "$PG_DATABASE"; then
    report postgres healthy "$RD_VERSION" "$endpoint" "database $PG_DATABASE; $(postgres_owner)"
  else
    report postgres down - "$endpoint" "$RD_DETAIL"
    return 1
  fi
}
