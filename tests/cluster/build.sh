#!/usr/bin/env bash
# Builds the real Kubernetes components the real-cluster tests run against, from their published
# Go modules (tests/cluster/go.mod), into a cache folder outside the repository:
#
#   etcd            go.etcd.io/etcd/server/v3/etcdmain (tests/cluster/etcd/main.go)
#   kube-apiserver  k8s.io/kubernetes/cmd/kube-apiserver
#   kube-scheduler  k8s.io/kubernetes/cmd/kube-scheduler
#   kubectl         k8s.io/kubernetes/cmd/kubectl (the client the tests apply deploy/ with)
#   kwok            sigs.k8s.io/kwok/cmd/kwok (fake nodes and pod lifecycles)
#
# Usage: bash tests/cluster/build.sh [--check]
#   prints the folder that holds the five programs as its last line of stdout; progress on stderr.
#   --check  only says whether a Go that can build them is here (exit 0) or not (exit 3).
#
# The cache: $TESSERA_CLUSTER_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/cluster, one
# folder per Kubernetes release and hash of the module files (go.mod, go.sum, etcd/main.go), so
# a second run costs a stat and an edit of the module makes a new folder. Go's own caches (module
# and build cache, `go env GOMODCACHE GOCACHE`) are outside the repository too.
#
# Exit codes: 0 built or cached; 3 no Go new enough here, or the Go module proxy cannot be
# reached (the message says what is missing; the tests that need the cluster then skip); 1 the
# build failed (a module that does not match go.sum included).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

check_only=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

k8s_version=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes v\([0-9][0-9.]*\)\( .*\)\{0,1\}$/\1/p' "$here/go.mod" | head -1)
need_go=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$here/go.mod")

# The Go toolchain: `go` on PATH, else the usual install folder of the upstream tarball.
go_bin=$(command -v go || true)
if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
missing_go() {
  cat >&2 <<EOF
tests/cluster: the real-cluster tests need Go >= $need_go to build Kubernetes v$k8s_version
  (kube-apiserver, kube-scheduler, kubectl, etcd, kwok) from their Go modules; $1.
  Debian 12's golang package is 1.19, too old. Install Go $need_go or newer from its upstream
  tarball (https://go.dev/dl/, unpacked to /usr/local/go) and put /usr/local/go/bin on PATH,
  with access to the Go module proxy (GOPROXY); then run this again. Everything else in the
  test suite runs without it.
EOF
}
if [ -z "$go_bin" ]; then
  missing_go "no 'go' command was found"
  exit 3
fi
have_go=$("$go_bin" env GOVERSION 2>/dev/null | sed 's/^go//') || have_go=""
version_ge() {  # version_ge A B: A >= B, both dotted numbers
  [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}
if [ -z "$have_go" ] || ! version_ge "${have_go%%[!0-9.]*}" "$need_go"; then
  missing_go "found go${have_go:-?} at $go_bin"
  exit 3
fi
if [ "$check_only" -eq 1 ]; then
  echo "go$have_go at $go_bin can build Kubernetes v$k8s_version" >&2
  exit 0
fi

hash=$(cat "$here/go.mod" "$here/go.sum" "$here/etcd/main.go" | sha256sum | cut -c1-12)
cache=${TESSERA_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera/cluster}
out="$cache/v$k8s_version-$hash"
programs=(etcd kube-apiserver kube-scheduler kubectl kwok)

complete() {
  [ -f "$out/bin/.complete" ] || return 1
  local p
  for p in "${programs[@]}"; do [ -x "$out/bin/$p" ] || return 1; done
}
if complete; then
  echo "tests/cluster: Kubernetes v$k8s_version components cached in $out/bin" >&2
  echo "$out/bin"
  exit 0
fi

mkdir -p "$out"
# One build at a time per cache folder (two test scripts may start it together).
exec 9>"$out/.lock"
flock 9
if complete; then echo "$out/bin"; exit 0; fi

echo "tests/cluster: building Kubernetes v$k8s_version components with go$have_go into $out/bin" \
  "(first time: about 10-20 minutes on 2 cores; later runs reuse it)" >&2
rm -rf "$out/bin.tmp"
mkdir -p "$out/bin.tmp"
# The version the binaries report (kube-apiserver's /version, kubectl version), as Kubernetes'
# own build (hack/lib/version.sh) stamps it.
minor=$(echo "$k8s_version" | cut -d. -f2)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=v$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean"
done
start=$SECONDS
targets=(./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler
  k8s.io/kubernetes/cmd/kubectl sigs.k8s.io/kwok/cmd/kwok)
# The modules first (`go list -deps` fetches what the build needs, nothing more): a proxy that
# cannot be reached is a missing prerequisite, like a missing Go; a module whose content does
# not match go.sum is a failure.
if ! fetch_log=$(cd "$here" && GOFLAGS="${GOFLAGS:-} -mod=readonly" \
  "$go_bin" list -deps -f '' "${targets[@]}" 2>&1); then
  echo "$fetch_log" | tail -5 >&2
  if echo "$fetch_log" | grep -q -e 'SECURITY ERROR' -e 'checksum mismatch' -e 'verifying '; then
    echo "tests/cluster: a module does not match tests/cluster/go.sum (above)" >&2
    exit 1
  fi
  cat >&2 <<EOF
tests/cluster: the Go modules of Kubernetes v$k8s_version could not be fetched (above) through
  GOPROXY=$("$go_bin" env GOPROXY); the real-cluster tests need the Go module proxy (or a
  module cache that already holds them: go env GOMODCACHE). Everything else in the test suite
  runs without it.
EOF
  exit 3
fi
(
  cd "$here"
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  timer=()
  if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f '%e s wall, %M KiB peak RSS of one process'); fi
  "${timer[@]}" "$go_bin" build -trimpath -ldflags "$ldflags" -o "$out/bin.tmp/" "${targets[@]}"
) >&2 || { echo "tests/cluster: the build failed (above)" >&2; exit 1; }
touch "$out/bin.tmp/.complete"
rm -rf "$out/bin"
mv "$out/bin.tmp" "$out/bin"
echo "tests/cluster: built in $((SECONDS - start)) s" >&2
echo "$out/bin"
