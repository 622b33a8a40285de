/**
 * The snapshot's bytes out of the gRPC response stream, without assembling messages: each SnapshotResponse's
 * `blob` (field 3) is passed on as views of the chunks it arrived in, and every other field (header,
 * remaining_bytes, version) is skipped. Assembling each 32 KiB message first, as a generic gRPC client does,
 * copies the whole snapshot once more and leaves a garbage collector's worth of buffers behind.
 *
 * A gRPC message is a 1-byte compressed flag, a 4-byte big-endian length and that many bytes of protobuf.
 */

const BLOB_FIELD = 3;

type State =
  | { at: 'prefix'; got: number[] }
  | { at: 'key' | 'length' | 'number'; value: number; shift: number; field: number }
  | { at: 'skip' | 'blob'; left: number };

export class SnapshotFrames {
  private state: State = { at: 'prefix', got: [] };
  /** Bytes of the current message not yet read. */
  private messageLeft = 0;
  private blobSeen = false;

  /** The blob bytes in `chunk`, in order (views of it, not copies). */
  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      const s = this.state;
      if (s.at === 'prefix') {
        s.got.push(chunk[i++] ?? 0);
        if (s.got.length === 5) this.startMessage(s.got);
        continue;
      }
      if ('left' in s) {
        const n = Math.min(s.left, chunk.length - i);
        if (s.at === 'blob') out.push(chunk.subarray(i, i + n));
        i += n;
        s.left -= n;
        this.consumed(n);
        if (s.left === 0) this.nextField();
        continue;
      }
      i = this.varintByte(s, chunk, i);
    }
    return out;
  }

  /** Reads one byte of a varint at `i`; returns where the next byte is. */
  private varintByte(s: Extract<State, { value: number }>, chunk: Buffer, i: number): number {
    const byte = chunk[i] ?? 0;
    this.consumed(1);
    s.value += (byte & 0x7f) * 2 ** s.shift;
    s.shift += 7;
    if (byte < 0x80) this.varintRead(s.at, s.value, s.field);
    else if (s.shift > 63) throw new Error('snapshot stream: a varint longer than 10 bytes');
    return i + 1;
  }

  /** Throws unless the stream ended between two messages. */
  finish(): void {
    if (this.state.at !== 'prefix' || this.state.got.length > 0) throw new Error('snapshot stream cut off inside a message');
  }

  private startMessage(prefix: number[]): void {
    if (prefix[0] !== 0) throw new Error('snapshot stream: a compressed message, which was not asked for');
    this.messageLeft = Buffer.from(prefix).readUInt32BE(1);
    this.blobSeen = false;
    this.nextField();
  }

  private consumed(n: number): void {
    this.messageLeft -= n;
    if (this.messageLeft < 0) throw new Error('snapshot stream: a field runs past the end of its message');
  }

  private nextField(): void {
    this.state = this.messageLeft === 0 ? { at: 'prefix', got: [] } : { at: 'key', value: 0, shift: 0, field: 0 };
  }

  private varintRead(at: 'key' | 'length' | 'number', value: number, field: number): void {
    if (at === 'number') {
      this.nextField();
      return;
    }
    if (at === 'length') {
      if (field === BLOB_FIELD) {
        if (this.blobSeen) throw new Error('snapshot stream: two blobs in one message');
        this.blobSeen = true;
      }
      this.state = { at: field === BLOB_FIELD ? 'blob' : 'skip', left: value };
      if (value === 0) this.nextField();
      return;
    }
    const wire = value % 8;
    const f = Math.floor(value / 8);
    if (wire === 0) this.state = { at: 'number', value: 0, shift: 0, field: f };
    else if (wire === 2) this.state = { at: 'length', value: 0, shift: 0, field: f };
    else if (wire === 1 || wire === 5) this.state = { at: 'skip', left: wire === 1 ? 8 : 4 };
    else throw new Error(`snapshot stream: unexpected protobuf wire type ${wire}`);
  }
}
