/**
 * Which etcd version changes a roll may make. etcd supports patch changes within a minor version (both ways),
 * upgrades of one minor version at a time, with a minimum patch of the old minor for some, and from 3.6 on a
 * downgrade of one minor through its downgrade API; an older minor never runs on data a newer one wrote otherwise.
 */

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

export function parseVersion(text: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** Whether `version` is `floor` or a later release; a version that does not parse is not. */
export function atLeast(version: string, floor: string): boolean {
  const [v, f] = [parseVersion(version), parseVersion(floor)];
  return v !== undefined && f !== undefined && compareVersions(v, f) >= 0;
}

/** Version strings in version order (not string order: 3.10 is above 3.9); what does not parse is left out. */
function sorted(versions: readonly string[]): string[] {
  const parsed = versions.flatMap((text) => {
    const v = parseVersion(text);
    return v ? [{ text, v }] : [];
  });
  return parsed.sort((a, b) => compareVersions(a.v, b.v)).map((p) => p.text);
}

/** Whether `version` ("3.5.35", "3.5.0") is of the minor `minor` ("3.5") or an older one; false for what is not a version. */
export function minorAtMost(version: string | undefined, minor: string): boolean {
  const [v, m] = [parseVersion(version ?? ''), parseVersion(`${minor}.0`)];
  return v !== undefined && m !== undefined && (v.major < m.major || (v.major === m.major && v.minor <= m.minor));
}

/** Whether `version` is of the minor `minor` ("3.5"); false for what is not a version. */
export function ofMinor(version: string | undefined, minor: string): boolean {
  const [v, m] = [parseVersion(version ?? ''), parseVersion(`${minor}.0`)];
  return v !== undefined && m !== undefined && v.major === m.major && v.minor === m.minor;
}

export const lowestVersion = (versions: readonly string[]): string | undefined => sorted(versions)[0];

export const highestVersion = (versions: readonly string[]): string | undefined => sorted(versions).at(-1);

/**
 * etcd's upgrade guide for 3.6 asks for every 3.5 member at a late patch first: earlier 3.5 releases fail
 * the upgrade ("too many learner members") or keep removed members in the v2 store.
 */
/** The oldest etcd the operator runs: it relies on learners (3.4), etcdutl and the corruption checks of 3.5. */
export const OLDEST_SUPPORTED = '3.5.0';

export const MINOR_UPGRADE_FLOORS: Readonly<Record<string, string>> = { '3.6': '3.5.32' };

/**
 * The first release of each minor whose --force-new-cluster keeps every entry its database has applied. Before
 * them etcd drops the WAL entries past the commit index it last synced, which can lag what the database holds
 * after a crash (etcd issue 20009): members that then join the forced survivor lack those writes, and a read
 * answered by one of them misses acknowledged data (seen on the lab: 400 of 500 keys after a recovery).
 */
export const FORCE_NEW_CLUSTER_FIXED: Readonly<Record<string, string>> = { '3.5': '3.5.22', '3.6': '3.6.1' };

/** Whether this version's --force-new-cluster keeps what the database holds (minors after 3.6 all do). */
export function forceNewClusterKeepsData(version: string): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  const floor = parseVersion(FORCE_NEW_CLUSTER_FIXED[`${v.major}.${v.minor}`] ?? '');
  if (floor) return compareVersions(v, floor) >= 0;
  return compareVersions(v, { major: 3, minor: 6, patch: 0 }) > 0;
}

export type VersionVerdict =
  /** downgradeTo: the roll takes members one minor down ("3.5"), through etcd's downgrade API. */
  | { allowed: true; downgradeTo?: string }
  | { allowed: false; reason: 'UnknownVersion' | 'MajorChange' | 'Downgrade' | 'SkippedMinor' | 'PatchTooOld'; message: string };

/**
 * The first minor whose members can be taken one minor down in place: 3.6 brought etcd's downgrade API (the
 * cluster version and each member's storage version are lowered first, then members restart on the older
 * release). Before it, data once run by a newer minor has no way back but a backup taken before the upgrade.
 */
export const FIRST_DOWNGRADABLE_MINOR = 6;

const minorOf = (v: Version): string => `${v.major}.${v.minor}`;

/** Whether members running `running` may be rolled to `target`. */
export function upgradeVerdict(running: readonly string[], target: string): VersionVerdict {
  const to = parseVersion(target);
  const from = running.map(parseVersion).filter((v): v is Version => v !== undefined);
  if (!to) return { allowed: false, reason: 'UnknownVersion', message: `${target} is not a version` };
  if (from.length === 0) return { allowed: true };
  if (from.some((v) => v.major !== to.major)) {
    return { allowed: false, reason: 'MajorChange', message: `etcd cannot change major version (running ${running.join(', ')}, asked ${target})` };
  }
  const lowest = Math.min(...from.map((v) => v.minor));
  const highest = Math.max(...from.map((v) => v.minor));
  if (to.minor < highest) {
    if (to.minor < highest - 1 || lowest < to.minor) {
      return { allowed: false, reason: 'Downgrade', message: `members run ${running.join(', ')}; etcd goes down one minor version at a time (to ${to.major}.${highest - 1} first)` };
    }
    if (highest < FIRST_DOWNGRADABLE_MINOR) {
      return {
        allowed: false, reason: 'Downgrade',
        message: `members run ${to.major}.${highest}, which has no downgrade (etcd ${to.major}.${FIRST_DOWNGRADABLE_MINOR} brought it): set version back, or restore a backup taken before the upgrade into a new cluster`,
      };
    }
    // The way back up asks for that patch, and earlier ones of the minor have known defects (see the floors).
    const floor = MINOR_UPGRADE_FLOORS[`${to.major}.${highest}`];
    const floorVersion = floor ? parseVersion(floor) : undefined;
    if (floor && floorVersion && compareVersions(to, floorVersion) < 0) {
      return { allowed: false, reason: 'PatchTooOld', message: `downgrade to ${floor} or a later ${minorOf(to)} patch: etcd asks for it before ${to.major}.${highest} again, and earlier ones have known defects` };
    }
    return { allowed: true, downgradeTo: minorOf(to) };
  }
  if (to.minor > lowest + 1) {
    return { allowed: false, reason: 'SkippedMinor', message: `members run ${to.major}.${lowest}; upgrade one minor version at a time (to ${to.major}.${lowest + 1} first)` };
  }
  const floor = to.minor > lowest ? MINOR_UPGRADE_FLOORS[minorOf(to)] : undefined;
  const floorVersion = floor ? parseVersion(floor) : undefined;
  if (floor && floorVersion && from.some((v) => v.minor === lowest && compareVersions(v, floorVersion) < 0)) {
    return { allowed: false, reason: 'PatchTooOld', message: `etcd requires every member at ${floor} or later before upgrading to ${minorOf(to)}; set version ${floor} (or a later ${to.major}.${lowest} patch) first` };
  }
  return { allowed: true };
}
