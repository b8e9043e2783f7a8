#!/usr/bin/env bash
# Makes sure the real Kafka clients the compatibility tests drive are installed: kcat, and the
# Debian packages of kafka-python and confluent-kafka (they import only under /usr/bin/python3),
# with the codec modules kafka-python needs for snappy, lz4 and zstd batches.
# Installs them when running as root (CI); otherwise fails naming the command to run. Never skips.
set -euo pipefail

PACKAGES=(kcat python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard)
INSTALL_CMD="sudo bash scripts/ensure-test-peers.sh"

peers_present() {
  command -v kcat >/dev/null 2>&1 &&
    [ -x /usr/bin/python3 ] &&
    /usr/bin/python3 -c 'import kafka, confluent_kafka, snappy, lz4.frame, zstandard' >/dev/null 2>&1
}

if peers_present; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-test-peers: kcat, the Python Kafka clients and their codec modules are required by the tests but missing." >&2
  echo "ensure-test-peers: install them with: ${INSTALL_CMD}   (apt-get update; apt-get install -y ${PACKAGES[*]})" >&2
  exit 1
fi

echo "ensure-test-peers: installing ${PACKAGES[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${PACKAGES[@]}"

if ! peers_present; then
  echo "ensure-test-peers: still missing after apt-get install: kcat on PATH, or /usr/bin/python3 -c 'import kafka, confluent_kafka, snappy, lz4.frame, zstandard'" >&2
  exit 1
fi
