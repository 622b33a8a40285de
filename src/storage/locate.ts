import { S3Storage } from './s3.js';
import { awsProfile } from './aws-files.js';

export interface S3Place {
  /** "<bucket>/<key>" (CoreOS). */
  path: string;
  endpoint?: string;
  forcePathStyle?: boolean;
}

/** The bucket's storage and the object name a CoreOS S3 path stands for, with the awsSecret's two files. */
export function s3Storage(place: S3Place, credentials: string, config: string): { storage: S3Storage; name: string } {
  const slash = place.path.indexOf('/');
  const storage = new S3Storage({
    bucket: place.path.slice(0, slash), ...(place.endpoint ? { endpoint: place.endpoint } : {}), forcePathStyle: place.forcePathStyle ?? false,
    ...awsProfile(credentials, config),
  });
  return { storage, name: place.path.slice(slash + 1) };
}

/** The CoreOS S3 path of `object` in the same bucket as `path` ("<bucket>/<key>"): another snapshot of one backup. */
export const siblingPath = (path: string, object: string): string => `${path.split('/')[0] ?? ''}/${object}`;
