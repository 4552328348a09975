// A run the page started shows as starting until its run process says it began.

import { describe, expect, it } from 'vitest';
import type { ServerMessage } from '../protocol';
import { type Starting, nextStarting, startingRun } from '../store/run';
import type { RunView } from '../store/runState';

const accepted: Starting = { run_id: 'r2', workflow: 'a.json' };
const started = (run_id: string): ServerMessage =>
  ({
    type: 'run_started',
    run_id,
    workflow: 'a.json',
    mode: 'all',
    node: null,
    titles: {},
    started: 1,
  }) as unknown as ServerMessage;
const finished = (run_id: string): ServerMessage =>
  ({ type: 'run_finished', run_id, status: 'failed', seconds: 0, counts: {}, errors: 0 }) as unknown as ServerMessage;

describe('starting', () => {
  it('is the accepted run while the page still shows the run before it', () => {
    const before = { run_id: 'r1', workflow: 'a.json', status: 'completed' } as RunView;
    expect(startingRun(before, accepted)).toBe(accepted);
    expect(startingRun(null, accepted)).toBe(accepted);
  });

  it('is nothing when the start came over the websocket before the HTTP reply', () => {
    const already = { run_id: 'r2', workflow: 'a.json', status: 'running' } as RunView;
    expect(startingRun(already, accepted)).toBeNull();
  });

  it('ends when a run starts, when it ends without starting, or with a new snapshot', () => {
    expect(nextStarting(accepted, started('r2'))).toBeNull();
    expect(nextStarting(accepted, finished('r2'))).toBeNull();
    expect(nextStarting(accepted, { type: 'snapshot' } as ServerMessage)).toBeNull();
  });

  it('goes on through other messages, the end of the run before it included', () => {
    expect(nextStarting(accepted, finished('r1'))).toBe(accepted);
    expect(nextStarting(accepted, { type: 'pong', ref: 'p' } as ServerMessage)).toBe(accepted);
    expect(nextStarting(null, started('r2'))).toBeNull();
  });
});
