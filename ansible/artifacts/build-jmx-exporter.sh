#!/usr/bin/env bash
# Fetch the Prometheus JMX exporter java agent from Maven Central into
# build/artifacts/jmx_prometheus_javaagent-<version>.jar. The resolved jar(s) must match the pinned
# jmx-exporter-<version>.sha256 (a changed or extra jar fails); `--lock` rewrites it after a bump.
# Usage: build-jmx-exporter.sh VERSION [--lock]
set -euo pipefail
version=$1 mode=${2:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
name=jmx_prometheus_javaagent-$version.jar
out=$top/build/artifacts
jar=$out/$name
lock=$here/jmx-exporter-$version.sha256
if [[ -f $jar && $mode == verify ]]; then
  echo "artifacts: $jar is already built"; exit 0
fi
mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXX")
trap 'rm -rf "$work"' EXIT
echo "artifacts: resolving the JMX exporter agent $version from Maven Central"
maven_pinned "$here/jmx-exporter-pom.xml" jmx-exporter.version "$version" "$work/jars" "$lock" "$mode" \
  "the JMX exporter"
cp "$work/jars/$name" "$jar.part"
mv "$jar.part" "$jar"
echo "artifacts: built $jar ($(du -h "$jar" | cut -f1))"
