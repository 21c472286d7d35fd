#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for the real-cluster tests: etcd, kube-apiserver
# (TLS with an openssl-made CA, RBAC and Node authorizers, the default admission plugins plus
# NodeRestriction), the kwok controller (fake nodes and pod lifecycles, tests/cluster/
# kwok-stages.yaml), deploy/ applied as shipped (`kubectl apply -k deploy/`), and N replicas of
# kube-scheduler, each with its `tessera serve` sidecar, configured from the ConfigMaps that
# deploy/ created: only the extender's URL, the listen addresses and the kubeconfig are
# substituted. kube-scheduler and tessera authenticate as deploy/'s service account
# tessera/tessera-scheduler (a token from the TokenRequest API), so RBAC is enforced on them as
# in a cluster. No kube-controller-manager runs: nothing creates ServiceAccounts or ReplicaSets
# or marks nodes NotReady (the tests create what they need), and the admission plugin
# TaintNodesByCondition is off (it taints every new node not-ready until kube-controller-
# manager's node lifecycle controller clears the taint).
#
# Usage:
#   cluster.sh up DIR [--schedulers N] [--no-tessera] [--tessera-config FILE] [-- SERVE-FLAGS...]
#       Starts everything (N = 1 by default; --no-tessera: kube-scheduler alone with the
#       shipped configuration minus the extender, GPUs as plain extended resources), waits
#       until it answers, and writes DIR/env (source it: KUBECONFIG, the ports). SERVE-FLAGS
#       are added to every `tessera serve`. --tessera-config replaces deploy/'s tessera.yaml.
#   cluster.sh down DIR                  stops every process it started (SIGTERM, then KILL)
#   cluster.sh stop DIR NAME [SIGNAL]    stops one process (etcd, apiserver, kwok, scheduler-I,
#                                        tessera-I) with SIGNAL (TERM by default; KILL to crash)
#   cluster.sh start DIR NAME            starts it again (scheduler-I, tessera-I, kwok)
#   cluster.sh leader DIR                prints the index I of the scheduler replica that leads
#
# Logs are DIR/logs/NAME.log. Needs: the programs of tests/cluster/build.sh (exit 3 when Go is
# missing; the message says what to install), openssl, curl, and `tessera` ($TESSERA, else
# build/tessera).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() { echo "cluster.sh: $*" >&2; exit 1; }

free_port() {  # a TCP port nothing listens on (loopback), not handed out before in this DIR,
  local port  # below Linux's ephemeral range (32768-60999) so that no client's socket holds it
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 12000))
    if grep -qx "$port" "$dir/ports.used" 2>/dev/null; then continue; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    echo "$port" >>"$dir/ports.used"
    echo "$port"
    return 0
  done
  die "no free port found"
}

wait_until() {  # wait_until SECONDS NAME COMMAND...: retries COMMAND every 0.2 s while the
  local limit=$1 what=$2   # process NAME (DIR/pids/NAME) runs
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ -f "$dir/pids/$what" ] && ! kill -0 "$(cat "$dir/pids/$what")" 2>/dev/null; then
      echo "cluster.sh: $what exited (log: $dir/logs/$what.log)" >&2
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster.sh: $what did not come up within ${limit}s" >&2
      return 1
    fi
    sleep 0.2
  done
}

# start NAME COMMAND...: runs COMMAND in the background, logs to DIR/logs/NAME.log, pid in
# DIR/pids/NAME.
start_process() {
  local name=$1
  shift
  "$@" >>"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name"
}

stop_process() {  # stop_process NAME [SIGNAL]
  local name=$1 sig=${2:-TERM} pid
  [ -f "$dir/pids/$name" ] || return 0
  pid=$(cat "$dir/pids/$name")
  if kill -0 "$pid" 2>/dev/null; then
    kill -"$sig" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pids/$name"
}

make_pki() {
  local pki=$dir/pki
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
      -subj "/CN=tessera-test-ca" 2>/dev/null
    cat >apiserver.ext <<'EOF'
subjectAltName = IP:127.0.0.1, IP:10.96.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc
extendedKeyUsage = serverAuth
EOF
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver.crt -days 2 -extfile apiserver.ext 2>/dev/null
    # The administrator (kubectl in the tests, kwok): system:masters.
    echo "extendedKeyUsage = clientAuth" >client.ext
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=kubernetes-admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt \
      -days 2 -extfile client.ext 2>/dev/null
    # The aggregation layer's front proxy (kube-apiserver's client to extension API servers),
    # which kube-scheduler's delegated authentication reads from kube-system's
    # extension-apiserver-authentication ConfigMap.
    openssl req -newkey rsa:2048 -nodes -keyout front-proxy.key -out front-proxy.csr \
      -subj "/CN=front-proxy-client" 2>/dev/null
    openssl x509 -req -in front-proxy.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out front-proxy.crt -days 2 -extfile client.ext 2>/dev/null
    # The service-account token signing key.
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
}

write_kubeconfig() {  # write_kubeconfig FILE USER-LINES...
  local file=$1
  shift
  {
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$apiserver_port
    certificate-authority: $dir/pki/ca.crt
contexts:
- name: test
  context: {cluster: test, user: user}
current-context: test
users:
- name: user
  user:
EOF
    printf '    %s\n' "$@"
  } >"$file"
}

load_env() {
  [ -f "$dir/env" ] || die "$dir/env not found: is the cluster up (cluster.sh up $dir)?"
  # shellcheck disable=SC1091
  source "$dir/env"
}

start_kwok() {
  start_process kwok "$bin/kwok" --kubeconfig "$dir/admin.kubeconfig" \
    --config "$here/kwok-stages.yaml" --manage-nodes-with-label-selector type=kwok \
    --node-lease-duration-seconds 0 --node-port 0 --server-address "" \
    --node-ip 10.0.0.1 --cidr 10.0.0.0/8
}

start_tessera() {  # start_tessera I
  local i=$1 port probe metrics
  port=$(eval echo "\$TESSERA_PORT_$i")
  probe=$(eval echo "\$TESSERA_PROBE_PORT_$i")
  metrics=$(eval echo "\$TESSERA_METRICS_PORT_$i")
  local extra=()
  if [ -f "$dir/serve-flags" ]; then mapfile -t extra <"$dir/serve-flags"; fi
  start_process "tessera-$i" "$tessera" serve --config "$dir/tessera.yaml" \
    --kubeconfig "$dir/tessera-scheduler.kubeconfig" \
    --listen "127.0.0.1:$port" --probe-listen "127.0.0.1:$probe" \
    --metrics-listen "127.0.0.1:$metrics" "${extra[@]}"
}

start_scheduler() {  # start_scheduler I
  local i=$1 port
  port=$(eval echo "\$SCHEDULER_PORT_$i")
  start_process "scheduler-$i" "$bin/kube-scheduler" --config "$dir/scheduler-$i.yaml" \
    --secure-port "$port" --bind-address 127.0.0.1 \
    --authentication-kubeconfig "$dir/tessera-scheduler.kubeconfig" \
    --authorization-kubeconfig "$dir/tessera-scheduler.kubeconfig" \
    --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics \
    --v=2
}

# The scheduler configuration of replica I: the ConfigMap's file with the extender's URL set
# to that replica's sidecar and the kubeconfig added (clientConnection), nothing else changed;
# without tessera, the extender removed.
scheduler_config() {  # scheduler_config I
  local i=$1 port
  port=$(eval echo "\$TESSERA_PORT_$i")
  if [ "$with_tessera" -eq 1 ]; then
    sed "s#urlPrefix: http://127.0.0.1:8888#urlPrefix: http://127.0.0.1:$port#" \
      "$dir/scheduler-config.shipped.yaml"
  else
    # Everything from `extenders:` on is the extender (the last key of the shipped file).
    sed '/^extenders:/,$d' "$dir/scheduler-config.shipped.yaml"
  fi
  printf 'clientConnection:\n  kubeconfig: %s\n' "$dir/tessera-scheduler.kubeconfig"
}

cmd_up() {
  local schedulers=1
  with_tessera=1
  local tessera_config=""
  local serve_flags=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --schedulers) schedulers=$2; shift 2 ;;
      --no-tessera) with_tessera=0; shift ;;
      --tessera-config) tessera_config=$2; shift 2 ;;
      --) shift; serve_flags=("$@"); break ;;
      *) die "up: unknown argument '$1'" ;;
    esac
  done
  command -v openssl >/dev/null || die "openssl is needed"
  command -v curl >/dev/null || die "curl is needed"
  local rc=0
  bin=$(bash "$here/build.sh") || rc=$?
  [ "$rc" -eq 0 ] || exit "$rc"
  tessera=${TESSERA:-$root/build/tessera}
  [ "$with_tessera" -eq 0 ] || [ -x "$tessera" ] || die "no tessera binary at $tessera (set TESSERA)"

  mkdir -p "$dir/logs" "$dir/pids"
  : >"$dir/ports.used"
  make_pki
  local etcd_port etcd_peer
  etcd_port=$(free_port)
  etcd_peer=$(free_port)
  apiserver_port=$(free_port)

  start_process etcd "$bin/etcd" --name test --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "test=http://127.0.0.1:$etcd_peer" \
    --unsafe-no-fsync --quota-backend-bytes 8589934592 --log-level warn
  wait_until 60 etcd curl -sf "http://127.0.0.1:$etcd_port/health" || {
    tail -20 "$dir/logs/etcd.log" >&2; exit 1; }

  start_process apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$apiserver_port" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" \
    --requestheader-client-ca-file "$dir/pki/ca.crt" \
    --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User \
    --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$dir/pki/front-proxy.crt" \
    --proxy-client-key-file "$dir/pki/front-proxy.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$dir/pki/sa.pub" \
    --service-account-signing-key-file "$dir/pki/sa.key" \
    --api-audiences https://kubernetes.default.svc \
    --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction \
    --disable-admission-plugins TaintNodesByCondition \
    --service-cluster-ip-range 10.96.0.0/16 \
    --max-requests-inflight 2000 --max-mutating-requests-inflight 1000 \
    --v=1
  write_kubeconfig "$dir/admin.kubeconfig" "client-certificate: $dir/pki/admin.crt" \
    "client-key: $dir/pki/admin.key"
  export KUBECONFIG=$dir/admin.kubeconfig
  wait_until 120 apiserver curl -sf --cacert "$dir/pki/ca.crt" \
    --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
    "https://127.0.0.1:$apiserver_port/readyz" || { tail -30 "$dir/logs/apiserver.log" >&2; exit 1; }
  # The bootstrap RBAC roles (system:kube-scheduler, ...) exist once readyz passes.
  "$bin/kubectl" apply -k "$root/deploy" >"$dir/logs/apply.log" 2>&1 || {
    cat "$dir/logs/apply.log" >&2; die "kubectl apply -k deploy/ failed"; }
  "$bin/kubectl" -n tessera get configmap tessera-scheduler-config \
    -o 'jsonpath={.data.scheduler-config\.yaml}' >"$dir/scheduler-config.shipped.yaml"
  if [ -n "$tessera_config" ]; then
    cp "$tessera_config" "$dir/tessera.yaml"
  else
    "$bin/kubectl" -n tessera get configmap tessera-config \
      -o 'jsonpath={.data.tessera\.yaml}' >"$dir/tessera.yaml"
  fi
  local token
  token=$("$bin/kubectl" -n tessera create token tessera-scheduler --duration 48h)
  printf '%s' "$token" >"$dir/tessera-scheduler.token"
  write_kubeconfig "$dir/tessera-scheduler.kubeconfig" "tokenFile: $dir/tessera-scheduler.token"
  # Namespaces the tests use get their "default" ServiceAccount (no controller makes it).
  "$bin/kubectl" create serviceaccount default -n default >/dev/null 2>&1 || true

  {
    echo "export KUBECONFIG=$dir/admin.kubeconfig"
    echo "export CLUSTER_BIN=$bin"
    echo "export APISERVER_PORT=$apiserver_port"
    echo "export SCHEDULERS=$schedulers"
    echo "export WITH_TESSERA=$with_tessera"
    echo "tessera=$tessera"
    echo "bin=$bin"
    echo "with_tessera=$with_tessera"
    local i
    for i in $(seq 0 $((schedulers - 1))); do
      echo "export TESSERA_PORT_$i=$(free_port)"
      echo "export TESSERA_PROBE_PORT_$i=$(free_port)"
      echo "export TESSERA_METRICS_PORT_$i=$(free_port)"
      echo "export SCHEDULER_PORT_$i=$(free_port)"
    done
  } >"$dir/env"
  printf '%s\n' "${serve_flags[@]}" >"$dir/serve-flags"
  [ ${#serve_flags[@]} -gt 0 ] || : >"$dir/serve-flags"
  load_env

  start_kwok
  local i
  for i in $(seq 0 $((schedulers - 1))); do
    scheduler_config "$i" >"$dir/scheduler-$i.yaml"
    if [ "$with_tessera" -eq 1 ]; then start_tessera "$i"; fi
    start_scheduler "$i"
  done
  for i in $(seq 0 $((schedulers - 1))); do
    if [ "$with_tessera" -eq 1 ]; then
      local probe
      probe=$(eval echo "\$TESSERA_PROBE_PORT_$i")
      wait_until 60 "tessera-$i" curl -sf "http://127.0.0.1:$probe/readyz" || {
        tail -20 "$dir/logs/tessera-$i.log" >&2; exit 1; }
    fi
    local sport
    sport=$(eval echo "\$SCHEDULER_PORT_$i")
    wait_until 60 "scheduler-$i" curl -skf "https://127.0.0.1:$sport/healthz" || {
      tail -20 "$dir/logs/scheduler-$i.log" >&2; exit 1; }
  done
  echo "cluster.sh: up in $dir (API server https://127.0.0.1:$apiserver_port, $schedulers" \
    "scheduler replica(s)$([ "$with_tessera" -eq 1 ] && echo ", each with tessera serve"))" >&2
}

cmd_down() {
  [ -d "$dir/pids" ] || return 0
  local name
  # Clients first, the store last.
  for name in $(ls "$dir/pids" | grep -E '^(scheduler|tessera)-' || true) kwok apiserver etcd; do
    stop_process "$name"
  done
}

cmd_leader() {  # the running replica whose kube-scheduler logged that it acquired the lease
  load_env          # (a replica that loses it exits)
  local i pid
  for i in $(seq 0 $((SCHEDULERS - 1))); do
    [ -f "$dir/pids/scheduler-$i" ] || continue
    pid=$(cat "$dir/pids/scheduler-$i")
    kill -0 "$pid" 2>/dev/null || continue
    # Only the lines of the current process (a restarted replica appends to the same log).
    if awk -v pid=" $pid " 'index($0, pid) && /Successfully acquired lease/ { found = 1 } END { exit !found }' \
      "$dir/logs/scheduler-$i.log"; then
      echo "$i"
      return 0
    fi
  done
  return 1
}

[ $# -ge 2 ] || { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
verb=$1
dir=$2
shift 2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case "$verb" in
  up) cmd_up "$@" ;;
  down) cmd_down ;;
  stop) load_env; stop_process "$1" "${2:-TERM}" ;;
  start)
    load_env
    case "$1" in
      tessera-*) start_tessera "${1#tessera-}" ;;
      scheduler-*) start_scheduler "${1#scheduler-}" ;;
      kwok) start_kwok ;;
      *) die "start: unknown process '$1'" ;;
    esac
    ;;
  leader) cmd_leader ;;
  *) die "unknown command '$verb'" ;;
esac
