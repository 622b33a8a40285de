import { existsSync, readdirSync } from 'node:fs';

/** Whether a data directory is a member's: etcd writes its write-ahead log under member/wal the moment it first starts (etcdutl, as it restores). */
export function hasEtcdData(dataDir: string): boolean {
  const wal = `${dataDir}/member/wal`;
  return existsSync(wal) && readdirSync(wal).some((f) => f.endsWith('.wal'));
}
