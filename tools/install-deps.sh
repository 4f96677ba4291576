#!/usr/bin/env bash
# Installs what haloswap needs on Debian 12 (as root), only if something is missing.
set -euo pipefail
pkgs=(build-essential gfortran cmake pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev
      python3 python3-matplotlib libnetcdf-dev libsimgrid-dev
      python3-dev python3-venv python3-numpy python3-pytest python3-mpi4py)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
