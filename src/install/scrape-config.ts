/**
 * Scrape jobs for a Prometheus without the Prometheus Operator (deploy/monitoring/prometheus-scrape.yaml), keeping
 * targets by the prometheus.io annotations: the operator's pods (annotated by its Deployment) and each cluster's
 * metrics Service `<cluster>-metrics` (annotated by the operator). The chart's ServiceMonitor and PodMonitor give
 * the same labels. The lab's test runs a real Prometheus on exactly these jobs.
 */

interface Relabel { source_labels?: string[]; regex?: string; action?: 'keep' | 'replace'; target_label?: string; replacement?: string }
export interface ScrapeJob {
  job_name: string;
  honor_labels?: boolean;
  kubernetes_sd_configs: { role: 'pod' | 'endpointslice' }[];
  relabel_configs: Relabel[];
}

const copy = (from: string, to: string): Relabel => ({ source_labels: [from], target_label: to });
/** Keeps the targets whose labels, joined by ';', match `regex`. */
const keep = (labels: string[], regex: string): Relabel => ({ source_labels: labels, regex, action: 'keep' });

export function scrapeJobs(): ScrapeJob[] {
  return [
    {
      job_name: 'etcd-operator',
      // Its series name each cluster's namespace in their own `namespace` label, which a target label must not overwrite.
      honor_labels: true,
      kubernetes_sd_configs: [{ role: 'pod' }],
      relabel_configs: [
        keep(['__meta_kubernetes_pod_label_app_kubernetes_io_name', '__meta_kubernetes_pod_annotation_prometheus_io_scrape'], 'etcd-operator;true'),
        keep(['__meta_kubernetes_pod_container_port_name'], 'metrics'),
        // Where it runs: tells installs apart, and its series from other controllers' of the same names.
        copy('__meta_kubernetes_namespace', 'operator_namespace'),
        copy('__meta_kubernetes_pod_name', 'pod'),
      ],
    },
    {
      job_name: 'etcd-members',
      kubernetes_sd_configs: [{ role: 'endpointslice' }],
      relabel_configs: [
        keep(['__meta_kubernetes_service_annotation_prometheus_io_scrape', '__meta_kubernetes_service_label_etcd_cluster'], 'true;.+'),
        keep(['__meta_kubernetes_endpointslice_port_name'], 'metrics'),
        copy('__meta_kubernetes_namespace', 'namespace'),
        copy('__meta_kubernetes_service_label_etcd_cluster', 'etcd_cluster'),
        copy('__meta_kubernetes_pod_name', 'pod'),
      ],
    },
  ];
}
