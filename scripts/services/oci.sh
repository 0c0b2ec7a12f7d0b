# shellcheck shell=bash
# scripts/services/oci.sh, sourced by scripts/services.sh and scripts/image.sh: an OCI image
# archive (the layout `ctr images import` reads) made from a directory, with no registry and no
# image builder. One uncompressed layer; the config names the entrypoint, user and working
# directory. Digests are sha256 of the exact bytes written, so the same inputs give the same
# image.

# oci_json_string TEXT: TEXT as a JSON string (the names and paths used here need no escapes
# but backslash and quote).
oci_json_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

# oci_blob DIR FILE: moves FILE into DIR/blobs/sha256 under its digest; prints "DIGEST SIZE".
oci_blob() {
  local dir=$1 file=$2 sum size
  sum=$(sha256sum "$file" | cut -d' ' -f1)
  size=$(stat -c %s "$file")
  mkdir -p "$dir/blobs/sha256"
  mv -f "$file" "$dir/blobs/sha256/$sum"
  echo "sha256:$sum $size"
}

# oci_archive OUT NAME ROOTFS ENTRYPOINT USER WORKDIR: writes the OCI archive OUT (a tar) of
# the image NAME (a full reference, e.g. docker.io/library/perfbase:1a2b3c) whose one layer is
# the tree ROOTFS (its owners kept); ENTRYPOINT is a JSON array, USER a uid (or "" for root).
oci_archive() {
  local out=$1 name=$2 rootfs=$3 entrypoint=$4 user=$5 workdir=$6 tmp layer config manifest
  tmp=$(mktemp -d)
  # Sorted, with fixed times and the tree's own (numeric) owners: the same tree gives the
  # same layer and digest.
  tar -C "$rootfs" --sort=name --numeric-owner --mtime=@0 \
    -cf "$tmp/layer.tar" . || { rm -rf "$tmp"; return 1; }
  layer=$(oci_blob "$tmp" "$tmp/layer.tar")
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"User":%s,"WorkingDir":%s,"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
    "$entrypoint" "$(oci_json_string "$user")" "$(oci_json_string "$workdir")" "${layer% *}" >"$tmp/config.json"
  config=$(oci_blob "$tmp" "$tmp/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
    "${config% *}" "${config#* }" "${layer% *}" "${layer#* }" >"$tmp/manifest.json"
  manifest=$(oci_blob "$tmp" "$tmp/manifest.json")
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"annotations":{"io.containerd.image.name":%s,"org.opencontainers.image.ref.name":%s}}]}' \
    "${manifest% *}" "${manifest#* }" "$(oci_json_string "$name")" "$(oci_json_string "${name##*:}")" >"$tmp/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$tmp/oci-layout"
  tar -C "$tmp" --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 \
    -cf "$out" oci-layout index.json blobs
  rm -rf "$tmp"
}

# oci_full_name NAME: the reference containerd and the kubelet store NAME under
# (perfbase:1 is docker.io/library/perfbase:1).
oci_full_name() {
  local n=$1 first=${1%%/*}
  if [[ $n != */* ]]; then
    n="docker.io/library/$n"
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
    n="docker.io/$n"
  fi
  echo "$n"
}
