#!/usr/bin/env bash
# Installs every peer the test suites drive, and is a no-op when all of them are present:
#
#   1. Debian packages: kcat and the Debian Python clients (python3-kafka, python3-confluent-kafka)
#      with the codec modules kafka-python needs (python3-snappy, python3-lz4, python3-zstandard);
#      Java 17+ and Maven when missing (for 2).
#   2. Apache Kafka's jars (broker + CLI tools) for the Kafka fixture: scripts/kafka-fixture.sh fetch
#      (Maven Central -> .cache/kafka/<version>/lib, git-ignored).
#   3. A Python virtual environment with the PyPI clients: install_python_venv.
#   4. Go modules (franz-go's kgo tests): install_go_peers.
#   5. The harness's load generator (bench/loadgen, franz-go): install_loadgen, built to .cache/go/bin.
#
# apt-get needs root (CI runs as root); otherwise a missing Debian package stops the script with the
# command to run. .ci/run calls this before `npm test`; scripts/ensure-test-peers.sh (npm pretest)
# delegates to it. Each step prints how long it took when it had work to do.
#
#   bash scripts/install-peers.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO_ROOT="$(pwd)"

DEBIAN_PACKAGES=(kcat python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard)
APT_UPDATED=0

log() { echo "install-peers: $*" >&2; }

is_root() { [ "$(id -u)" -eq 0 ]; }

apt_install() { # PACKAGE...: apt-get install as root, else fail naming the command
  if ! is_root; then
    log "missing Debian packages: $*"
    log "install them with: sudo apt-get update && sudo apt-get install -y --no-install-recommends $*   (or run: sudo bash scripts/install-peers.sh)"
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ "${APT_UPDATED}" -eq 0 ]; then
    apt-get update -q
    APT_UPDATED=1
  fi
  apt-get install -y -q --no-install-recommends "$@"
}

debian_peers_present() {
  command -v kcat >/dev/null 2>&1 &&
    [ -x /usr/bin/python3 ] &&
    /usr/bin/python3 -c 'import kafka, confluent_kafka, snappy, lz4.frame, zstandard' >/dev/null 2>&1
}

install_debian_peers() {
  if debian_peers_present; then return 0; fi
  apt_install "${DEBIAN_PACKAGES[@]}"
  if ! debian_peers_present; then
    log "still missing after apt-get install: kcat on PATH, or /usr/bin/python3 -c 'import kafka, confluent_kafka, snappy, lz4.frame, zstandard'"
    return 1
  fi
}

java_major() { # prints the major version of `java` on PATH, or 0
  local v
  v="$(java -version 2>&1 | sed -n 's/.* version "\([0-9][0-9]*\).*/\1/p' | head -n 1)"
  echo "${v:-0}"
}

install_kafka_jars() {
  local missing=()
  if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ]; then missing+=(openjdk-17-jre-headless); fi
  if ! command -v mvn >/dev/null 2>&1; then missing+=(maven); fi
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; fi
  # Idempotent: returns at once when the jars are cached.
  bash "${REPO_ROOT}/scripts/kafka-fixture.sh" fetch
}

PYPI_PINS=(confluent-kafka==2.16.1 kafka-python==3.0.12 python-snappy==0.7.3 cramjam==2.14.0 lz4==4.4.5 zstandard==0.25.0)
VENV_DIR="${REPO_ROOT}/.cache/venv"

venv_ok() { # the venv exists and holds exactly the pinned versions, and the clients import
  [ -x "${VENV_DIR}/bin/python" ] || return 1
  "${VENV_DIR}/bin/python" - "${PYPI_PINS[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
import confluent_kafka, kafka, snappy, lz4.frame, zstandard  # noqa: F401
PY
}

install_python_venv() {
  # The PyPI clients (newest confluent-kafka with its bundled librdkafka, kafka-python 3.x and the
  # codecs kafka-python needs) in .cache/venv, built from Debian's /usr/bin/python3.
  if venv_ok; then return 0; fi
  if ! /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1; then apt_install python3-venv; fi
  rm -rf "${VENV_DIR}"
  /usr/bin/python3 -m venv "${VENV_DIR}"
  "${VENV_DIR}/bin/python" -m pip install --quiet --disable-pip-version-check "${PYPI_PINS[@]}"
  venv_ok || { log "the PyPI clients in ${VENV_DIR} do not import after pip install"; return 1; }
}

FRANZ_GO_VERSION=v1.22.3
GO_DIR="${REPO_ROOT}/.cache/go"
FRANZ_GO_COPY="${REPO_ROOT}/.cache/franz-go/${FRANZ_GO_VERSION}"

go_env() { # the caches test/franz-go/kgo.test.ts uses too
  export GOPATH="${GO_DIR}" GOMODCACHE="${GO_DIR}/pkg/mod" GOCACHE="${GO_DIR}/build" GOFLAGS=-modcacherw GOTOOLCHAIN=local GOTELEMETRY=off
}

go_bin() { command -v go 2>/dev/null || echo /usr/local/go/bin/go; }

install_go_peers() {
  # franz-go's module zip from the Go module proxy (it carries pkg/kgo/*_test.go), copied to a
  # writable .cache/franz-go/<version>, its dependencies downloaded and the kgo tests compiled once,
  # so the test run needs no network (GOPROXY=off there).
  if [ -f "${FRANZ_GO_COPY}/pkg/kgo/helpers_test.go" ] && [ -f "${FRANZ_GO_COPY}/.skiff-compiled" ]; then return 0; fi
  local go; go="$(go_bin)"
  [ -x "${go}" ] || { log "Go is required for the franz-go suite but not found (PATH or /usr/local/go/bin/go)"; return 1; }
  (
    go_env
    local dir
    dir="$("${go}" mod download -json "github.com/twmb/franz-go@${FRANZ_GO_VERSION}" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
    rm -rf "${FRANZ_GO_COPY}"
    mkdir -p "$(dirname "${FRANZ_GO_COPY}")"
    cp -r "${dir}" "${FRANZ_GO_COPY}"
    chmod -R u+w "${FRANZ_GO_COPY}"
    cd "${FRANZ_GO_COPY}"
    "${go}" mod download
    "${go}" test -c -o "${GO_DIR}/kgo.test" ./pkg/kgo/ >/dev/null
    touch "${FRANZ_GO_COPY}/.skiff-compiled"
  )
}

LOADGEN_SRC="${REPO_ROOT}/bench/loadgen"
LOADGEN_BIN="${GO_DIR}/bin/skiff-loadgen" # bench/loadgen.ts looks for it here

install_loadgen() {
  # bench/compare.ts's franz-go load generator, built from the pinned go.mod/go.sum (modules from
  # the Go module proxy into .cache/go); rebuilt when a source is newer than the binary.
  local stale=0 f
  for f in "${LOADGEN_SRC}"/*.go "${LOADGEN_SRC}/go.mod" "${LOADGEN_SRC}/go.sum"; do
    if [ ! -x "${LOADGEN_BIN}" ] || [ "${f}" -nt "${LOADGEN_BIN}" ]; then stale=1; fi
  done
  if [ "${stale}" -eq 0 ]; then return 0; fi
  local go; go="$(go_bin)"
  [ -x "${go}" ] || { log "Go is required for bench/loadgen but not found (PATH or /usr/local/go/bin/go)"; return 1; }
  (
    go_env
    cd "${LOADGEN_SRC}"
    mkdir -p "$(dirname "${LOADGEN_BIN}")"
    "${go}" build -mod=readonly -o "${LOADGEN_BIN}.tmp" . && mv "${LOADGEN_BIN}.tmp" "${LOADGEN_BIN}"
  )
}

run_step() { # NAME FUNCTION: runs one step, reports its time when it took a while
  local name="$1" fn="$2" started=${SECONDS}
  if ! "${fn}"; then
    log "${name}: failed"
    return 1
  fi
  local took=$((SECONDS - started))
  if [ "${took}" -gt 1 ]; then log "${name}: done in ${took} s"; fi
}

started=${SECONDS}
run_step "Debian packages (${DEBIAN_PACKAGES[*]})" install_debian_peers
run_step "Apache Kafka jars (scripts/kafka-fixture.sh fetch)" install_kafka_jars
run_step "Python virtual environment" install_python_venv
run_step "Go modules" install_go_peers
run_step "bench load generator (bench/loadgen)" install_loadgen
if [ $((SECONDS - started)) -gt 1 ]; then log "all peers present after $((SECONDS - started)) s"; fi
