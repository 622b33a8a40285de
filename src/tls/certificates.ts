import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString, boolean, explicit, implicit, namedBits, octetString, oid, sequence, set, smallInteger, time, unsignedInteger, utf8String,
} from './der.js';

/** A certificate and its key, PEM-encoded, as they go into a Secret. */
export interface Issued {
  cert: string;
  key: string;
}

export interface LeafRequest {
  commonName: string;
  /** DNS names (wildcards allowed) and IP addresses. Client certificates carry none: etcd would check them against the caller's address. */
  altNames: string[];
  usage: ('server' | 'client')[];
  validForMs: number;
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;
const EXTENDED_USAGE = { server: '1.3.6.1.5.5.7.3.1', client: '1.3.6.1.5.5.7.3.2' } as const;

const name = (commonName: string): Buffer => sequence(set(sequence(oid('2.5.4.3'), utf8String(commonName))));
const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

function subjectAltNames(names: readonly string[]): Buffer {
  return sequence(...names.map((n) => {
    if (isIP(n) === 4) return implicit(7, Buffer.from(n.split('.').map(Number)));
    return implicit(2, Buffer.from(n, 'ascii'));
  }));
}

interface Draft {
  subject: string;
  issuer: string;
  publicKeyDer: Buffer;
  signingKeyPem: string;
  validForMs: number;
  extensions: Buffer[];
}

function issue(d: Draft): string {
  const now = Date.now();
  // A minute of slack for clocks that run a little behind the operator's.
  const validity = sequence(time(new Date(now - 60_000)), time(new Date(now + d.validForMs)));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = sequence(
    explicit(0, smallInteger(2)), unsignedInteger(serial), ECDSA_WITH_SHA256, name(d.issuer), validity, name(d.subject),
    d.publicKeyDer, explicit(3, sequence(...d.extensions)),
  );
  const signature = sign('sha256', tbs, createPrivateKey(d.signingKeyPem));
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

function keyPair(): { publicKeyDer: Buffer; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { publicKeyDer: publicKey.export({ type: 'spki', format: 'der' }), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** A self-signed ECDSA P-256 certificate authority. */
export function issueCa(commonName: string, validForMs: number): Issued {
  const { publicKeyDer, privateKeyPem } = keyPair();
  const cert = issue({
    subject: commonName, issuer: commonName, publicKeyDer, signingKeyPem: privateKeyPem, validForMs,
    extensions: [
      extension('2.5.29.19', true, sequence(boolean(true))),
      extension('2.5.29.15', true, namedBits([KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
    ],
  });
  return { cert, key: privateKeyPem };
}

/** A certificate signed by `ca`. */
export function issueLeaf(ca: Issued, r: LeafRequest): Issued {
  const { publicKeyDer, privateKeyPem } = keyPair();
  const cert = issue({
    subject: r.commonName, issuer: new X509Certificate(ca.cert).subject.replace(/^CN=/, ''), publicKeyDer, signingKeyPem: ca.key, validForMs: r.validForMs,
    extensions: [
      extension('2.5.29.19', true, sequence()),
      extension('2.5.29.15', true, namedBits([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment])),
      extension('2.5.29.37', false, sequence(...r.usage.map((u) => oid(EXTENDED_USAGE[u])))),
      ...(r.altNames.length > 0 ? [extension('2.5.29.17', false, subjectAltNames(r.altNames))] : []),
    ],
  });
  return { cert, key: privateKeyPem };
}

/** When a PEM certificate stops being valid. */
export const notAfter = (pem: string): Date => new Date(new X509Certificate(pem).validTo);
