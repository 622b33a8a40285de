import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCa, issueLeaf, notAfter } from '../../src/tls/certificates.js';
import { namedBits, oid, time, unsignedInteger } from '../../src/tls/der.js';

const DAY = 86_400_000;

test('DER pieces: OIDs, integers, named bits and times encode as X.690 says', () => {
  assert.equal(oid('1.2.840.10045.4.3.2').toString('hex'), '06082a8648ce3d040302');
  assert.equal(unsignedInteger(Buffer.from([0x00, 0x80])).toString('hex'), '02020080', 'a set high bit gets one zero byte, not two');
  assert.equal(unsignedInteger(Buffer.from([0x00, 0x00, 0x7f])).toString('hex'), '02017f');
  assert.equal(namedBits([5, 6]).toString('hex'), '03020106', 'keyCertSign|cRLSign');
  assert.equal(namedBits([0, 2]).toString('hex'), '030205a0', 'digitalSignature|keyEncipherment');
  assert.equal(time(new Date('2030-01-02T03:04:05Z')).toString('latin1').slice(2), '300102030405Z');
  assert.equal(time(new Date('2051-01-02T03:04:05Z')).toString('latin1').slice(2), '20510102030405Z');
});

test('a CA and leaves it signs: OpenSSL (through Node) parses, verifies and reads them back', () => {
  const ca = issueCa('etcd-ca', 3650 * DAY);
  const caCert = new X509Certificate(ca.cert);
  assert.equal(caCert.ca, true);
  assert.ok(caCert.verify(caCert.publicKey), 'self-signed');
  const server = issueLeaf(ca, { commonName: 'example', altNames: ['*.example.ns.svc', 'example-client.ns.svc', '127.0.0.1'], usage: ['server', 'client'], validForMs: 90 * DAY });
  const leaf = new X509Certificate(server.cert);
  assert.ok(leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey), 'signed by the CA');
  assert.equal(leaf.ca, false);
  assert.equal(leaf.subjectAltName, 'DNS:*.example.ns.svc, DNS:example-client.ns.svc, IP Address:127.0.0.1');
  assert.ok(leaf.checkHost('m-1.example.ns.svc'), 'the wildcard covers each member');
  assert.ok(leaf.checkIP('127.0.0.1'));
  assert.deepEqual(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.ok(Math.abs(notAfter(server.cert).getTime() - (Date.now() + 90 * DAY)) < 5000);
  assert.deepEqual(createPublicKey(createPrivateKey(server.key)).export({ type: 'spki', format: 'der' }), leaf.publicKey.export({ type: 'spki', format: 'der' }), 'the key matches the certificate');
  const client = new X509Certificate(issueLeaf(ca, { commonName: 'etcd-operator', altNames: [], usage: ['client'], validForMs: DAY }).cert);
  assert.equal(client.subjectAltName, undefined, 'a client certificate carries no names etcd would check against the caller');
});

test('openssl verify accepts the chain with the purposes etcd needs', () => {
  const ca = issueCa('etcd-ca', DAY);
  const leaf = issueLeaf(ca, { commonName: 'peer', altNames: ['*.c.ns.svc'], usage: ['server', 'client'], validForMs: DAY });
  const dir = mkdtempSync(join(tmpdir(), 'certs-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'leaf.crt'), leaf.cert);
    for (const purpose of ['sslserver', 'sslclient']) {
      const out = execFileSync('openssl', ['verify', '-purpose', purpose, '-CAfile', join(dir, 'ca.crt'), join(dir, 'leaf.crt')], { encoding: 'utf8' });
      assert.match(out, /: OK/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
