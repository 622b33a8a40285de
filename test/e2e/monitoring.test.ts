// lab: late — needs Prometheus, built last behind a first lab.
// Issue 35: the shipped monitoring, proven against a real Prometheus scraping the lab. The operator runs as its
// Deployment (found by its pods' prometheus.io annotations), each member through its cluster's metrics Service; the
// scrape jobs and the alert rules are the shipped ones (only the rules' holds are shortened, from minutes to
// seconds). Every dashboard panel's query must answer, and the alerts of these faults (members hung, the store
// stopped, the operator stopped or not leading) must fire and resolve after the heal, as Prometheus' own alerts
// API says; alert-faults.test.ts has the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INSTALL, NAME } from '../../src/install/manifests.js';
import { dashboard } from '../../src/install/dashboard.js';
import type { Panel } from '../../src/install/dashboard.js';
import { installOperator, operatorReady } from '../support/in-cluster.js';
import { testbed } from '../support/cluster-testbed.js';
import { eventually } from '../support/lab.js';
import { kubectl } from '../support/kubectl.js';
import { startMinio } from '../support/minio.js';
import { createBackup } from '../support/backup-bed.js';
import { etcdPut } from '../support/etcd-gateway.js';
import { inject } from '../support/faults.js';
import { QUICK, startPrometheus, untilFiring, untilResolved } from '../support/prometheus.js';
import { startOperator } from '../support/operator-process.js';

/** Every panel's query, for one cluster (and the operator install in `namespace`), as Grafana would send it. */
function panelQueries(namespace: string, cluster: string): { panel: string; expr: string }[] {
  const panels = (dashboard() as { panels: Panel[] }).panels;
  return panels.flatMap((p) => (p.targets ?? []).map((target) => ({
    panel: p.title,
    expr: target.expr.replaceAll('$operator_namespace', namespace).replaceAll('$namespace', namespace).replaceAll('$etcd_cluster', cluster)
      .replaceAll('$__rate_interval', '30s'),
  })));
}

test('a real Prometheus scrapes the operator and every member by the shipped jobs, every dashboard panel answers, and each alert fires on its fault and resolves after the heal', async (t) => {
  const bed = await testbed(t, 'monitoring');
  installOperator({ ...DEFAULT_INSTALL, namespace: bed.namespace, image: 'etcd-operator:dev', imagePullPolicy: 'Never' });
  const minio = await startMinio(t, 'monitoring');
  await bed.secret('aws', minio.awsSecretData);
  await operatorReady(bed);
  await bed.create('watched', { size: 3 });
  const prom = await startPrometheus(t, bed.namespace, QUICK);
  const members = await eventually('3 members settled', 180_000, () => bed.settledMembers('watched', 3));
  const endpoint = await bed.clientEndpoint('watched');
  await eventually('a write through the client Service', 30_000, () => etcdPut(endpoint, 'first', 'x'));
  // Continuous, verified, and periodic often enough that a stopped store makes it stale within a minute or two.
  await createBackup(bed, 'continuous', {
    clusterName: 'watched', storageType: 'S3', s3: { path: 'monitoring/watched.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 30, timeoutInSecond: 20 }, continuous: { chunkSeconds: 2 }, verification: { intervalInSecond: 60 },
  });

  // 1. Both operator replicas (one leading) and the three members, found by the shipped jobs, answering.
  const targets = await eventually('2 operator and 3 member targets up', 120_000, async () => {
    const up = (await prom.targets()).filter((x) => x.health === 'up');
    const operators = up.filter((x) => x.job === 'etcd-operator');
    const scraped = up.filter((x) => x.job === 'etcd-members');
    return operators.length === 2 && scraped.length === 3 ? { operators, scraped } : undefined;
  });
  assert.deepEqual(targets.scraped.map((x) => x.labels.pod).sort(), [...members].sort());
  assert.ok(targets.scraped.every((x) => x.labels.etcd_cluster === 'watched' && x.labels.namespace === bed.namespace), 'members carry their cluster\'s labels');
  assert.deepEqual((await prom.query('etcd_operator_leader')).map((s) => s.value[1]).sort(), ['0', '1'], 'one replica leads, the other stands by');

  // 2. Every panel's query answers (the backups' panels once a verification has passed: a minute or two).
  const queries = panelQueries(bed.namespace, 'watched');
  let empty: string[] = [];
  await eventually('every dashboard panel answering', 360_000, async () => {
    await etcdPut(endpoint, 'tick', String(Date.now())).catch(() => undefined);
    empty = [];
    for (const q of queries) if ((await prom.query(q.expr)).length === 0) empty.push(`${q.panel}: ${q.expr}`);
    return empty.length === 0 || undefined;
  }, () => `empty:\n${empty.join('\n')}`);
  t.diagnostic(`${queries.length} queries of ${new Set(queries.map((q) => q.panel)).size} panels answered`);
  // Answers that mean what their panels say: the spec's size, each replica's own memory (a standby's too).
  const answer = async (panel: string, index = 0): Promise<number[]> =>
    (await prom.query(queries.filter((q) => q.panel === panel)[index]?.expr ?? 'absent-panel')).map((x) => Number(x.value[1]));
  assert.deepEqual(await answer('Members'), [3], 'desired members');
  const memory = await answer('Memory and CPU');
  assert.ok(memory.length === 2 && memory.every((bytes) => bytes > 10 * 2 ** 20), `each replica's memory: ${memory.join(', ')}`);
  assert.deepEqual((await prom.query(`etcd_operator_leader{operator_namespace="${bed.namespace}"}`)).length, 2, 'the install\'s replicas carry its namespace');
  // A new cluster's members failed to reach peers not yet started: etcd's rate over 2 minutes remembers it that long.
  // etcd's disk and leadership alerts read the machine: on two cores shared with the other tests, a p99 fsync over
  // 0.5 s is true here, and says nothing of the operator.
  const machine = ['EtcdHighFsyncDurations', 'EtcdHighCommitDurations', 'EtcdHighNumberOfLeaderChanges', 'EtcdHighNumberOfFailedProposals'];
  let loud: string[] = [];
  await eventually('no alert firing on a healthy cluster with a healthy backup', 180_000, async () => {
    loud = (await prom.alerts()).filter((a) => a.state === 'firing' && !machine.includes(a.labels.alertname ?? '')).map((a) => JSON.stringify(a.labels));
    for (const expr of ['up{etcd_cluster!=""} == 0', 'rate(etcd_network_peer_sent_failures_total[2m]) > 0.01']) {
      loud.push(...(await prom.query(expr)).map((x) => `${expr}: ${JSON.stringify(x.metric)} ${x.value[1]}`));
    }
    return loud.length === 0 || undefined;
  }, () => `firing: ${loud.join('\n')}`);

  // 3. One member hung of three: the quorum is at risk. Two: it is lost, and etcd's own alerts agree.
  const [first = '', second = ''] = members;
  const healFirst = await inject(t, { kind: 'hang', namespace: bed.namespace, pod: first });
  t.diagnostic(`quorum at risk: fired after ${await untilFiring(prom, ['EtcdClusterQuorumAtRisk'], 90_000)} ms`);
  const healSecond = await inject(t, { kind: 'hang', namespace: bed.namespace, pod: second });
  const lost = ['EtcdClusterQuorumLost', 'EtcdNoLeader', 'EtcdInsufficientMembers', 'EtcdMembersDown', 'EtcdClusterDegraded', 'EtcdClusterNotAvailable'];
  t.diagnostic(`two members hung: ${lost.join(', ')} fired after ${await untilFiring(prom, lost, 120_000)} ms`);
  await healFirst();
  await healSecond();
  t.diagnostic(`healed: resolved after ${await untilResolved(prom, [...lost, 'EtcdClusterQuorumAtRisk'], 180_000)} ms`);

  // 4. The backup's store stopped (its process paused: requests hang, as a store behind a dead link): the backups fail,
  // go stale, and the change log falls behind its RPO target.
  process.kill(minio.pid, 'SIGSTOP');
  let storeStopped = true;
  t.after(() => { if (storeStopped) process.kill(minio.pid, 'SIGCONT'); });
  // Writes the stopped store cannot take: with none, the change log is complete as it stands and its RPO rightly low.
  const writing = setInterval(() => { void etcdPut(endpoint, 'during-outage', String(Date.now())).catch(() => undefined); }, 1000);
  t.after(() => { clearInterval(writing); });
  const backups = ['EtcdBackupFailing', 'EtcdBackupStale', 'EtcdBackupRPOHigh'];
  t.diagnostic(`store stopped: ${backups.join(', ')} fired after ${await untilFiring(prom, backups, 240_000)} ms`);
  process.kill(minio.pid, 'SIGCONT');
  storeStopped = false;
  clearInterval(writing);
  t.diagnostic(`store back: resolved after ${await untilResolved(prom, backups, 180_000)} ms`);

  // 5. The operator stopped: nothing scraped of it.
  kubectl(['-n', bed.namespace, 'scale', `deployment/${NAME}`, '--replicas=0']);
  t.diagnostic(`operator stopped: fired after ${await untilFiring(prom, ['EtcdOperatorDown'], 120_000)} ms`);
  kubectl(['-n', bed.namespace, 'scale', `deployment/${NAME}`, `--replicas=${DEFAULT_INSTALL.replicas}`]);
  t.diagnostic(`operator back: resolved after ${await untilResolved(prom, ['EtcdOperatorDown'], 180_000)} ms`);

  // 6. Every replica running, none leading: the lease held by another (a stale holder, a person's maintenance).
  await eventually('a replica leading again', 120_000, async () => ((await prom.query('etcd_operator_leader == 1')).length === 1 || undefined));
  const lease = `/apis/coordination.k8s.io/v1/namespaces/${bed.namespace}/leases/${NAME}`;
  const held = (holderIdentity: string, leaseDurationSeconds: number): Promise<unknown> => bed.transport.call('PATCH', lease,
    { spec: { holderIdentity, leaseDurationSeconds, renewTime: new Date().toISOString().replace('Z', '000Z') } }, 'application/merge-patch+json');
  await held('held-by-the-test', 3600);
  t.diagnostic(`lease held elsewhere: fired after ${await untilFiring(prom, ['EtcdOperatorNotLeading'], 120_000)} ms`);
  await held('', 1);
  t.diagnostic(`lease released: resolved after ${await untilResolved(prom, ['EtcdOperatorNotLeading'], 120_000)} ms`);
});

test('a cluster named after another\'s metrics Service takes the name for its peers: it forms, and the other cluster\'s metrics go without', async (t) => {
  const bed = await testbed(t, 'metrics-name');
  const operator = startOperator(t, bed.namespace);
  await bed.create('quota', { size: 1 });
  await eventually('quota\'s metrics Service', 90_000, async () => (await bed.core.readNamespacedService({ name: 'quota-metrics', namespace: bed.namespace }).catch(() => undefined)));
  // Created after: its peer Service's name is taken by quota's metrics Service.
  await bed.create('quota-metrics', { size: 1 });
  await eventually('quota-metrics Available', 180_000, async () =>
    ((await bed.get('quota-metrics')).status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ? true : undefined));
  const peer = await bed.core.readNamespacedService({ name: 'quota-metrics', namespace: bed.namespace });
  assert.deepEqual(peer.spec?.ports?.map((p) => p.name), ['client', 'peer'], 'the name is quota-metrics\' own peer Service now');
  assert.deepEqual(peer.spec.selector, { app: 'etcd', etcd_cluster: 'quota-metrics' });
  operator.succeeded();
});
