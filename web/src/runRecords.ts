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
  return new Date(at * 1000).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: ago > 300 * 86_400 ? 'numeric' : undefined });
}

export const exactTime = (at: number): string =>
  new Date(at * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The day and the time to the second, short enough for a narrow panel. */
export const shortTime = (at: number): string =>
  new Date(at * 1000).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' });

/** Seconds a run took; a run still going counts up to `now`. */
/** How long the run ran: from start to end (or now), less the time it stood paused. */
export const durationOf = (run: RunRecordInfo, now: number): number => Math.max(0, (run.ended ?? now) - run.started - (run.paused ?? 0));

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

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

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
export const fraction = (used: number, total: number): number => (total > 0 ? Math.min(1, Math.max(0, used / total)) : 0);
