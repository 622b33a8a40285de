import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metricsService, metricsServiceOfAnother, peerService } from '../../src/k8s/services.js';

const address = (cluster: string): { cluster: string; namespace: string; domain: string; tls: boolean } => ({ cluster, namespace: 'db', domain: 'cluster.local', tls: false });

test('a metrics Service is headless over the plain metrics port, unready members included, annotated for Prometheus', () => {
  const svc = metricsService(address('main'), 'uid-main');
  assert.equal(svc.metadata?.name, 'main-metrics');
  assert.deepEqual([svc.spec?.clusterIP, svc.spec?.publishNotReadyAddresses], ['None', true]);
  assert.deepEqual(svc.spec?.ports, [{ name: 'metrics', port: 8080 }]);
  assert.deepEqual(svc.metadata.annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8080', 'prometheus.io/path': '/metrics' });
});

test('another cluster\'s metrics Service under a cluster\'s peer name is told apart from anything else of that name', () => {
  const other = metricsService(address('quota'), 'uid-quota');
  assert.equal(metricsServiceOfAnother(other, 'uid-quota-metrics'), true, 'quota\'s metrics Service holds the peer name of cluster quota-metrics');
  assert.equal(metricsServiceOfAnother(other, 'uid-quota'), false, 'its own');
  assert.equal(metricsServiceOfAnother(peerService(address('quota-metrics'), 'uid-old'), 'uid-new'), false, 'a peer Service of an earlier cluster of the name is no metrics Service');
  assert.equal(metricsServiceOfAnother({ metadata: { name: 'quota-metrics' } }, 'uid'), false, 'nothing the operator made');
});
