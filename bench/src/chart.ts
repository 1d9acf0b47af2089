import type { BenchReport, ScenarioResult } from './runner';
import { format } from './runner';

/**
 * The results as a small SVG: one row per scenario, the baseline's and the subject's medians
 * as two bars on the row's own scale (units differ between rows), the ratio and the targets.
 * Hand-rolled: the charting libraries that render SVG in Node (vega, vega-lite, d3) ship as
 * ES modules only, which this repository's CommonJS jest cannot load untranspiled, and
 * chart.js needs a native canvas.
 */

const WIDTH = 1000;
const LABEL_WIDTH = 250;
const BAR_WIDTH = 380;
const ROW_HEIGHT = 52;
const HEADER_HEIGHT = 64;
const COLORS = {
  baseline: '#9aa5b1',
  subject: '#2f6fb0',
  met: '#1e7b34',
  missed: '#b3261e',
  text: '#1f2328',
};

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${x}" y="${y}" ${attrs}>${escapeXml(content)}</text>`;
}

/** Width in px of `value` on a row whose largest value fills BAR_WIDTH. */
function barLength(value: number, max: number): number {
  if (!Number.isFinite(value) || !(max > 0)) return 0;
  return Math.max(1, Math.round((value / max) * BAR_WIDTH));
}

function targetLine(result: ScenarioResult): { content: string; met: boolean } | undefined {
  if (result.targets.length === 0) return undefined;
  const sign = result.better === 'higher' ? '≥' : '≤';
  const content = result.targets
    .map((t) => `${t.on} ${sign} ${format(t.bound)} ${t.met ? 'met' : 'MISSED'}`)
    .join('; ');
  return { content, met: result.targets.every((t) => t.met) };
}

function row(result: ScenarioResult, top: number): string {
  const max = Math.max(result.baseline.median, result.subject.median);
  const x = LABEL_WIDTH;
  const better = result.better === 'higher' ? 'higher is better' : 'lower is better';
  const parts = [
    text(8, top + 18, result.name, 'font-weight="bold"'),
    text(8, top + 36, `${result.unit}, ${better}`, `fill="${COLORS.baseline}"`),
  ];
  const bars: Array<['baseline' | 'subject', number, number]> = [
    ['baseline', result.baseline.median, top + 6],
    ['subject', result.subject.median, top + 25],
  ];
  for (const [side, value, y] of bars) {
    const length = barLength(value, max);
    parts.push(
      `<rect x="${x}" y="${y}" width="${length}" height="16" fill="${COLORS[side]}"><title>${escapeXml(
        result[side].label,
      )}</title></rect>`,
      text(x + length + 6, y + 13, format(value)),
    );
  }
  const right = x + BAR_WIDTH + 70;
  parts.push(text(right, top + 20, `x${format(result.ratio)}`, 'font-weight="bold"'));
  const target = targetLine(result);
  if (target)
    parts.push(text(right, top + 38, target.content, `fill="${target.met ? COLORS.met : COLORS.missed}"`));
  return parts.join('\n  ');
}

/** The SVG document for `report`: its date, machine and options in the header. */
export function renderChart(report: BenchReport): string {
  const height = HEADER_HEIGHT + ROW_HEIGHT * Math.max(1, report.results.length) + 10;
  const { machine, options } = report;
  const subtitle =
    `${report.startedAt.slice(0, 10)}, ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}; ` +
    `N ${options.n}, ${options.rounds} rounds, medians`;
  const legend = [
    `<rect x="${LABEL_WIDTH}" y="40" width="12" height="12" fill="${COLORS.baseline}"/>`,
    text(LABEL_WIDTH + 16, 50, 'baseline (same run)'),
    `<rect x="${LABEL_WIDTH + 160}" y="40" width="12" height="12" fill="${COLORS.subject}"/>`,
    text(LABEL_WIDTH + 176, 50, 'subject (ferry)'),
    text(LABEL_WIDTH + BAR_WIDTH + 70, 50, 'subject / baseline'),
  ];
  const rows = report.results.map((result, i) => row(result, HEADER_HEIGHT + i * ROW_HEIGHT));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ` +
      `font-family="sans-serif" font-size="12" fill="${COLORS.text}">`,
    `  <rect width="100%" height="100%" fill="#ffffff"/>`,
    `  ${text(8, 20, 'ferry benchmarks: each path beside its baseline', 'font-size="15" font-weight="bold"')}`,
    `  ${text(8, 36, subtitle)}`,
    `  ${legend.join('\n  ')}`,
    `  ${rows.join('\n  ')}`,
    '</svg>',
    '',
  ].join('\n');
}
