/** The fields of any Kubernetes object that the runtime relies on. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean; kind: string; name: string; apiVersion: string }[];
  };
}

export const objectKey = (o: KubeObject): string =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? '');

const controllerUid = (o: KubeObject): string | undefined =>
  o.metadata?.ownerReferences?.find((r) => r.controller)?.uid;

export interface StoreChanges<T> {
  added: T[];
  updated: { old: T; current: T }[];
  deleted: T[];
}

/** An in-memory copy of one kind, indexed by namespace/name, namespace and controller owner UID. */
export class Store<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly byNamespace = new Map<string, Set<string>>();
  private readonly byController = new Map<string, Set<string>>();

  get size(): number {
    return this.objects.size;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.objects.values()];
    return this.resolve(this.byNamespace.get(namespace));
  }

  /** Objects carrying every given label (an equality-based selector). */
  withLabels(labels: Record<string, string>, namespace?: string): T[] {
    const wanted = Object.entries(labels);
    return this.list(namespace).filter((o) => wanted.every(([k, v]) => o.metadata?.labels?.[k] === v));
  }

  /** Objects whose controller owner reference points at this UID. */
  ownedBy(uid: string): T[] {
    return this.resolve(this.byController.get(uid));
  }

  /** Inserts or replaces; returns the previous version. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    this.objects.set(key, obj);
    this.index(key, obj);
    return old;
  }

  /** Removes; returns what was stored. */
  remove(obj: KubeObject): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    this.unindex(key, old);
    return old;
  }

  /** Makes the store equal to a fresh list and says what changed (objects that vanished are deleted). */
  replace(items: T[]): StoreChanges<T> {
    const changes: StoreChanges<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const item of items) {
      seen.add(objectKey(item));
      const old = this.upsert(item);
      if (!old) changes.added.push(item);
      else if (old.metadata?.resourceVersion !== item.metadata?.resourceVersion) changes.updated.push({ old, current: item });
    }
    for (const [key, obj] of [...this.objects]) {
      if (seen.has(key)) continue;
      this.remove(obj);
      changes.deleted.push(obj);
    }
    return changes;
  }

  private resolve(keys: Set<string> | undefined): T[] {
    return keys ? [...keys].flatMap((k) => this.objects.get(k) ?? []) : [];
  }

  private index(key: string, obj: T): void {
    addTo(this.byNamespace, obj.metadata?.namespace ?? '', key);
    const owner = controllerUid(obj);
    if (owner) addTo(this.byController, owner, key);
  }

  private unindex(key: string, obj: T): void {
    removeFrom(this.byNamespace, obj.metadata?.namespace ?? '', key);
    const owner = controllerUid(obj);
    if (owner) removeFrom(this.byController, owner, key);
  }
}

function addTo(index: Map<string, Set<string>>, at: string, key: string): void {
  let keys = index.get(at);
  if (!keys) index.set(at, (keys = new Set()));
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, at: string, key: string): void {
  const keys = index.get(at);
  keys?.delete(key);
  if (keys?.size === 0) index.delete(at);
}
