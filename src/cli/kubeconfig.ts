import { KubeConfig } from '@kubernetes/client-node';

/** The named kubeconfig, else in-cluster credentials, $KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}
