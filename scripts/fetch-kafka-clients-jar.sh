#!/usr/bin/env bash
# Fetches org.apache.kafka:kafka-clients jars from Maven Central (for the schema conformance test,
# which reads Kafka's message definitions, common/message/*.json, from inside them) and prints one
# jar path per requested version, in order.
#
#   bash scripts/fetch-kafka-clients-jar.sh [VERSION...]     (default: 4.1.1 3.9.1)
#
# Idempotent: a jar already in the local Maven repository (~/.m2, or $SKIFF_M2_REPO) or anywhere
# under .cache/kafka/ is reused; otherwise `mvn dependency:get` downloads it into the Maven
# repository. Nothing is written inside the working tree, and the jars are never committed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
M2_REPO="${SKIFF_M2_REPO:-${HOME}/.m2/repository}"
VERSIONS=("$@")
if [ "${#VERSIONS[@]}" -eq 0 ]; then
  VERSIONS=(4.1.1 3.9.1)
fi

# A usable jar: non-empty and a zip (PK\x03\x04).
usable() {
  [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "504b0304" ]
}

find_jar() {
  local version="$1" name="kafka-clients-$1.jar" candidate
  candidate="${M2_REPO}/org/apache/kafka/kafka-clients/${version}/${name}"
  if usable "$candidate"; then
    echo "$candidate"
    return 0
  fi
  if [ -d "${ROOT}/.cache/kafka" ]; then
    while IFS= read -r candidate; do
      if usable "$candidate"; then
        echo "$candidate"
        return 0
      fi
    done < <(find "${ROOT}/.cache/kafka" -name "$name" -type f 2>/dev/null)
  fi
  return 1
}

for version in "${VERSIONS[@]}"; do
  if ! jar="$(find_jar "$version")"; then
    if ! command -v mvn >/dev/null 2>&1; then
      echo "fetch-kafka-clients-jar: kafka-clients ${version} is not in ${M2_REPO} or .cache/kafka, and mvn is not installed (apt-get install -y maven)" >&2
      exit 1
    fi
    echo "fetch-kafka-clients-jar: downloading org.apache.kafka:kafka-clients:${version} with Maven" >&2
    mvn -q -B -Dmaven.repo.local="${M2_REPO}" dependency:get \
      -Dartifact="org.apache.kafka:kafka-clients:${version}" -Dtransitive=false >&2
    if ! jar="$(find_jar "$version")"; then
      echo "fetch-kafka-clients-jar: mvn finished but ${M2_REPO}/org/apache/kafka/kafka-clients/${version}/kafka-clients-${version}.jar is missing" >&2
      exit 1
    fi
  fi
  echo "$jar"
done
