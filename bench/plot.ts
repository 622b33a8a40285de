/**
 * The side-by-side benchmark (this operator and etcd-io's, same scenarios) as a standalone SVG for the README: one
 * panel per unit, two horizontal bars per scenario. Pure and deterministic, so a re-render of the same results is no diff.
 */

/** One operator's result for a scenario: a median of runs, or never finished within a bound. */
export type Measured =
  | { finished: true; median: number; min: number; max: number; runs: number }
  | { finished: false; bound: number; runs: number };

/** One scenario measured on both operators. unit 'ms' rows are times, 'MiB' memory, 'cpu' CPU cores (fraction). */
export interface SideBySideRow {
  scenario: string;
  unit: 'ms' | 'MiB' | 'cpu';
  ours: Measured;
  theirs: Measured;
}

type Side = 'ours' | 'theirs';

const width = 960;
const labelRight = 390; // scenario labels are right-aligned here; 58 characters of 12 px sans-serif fit left of it
const plotLeft = 400;
const plotWidth = 440; // leaves 120 px on the right for the value printed after the longest bar
const barHeight = 14;
const lineHeight = 14;
const colours: Record<Side, string> = { ours: '#2b6cb0', theirs: '#dd6b20' };
const names: Record<Side, string> = { ours: 'ours', theirs: 'etcd-io' };

/** The panels in order; `factor` turns a row's unit into the panel's (times are measured in ms, shown in s). */
const panels = [
  { unit: 'ms', title: 'time (s)', suffix: 's', factor: 1 / 1000 },
  { unit: 'MiB', title: 'memory (MiB)', suffix: 'MiB', factor: 1 },
  { unit: 'cpu', title: 'CPU (cores)', suffix: 'cores', factor: 1 },
] as const;

type Panel = (typeof panels)[number];

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** A coordinate to one decimal: enough for a picture, and keeps float noise out of the output. */
const num = (x: number): string => String(Math.round(x * 10) / 10);

/** A value as people read it: whole numbers from 10 up, two significant digits below (3.6 s, 59 MiB, 0.012 cores). */
const fmt = (x: number): string => String(x >= 10 ? Math.round(x) : Number(x.toPrecision(2)));

const text = (x: number, y: number, content: string, attrs = ''): string =>
  `<text x="${num(x)}" y="${num(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;

/** The displayed value of a result: its median, or the bound it never finished within. */
const valueOf = (m: Measured, panel: Panel): number => (m.finished ? m.median : m.bound) * panel.factor;

/** A scale from 0 to 5% over `max`, and a tick step of 1, 2 or 5 times a power of ten (so ticks read well): 2 to 5 past 0. */
function axis(max: number): { top: number; step: number } {
  const top = max > 0 ? max * 1.05 : 1;
  const magnitude = 10 ** Math.floor(Math.log10(top / 5));
  const step = ([1, 2, 5].find((m) => m * magnitude >= top / 5) ?? 10) * magnitude;
  return { top, step };
}

/** Splits a label at spaces into lines of at most `chars` characters (a longer word gets a line of its own). */
function wrap(label: string, chars: number): string[] {
  const lines: string[] = [];
  for (const word of label.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= chars) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** One side's bar and the value printed at its end; a result that never finished is hatched up to its bound. */
function bar(side: Side, m: Measured, panel: Panel, scale: number, y: number): string[] {
  const value = valueOf(m, panel);
  const w = value * scale;
  const shown = `${fmt(value)} ${panel.suffix}`;
  const paint = m.finished ? `fill="${colours[side]}"` : `fill="url(#never-${side})" stroke="${colours[side]}" stroke-dasharray="4 2"`;
  return [
    `<rect class="bar ${side}${m.finished ? '' : ' never'}" x="${plotLeft}" y="${num(y)}" width="${num(w)}" height="${barHeight}" ${paint}/>`,
    text(plotLeft + w + 6, y + barHeight - 3, m.finished ? shown : `never (≥ ${shown})`, 'font-size="11"'),
  ];
}

/** One panel from `top`: its title, a grid with tick labels under it, each row's label and two bars; and its height. */
function panelSvg(panel: Panel, rows: SideBySideRow[], top: number): { svg: string[]; height: number } {
  const { top: axisTop, step } = axis(Math.max(...rows.map((r) => Math.max(valueOf(r.ours, panel), valueOf(r.theirs, panel)))));
  const scale = plotWidth / axisTop;
  const groups = rows.map((row) => {
    const lines = wrap(row.scenario, 58);
    return { row, lines, height: Math.max(2 * barHeight + 4, lines.length * lineHeight) + 12 };
  });
  const gridTop = top + 30;
  const gridBottom = gridTop + groups.reduce((sum, g) => sum + g.height, 0);
  // The grid goes first so that bars and labels are drawn over it.
  const svg = [text(16, top + 18, panel.title, 'font-size="14" font-weight="bold"')];
  for (let i = 0; i * step <= axisTop; i++) {
    const x = plotLeft + i * step * scale;
    svg.push(`<line x1="${num(x)}" y1="${gridTop}" x2="${num(x)}" y2="${gridBottom}" stroke="#ddd"/>`,
      text(x, gridBottom + 14, fmt(i * step), 'font-size="11" text-anchor="middle" fill="#555"'));
  }
  let y = gridTop;
  for (const { row, lines, height } of groups) {
    const firstLine = y + (height - lines.length * lineHeight) / 2 + 11; // the label block centred on the group
    lines.forEach((line, i) => svg.push(text(labelRight, firstLine + i * lineHeight, line, 'text-anchor="end"')));
    svg.push(...bar('ours', row.ours, panel, scale, y + 6), ...bar('theirs', row.theirs, panel, scale, y + 10 + barHeight));
    y += height;
  }
  return { svg, height: gridBottom + 36 - top };
}

/** A hatch in a side's colour, for bars of results that never finished. */
const hatch = (side: Side): string =>
  `<pattern id="never-${side}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
  `<rect width="6" height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" stroke="${colours[side]}" stroke-width="3"/></pattern>`;

/** The rows as a standalone SVG document: a title, a legend, then the time, memory and CPU panels that have rows. */
export function sideBySideSvg(rows: SideBySideRow[], title: string): string {
  const body = [text(16, 24, title, 'font-size="16" font-weight="bold"')];
  const legend: [string, string][] = [[`fill="${colours.ours}"`, names.ours], [`fill="${colours.theirs}"`, names.theirs]];
  if (rows.some((r) => !r.ours.finished || !r.theirs.finished)) {
    legend.push(['fill="url(#never-ours)" stroke="#555" stroke-dasharray="4 2"', 'never finished: drawn to the bound']);
  }
  legend.forEach(([paint, label], i) => {
    body.push(`<rect x="${16 + i * 110}" y="38" width="12" height="12" ${paint}/>`, text(34 + i * 110, 48, label));
  });
  let y = 62;
  for (const panel of panels) {
    const own = rows.filter((r) => r.unit === panel.unit);
    if (own.length === 0) continue;
    const { svg, height } = panelSvg(panel, own, y);
    body.push(...svg);
    y += height;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif" font-size="12">`,
    `<defs>${hatch('ours')}${hatch('theirs')}</defs>`,
    // An opaque background: GitHub shows README pictures on a dark page in dark mode, where black text would vanish.
    `<rect width="${width}" height="${y}" fill="white"/>`,
    ...body,
    '</svg>',
  ].join('\n');
}
