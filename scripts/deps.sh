#!/usr/bin/env bash
# Installs what Tessera needs from Debian 12 packages:
#   bash scripts/deps.sh          to build and run it (scripts/run.sh);
#   bash scripts/deps.sh --test   also to test it and render the reports (scripts/test.sh);
#   --print                       lists the packages of that set instead of installing them.
# Idempotent: installs only what is missing, so a second run costs a few dpkg queries.
set -euo pipefail

with_tests=0
print=0
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=1 ;;
    --print) print=1 ;;
    *) echo "usage: $0 [--test] [--print]" >&2; exit 2 ;;
  esac
done

packages=(
  g++ cmake ninja-build pkg-config          # toolchain
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev
  libcpp-httplib-dev                        # HTTP client (API server access)
  libboost-dev                              # Boost.Beast: tessera serve's HTTP server
  prometheus-cpp-dev                        # tessera serve's metrics (core library)
  libssl-dev                                # TLS on tessera serve's listener
  libsimdjson-dev                           # tessera serve's filter/prioritize body parser
  libglpk-dev                               # LP solver of tessera frag --offline
)
if [ "$with_tests" -eq 1 ]; then
  packages+=(
    libgtest-dev libgmock-dev libbenchmark-dev  # tests and benchmarks
    curl                                        # a real HTTP client for the extender e2e test
    openssl                                     # certificates for the API client's TLS tests
    chromium imagemagick fonts-dejavu-core      # the report check: headless Chromium screenshot
    prometheus                                  # a real Prometheus scrapes tessera serve (e2e)
    python3-jsonschema                          # the Grafana dashboard's schema check (e2e)
    python3-yaml                                # deploy/'s manifests read by the e2e scripts
    universal-ctags                             # the class-size check (tests/tools/class_sizes.py)
    clang-14 libclang-rt-14-dev                 # libFuzzer, ASan, UBSan: the fuzz harnesses
  )
  # kubectl: a real client for the e2e tests (kubectl prints the Pod/Node JSON the extender is
  # fed, and checks deploy/). Debian 12 ships it as kubernetes-client; a machine with another
  # kubectl (e.g. the upstream package) keeps its own.
  if ! command -v kubectl >/dev/null; then packages+=(kubernetes-client); fi
fi

if [ "$print" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's prometheus package enables and starts a system service (port 9090); the tests run
# their own on a free loopback port, so a service this script brought in is stopped again.
if printf '%s\n' "${missing[@]}" | grep -qx prometheus && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
