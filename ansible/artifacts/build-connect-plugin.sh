#!/usr/bin/env bash
# Assemble a Kafka Connect plugin from Maven Central: build/artifacts/connect-plugins/<name>-<version>.tgz,
# one folder <name>-<version>/ of jars (what the plugin needs beside the worker's own Kafka jars)
# and a PLUGIN file naming it and the connector classes it provides (the preflight reads them). Every jar must match the pinned connect-plugin-<name>-<version>.sha256
# (a changed or extra jar fails); `--lock` (re)writes it after a deliberate version bump.
# Usage: build-connect-plugin.sh NAME VERSION [--lock]   (NAME: connect-plugin-NAME-pom.xml)
set -euo pipefail
name=$1 version=$2 mode=${3:-verify}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
pom=$here/connect-plugin-$name-pom.xml
[[ -f $pom ]] || { echo "unknown Connect plugin: $name (no $pom)" >&2; exit 2; }
dir=$name-$version
out=$top/build/artifacts/connect-plugins
archive=$out/$dir.tgz
lock=$here/connect-plugin-$name-$version.sha256
if [[ -f $archive && $mode == verify ]]; then
  echo "artifacts: $archive is already built"; exit 0
fi
mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXX")
trap 'rm -rf "$work"' EXIT
echo "artifacts: resolving the Connect plugin $name $version from Maven Central"
maven_pinned "$pom" plugin.version "$version" "$work/$dir" "$lock" "$mode" "the Connect plugin $name"
# The connector classes are what the jars' service files declare (how Connect finds them too).
connectors=$(python3 - "$work/$dir"/*.jar <<'PY'
import sys
import zipfile

found = set()
for jar in sys.argv[1:]:
    with zipfile.ZipFile(jar) as z:
        for kind in ("source.SourceConnector", "sink.SinkConnector"):
            try:
                text = z.read(f"META-INF/services/org.apache.kafka.connect.{kind}").decode()
            except KeyError:
                continue
            found |= {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
print(",".join(sorted(found)))
PY
)
printf 'name=%s\nversion=%s\npom=%s\nconnectors=%s\n' "$name" "$version" "$(basename "$pom")" "$connectors" > "$work/$dir/PLUGIN"
pack_reproducible "$work" "$dir" "$archive"
