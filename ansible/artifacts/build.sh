#!/usr/bin/env bash
# Assemble a component archive from Maven Central: build/artifacts/<name>-<version>.tgz.
# Every jar must match the pinned lock file <component>-<version>.sha256 (a changed or
# extra jar fails the build); `--lock` (re)writes that file after a deliberate version bump.
# Usage: build.sh kafka|zookeeper VERSION [--lock]
set -euo pipefail
component=$1 version=$2 mode=${3:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case $component in
  kafka) dir=kafka_2.13-$version sub=libs ;;
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
# -C: fail on a checksum mismatch between Maven Central's .sha1 and the downloaded file.
mvn -B -q -C -Dstyle.color=never -f "$here/$component-pom.xml" "-D$component.version=$version" \
  dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$work/$dir/$sub" \
  | sed "s/\x1b\[[0-9;]*m//g"
(cd "$work/$dir/$sub" && sha256sum -- *.jar | sort -k2) > "$work/sums"
if [[ $mode == --lock ]]; then
  cp "$work/sums" "$lock"; echo "artifacts: wrote $lock"
elif ! diff -u "$lock" "$work/sums" >&2; then
  echo "artifacts: $component $version does not match the pinned $lock" >&2; exit 1
fi
echo "$version" > "$work/$dir/VERSION"
# Reproducible archive: fixed order, owner and mtime, gzip without a timestamp.
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -c "$dir" \
  | gzip -n > "$archive.part"
mv "$archive.part" "$archive"
echo "artifacts: built $archive ($(du -h "$archive" | cut -f1))"
