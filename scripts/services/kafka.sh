# shellcheck shell=bash
# scripts/services/kafka.sh, sourced by scripts/services.sh: the Kafka broker for the kafka
# driver's tests and bench/kafka_vs_perftest.sh.
#
# kafka: Apache Kafka (org.apache.kafka:kafka_2.13 and kafka-tools from Maven Central, with
# their dependencies resolved by Maven into .services/kafka/lib, cached per machine) in KRaft
# mode as one combined broker and controller, on the machine's Java 17. Clients connect with
# SASL over plain TCP on 127.0.0.1 from port 27092 upward (PLAIN, SCRAM-SHA-256 and
# SCRAM-SHA-512, user `perfbase` password `perfbase`); the controller listens on 127.0.0.1
# from 27192 upward. The broker's own admin password is drawn on first start and kept in
# .services/kafka/admin.password (mode 0600). Data in .services/kafka/data. As root it runs as
# a system user `kafka`. It holds about 430 MB.

KAFKA_DIR="$BASE/kafka"
KAFKA_VERSION=4.4.0
KAFKA_FIRST_PORT=27092
KAFKA_FIRST_CONTROLLER_PORT=27192
KAFKA_USER=kafka

kafka_run_user() { if is_root; then echo "$KAFKA_USER"; else id -un; fi; }
kafka_pid() { cat "$KAFKA_DIR/kafka.pid" 2>/dev/null; }
kafka_port() { cat "$KAFKA_DIR/port" 2>/dev/null; }

# The broker of our pid file is alive (a JVM, not a recycled pid, not a zombie).
kafka_running() {
  local pid
  pid=$(kafka_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in java*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# kafka_install: the jars of KAFKA_VERSION in $KAFKA_DIR/lib (from the cache, else Maven).
kafka_install() {
  local tmp
  cache_restore kafka
  [ -f "$KAFKA_DIR/lib/kafka_2.13-$KAFKA_VERSION.jar" ] && return 0
  command -v java >/dev/null 2>&1 || ensure_pkg openjdk-17-jre-headless
  command -v mvn >/dev/null 2>&1 || ensure_pkg maven
  tmp=$(mktemp -d)
  cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>perfbase</groupId><artifactId>kafka-service</artifactId><version>1</version>
<dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
</dependencies></project>
EOF
  log "kafka: resolving kafka_2.13 and kafka-tools $KAFKA_VERSION with Maven into $KAFKA_DIR/lib"
  rm -rf "$KAFKA_DIR/lib.new"
  (cd "$tmp" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$KAFKA_DIR/lib.new") >&2 || {
    rm -rf "$tmp" "$KAFKA_DIR/lib.new"
    die "kafka: Maven could not resolve kafka_2.13 $KAFKA_VERSION"
  }
  rm -rf "$tmp" "${KAFKA_DIR:?}/lib"
  mv "$KAFKA_DIR/lib.new" "$KAFKA_DIR/lib"
}

# kafka_jvm: KAFKA_JVM, the command line before a Kafka class, for the broker and its tools
# alike: the heap, IPv4 loopback, quiet logging, the jars.
kafka_jvm() {
  KAFKA_JVM=(java -Xms256m -Xmx1g -Djava.net.preferIPv4Stack=true
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -cp "$KAFKA_DIR/lib/*")
}

# kafka_java CLASS ARGS...: a class from the jars as the broker's user.
kafka_java() {
  kafka_jvm
  as_user "$(kafka_run_user)" "${KAFKA_JVM[@]}" "$@"
}

# kafka_config PORT CONTROLLER_PORT: server.properties (mode 0600: it holds the passwords).
kafka_config() {
  local port=$1 cport=$2 admin
  admin=$(cat "$KAFKA_DIR/admin.password")
  (umask 077 && cat >"$KAFKA_DIR/server.properties.new") <<EOF
# Written by scripts/services.sh on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=SASL_PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=SASL_PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=SASL_PLAINTEXT
controller.listener.names=CONTROLLER
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin" user_admin="$admin" user_perfbase="perfbase";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
log.dirs=$KAFKA_DIR/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
  mv -f "$KAFKA_DIR/server.properties.new" "$KAFKA_DIR/server.properties"
  cat >"$KAFKA_DIR/log4j2.properties" <<EOF
rootLogger.level=WARN
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=%d %p %c: %m%n
EOF
}

# kafka_check PORT: the broker answers an ApiVersions request (v0: size, api key 18, version
# 0, correlation id 1, no client id) on its port with the same correlation id. SASL comes
# after ApiVersions, so this needs no password.
kafka_check() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf '\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\xff\xff' >&3
  reply=$(timeout 5 head -c 8 <&3 | od -An -tx1 | tr -d ' \n')
  exec 3<&-
  [ "${reply:8:8}" = 00000001 ]
}

kafka_ready() { kafka_running && kafka_check "$1"; }

kafka_up() {
  local port cport mark admin
  kafka_install
  mkdir -p "$KAFKA_DIR/data"
  if is_root; then ensure_user "$KAFKA_USER"; fi
  if kafka_running; then
    log "kafka already running (pid $(kafka_pid), port $(kafka_port))"
    return 0
  fi
  if [ ! -s "$KAFKA_DIR/admin.password" ]; then
    draw_token admin
    write_private "$KAFKA_DIR/admin.password" "$admin"
  fi
  port=$(pick_port "$KAFKA_DIR/port" "$KAFKA_FIRST_PORT")
  cport=$(pick_port "$KAFKA_DIR/controller_port" "$KAFKA_FIRST_CONTROLLER_PORT")
  kafka_config "$port" "$cport"
  touch "$KAFKA_DIR/kafka.log"
  if is_root; then chown -R "$KAFKA_USER:" "$KAFKA_DIR"; fi
  mark=$(stat -c %s "$KAFKA_DIR/kafka.log")
  if [ ! -f "$KAFKA_DIR/data/meta.properties" ]; then
    # A new cluster: its id, and the SCRAM credentials written into its first metadata.
    log "kafka: formatting $KAFKA_DIR/data"
    kafka_java kafka.tools.StorageTool format \
      -t "$(kafka_java kafka.tools.StorageTool random-uuid 2>>"$KAFKA_DIR/kafka.log")" \
      -c "$KAFKA_DIR/server.properties" \
      --add-scram 'SCRAM-SHA-256=[name=perfbase,password=perfbase]' \
      --add-scram 'SCRAM-SHA-512=[name=perfbase,password=perfbase]' >>"$KAFKA_DIR/kafka.log" 2>&1 ||
      die "kafka: formatting the storage failed; see $KAFKA_DIR/kafka.log"
  fi
  rm -f "$KAFKA_DIR/kafka.pid"
  log "starting kafka on 127.0.0.1:$port (controller $cport, log $KAFKA_DIR/kafka.log)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script; setpriv
  # and exec make the pid the JVM's.
  local run=()
  if is_root; then run=(setpriv --reuid="$KAFKA_USER" --regid="$KAFKA_USER" --init-groups); fi
  kafka_jvm
  (cd / && exec setsid "${run[@]}" "${KAFKA_JVM[@]}" kafka.Kafka "$KAFKA_DIR/server.properties" \
    </dev/null >>"$KAFKA_DIR/kafka.log" 2>&1) 9>&- &
  echo $! >"$KAFKA_DIR/kafka.pid"
  wait_ready kafka $! "$KAFKA_DIR/kafka.log" "$mark" 240 "answer ApiVersions" kafka_ready "$port"
  cache_save kafka
  log "kafka up: pid $(kafka_pid), 127.0.0.1:$port, SASL PLAIN and SCRAM, user perfbase"
}

kafka_down() {
  if ! kafka_running; then
    log "kafka not running"
    return 0
  fi
  stop_pid kafka "$(kafka_pid)" "$KAFKA_DIR/kafka.log"
}

svc_kafka() {
  case $1 in
  up) kafka_up ;;
  down) kafka_down ;;
  purge)
    log "removing $KAFKA_DIR"
    rm -rf "$KAFKA_DIR"
    ;;
  env)
    if ! kafka_running; then
      log "kafka is not running: run scripts/services.sh up kafka"
      return 1
    fi
    echo "export PERFBASE_KAFKA_URL='kafka://perfbase:perfbase@127.0.0.1:$(kafka_port)'"
    echo "export PERFBASE_KAFKA_PID=$(kafka_pid)"
    echo "export PERFBASE_KAFKA_LIB='$KAFKA_DIR/lib'"
    ;;
  status)
    if kafka_running; then
      echo "kafka: running, pid $(kafka_pid), 127.0.0.1:$(kafka_port), data in $KAFKA_DIR/data"
    elif [ -d "$KAFKA_DIR" ]; then
      echo "kafka: stopped, data kept in $KAFKA_DIR"
    else
      echo "kafka: stopped, not installed"
    fi
    ;;
  esac
}
