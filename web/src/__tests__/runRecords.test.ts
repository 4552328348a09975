// Past runs as words: labels, times, durations, counts, sizes.

import { describe, expect, it } from 'vitest';
import type { RunRecordInfo } from '../protocol';
import {
  differingParams,
  durationOf,
  formatBytes,
  formatCount,
  formatDuration,
  fraction,
  itemsOf,
  nodeCounts,
  outputsText,
  pluralCount,
  previousRun,
  relativeTime,
  runLabels,
  statusLabel,
  trainingProgress,
} from '../runRecords';

const record = (over: Partial<RunRecordInfo> = {}): RunRecordInfo => ({
  run_id: 'r1',
  workflow: 'hello.json',
  status: 'completed',
  mode: 'all',
  node: null,
  started: 1000,
  ended: 1002.5,
  counts: {},
  error: null,
  params: {},
  paused: 0,
  kind: 'workflow',
  search: null,
  metrics: 0,
  ...over,
});

describe('run records', () => {
  it('label statuses calmly', () => {
    expect(statusLabel('completed')).toBe('finished');
    expect(statusLabel('failed')).toBe('failed');
    expect(statusLabel('something')).toBe('something');
  });

  it('say when, relative to now', () => {
    expect(relativeTime(1000, 1010)).toBe('just now');
    expect(relativeTime(1000, 1000 + 5 * 60)).toBe('5 min ago');
    expect(relativeTime(1000, 1000 + 3 * 3600)).toBe('3 h ago');
    expect(relativeTime(1000, 1000 + 30 * 3600)).toBe('yesterday');
    expect(relativeTime(2000, 1000)).toBe('just now');
  });

  it('say how long', () => {
    expect(durationOf(record(), 5000)).toBe(2.5);
    expect(durationOf(record({ ended: null }), 1010)).toBe(10);
    expect(durationOf(record({ ended: 1062.5, paused: 60 }), 5000)).toBe(2.5);
    expect(formatDuration(0.25)).toBe('250 ms');
    expect(formatDuration(2.5)).toBe('2.5 s');
    expect(formatDuration(125)).toBe('2m 5s');
    expect(formatDuration(3 * 3600 + 600)).toBe('3h 10m');
  });

  it('count items per node, ignoring what is not a count', () => {
    const run = record({ counts: { greetings: { out: 10 }, split: { A: 5, B: 5 }, odd: 'x', bad: { out: 'y' } } });
    expect(nodeCounts(run)).toEqual([
      ['greetings', [['out', 10]]],
      [
        'split',
        [
          ['A', 5],
          ['B', 5],
        ],
      ],
      ['odd', []],
      ['bad', []],
    ]);
    expect(itemsOf(run)).toBe(10);
    expect(itemsOf(record())).toBe(0);
  });

  it("write a node's items out: a lone out as its count, several by name", () => {
    expect(outputsText({})).toBe('—');
    expect(outputsText({ out: 12345 })).toBe('12,345');
    expect(outputsText({ out: 3, rejected: 1 })).toBe('out 3 · rejected 1');
  });

  it('write sizes and fractions', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(16 * 1024 ** 3)).toBe('16.0 GB');
    expect(formatBytes(512 * 1024 ** 2)).toBe('512 MB');
    expect(fraction(1, 4)).toBe(0.25);
    expect(fraction(5, 0)).toBe(0);
    expect(fraction(5, 4)).toBe(1);
  });
});

describe('runs shown together', () => {
  it('write long counts whole, with separators', () => {
    expect(formatCount(1_234_567)).toBe('1,234,567');
    expect(pluralCount(1, 'item')).toBe('1 item');
    expect(pluralCount(1_000_000, 'batch', 'batches')).toBe('1,000,000 batches');
  });

  it('say how far a training run got', () => {
    const run = record({ kind: 'train', counts: { batches_completed: 1200, total_batches: 1200, epochs: 4 } });
    expect(trainingProgress(run)).toBe('1,200 of 1,200 batches · 4 epochs');
    expect(trainingProgress(record())).toBeNull();
  });

  it("list only the parameters that differ, a workflow run's per node", () => {
    const a = record({ run_id: 'a', params: { split: { fn: 'x', n: 1 }, load: { path: 'p' } } });
    const b = record({ run_id: 'b', params: { split: { fn: 'x', n: 2 } } });
    expect(differingParams([a, b])).toEqual([
      ['load.path', ['p', undefined]],
      ['split.n', [1, 2]],
    ]);
    const t1 = record({ kind: 'train', params: { lr: 0.1, layers: 2 } });
    const t2 = record({ kind: 'train', params: { lr: 0.01, layers: 2 } });
    expect(differingParams([t1, t2])).toEqual([['lr', [0.1, 0.01]]]);
  });

  it('name trials short and tell runs of one workflow apart by id', () => {
    const runs = [
      record({ run_id: 'aaaaaa11', workflow: 'hello.json' }),
      record({ run_id: 'bbbbbb22', workflow: 'hello.json' }),
      record({ run_id: 't0', workflow: 'search:train.py#trial-0' }),
    ];
    expect(runLabels(runs)).toEqual({
      aaaaaa11: 'hello.json · aaaaaa',
      bbbbbb22: 'hello.json · bbbbbb',
      t0: 'trial-0',
    });
  });
});

describe('the previous run', () => {
  it('is the last one of the same workflow and kind started before', () => {
    const a = record({ run_id: 'a', started: 10 });
    const b = record({ run_id: 'b', started: 20 });
    const other = record({ run_id: 'o', started: 25, workflow: 'other.json' });
    const c = record({ run_id: 'c', started: 30 });
    expect(previousRun(c, [c, other, b, a])?.run_id).toBe('b');
    expect(previousRun(a, [c, other, b, a])).toBeUndefined();
  });
});
