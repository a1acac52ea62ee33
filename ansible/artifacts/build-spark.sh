#!/usr/bin/env bash
# Assemble the lab's Spark archive, build/artifacts/spark-<version>-bin-hadoop3.tgz, from what the
# registries offer (no Apache mirror): the PySpark distribution from PyPI (Spark's jars, bin/, sbin/
# and python/lib zips; hash-pinned in pyspark-<version>.txt) plus the Spark Kafka connector from
# Maven Central (jars pinned in spark-<version>.sha256). The layout is the official tarball's.
# Usage: build-spark.sh VERSION [--lock]   (--lock rewrites the jar list after a version bump)
set -euo pipefail
version=$1 mode=${2:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=spark-$version-bin-hadoop3
out=$top/build/artifacts
archive=$out/$dir.tgz
lock=$here/spark-$version.sha256
pip=${PIP:-$top/.venv/bin/pip}
if [[ -f $archive && $mode == verify ]]; then
  echo "artifacts: $archive is already built"; exit 0
fi
mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXX")
trap 'rm -rf "$work"' EXIT
echo "artifacts: PySpark $version from PyPI"
# --require-hashes: a file other than the pinned one fails the download.
"$pip" download -q --no-deps --no-binary :all: --require-hashes --no-cache-dir \
  -r "$here/pyspark-$version.txt" -d "$work/dl"
tar -C "$work" -xzf "$work/dl/pyspark-$version.tar.gz"
src=$work/pyspark-$version
home=$work/$dir
mkdir -p "$home/python/lib"
cp -a "$src/deps/jars" "$src/deps/sbin" "$src/deps/licenses" "$home/"
mkdir "$home/bin"
find "$src/deps/bin" -maxdepth 1 -type f ! -name '*.cmd' -exec cp -a {} "$home/bin/" \;
cp -a "$src"/lib/*.zip "$home/python/lib/"
echo "artifacts: Spark Kafka connector $version from Maven Central"
mkdir "$work/connector"
# -C: fail on a checksum mismatch between Maven Central's .sha1 and the downloaded file.
mvn -B -q -C -Dstyle.color=never -f "$here/spark-kafka-pom.xml" "-Dspark.version=$version" \
  dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$work/connector" \
  | sed "s/\x1b\[[0-9;]*m//g"
(cd "$work/connector" && sha256sum -- *.jar | sort -k2) > "$work/sums"
if [[ $mode == --lock ]]; then
  cp "$work/sums" "$lock"; echo "artifacts: wrote $lock"
elif ! diff -u "$lock" "$work/sums" >&2; then
  echo "artifacts: the Spark Kafka connector $version does not match the pinned $lock" >&2; exit 1
fi
for jar in "$work"/connector/*.jar; do
  [[ ! -e $home/jars/$(basename "$jar") ]] || { echo "artifacts: $(basename "$jar") is already in Spark" >&2; exit 1; }
done
cp "$work"/connector/*.jar "$home/jars/"
printf 'Spark %s (Scala 2.12) from the PySpark distribution, with spark-sql-kafka-0-10_2.12\n' "$version" > "$home/RELEASE"
echo "$dir" > "$home/VERSION"
# Reproducible archive: fixed order, owner and mtime, gzip without a timestamp.
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -c "$dir" \
  | gzip -n > "$archive.part"
mv "$archive.part" "$archive"
echo "artifacts: built $archive ($(du -h "$archive" | cut -f1))"
