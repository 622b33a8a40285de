import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import type { BufferPool } from './parts.js';

/** S3's most parts in one multipart upload. */
const MAX_PARTS = 10_000;

/**
 * One multipart upload whose parts are sent side by side: `send` returns at once, and the part's buffer goes
 * back to the pool when its request ends, so the pool's size bounds what is in flight. A part that fails is
 * reported by the next `send` or by `complete`, and the upload is then aborted, never completed with a hole.
 */
export class MultipartUpload {
  private readonly sent: CompletedPart[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | undefined;
  private nextPart = 1;

  private constructor(private readonly client: S3Client, private readonly bucket: string, private readonly key: string, private readonly id: string, private readonly pool: BufferPool) {}

  static async start(client: S3Client, bucket: string, key: string, pool: BufferPool): Promise<MultipartUpload> {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    if (!UploadId) throw new Error(`${key}: the store started no multipart upload`);
    return new MultipartUpload(client, bucket, key, UploadId, pool);
  }

  send(part: Buffer): void {
    if (this.failure) throw this.failure;
    // Said as what it is, not as the store's refusal of part 10,001 after the 50 GiB before it were sent.
    if (this.nextPart > MAX_PARTS) throw new Error(`${this.key}: more than ${MAX_PARTS} parts of ${part.length} bytes, S3's limit for one object`);
    const PartNumber = this.nextPart++;
    const sending = this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.id, PartNumber, Body: part, ContentLength: part.length }))
      .then((r) => { this.sent.push({ PartNumber, ETag: r.ETag }); }, (err: unknown) => { this.failure ??= err instanceof Error ? err : new Error(String(err)); })
      .finally(() => {
        this.inFlight.delete(sending);
        this.pool.give(part);
      });
    this.inFlight.add(sending);
  }

  /** Every part sent is stored; throws the first failure. */
  async allSent(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
  }

  /** Makes the object appear, from the parts sent (waiting for those in flight). */
  async complete(): Promise<void> {
    await this.allSent();
    const parts = [...this.sent].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.id, MultipartUpload: { Parts: parts } }));
  }

  /** Waits for the parts in flight, then drops what the store holds of the upload (best effort: a store's lifecycle rule is the backstop). */
  async abort(): Promise<void> {
    await Promise.all(this.inFlight);
    await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.id })).catch(() => undefined);
  }
}
