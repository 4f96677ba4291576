#!/bin/bash
# Debian packages for the libFuzzer harnesses (fuzz/build.sh): clang and its runtime
# (libFuzzer, ASan, UBSan). MPICH and libnetcdf-dev come from tools/install-deps.sh.
set -euo pipefail
pkgs="clang libclang-rt-14-dev"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
[ "$(id -u)" = 0 ] && sudo= || sudo=sudo
$sudo apt-get update
$sudo apt-get install -y $missing
