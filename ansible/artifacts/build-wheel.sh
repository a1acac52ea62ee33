#!/usr/bin/env bash
# Fetch the lag exporter's confluent-kafka wheel (CPython 3.11, manylinux x86_64, as Debian 12's
# python3 on the monitoring hosts) from PyPI into build/artifacts/, hash-pinned by
# confluent-kafka-<version>.txt.
# Usage: build-wheel.sh VERSION
set -euo pipefail
version=$1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/artifacts
wheel=$out/confluent_kafka-$version-cp311-cp311-manylinux_2_28_x86_64.whl
pip=${PIP:-$top/.venv/bin/pip}
if [[ -f $wheel ]]; then
  echo "artifacts: $wheel is already there"; exit 0
fi
mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXX")
trap 'rm -rf "$work"' EXIT
echo "artifacts: confluent-kafka $version wheel from PyPI"
"$pip" download -q --no-deps --only-binary :all: --require-hashes --no-cache-dir \
  --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
  -r "$here/confluent-kafka-$version.txt" -d "$work"
mv "$work/${wheel##*/}" "$wheel"
echo "artifacts: built $wheel"
