#!/usr/bin/env bash
# Installs the Debian packages regcmd needs when any is missing (Debian 12; run as root, or
# with sudo available). Usage: scripts/setup.sh [extra packages...]
set -euo pipefail
packages=(libboost-dev doctest-dev libdrm-dev cmake ninja-build g++ "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "regcmd setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "regcmd setup: missing packages (${missing[*]}) and not root; install them or run as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A package of another architecture (libdrm-dev:arm64 for the cross build) comes through
# multiarch: that architecture is added to dpkg before the package lists are read.
for p in "${missing[@]}"; do
  case "$p" in
    *:*)
      arch=${p##*:}
      if ! dpkg --print-foreign-architectures | grep -qx "$arch" && [ "$arch" != "$(dpkg --print-architecture)" ]; then
        "${as_root[@]}" dpkg --add-architecture "$arch"
      fi ;;
  esac
done
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
