import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A request's options as the transport builds them: headers always present. */
export type ApiRequestOptions = RequestOptions & { headers: Record<string, string> };

/** Where the API server is and how to prove who is asking: all a transport needs of a kubeconfig. */
export interface ApiCredentials {
  /** The API server's URL. */
  readonly server: string;
  /** The namespace the kubeconfig's context names, if any. */
  readonly namespace?: string;
  /** Adds the TLS material and the Authorization header to a request (a rotated token is read anew). */
  apply(options: ApiRequestOptions): Promise<void>;
}

/** The credentials of a KubeConfig of the Kubernetes client: for an exec or auth-provider user, and for tests. */
export function kubeConfigCredentials(kubeConfig: KubeConfig): ApiCredentials {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const namespace = kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace;
  return { server, ...(namespace ? { namespace } : {}), apply: async (options) => { await kubeConfig.applyToHTTPSOptions(options); } };
}
