// Metric curves as charts: which curves go on one chart (training and validation of one
// quantity, every run of a comparison), their colours, the axes' ticks on a linear or log
// scale, and numbers short enough for a tick. Pure: the SVG is widgets/LineChart.tsx.

import type { MetricSeries, RunMetrics } from './protocol';

export interface Point {
  x: number;
  /** null: no value here (a gap in the line). */
  y: number | null;
}

export interface Line {
  id: string;
  label: string;
  color: string;
  dashed: boolean;
  points: Point[];
}

export interface Chart {
  /** The quantity: `loss` holds a run's `loss` (training) and `validation_loss` (validation). */
  key: string;
  lines: Line[];
  /** Points left out of its series by the server to keep them short. */
  dropped: number;
}

/** Distinct on light and dark backgrounds; a comparison of more runs repeats them dashed. */
export const PALETTE = ['#4f6bed', '#e0662f', '#22955f', '#c2409b', '#0f9a9a', '#c7851a', '#7c5ce0', '#d9412e'];

const VALIDATION_PREFIX = 'validation_';

/** The quantity a series measures: a validation metric's `validation_` prefix is dropped. */
/**
 * The curves to draw: of a workflow run, the series of two points or more (what its nodes
 * reported; the engine's figures of each node, one point each, are in its Nodes table); of
 * other runs, every series.
 */
export function drawnCurves(metrics: RunMetrics[], workflowRuns: ReadonlySet<string>): RunMetrics[] {
  return metrics
    .map((m) => (workflowRuns.has(m.run_id) ? { ...m, series: m.series.filter((s) => s.steps.length > 1) } : m))
    .filter((m) => m.series.length > 0);
}

export function quantityOf(series: MetricSeries): string {
  return series.group === 'validation' && series.name.startsWith(VALIDATION_PREFIX)
    ? series.name.slice(VALIDATION_PREFIX.length)
    : series.name;
}

/**
 * One chart per quantity, losses first. With one run, its groups (training, validation) get a
 * colour each; with several, each run has its colour and validation curves are dashed.
 * `labels` names the runs (by id) in legends.
 */
export function metricCharts(runs: RunMetrics[], labels: Record<string, string> = {}): Chart[] {
  const charts = new Map<string, Chart>();
  const groups = [...new Set(runs.flatMap((r) => r.series.map((s) => s.group)))];
  runs.forEach((run, index) => {
    for (const series of run.series) {
      const key = quantityOf(series);
      const chart = charts.get(key) ?? { key, lines: [], dropped: 0 };
      charts.set(key, chart);
      chart.dropped += series.dropped;
      const runLabel = labels[run.run_id] ?? run.name;
      const single = runs.length === 1;
      const groupIndex = Math.max(0, groups.indexOf(series.group));
      chart.lines.push({
        id: `${run.run_id}:${series.group}:${series.name}`,
        label: single ? series.group : `${runLabel} · ${series.group}`,
        color: single ? colour(groupIndex) : colour(index),
        dashed: single ? false : series.group === 'validation' || index >= PALETTE.length,
        points: series.steps.map((x, i) => ({ x, y: series.values[i] ?? null })),
      });
    }
  });
  for (const chart of charts.values()) {
    const shown = new Set(chart.lines.map((l) => l.label.split(' · ').at(-1)));
    if (shown.size === 1 && runs.length > 1)
      for (const line of chart.lines) line.label = line.label.split(' · ').slice(0, -1).join(' · ');
  }
  const isLoss = (key: string): number => (/loss/i.test(key) ? 0 : 1);
  return [...charts.values()].sort((a, b) => isLoss(a.key) - isLoss(b.key));
}

const colour = (index: number): string => PALETTE[index % PALETTE.length] ?? '#4f6bed';

/** The y values of lines, finite and (for a log scale) positive. */
export function valuesOf(lines: Line[], log = false): number[] {
  return lines
    .flatMap((l) => l.points.map((p) => p.y))
    .filter((y): y is number => y !== null && Number.isFinite(y) && (!log || y > 0));
}

/** A log scale is offered when every value is above 0. */
export const canLog = (lines: Line[]): boolean => {
  const values = valuesOf(lines);
  return values.length > 0 && values.every((v) => v > 0);
};

/** [lo, hi] with room around a flat line. */
export function extent(values: number[]): [number, number] {
  if (!values.length) return [0, 1];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  return [lo, hi];
}

/** About `count` round ticks (1, 2 or 5 times a power of ten apart) within [lo, hi]. */
export function linearTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const error = raw / power; // 1 to 10: round to the nearest of 1, 2, 5, 10 (geometrically)
  const step = power * (error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1);
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** Powers of ten within [lo, hi] (lo > 0); with fewer than two of them, 1-2-5 steps, else the linear ticks. */
export function logTicks(lo: number, hi: number): number[] {
  const first = Math.floor(Math.log10(lo));
  const last = Math.ceil(Math.log10(hi));
  const inside = (v: number): boolean => v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
  const powers: number[] = [];
  for (let e = first; e <= last; e++) if (inside(10 ** e)) powers.push(Number((10 ** e).toPrecision(12)));
  if (powers.length >= 2) return thin(powers, 6);
  const steps: number[] = [];
  for (let e = first; e <= last; e++)
    for (const m of [1, 2, 5]) if (inside(m * 10 ** e)) steps.push(Number((m * 10 ** e).toPrecision(12)));
  return steps.length >= 2 ? steps : linearTicks(lo, hi, 4);
}

const thin = (ticks: number[], most: number): number[] => {
  const every = Math.ceil(ticks.length / most);
  return ticks.filter((_, i) => i % every === 0);
};

/** A tick label: 1,500 → "1.5k", 0.0001 → "1e-4", 0.25 → "0.25". */
export function tickText(value: number): string {
  const size = Math.abs(value);
  if (value === 0) return '0';
  if (size >= 1e9) return `${trim(value / 1e9)}G`;
  if (size >= 1e6) return `${trim(value / 1e6)}M`;
  if (size >= 1e4) return `${trim(value / 1e3)}k`;
  if (size < 1e-3) return value.toExponential(0);
  return trim(value);
}

const trim = (value: number): string => String(Number(value.toPrecision(3)));

/** A value as the hover shows it: four significant digits, or scientific when tiny or huge. */
export function valueText(value: number | null): string {
  if (value === null) return '—';
  const size = Math.abs(value);
  if (value !== 0 && (size < 1e-3 || size >= 1e7)) return value.toExponential(3);
  return String(Number(value.toPrecision(4)));
}

/** The index of the point whose x is nearest `x` (points in x order), or -1 for none with a value. */
export function nearest(points: Point[], x: number): number {
  let best = -1;
  let distance = Infinity;
  points.forEach((p, i) => {
    if (p.y === null) return;
    const d = Math.abs(p.x - x);
    if (d < distance) {
      best = i;
      distance = d;
    }
  });
  return best;
}

/** The SVG path of a line: a gap where a value is missing. */
export function pathOf(points: Point[], sx: (x: number) => number, sy: (y: number) => number): string {
  let path = '';
  let pen = false;
  for (const p of points) {
    if (p.y === null || !Number.isFinite(sy(p.y))) {
      pen = false;
      continue;
    }
    path += `${pen ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`;
    pen = true;
  }
  return path;
}
