#!/usr/bin/env bash
# Builds MinIO (the S3-compatible server the backup tests store snapshots in) from its Go module.
. "$(dirname "$0")/common.sh"
out="$LAB_CACHE/minio/$MINIO_VERSION"
[ -x "$out/minio" ] && { log "minio $MINIO_VERSION cached"; exit 0; }
mkdir -p "$out"
log "building minio $MINIO_VERSION"
GOBIN="$out" go install -trimpath -ldflags "-s -w" "github.com/minio/minio@$MINIO_VERSION"
