// Past runs and system stats as words: status labels, times, durations, counts and sizes.

import type { RunRecordInfo } from './protocol';

const LABELS: Record<string, string> = {
  running: 'running',
  paused: 'running',
  completed: 'finished',
  failed: 'failed',
  stopped: 'stopped',
  interrupted: 'interrupted',
};

export const statusLabel = (status: string): string => LABELS[status] ?? status;

/** "just now", "5 min ago", "3 h ago", "yesterday", then the date. `now` and `at` in seconds. */
export function relativeTime(at: number, now: number): string {
  const ago = Math.max(0, now - at);
  if (ago < 45) return 'just now';
  if (ago < 3600) return `${Math.round(ago / 60)} min ago`;
  if (ago < 86_400) return `${Math.round(ago / 3600)} h ago`;
  if (ago < 2 * 86_400) return 'yesterday';
  return new Date(at * 1000).toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    year: ago > 300 * 86_400 ? 'numeric' : undefined,
  });
}

export const exactTime = (at: number): string =>
  new Date(at * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The day and the time to the second, short enough for a narrow panel. */
export const shortTime = (at: number): string =>
  new Date(at * 1000).toLocaleString(undefined, {
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
  });

/** Seconds a run took; a run still going counts up to `now`. */
/** How long the run ran: from start to end (or now), less the time it stood paused. */
export const durationOf = (run: RunRecordInfo, now: number): number =>
  Math.max(0, (run.ended ?? now) - run.started - (run.paused ?? 0));

export function formatDuration(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${Math.round(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h ${Math.round((seconds % 3600) / 60)}m`;
}

/** Items per output of each node, in the order the server gave them; anything else is dropped. */
export function nodeCounts(run: RunRecordInfo): [node: string, outputs: [name: string, count: number][]][] {
  return Object.entries(run.counts).map(([node, outputs]) => [
    node,
    typeof outputs === 'object' && outputs !== null
      ? Object.entries(outputs).filter((entry): entry is [string, number] => typeof entry[1] === 'number')
      : [],
  ]);
}

/** The most items one node handed on: how much went through the run. */
export function itemsOf(run: RunRecordInfo): number {
  return Math.max(0, ...nodeCounts(run).map(([, outputs]) => outputs.reduce((sum, [, n]) => sum + n, 0)));
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** A fraction for a meter, 0 to 1; 0 when the total is unknown. */
export const fraction = (used: number, total: number): number =>
  total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;

/** A count with thousands separators, whole: 1234567 → "1,234,567". */
export const formatCount = (n: number): string => Math.round(n).toLocaleString('en-US');

export const pluralCount = (n: number, word: string, many = `${word}s`): string =>
  `${formatCount(n)} ${n === 1 ? word : many}`;

/** A node's items out per output: "1,234" for a lone `out`, else "out 3 · rejected 1"; "—" for none. */
export function outputsText(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  if (!entries.length) return '—';
  if (entries.length === 1 && entries[0]?.[0] === 'out') return formatCount(entries[0][1]);
  return entries.map(([name, n]) => `${name} ${formatCount(n)}`).join(' · ');
}

/** What kind of run, in words. */
export const KIND_LABELS: Record<string, string> = {
  workflow: 'workflow',
  train: 'training',
  search: 'search',
  batch: 'batch job',
};
export const kindLabel = (kind: string): string => KIND_LABELS[kind] ?? kind;

/** A run's parameters as flat `name → value`: a workflow run's `node.param`, a training run's hparams. */
export function flatParams(run: RunRecordInfo): Record<string, unknown> {
  if (run.kind !== 'workflow') return { ...run.params };
  const flat: Record<string, unknown> = {};
  for (const [node, params] of Object.entries(run.params)) {
    if (typeof params === 'object' && params !== null && !Array.isArray(params)) {
      for (const [name, value] of Object.entries(params)) flat[`${node}.${name}`] = value;
    } else flat[node] = params;
  }
  return flat;
}

/** The parameters whose values differ between runs (missing counts as different), by name. */
export function differingParams(runs: RunRecordInfo[]): [name: string, values: unknown[]][] {
  const flats = runs.map(flatParams);
  const names = [...new Set(flats.flatMap((f) => Object.keys(f)))].sort();
  return names
    .map((name): [string, unknown[]] => [name, flats.map((f) => f[name])])
    .filter(([, values]) => new Set(values.map((v) => JSON.stringify(v) ?? 'undefined')).size > 1);
}

/** A parameter value in a table cell: text as it is, anything else as JSON; missing as "—". */
export const paramText = (value: unknown): string =>
  value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value);

/** A training run's progress in words: "40 of 40 batches · 4 epochs". */
export function trainingProgress(run: RunRecordInfo): string | null {
  const done = run.counts.batches_completed;
  if (typeof done !== 'number') return null;
  const total = run.counts.total_batches;
  const epochs = run.counts.epochs;
  const batches =
    typeof total === 'number'
      ? `${formatCount(done)} of ${pluralCount(total, 'batch', 'batches')}`
      : pluralCount(done, 'batch', 'batches');
  return typeof epochs === 'number' ? `${batches} · ${epochs} epoch${epochs === 1 ? '' : 's'}` : batches;
}

/** Short names for runs shown together: a trial as `trial-2`, a name shared by several with its id. */
export function runLabels(runs: RunRecordInfo[]): Record<string, string> {
  const short = (run: RunRecordInfo): string =>
    run.workflow.includes('#trial-') ? `trial-${run.workflow.split('#trial-').at(-1) ?? ''}` : run.workflow;
  const seen = new Map<string, number>();
  for (const run of runs) seen.set(short(run), (seen.get(short(run)) ?? 0) + 1);
  return Object.fromEntries(
    runs.map((run) => [
      run.run_id,
      (seen.get(short(run)) ?? 0) > 1 ? `${short(run)} · ${run.run_id.slice(0, 6)}` : short(run),
    ]),
  );
}

/** A search's trials (runs named `<search>#trial-<i>`), in trial order. */
export function trialsOf(search: RunRecordInfo, history: RunRecordInfo[]): RunRecordInfo[] {
  if (search.kind !== 'search') return [];
  const index = (run: RunRecordInfo): number => Number(run.workflow.split('#trial-').at(-1) ?? 0) || 0;
  return history.filter((r) => r.search === search.run_id).sort((a, b) => index(a) - index(b));
}

/** The run of the same workflow (or training run name) and kind that started last before `run`. */
export function previousRun(run: RunRecordInfo, history: RunRecordInfo[]): RunRecordInfo | undefined {
  return history
    .filter((r) => r.kind === run.kind && r.workflow === run.workflow && r.started < run.started)
    .reduce<RunRecordInfo | undefined>((best, r) => (!best || r.started > best.started ? r : best), undefined);
}
