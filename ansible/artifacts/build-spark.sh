#!/usr/bin/env bash
# Assemble the lab's Spark archive, build/artifacts/spark-<version>-bin-hadoop3.tgz, from what the
# registries offer (no Apache mirror): the PySpark distribution from PyPI (Spark's jars, bin/, sbin/
# and python/lib zips; hash-pinned in pyspark-<version>.txt) plus the Spark Kafka connector from
# Maven Central (jars pinned in spark-<version>.sha256). The layout is the official tarball's.
# Usage: build-spark.sh VERSION [--lock]   (--lock rewrites the jar list after a version bump)
set -euo pipefail
version=$1 mode=${2:-verify}
scala=2.13  # the Scala build of Spark 4 and of the connector in spark-kafka-pom.xml
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
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
[[ -e $home/jars/spark-core_$scala-$version.jar ]] \
  || { echo "artifacts: PySpark $version carries no spark-core_$scala-$version.jar" >&2; exit 1; }
echo "artifacts: Spark Kafka connector $version from Maven Central"
maven_pinned "$here/spark-kafka-pom.xml" spark.version "$version" "$work/connector" "$lock" "$mode" \
  "the Spark Kafka connector"
# No second copy of anything Spark ships, at the same version or another; exclude it in the pom
# instead. Artifact = the file name up to its version: kafka-clients-3.9.2.jar -> kafka-clients,
# spark-tags_2.13-4.2.0.jar -> spark-tags_2.13.
artifact() {
  local name=${1##*/}
  if [[ $name =~ ^(.*_2\.[0-9]+)-[0-9] ]]; then echo "${BASH_REMATCH[1]}"; else echo "${name%%-[0-9]*}"; fi
}
declare -A shipped=()
for jar in "$home"/jars/*.jar; do shipped[$(artifact "$jar")]=${jar##*/}; done
for jar in "$work"/connector/*.jar; do
  have=${shipped[$(artifact "$jar")]:-}
  [[ -z $have ]] || { echo "artifacts: the connector brings ${jar##*/}, Spark already has $have" >&2; exit 1; }
done
cp "$work"/connector/*.jar "$home/jars/"
printf 'Spark %s (Scala %s) from the PySpark distribution, with spark-sql-kafka-0-10_%s\n' "$version" "$scala" "$scala" \
  > "$home/RELEASE"
echo "$dir" > "$home/VERSION"
pack_reproducible "$work" "$dir" "$archive"
