import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sideBySideSvg } from '../../bench/plot.js';
import type { Measured, SideBySideRow } from '../../bench/plot.js';

const done = (median: number): Measured => ({ finished: true, median, min: median, max: median, runs: 3 });
const never = (bound: number): Measured => ({ finished: false, bound, runs: 3 });

/** The width of each bar of a side, in document order. */
const widths = (svg: string, side: 'ours' | 'theirs'): number[] =>
  [...svg.matchAll(new RegExp(`<rect class="bar ${side}[^"]*"[^>]*? width="([\\d.]+)"`, 'g'))].map((m) => Number(m[1]));

test('the picture is a standalone SVG document whose text is escaped', () => {
  const svg = sideBySideSvg([{ scenario: 'a < b & c', unit: 'ms', ours: done(1000), theirs: done(2000) }], 'bring-up → Available <3>');
  assert.ok(svg.startsWith('<svg '));
  assert.ok(svg.endsWith('</svg>'));
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+" viewBox="0 0 \d+ \d+"/);
  assert.ok(svg.includes('>a &lt; b &amp; c</text>'));
  assert.ok(svg.includes('>bring-up → Available &lt;3&gt;</text>'));
  assert.ok(!svg.includes('a < b'));
  const texts = [...svg.matchAll(/<text[^>]*>([^]*?)<\/text>/g)].map((m) => m[1] ?? '');
  assert.equal(texts.length, svg.split('<text').length - 1);
  for (const t of texts) assert.doesNotMatch(t, /<|>|&(?!(amp|lt|gt|quot|apos);)/);
});

test('each bar is labelled with its value in the panel unit, and a run that never finished with its bound', () => {
  const svg = sideBySideSvg([
    { scenario: 'bring-up', unit: 'ms', ours: done(3600), theirs: never(300_000) },
    { scenario: 'operator RSS', unit: 'MiB', ours: done(59), theirs: done(120.4) },
    { scenario: 'operator CPU', unit: 'cpu', ours: done(0.012), theirs: done(0.25) },
  ], 'side by side');
  for (const shown of ['>3.6 s<', '>never (≥ 300 s)<', '>59 MiB<', '>120 MiB<', '>0.012 cores<', '>0.25 cores<']) {
    assert.ok(svg.includes(shown), shown);
  }
  assert.match(svg, /<rect class="bar theirs never"[^>]*fill="url\(#never-theirs\)"/);
  assert.match(svg, /<pattern id="never-theirs"/);
  assert.doesNotMatch(svg, /<rect class="bar ours never"/);
});

test('a panel appears only when it has rows', () => {
  const times: SideBySideRow = { scenario: 'failover', unit: 'ms', ours: done(1000), theirs: done(2000) };
  const onlyTimes = sideBySideSvg([times], 't');
  assert.ok(onlyTimes.includes('>time (s)</text>'));
  assert.ok(!onlyTimes.includes('memory (MiB)'));
  assert.ok(!onlyTimes.includes('CPU (cores)'));
  const withMemory = sideBySideSvg([times, { scenario: 'RSS', unit: 'MiB', ours: done(59), theirs: done(80) }], 't');
  assert.ok(withMemory.includes('>memory (MiB)</text>'));
  assert.ok(!withMemory.includes('CPU (cores)'));
});

test('bar widths are proportional to the values within a panel', () => {
  const svg = sideBySideSvg([{ scenario: 'failover', unit: 'ms', ours: done(1000), theirs: done(2000) }], 't');
  const [ours] = widths(svg, 'ours');
  const [theirs] = widths(svg, 'theirs');
  assert.ok(ours !== undefined && theirs !== undefined && ours > 0, svg);
  assert.ok(Math.abs(theirs / ours - 2) < 0.01, `${theirs} / ${ours}`);
  // Every bar fits within the plot: the scale's top is above the largest value.
  assert.ok(theirs < 440);
});

test('the same rows give the same picture', () => {
  const rows: SideBySideRow[] = [
    { scenario: 'scale 3 → 5', unit: 'ms', ours: done(12_345), theirs: never(600_000) },
    { scenario: 'RSS', unit: 'MiB', ours: done(59), theirs: done(80) },
  ];
  assert.equal(sideBySideSvg(rows, 'x'), sideBySideSvg(structuredClone(rows), 'x'));
});
