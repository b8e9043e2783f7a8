#!/usr/bin/env bash
# npm's pretest hook: makes sure every peer the test suites drive is installed (kcat, the Debian
# Python clients and codec modules, Apache Kafka's jars, the PyPI virtual environment, Go modules)
# by delegating to scripts/install-peers.sh, which is a no-op when all is present. As root (CI) it
# installs what is missing; otherwise it fails naming the command to run. Never skips.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-peers.sh" "$@"
