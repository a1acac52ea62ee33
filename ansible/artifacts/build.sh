#!/usr/bin/env bash
# Assemble a component archive from Maven Central: build/artifacts/<name>-<version>.tgz.
# Every jar must match the pinned lock file <component>-<version>.sha256 (a changed or
# extra jar fails the build); `--lock` (re)writes that file after a deliberate version bump.
# Usage: build.sh kafka|zookeeper VERSION [--lock]   (Kafka 3.x: kafka-pom.xml, 4.x: kafka4-pom.xml)
set -euo pipefail
component=$1 version=$2 mode=${3:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
pom=$here/$component-pom.xml
# Extra -D properties of the pom for this release (maven_pinned passes them on).
maven_props=()
case $component in
  kafka)
    dir=kafka_2.13-$version sub=libs
    # Kafka 4 is another jar set (KRaft only, log4j2): its own pom; 3.x keeps kafka-pom.xml.
    case $version in
      3.*) ;;
      4.*) pom=$here/kafka4-pom.xml ;;
      *) echo "unsupported Kafka version: $version (3.x or 4.x)" >&2; exit 2 ;;
    esac
    # 4.4: kafka-server brings log4j2 2.25.5 (the pom's bridges must match it), and Maven Central
    # has no connect-mirror 4.4.0: that archive carries no MirrorMaker 2 (mirrormaker_kafka_version).
    case $version in
      4.4.*) maven_props=(-Dlog4j2.version=2.25.5 -Dkafka.without.mirror) ;;
    esac ;;
  zookeeper) dir=apache-zookeeper-$version-bin sub=lib ;;
  *) echo "unknown component: $component" >&2; exit 2 ;;
esac
out=$top/build/artifacts
archive=$out/$dir.tgz
lock=$here/$component-$version.sha256
if [[ -f $archive && $mode == verify ]]; then
  echo "artifacts: $archive is already built"; exit 0
fi
mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXX")
trap 'rm -rf "$work"' EXIT
echo "artifacts: resolving $component $version from Maven Central"
maven_pinned "$pom" "$component.version" "$version" "$work/$dir/$sub" "$lock" "$mode" "$component"
echo "$version" > "$work/$dir/VERSION"
pack_reproducible "$work" "$dir" "$archive"
