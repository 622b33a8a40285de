import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdClusterCrd, etcdRestoreCrd } from '../../src/api/crds.js';
import { clusterSpec } from '../../src/api/etcd-cluster.js';
import { integer, object, string } from '../../src/api/schema.js';
import type { OpenApiSchema } from '../../src/api/schema.js';

/** Paths where a schema breaks apiextensions/v1's structural rules. */
function structuralProblems(schema: OpenApiSchema, path: string): string[] {
  const problems: string[] = [];
  const raw = schema as Record<string, unknown>;
  for (const banned of ['$ref', 'patternProperties', 'uniqueItems', 'allOf', 'anyOf', 'oneOf', 'not']) {
    if (banned in raw) problems.push(`${path}: ${banned}`);
  }
  if (!schema.type && !schema['x-kubernetes-preserve-unknown-fields'] && !schema['x-kubernetes-int-or-string']) problems.push(`${path}: no type`);
  if (schema.properties && schema.additionalProperties) problems.push(`${path}: additionalProperties beside properties`);
  for (const [k, v] of Object.entries(schema.properties ?? {})) problems.push(...structuralProblems(v, `${path}.${k}`));
  if (schema.items) problems.push(...structuralProblems(schema.items, `${path}[]`));
  if (schema.additionalProperties) problems.push(...structuralProblems(schema.additionalProperties, `${path}{}`));
  return problems;
}

test('the EtcdCluster schema is structural', () => {
  const versions = etcdClusterCrd().spec.versions as { schema: { openAPIV3Schema: OpenApiSchema } }[];
  const root = versions[0]?.schema.openAPIV3Schema;
  assert.ok(root);
  assert.deepEqual(structuralProblems(root, ''), []);
});

test('object() lists required fields only when there are some, and keeps validations', () => {
  const withRequired = object({ a: string(), b: integer() }, { required: ['a'] }).openapi;
  assert.deepEqual(withRequired.required, ['a']);
  assert.equal('required' in object({ a: string() }).openapi, false);
  const spec = clusterSpec.openapi;
  assert.deepEqual(spec.required, ['size']);
  assert.ok(spec.properties?.pod?.properties?.labels?.['x-kubernetes-validations']?.[0]?.rule.includes("'app' in self"));
});

test('kubectl get etcdrestores shows a restore\'s phase and, when it failed, why', () => {
  const { versions } = etcdRestoreCrd().spec as { versions: { additionalPrinterColumns: { name: string; jsonPath: string }[] }[] };
  const columns = versions[0]?.additionalPrinterColumns ?? [];
  assert.deepEqual(columns.map((c) => [c.name, c.jsonPath]), [
    ['Cluster', '.spec.etcdCluster.name'], ['Phase', '.status.phase'], ['Reason', '.status.reason'], ['Age', '.metadata.creationTimestamp'],
  ]);
});
