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

install_python_venv() {
  # Extension point (being filled in by the PyPI-clients work): create the virtual environment with
  # the PyPI clients (confluent-kafka, kafka-python 3.x, ...) and return 0; must be a no-op when
  # everything is already installed.
  return 0
}

install_go_peers() {
  # Extension point (being filled in by the franz-go work): download the Go modules the Go suites
  # need (franz-go's kgo tests) and return 0; must be a no-op when they are already present.
  return 0
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
if [ $((SECONDS - started)) -gt 1 ]; then log "all peers present after $((SECONDS - started)) s"; fi
