#!/usr/bin/env bash
# Makes sure the real Kafka clients the compatibility tests drive are installed: kcat, and the
# Debian packages of kafka-python and confluent-kafka (they import only under /usr/bin/python3).
# Installs them when running as root (CI); otherwise fails naming the command to run. Never skips.
set -euo pipefail

PACKAGES=(kcat python3-kafka python3-confluent-kafka)
INSTALL_CMD="sudo bash scripts/ensure-test-peers.sh"

peers_present() {
  command -v kcat >/dev/null 2>&1 &&
    [ -x /usr/bin/python3 ] &&
    /usr/bin/python3 -c 'import kafka, confluent_kafka' >/dev/null 2>&1
}

if peers_present; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-test-peers: kcat and the Python Kafka clients are required by the tests but missing." >&2
  echo "ensure-test-peers: install them with: ${INSTALL_CMD}   (apt-get update; apt-get install -y ${PACKAGES[*]})" >&2
  exit 1
fi

echo "ensure-test-peers: installing ${PACKAGES[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${PACKAGES[@]}"

if ! peers_present; then
  echo "ensure-test-peers: still missing after apt-get install: kcat on PATH, or /usr/bin/python3 -c 'import kafka, confluent_kafka'" >&2
  exit 1
fi
