#!/usr/bin/env bash
# Builds MinIO (the S3-compatible server the backup tests store snapshots in) from its Go module.
. "$(dirname "$0")/common.sh"
install_go_tool minio github.com/minio/minio "$MINIO_VERSION"
