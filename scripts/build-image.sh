#!/usr/bin/env bash
# Builds the Tessera container image from the Dockerfile with docker, or with Debian's podman
# (whose builds are buildah's; podman and debootstrap are installed from Debian when no docker
# engine runs here), and checks it: the binary runs in it, as user 65532, and the image holds
# no compiler.
#
#   scripts/build-image.sh                      # localhost/tessera:0.1.0, the name deploy/ uses
#   scripts/build-image.sh --save tessera.tar   # also a docker-archive for `kind load
#                                               # image-archive` or `ctr -n k8s.io images import`
#   scripts/build-image.sh --push registry.example.com/tessera:0.1.0
#   scripts/build-image.sh --from-debootstrap   # base images from a local debootstrap root
#                                               # (kept; --rebuild-base makes it again)
#   scripts/build-image.sh --print-image        # the image name, and nothing else
#
# Where no registry is reachable (Debian's package mirror only), the two Debian 12 base images
# are made from a debootstrap root (debootstrap --variant=minbase bookworm) imported as
# localhost/tessera-base:bookworm; --from-debootstrap forces that, and it is also chosen when
# pulling debian:bookworm fails. --mirror URL sets debootstrap's mirror (default: the first
# deb URI of this machine's apt sources, else http://deb.debian.org/debian).
# Each step prints what it does; the last line says how far it got.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^project(tessera VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
image="localhost/tessera:${version}"
save=""
push=""
from_debootstrap=0
rebuild_base=0
mirror=""
usage() { sed -n '2,/^set -euo pipefail$/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) image=$2; shift 2 ;;
    --save) save=$2; shift 2 ;;
    --push) push=$2; shift 2 ;;
    --from-debootstrap) from_debootstrap=1; shift ;;
    --rebuild-base) rebuild_base=1; from_debootstrap=1; shift ;;
    --mirror) mirror=$2; shift 2 ;;
    --print-image) echo "$image"; exit 0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-image: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

step() { echo "== build-image: $*" >&2; }
cleanup=()  # commands run at exit
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
reached="nothing"
trap 'echo "== build-image: stopped; done so far: $reached" >&2' ERR

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {  # apt_install PACKAGE...: the missing ones, from Debian
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  step "installing ${missing[*]} (Debian)"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# 1. A tool that builds images here.
tool=""
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  tool=docker
else
  command -v podman >/dev/null || apt_install podman crun fuse-overlayfs uidmap slirp4netns
  tool=podman
fi
# Inside a container (no systemd, nested overlay) podman needs cgroupfs, host networking for
# RUN's apt-get, and the vfs storage driver when overlay cannot be mounted.
run_opts=()
build_opts=()
if [ "$tool" = podman ]; then
  export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
  if ! podman info >/dev/null 2>&1; then
    export STORAGE_DRIVER=vfs
    podman info >/dev/null  # fails here with podman's own reason
  fi
  run_opts=(--cgroup-manager=cgroupfs --network=host)
  build_opts=(--cgroup-manager=cgroupfs --network=host --isolation=chroot)
fi
reached="a build tool ($tool)"
step "building with $tool ($($tool --version | head -n 1))"

# 2. The base images: pulled, or made from a debootstrap root.
build_base=docker.io/library/debian:bookworm
base=docker.io/library/debian:bookworm-slim
if [ "$from_debootstrap" -eq 0 ]; then
  if ! $tool pull -q "$build_base" >/dev/null 2>&1 || ! $tool pull -q "$base" >/dev/null 2>&1; then
    step "cannot pull $build_base or $base: making the base from a debootstrap root"
    from_debootstrap=1
  fi
fi
if [ "$from_debootstrap" -eq 1 ] && [ "$rebuild_base" -eq 0 ] &&
  $tool image inspect localhost/tessera-base:bookworm >/dev/null 2>&1; then
  step "using the debootstrap base made before (localhost/tessera-base:bookworm; --rebuild-base to remake it)"
  build_base=localhost/tessera-base:bookworm
  base=localhost/tessera-base:bookworm
  reached="$reached, a debootstrap base (localhost/tessera-base:bookworm, kept)"
elif [ "$from_debootstrap" -eq 1 ]; then
  apt_install debootstrap
  if [ -z "$mirror" ]; then
    mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  fi
  root=$(mktemp -d "${TMPDIR:-/var/tmp}/tessera-base.XXXXXX")
  cleanup+=("rm -rf '$root'")
  step "debootstrap --variant=minbase bookworm from $mirror"
  $sudo debootstrap --variant=minbase bookworm "$root/rootfs" "$mirror" >"$root/debootstrap.log" 2>&1 || {
    tail -n 20 "$root/debootstrap.log" >&2
    false
  }
  r="$root/rootfs"
  # The mirror debootstrap used, for RUN apt-get; and no dates checked (a snapshot mirror).
  echo "deb $mirror bookworm main" | $sudo tee "$r/etc/apt/sources.list" >/dev/null
  if [ -d /etc/apt/apt.conf.d ] && grep -rqs 'Check-Valid-Until "false"' /etc/apt/apt.conf.d; then
    echo 'Acquire::Check-Valid-Until "false";' | $sudo tee "$r/etc/apt/apt.conf.d/99no-check-valid" >/dev/null
  fi
  # Slim, as Debian's -slim images are: no documentation, manual pages or translations, now
  # or from later installs, and no package caches.
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
    | $sudo tee "$r/etc/dpkg/dpkg.cfg.d/tessera-slim" >/dev/null
  $sudo find "$r/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  $sudo find "$r/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  $sudo rm -rf "$r/usr/share/man/"* "$r/usr/share/info/"* "$r/var/cache/apt/"*.bin \
    "$r/var/cache/apt/archives/"*.deb "$r/var/lib/apt/lists/"*
  $sudo tar -C "$r" -c . | $tool import - localhost/tessera-base:bookworm >/dev/null
  build_base=localhost/tessera-base:bookworm
  base=localhost/tessera-base:bookworm
  reached="$reached, a debootstrap base (localhost/tessera-base:bookworm)"
fi

# 3. The image.
step "building $image (build stage $build_base, runtime stage $base)"
pull_never=()
[ "$from_debootstrap" -eq 1 ] && [ "$tool" = podman ] && pull_never=(--pull=never)
$tool build "${build_opts[@]}" "${pull_never[@]}" --build-arg "BUILD_BASE=$build_base" \
  --build-arg "BASE=$base" -t "$image" -f Dockerfile .
reached="$reached, the image $image"

# 4. Checks: the binary runs in it, as 65532, and no compiler came along. In a container or
# sandbox that refuses what the OCI runtime needs (e.g. setrlimit), the same checks run in a
# chroot of the image's file system instead (as root).
step "checking $image"
user=$($tool image inspect --format '{{.Config.User}}' "$image")
[ "$user" = "65532:65532" ] || { echo "build-image: the image runs as '$user', not 65532:65532" >&2; false; }
in_image() {  # in_image PROGRAM ARGS...: runs PROGRAM in the image as its user
  local entry=$1
  shift
  $tool run --rm "${run_opts[@]}" --entrypoint "$entry" "$image" "$@"
}
how="$tool run"
if ! out=$(in_image /usr/local/bin/tessera --version 2>"${TMPDIR:-/tmp}/build-image-run.err"); then
  step "$tool run failed here ($(tail -n 1 "${TMPDIR:-/tmp}/build-image-run.err")); checking in a chroot of the image instead"
  [ "$(id -u)" -eq 0 ] || { echo "build-image: the chroot check needs root" >&2; false; }
  if [ "$tool" = podman ]; then
    mnt=$(podman image mount "$image")
    cleanup+=("podman image unmount '$image' >/dev/null 2>&1 || true")
  else
    mnt=$(mktemp -d "${TMPDIR:-/var/tmp}/tessera-image.XXXXXX")
    cleanup+=("rm -rf '$mnt'")
    cid=$(docker create "$image")
    docker export "$cid" | tar -x -C "$mnt"
    docker rm "$cid" >/dev/null
  fi
  in_image() {
    local entry=$1
    shift
    chroot --userspec=65532:65532 "$mnt" "$entry" "$@"
  }
  how="chroot --userspec=65532:65532"
  out=$(in_image /usr/local/bin/tessera --version)
fi
echo "$out" | grep -q "^tessera " || { echo "build-image: 'tessera --version' in the image printed '$out'" >&2; false; }
uid=$(in_image /usr/bin/id -u)
[ "$uid" = 65532 ] || { echo "build-image: the container runs as uid $uid" >&2; false; }
if in_image /bin/sh -c 'command -v g++ || command -v cc || command -v cmake'; then
  echo "build-image: the runtime image has a compiler" >&2
  false
fi
size=$($tool image inspect --format '{{.Size}}' "$image")
reached="$reached, checked by $how ('$out', uid $uid, no compiler, $((size / 1000 / 1000)) MB)"

# 5. Out: an archive, or a registry.
if [ -n "$save" ]; then
  step "saving $image to $save (docker-archive)"
  if [ "$tool" = docker ]; then docker save -o "$save" "$image"; else podman save --format docker-archive -o "$save" "$image"; fi
  reached="$reached, saved to $save"
fi
if [ -n "$push" ]; then
  step "pushing $image as $push"
  $tool tag "$image" "$push"
  $tool push "$push"
  reached="$reached, pushed as $push"
fi
trap - ERR
echo "== build-image: done: $reached" >&2
