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
ELASTICMQ_VERSION_PROPERTY=elasticmq.version
ELASTICMQ_VERSION=${FERRY_ELASTICMQ_VERSION:-$(pom_property "$ELASTICMQ_POM" elasticmq.version)}
ELASTICMQ_JAR="elasticmq-server_2.13-$ELASTICMQ_VERSION.jar"
ELASTICMQ_JAVA_MIN=11
ELASTICMQ_ENDPOINT="$HOST:$SQS_PORT"
ELASTICMQ_WAIT=$DEFAULT_WAIT
ELASTICMQ_LABEL=ElasticMQ
ELASTICMQ_PROCESS=server
ELASTICMQ_LIBS_ENV=FERRY_ELASTICMQ_LIBS
ELASTICMQ_HEAP=${FERRY_ELASTICMQ_HEAP:--Xms64m -Xmx256m}
# JVM flags besides the heap: C1 only and serial GC (start-to-ready 2.6-2.9 s of CPU instead of
# 5.2-5.5 s; a test endpoint's load is light). FERRY_ELASTICMQ_JVM_FLAGS replaces them.
ELASTICMQ_JVM_FLAGS=${FERRY_ELASTICMQ_JVM_FLAGS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData}
ELASTICMQ_PENDING_PID=""
ELASTICMQ_STATE=""

# The process is ours only if its command line has the main class and our log file path
# (the log path includes the state folder, so another checkout's server does not match).
elasticmq_markers() { echo "org.elasticmq.server.Main"; echo "-Delasticmq.log.file=$ELASTICMQ_LOG"; }

elasticmq_launch_args() {
  # shellcheck disable=SC2206
  local -a heap=($ELASTICMQ_HEAP) flags=($ELASTICMQ_JVM_FLAGS)
  printf '%s\n' "${heap[@]}" "${flags[@]}" -Djava.awt.headless=true "-Dconfig.file=$ELASTICMQ_CONF" \
    "-Dlogback.configurationFile=$SERVICES_D/elasticmq-logback.xml" "-Delasticmq.log.file=$ELASTICMQ_LOG" \
    -cp "$ELASTICMQ_LIBS/*" org.elasticmq.server.Main
}

elasticmq_begin() { jvm_begin elasticmq; }
elasticmq_finish() { jvm_finish elasticmq; }
elasticmq_down() { jvm_down elasticmq; }
elasticmq_status() { jvm_status elasticmq; }
