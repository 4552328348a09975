// Past runs as words: labels, times, durations, counts, sizes.

import { describe, expect, it } from 'vitest';
import type { RunRecordInfo } from '../protocol';
import { durationOf, formatBytes, formatDuration, fraction, itemsOf, nodeCounts, relativeTime, statusLabel } from '../runRecords';

const record = (over: Partial<RunRecordInfo> = {}): RunRecordInfo => ({
  run_id: 'r1', workflow: 'hello.json', status: 'completed', mode: 'all', node: null,
  started: 1000, ended: 1002.5, counts: {}, error: null, params: {}, paused: 0, ...over,
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
    expect(nodeCounts(run)).toEqual([['greetings', [['out', 10]]], ['split', [['A', 5], ['B', 5]]], ['odd', []], ['bad', []]]);
    expect(itemsOf(run)).toBe(10);
    expect(itemsOf(record())).toBe(0);
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
