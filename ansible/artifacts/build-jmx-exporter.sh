#!/usr/bin/env bash
# Fetch the Prometheus JMX exporter java agent from Maven Central into
# build/artifacts/jmx_prometheus_javaagent-<version>.jar. The resolved jar(s) must match the pinned
# jmx-exporter-<version>.sha256 (a changed or extra jar fails); `--lock` rewrites it after a bump.
# Usage: build-jmx-exporter.sh VERSION [--lock]
set -euo pipefail
version=$1 mode=${2:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
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
# -C: fail on a checksum mismatch between Maven Central's .sha1 and the downloaded file.
mvn -B -q -C -Dstyle.color=never -f "$here/jmx-exporter-pom.xml" "-Djmx-exporter.version=$version" \
  dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$work/jars" \
  | sed "s/\x1b\[[0-9;]*m//g"
(cd "$work/jars" && sha256sum -- *.jar | sort -k2) > "$work/sums"
if [[ $mode == --lock ]]; then
  cp "$work/sums" "$lock"; echo "artifacts: wrote $lock"
elif ! diff -u "$lock" "$work/sums" >&2; then
  echo "artifacts: the JMX exporter $version does not match the pinned $lock" >&2; exit 1
fi
cp "$work/jars/$name" "$jar.part"
mv "$jar.part" "$jar"
echo "artifacts: built $jar ($(du -h "$jar" | cut -f1))"
