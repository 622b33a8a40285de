/**
 * Just enough of the protobuf wire format for the few etcd gRPC messages the operator speaks natively (a
 * snapshot, a watch): their fields are read and written by number, without generated code.
 */

/** One field of a message: a number for varint and fixed fields, the bytes for length-delimited ones. */
export type WireField = { field: number; wire: 0 | 1 | 5; value: number } | { field: number; wire: 2; value: Buffer };

/** Reads varints and byte runs from a buffer, front to back; running off its end is an error, never a short read. */
export class WireReader {
  private i = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.i >= this.buf.length;
  }

  varint(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (this.i >= this.buf.length) throw new Error('cut off inside a varint');
      const byte = this.buf[this.i++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  }

  bytes(length: number): Buffer {
    if (this.i + length > this.buf.length) throw new Error(`cut off: ${length} bytes announced, ${this.buf.length - this.i} left`);
    const out = this.buf.subarray(this.i, this.i + length);
    this.i += length;
    return out;
  }
}

/** The fields of `message` in the order they come (a repeated field comes once per element). */
export function* fieldsOf(message: Buffer): Generator<WireField> {
  const r = new WireReader(message);
  while (!r.done) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) yield { field, wire, value: r.varint() };
    else if (wire === 2) yield { field, wire, value: r.bytes(r.varint()) };
    else if (wire === 1) yield { field, wire, value: Number(r.bytes(8).readBigUInt64LE(0)) };
    else if (wire === 5) yield { field, wire, value: r.bytes(4).readUInt32LE(0) };
    else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
}

/** The message's fields by number: the last value of each (protobuf's rule for a field sent twice). */
export function lastFields(message: Buffer): Map<number, number | Buffer> {
  const fields = new Map<number, number | Buffer>();
  for (const f of fieldsOf(message)) fields.set(f.field, f.value);
  return fields;
}

export function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

/** A field as it is sent: a varint for numbers and booleans (false and 0 are left out, as protobuf does), else length-delimited bytes. */
export function encodeField(field: number, value: number | boolean | Buffer): Buffer {
  if (Buffer.isBuffer(value)) return Buffer.concat([varint(field * 8 + 2), varint(value.length), value]);
  const n = Number(value);
  return n === 0 ? Buffer.alloc(0) : Buffer.concat([varint(field * 8), varint(n)]);
}
