import type { V1Secret } from '@kubernetes/client-node';
import { ApiError, getIfExists } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';

/**
 * The Secrets the operator's resources name, read one by one and never listed or watched: the operator's
 * rights on Secrets are get, create and update, so that even the cluster-wide install cannot read every Secret of
 * the cluster in one call or hold them all in memory (RBAC cannot narrow a list to names it does not know). A
 * Secret is read again once its last reading is `refreshMs` old; what the operator wrote itself is remembered
 * from the API server's answer. The price is that a Secret changed or deleted by someone else is seen up to
 * `refreshMs` late, where a watch saw it at once.
 */
export class NamedSecrets {
  private readonly read = new Map<string, { secret: V1Secret | undefined; at: number }>();

  constructor(
    private readonly transport: ApiTransport,
    private readonly refreshMs = 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The Secret, or undefined if it does not exist; at most `refreshMs` old. */
  async get(namespace: string, name: string): Promise<V1Secret | undefined> {
    const key = `${namespace}/${name}`;
    const known = this.read.get(key);
    if (known && this.clock() - known.at < this.refreshMs) return known.secret;
    const secret = await getIfExists<V1Secret>(this.transport, secretPath(namespace, name));
    this.read.set(key, { secret, at: this.clock() });
    return secret;
  }

  /** Creates the Secret; if another pass made it first, answers that one. */
  async create(namespace: string, body: V1Secret): Promise<V1Secret> {
    try {
      return this.remember(namespace, (await this.transport.call('POST', secretPath(namespace), body)) as V1Secret);
    } catch (err) {
      this.forget(namespace, body.metadata?.name ?? '');
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      const made = await this.get(namespace, body.metadata?.name ?? '');
      if (!made) throw err;
      return made;
    }
  }

  /** Replaces the Secret (its body carries the resourceVersion read); a conflict or a deletion is read afresh next time. */
  async replace(namespace: string, body: V1Secret): Promise<V1Secret> {
    const name = body.metadata?.name ?? '';
    try {
      return this.remember(namespace, (await this.transport.call('PUT', secretPath(namespace, name), body)) as V1Secret);
    } catch (err) {
      this.forget(namespace, name);
      throw err;
    }
  }

  private remember(namespace: string, secret: V1Secret): V1Secret {
    this.read.set(`${namespace}/${secret.metadata?.name ?? ''}`, { secret, at: this.clock() });
    return secret;
  }

  private forget(namespace: string, name: string): void {
    this.read.delete(`${namespace}/${name}`);
  }
}

const secretPath = (namespace: string, name?: string): string => `/api/v1/namespaces/${namespace}/secrets${name ? `/${name}` : ''}`;
