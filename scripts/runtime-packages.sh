#!/usr/bin/env bash
# Prints, one per line, the Debian packages that hold the shared libraries BINARY links (ldd,
# then dpkg -S; on Debian 12 a library may be registered under /lib or /usr/lib). The image's
# runtime stage installs exactly these (Dockerfile). Fails if a library belongs to no package.
# Usage: scripts/runtime-packages.sh BINARY
set -euo pipefail
binary=${1:?usage: $0 BINARY}
libs=$(ldd "$binary" | awk '$3 ~ /^\// { print $3 }')
candidates=()
for lib in $libs; do
  real=$(realpath "$lib")
  candidates+=("$lib" "$real" "${real#/usr}")
done
owners=$(dpkg -S "${candidates[@]}" 2>/dev/null || true)  # "package[:arch]: path" per path found
found=$(sed 's/^[^ ]* //' <<<"$owners")
for lib in $libs; do
  real=$(realpath "$lib")
  if ! grep -qxF -e "$lib" -e "$real" -e "${real#/usr}" <<<"$found"; then
    echo "runtime-packages: $lib ($real) belongs to no Debian package" >&2
    exit 1
  fi
done
cut -d: -f1 <<<"$owners" | sort -u
