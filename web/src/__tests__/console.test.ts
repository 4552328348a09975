// The console's fold: lines in arrival order, bounded, a snapshot starting it again.

import { describe, expect, it } from 'vitest';
import type { ServerMessage } from '../protocol';
import { MAX_LINES, foldConsole, foldConsoleAll } from '../store/console';

const empty = { run: null, lines: [], dropped: 0 };
const log = (node: string, message: string, skipped = 0): ServerMessage => ({
  type: 'node_log',
  run_id: 'r',
  node_id: node,
  level: 'info',
  message,
  skipped,
});

describe('foldConsole', () => {
  it('keeps the lines of the current run in order, errors included, and counts what it drops', () => {
    let state = foldConsole(empty, {
      type: 'run_started',
      run_id: 'r',
      workflow: 'w.json',
      mode: 'all',
      node: null,
      nodes: [],
      started: 1,
    });
    state = foldConsole(state, log('a', 'one'));
    state = foldConsole(state, {
      type: 'node_error',
      run_id: 'r',
      node_id: 'b',
      error: { type: 'KeyError', message: "'x'", traceback: '' },
      item: null,
    });
    state = foldConsole(state, log('a', 'two', 5));
    state = foldConsole(state, { ...log('a', 'other run'), run_id: 'q' } as ServerMessage);
    expect(state.lines.map((l) => [l.node, l.level, l.message])).toEqual([
      ['a', 'info', 'one'],
      ['b', 'error', "KeyError: 'x'"],
      ['a', 'info', 'two'],
    ]);
    expect(state.dropped).toBe(5);
    for (let i = 0; i < MAX_LINES; i++) state = foldConsole(state, log('a', `${i}`));
    expect(state.lines).toHaveLength(MAX_LINES);
    expect(state.lines.at(-1)?.message).toBe(`${MAX_LINES - 1}`);
    expect(state.dropped).toBe(5 + 3);
  });
});

describe('foldConsoleAll', () => {
  it('leaves what folding the messages one by one leaves, a run restarting it included', () => {
    const started = (run: string): ServerMessage => ({
      type: 'run_started',
      run_id: run,
      workflow: 'w.json',
      mode: 'all',
      node: null,
      nodes: [],
      started: 1,
    });
    const messages: ServerMessage[] = [
      started('r'),
      ...Array.from({ length: MAX_LINES + 50 }, (_, i) => log('a', `${i}`, i % 100 === 0 ? 2 : 0)),
      {
        type: 'node_error',
        run_id: 'r',
        node_id: 'b',
        error: { type: 'KeyError', message: "'x'", traceback: '' },
        item: null,
      },
      { ...log('a', 'other run'), run_id: 'q' } as ServerMessage,
    ];
    const strip = (state: {
      run: string | null;
      lines: { node: string; level: string; message: unknown }[];
      dropped: number;
    }) => ({ run: state.run, dropped: state.dropped, lines: state.lines.map((l) => [l.node, l.level, l.message]) });
    const oneByOne = messages.reduce(foldConsole, empty);
    expect(strip(foldConsoleAll(empty, messages))).toEqual(strip(oneByOne));
    const split = foldConsoleAll(foldConsoleAll(empty, messages.slice(0, 700)), messages.slice(700));
    expect(strip(split)).toEqual(strip(oneByOne));
    const again = foldConsoleAll(
      split,
      [started('s'), log('a', 'new')].map((m) => ({ ...m, run_id: 's' }) as ServerMessage),
    );
    expect(strip(again)).toEqual({ run: 's', dropped: 0, lines: [['a', 'info', 'new']] });
  });
});
