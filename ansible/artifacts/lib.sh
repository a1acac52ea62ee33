# Shared by the artifact builders (sourced): resolve jars from Maven Central against a pinned
# sha256 list, and pack a reproducible archive.

# maven_pinned POM PROPERTY VERSION DEST LOCK MODE WHAT: copy the pom's runtime jars into DEST;
# every jar must match LOCK (a changed or extra jar fails); MODE --lock rewrites LOCK instead.
# The caller's array maven_props, when set, adds -D properties of the pom.
maven_pinned() {
  local pom=$1 property=$2 version=$3 dest=$4 lock=$5 mode=$6 what=$7 sums
  # -C: fail on a checksum mismatch between Maven Central's .sha1 and the downloaded file.
  mvn -B -q -C -Dstyle.color=never -f "$pom" "-D$property=$version" ${maven_props[@]+"${maven_props[@]}"} \
    dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$dest" \
    | sed "s/\x1b\[[0-9;]*m//g"
  sums=$(cd "$dest" && sha256sum -- *.jar | sort -k2)
  if [[ $mode == --lock ]]; then
    printf '%s\n' "$sums" > "$lock"; echo "artifacts: wrote $lock"
  elif ! diff -u "$lock" - <<< "$sums" >&2; then
    echo "artifacts: $what $version does not match the pinned $lock" >&2; return 1
  fi
}

# pack_reproducible WORK DIR ARCHIVE: WORK/DIR as a tgz with fixed order, owner and mtime, and
# gzip without a timestamp, so the same inputs give the same bytes.
pack_reproducible() {
  local work=$1 dir=$2 archive=$3
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -c "$dir" \
    | gzip -n > "$archive.part"
  mv "$archive.part" "$archive"
  echo "artifacts: built $archive ($(du -h "$archive" | cut -f1))"
}
