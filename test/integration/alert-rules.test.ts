// lab: late — needs promtool, built last behind a first lab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { alertRules } from '../../src/install/alert-rules.js';
import { labTool } from '../support/lab.js';

const source = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const RULES = source('deploy/monitoring/etcd-operator-rules.yaml');
const CASES = source('test/rules/etcd-operator-rules.test.yaml');

const promtool = async (...args: string[]): Promise<string> =>
  execFileSync(await labTool('promtool'), args, { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });

test('promtool accepts the shipped rules file', async () => {
  const out = await promtool('check', 'rules', RULES);
  const count = alertRules().groups.reduce((n, g) => n + g.rules.length, 0);
  assert.match(out, new RegExp(`SUCCESS: ${count} rules found`));
});

test('promtool test rules: every alert fires where it should, with its labels and text, and stays quiet where it should not', async () => {
  // promtool exits non-zero, printing what it expected and what it got, on any case that fails.
  assert.match(await promtool('test', 'rules', CASES), /SUCCESS/);
});

test('every shipped alert has a case that fires it', () => {
  interface Case { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }
  const cases = (parse(readFileSync(CASES, 'utf8')) as { tests: Case[] }).tests;
  const fired = new Set(cases.flatMap((c) => (c.alert_rule_test ?? []).filter((t) => t.exp_alerts.length > 0).map((t) => t.alertname)));
  const alerts = new Set(alertRules().groups.flatMap((g) => g.rules.map((r) => r.alert)));
  assert.deepEqual([...alerts].filter((a) => !fired.has(a)), [], 'alerts no case fires');
});
