#!/usr/bin/env bash
# Sets up what EGG needs, then runs a command with it: the README's two commands and .ci/run start
# with it.
#
#   tools/setup.sh [--tests] [COMMAND [ARG...]]
#
# Idempotent: on a machine that has everything it installs nothing (and a machine without network,
# like the GPU machine, uses what is there). In order:
#   1. Debian packages (apt-get, as root or through sudo), only the missing ones; --tests adds what
#      the test suite needs (clang-format, clang-tidy, chromium, clang + libFuzzer for the sanitize
#      test, nginx with WebDAV). A package that cannot be installed is a warning: CMake's configure
#      step names it.
#   2. nvcc: /usr/local/cuda/bin goes on PATH when nvcc is not on it.
#   3. Python with torch==2.11.0: $EGG_PYTHON, else python3, when it has that torch; otherwise a
#      virtual environment ($EGG_VENV, default ${XDG_CACHE_HOME:-~/.cache}/egg-venv) made with it
#      (a Debian system Python refuses pip installs, PEP 668).
#   4. matplotlib==3.11.2 into that Python when it has none (egg-gen report draws its plots with
#      it); a warning when it cannot be installed.
# Then COMMAND runs with EGG_PYTHON set to that interpreter (CMake's configure step and egg-gen read
# it), PATH as above, and CTEST_PARALLEL_LEVEL (ctest's jobs, the test preset's) as many as the
# machine has cores unless set. Without a COMMAND it prints the EGG_PYTHON line.
set -euo pipefail

TORCH_VERSION=2.11.0
MATPLOTLIB_VERSION=3.11.2
PACKAGES=(cmake ninja-build g++ nlohmann-json3-dev libcurl4-openssl-dev libboost-dev
          libboost-filesystem-dev libcli11-dev libfmt-dev libssl-dev libgtest-dev libgmock-dev)
TEST_PACKAGES=(clang-format clang-tidy chromium clang libclang-rt-14-dev nginx libnginx-mod-http-dav-ext)

log() { echo "setup: $*" >&2; }

tests=0
if [ "${1:-}" = "--tests" ]; then
  tests=1
  shift
fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null && { [ -t 0 ] || sudo -n true 2>/dev/null; }; then
    # sudo asks for a password only where someone can type it.
    sudo "$@"
  else
    return 1
  fi
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

apt_updated=0
# Without network (the GPU machine) a connection apt waits on gives up after 20 s, not its default 120.
APT_OPTS=(-o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20)
# Installs the given Debian packages that are missing; returns 1 (after a warning) when it cannot.
apt_install() {
  local missing=() p
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    log "warning: not a Debian system (no apt-get); install these yourself: ${missing[*]}"
    return 1
  fi
  log "installing Debian packages: ${missing[*]}"
  if [ "$apt_updated" -eq 0 ]; then
    as_root apt-get "${APT_OPTS[@]}" update -qq >&2 && apt_updated=1 || true
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq --no-install-recommends \
         "${missing[@]}" >&2; then
    log "warning: could not install ${missing[*]} (no network, or not root and no sudo);" \
        "going on with what is installed"
    return 1
  fi
}

# The whole run is one function, so bash has read all of it before it starts (an edit or a
# checkout while it installs cannot change what runs).
main() {
# --- 1. Debian packages ------------------------------------------------------------------------
wanted=("${PACKAGES[@]}")
[ "$tests" -eq 1 ] && wanted+=("${TEST_PACKAGES[@]}")
apt_install "${wanted[@]}" || true

# --- 2. nvcc -----------------------------------------------------------------------------------
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || log "warning: nvcc not found (install the CUDA toolkit, or put its bin/ on PATH)"

# --- 3. Python with torch ----------------------------------------------------------------------
# Prints the interpreter's real path when it imports torch $TORCH_VERSION.
torch_python() {
  "$1" - "$TORCH_VERSION" 2>/dev/null <<'PY'
import sys
import warnings
warnings.filterwarnings("ignore")
import torch
sys.exit(0 if torch.__version__.split("+")[0] == sys.argv[1] else 1)
PY
  [ $? -eq 0 ] && "$1" -c 'import sys; print(sys.executable)'
}

PY=""
given="${EGG_PYTHON:-python3}"
if command -v "$given" >/dev/null; then
  PY="$(torch_python "$given" || true)"
fi
if [ -z "$PY" ]; then
  venv="${EGG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/egg-venv}"
  if [ ! -x "$venv/bin/python" ] || [ -z "$(torch_python "$venv/bin/python" || true)" ]; then
    log "$given has no torch==$TORCH_VERSION: making the virtual environment $venv with it"
    # Debian's python3 makes virtual environments only with python3-venv (its ensurepip).
    command -v dpkg-query >/dev/null && { apt_install python3 python3-venv || true; }
    base="$given"
    command -v "$base" >/dev/null || base=python3
    [ -x "$venv/bin/python" ] || "$base" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "torch==$TORCH_VERSION" >&2
  fi
  PY="$(torch_python "$venv/bin/python")" || {
    log "error: $venv/bin/python still cannot import torch==$TORCH_VERSION"
    exit 1
  }
fi
log "Python with torch $TORCH_VERSION: $PY"

# --- 4. matplotlib -----------------------------------------------------------------------------
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
  log "installing matplotlib==$MATPLOTLIB_VERSION into $PY"
  "$PY" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 30 \
    "matplotlib==$MATPLOTLIB_VERSION" >&2 ||
    log "warning: could not install matplotlib==$MATPLOTLIB_VERSION into $PY;" \
        "egg-gen report needs it (its test is skipped without it)"
fi

export EGG_PYTHON="$PY"
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
if [ "$#" -eq 0 ]; then
  echo "EGG_PYTHON=$PY"
  exit 0
fi
exec "$@"
}

main "$@"
