import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../src/cli/kubeconfig.js';
import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import type { ApiCredentials, ApiRequestOptions } from '../../src/runtime/credentials.js';
import { stringify } from 'yaml';
import { kubeconfig } from './kubeconfig-text.js';

/** What credentials put on a request: TLS material as text, and the headers. */
async function applied(credentials: ApiCredentials): Promise<Record<string, unknown>> {
  const options: ApiRequestOptions = { headers: {} };
  await credentials.apply(options);
  const text = (b: unknown): string | undefined => (b === undefined ? undefined : Buffer.isBuffer(b) || typeof b === 'string' ? b.toString() : JSON.stringify(b));
  // Header names are case-insensitive on the wire; the client writes basic credentials as `auth`, which Node sends so.
  const header = Object.entries(options.headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const authorization = header ?? (options.auth ? `Basic ${Buffer.from(options.auth).toString('base64')}` : undefined);
  const impersonate = Object.entries(options.headers).find(([name]) => name.toLowerCase() === 'impersonate-user')?.[1];
  return { ca: text(options.ca), cert: text(options.cert), key: text(options.key), rejectUnauthorized: options.rejectUnauthorized, servername: options.servername, authorization, impersonate };
}

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}


test('a kubeconfig naming files relative to itself, one with inline data, a token or a password give the requests what the Kubernetes client gives them; a token file is read', async (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'pki'));
  writeFileSync(join(dir, 'pki/ca.crt'), 'CA PEM');
  writeFileSync(join(dir, 'pki/admin.crt'), 'CERT PEM');
  writeFileSync(join(dir, 'pki/admin.key'), 'KEY PEM');
  writeFileSync(join(dir, 'token'), 'file-token\n');
  const cases = {
    files: kubeconfig({ cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority': 'pki/ca.crt' }, user: { 'client-certificate': 'pki/admin.crt', 'client-key': 'pki/admin.key' }, namespace: 'team' }),
    inline: kubeconfig({
      cluster: { server: 'https://api.example:443', 'certificate-authority-data': Buffer.from('CA2').toString('base64'), 'tls-server-name': 'kubernetes' },
      user: { token: 'inline-token' },
    }),
    basic: kubeconfig({ cluster: { server: 'https://10.0.0.3:6443' }, user: { username: 'admin', password: 'secret' } }),
    impersonating: kubeconfig({ cluster: { server: 'https://10.0.0.4:6443' }, user: { token: 't', as: 'someone' } }),
  };
  for (const [name, text] of Object.entries(cases)) {
    const path = join(dir, `${name}.yaml`);
    writeFileSync(path, text);
    const client = new KubeConfig();
    client.loadFromFile(path);
    const ours = await loadKubeConfig(path);
    const theirs = kubeConfigCredentials(client);
    assert.equal(ours.server, theirs.server, name);
    assert.equal(ours.namespace, theirs.namespace, name);
    assert.deepEqual(await applied(ours), await applied(theirs), name);
  }
  // kubectl's tokenFile (client-go reads it anew as it rotates), which the Kubernetes client for Node does not read.
  writeFileSync(join(dir, 'tokenFile.yaml'), kubeconfig({ cluster: { server: 'https://10.0.0.2:6443', 'insecure-skip-tls-verify': true }, user: { tokenFile: 'token' } }));
  assert.deepEqual(await applied(await loadKubeConfig(join(dir, 'tokenFile.yaml'))),
    { ca: undefined, cert: undefined, key: undefined, rejectUnauthorized: false, servername: undefined, authorization: 'Bearer file-token', impersonate: undefined });
  // kubectl reads YAML 1.1's `no` as false; the parser here reads it as a string, which must not turn verification off.
  writeFileSync(join(dir, 'no.yaml'), kubeconfig({ cluster: { server: 'https://10.0.0.5:6443' }, user: { token: 't' } }).replace('server:', 'insecure-skip-tls-verify: no\n      server:'));
  assert.equal((await applied(await loadKubeConfig(join(dir, 'no.yaml')))).rejectUnauthorized, undefined);
});

test('$KUBECONFIG\'s files merge as kubectl merges them: the first to name an entry or the current context wins', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'a.yaml'), kubeconfig({ cluster: { server: 'https://first:6443' }, user: { token: 'a' }, name: 'shared' }));
  writeFileSync(join(dir, 'b.yaml'), stringify({
    'current-context': 'other',
    clusters: [{ name: 'shared', cluster: { server: 'https://second:6443' } }, { name: 'b', cluster: { server: 'https://b:6443' } }],
    users: [{ name: 'b', user: { token: 'b' } }], contexts: [{ name: 'other', context: { cluster: 'b', user: 'b' } }],
  }));
  const saved = process.env.KUBECONFIG;
  t.after(() => { if (saved === undefined) delete process.env.KUBECONFIG; else process.env.KUBECONFIG = saved; });
  process.env.KUBECONFIG = `${join(dir, 'a.yaml')}:${join(dir, 'missing.yaml')}:${join(dir, 'b.yaml')}`;
  const merged = await loadKubeConfig(undefined);
  assert.equal(merged.server, 'https://first:6443');
  assert.equal((await applied(merged)).authorization, 'Bearer a');
  process.env.KUBECONFIG = `${join(dir, 'b.yaml')}:${join(dir, 'a.yaml')}`;
  assert.equal((await loadKubeConfig(undefined)).server, 'https://b:6443', 'b\'s current context; its "shared" cluster shadows a\'s');
});

test('a kubeconfig without a usable context is refused naming what is missing; an exec user is left to the Kubernetes client', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'none.yaml'), stringify({ clusters: [], users: [], contexts: [] }));
  await assert.rejects(loadKubeConfig(join(dir, 'none.yaml')), /no current context/);
  writeFileSync(join(dir, 'exec.yaml'), kubeconfig({ cluster: { server: 'https://cloud:443' }, user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true', interactiveMode: 'Never' } } }));
  const exec = await loadKubeConfig(join(dir, 'exec.yaml'));
  assert.equal(exec.server, 'https://cloud:443');
});

test('a JSON kubeconfig is read without loading the YAML parser (some 4 MiB of the operator\'s memory for as long as it runs); a YAML one loads it', async (t) => {
  const dir = scratch(t);
  const config = { 'current-context': 'c', clusters: [{ name: 'c', cluster: { server: 'https://json:6443' } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }] };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, 'config.yaml'), stringify(config));
  const module = new URL('../../src/cli/kubeconfig.js', import.meta.url).href;
  // A process of its own: this one has the parser loaded already.
  const yamlLoadedAfter = async (file: string): Promise<{ server: string; yaml: boolean }> => {
    const script = `import { createRequire } from 'node:module';
      const { loadKubeConfig } = await import(${JSON.stringify(module)});
      const { server } = await loadKubeConfig(${JSON.stringify(file)});
      const yaml = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/yaml/'));
      process.stdout.write(JSON.stringify({ server, yaml }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    return JSON.parse(stdout) as { server: string; yaml: boolean };
  };
  assert.deepEqual(await yamlLoadedAfter(join(dir, 'config.json')), { server: 'https://json:6443', yaml: false });
  assert.deepEqual(await yamlLoadedAfter(join(dir, 'config.yaml')), { server: 'https://json:6443', yaml: true });
});
