// Protocol decoding and folding the run's events into the live view.

import { describe, expect, it } from 'vitest';
import { ProtocolError, type ServerMessage, decodeServer } from '../protocol';
import { EMPTY_RUN_STATE, type RunState, applyMessage, runClock } from '../store/runState';

const fold = (messages: ServerMessage[], state: RunState = EMPTY_RUN_STATE): RunState =>
  messages.reduce(applyMessage, state);
const run = 'r1';

describe('decodeServer', () => {
  it('reads a known message', () => {
    const message = decodeServer('{"type": "node_started", "run_id": "r1", "node_id": "a"}');
    expect(message.type).toBe('node_started');
  });

  it('refuses bad JSON and unknown types', () => {
    expect(() => decodeServer('{')).toThrow(ProtocolError);
    expect(() => decodeServer('[]')).toThrow(/JSON object/);
    expect(() => decodeServer('{"type": "jump"}')).toThrow(/unknown message type "jump"/);
  });
});

describe('applyMessage', () => {
  const started: ServerMessage = {
    type: 'run_started',
    run_id: run,
    workflow: 'hello.json',
    mode: 'all',
    node: null,
    started: 100,
    nodes: [
      { node_id: 'g', title: 'Greetings' },
      { node_id: 's', title: 'Split' },
    ],
  };

  it('follows a run from start to finish', () => {
    const state = fold([
      started,
      { type: 'node_plan', run_id: run, node_id: 'g', action: 'reuse', cause: 'unchanged', reason: 'unchanged' },
      {
        type: 'node_finished',
        run_id: run,
        node_id: 'g',
        status: 'cached',
        counts: { out: 10 },
        errors: 0,
        seconds: 0,
        timing: null,
      },
      { type: 'node_started', run_id: run, node_id: 's' },
      {
        type: 'node_progress',
        run_id: run,
        node_id: 's',
        received: 4,
        counts: { A: 2, B: 2 },
        rate: 8,
        timing: { batches: 2, compute: 3, waited: 1, device: '', device_busy: null },
      },
      { type: 'node_log', run_id: run, node_id: 's', level: 'info', message: 'hi', skipped: 0 },
      { type: 'node_output', run_id: run, node_id: 's', output: 'A', index: 1, preview: { n: 2 } },
      {
        type: 'node_error',
        run_id: run,
        node_id: 's',
        error: { type: 'ValueError', message: 'bad', traceback: 'Traceback…' },
        item: { n: 3 },
      },
    ]);
    const s = state.run?.nodes.s;
    expect(state.run?.nodes.g?.state).toBe('cached');
    expect(state.run?.nodes.g?.cause).toBe('unchanged');
    expect(s?.state).toBe('running');
    expect(s?.counts).toEqual({ A: 2, B: 2 });
    expect(s?.timing?.waited).toBe(1);
    expect(s?.logs).toEqual([{ level: 'info', message: 'hi' }]);
    expect(s?.outputs.A).toEqual({ index: 1, preview: { n: 2 } });
    expect(s?.errors[0]?.error.type).toBe('ValueError');
    expect(state.run?.errors).toBe(1);
    const done = fold(
      [{ type: 'run_finished', run_id: run, status: 'failed', seconds: 2, counts: {}, errors: 1, paused: 0 }],
      state,
    );
    expect(done.run?.status).toBe('failed');
    expect(done.run?.nodes.s?.state).toBe('stopped');
  });

  it('pauses, steps and resumes', () => {
    let state = fold([started, { type: 'run_paused', run_id: run, reason: 'step', node_id: 's', at: 110, paused: 0 }]);
    expect(state.run?.status).toBe('paused');
    expect(state.run?.paused_node).toBe('s');
    state = applyMessage(state, { type: 'run_resumed', run_id: run, paused: 30 });
    expect(state.run?.status).toBe('running');
  });

  it('stops the clock while paused and leaves the pauses out after', () => {
    const clockAt = (state: RunState, now: number): number => (state.run ? runClock(state.run, now) : -1);
    let state = fold([started]);
    expect(clockAt(state, 110)).toBe(10);
    state = applyMessage(state, {
      type: 'run_paused',
      run_id: run,
      reason: 'pause',
      node_id: null,
      at: 110,
      paused: 0,
    });
    expect(clockAt(state, 500)).toBe(10);
    state = applyMessage(state, { type: 'run_resumed', run_id: run, paused: 30 });
    expect(clockAt(state, 145)).toBe(15);
    state = applyMessage(state, {
      type: 'run_finished',
      run_id: run,
      status: 'completed',
      seconds: 20,
      counts: {},
      errors: 0,
      paused: 30,
    });
    expect(clockAt(state, 9999)).toBe(20);
    expect(state.run?.paused).toBe(30);
  });

  it('replaces everything with a snapshot on reconnect', () => {
    const before = fold([started]);
    const after = applyMessage(before, {
      type: 'snapshot',
      catalog_version: 4,
      prompts: [
        {
          type: 'prompt',
          run_id: 'r2',
          prompt_id: 'p',
          node_id: 'ask',
          prompt: { type: 'bool', msg: 'ok?' },
          data: {},
        },
      ],
      run: {
        run_id: 'r2',
        workflow: 'x.json',
        mode: 'all',
        node: null,
        status: 'running',
        started: 1,
        seconds: 3,
        pause_reason: null,
        paused_node: null,
        paused: 0,
        paused_at: null,
        errors: 0,
        nodes: [
          {
            node_id: 'ask',
            title: 'Ask',
            state: 'running',
            action: 'run',
            cause: 'new',
            reason: '',
            received: 1,
            counts: { out: 1 },
            rate: 1,
            seconds: 1,
            errors: [],
            logs: [],
            outputs: {},
            logs_dropped: 7,
            timing: null,
          },
        ],
      },
    });
    expect(after.run?.run_id).toBe('r2');
    expect(after.run?.nodes.ask?.counts).toEqual({ out: 1 });
    expect(after.run?.nodes.ask?.action).toBe('run');
    expect(after.run?.nodes.ask?.logs_dropped).toBe(7);
    expect(after.prompts.p?.node_id).toBe('ask');
    expect(after.catalogVersion).toBe(4);
  });

  it('ignores events of another run, keeps the last logs and counts those not shown', () => {
    const state = fold([started, { type: 'node_started', run_id: 'other', node_id: 'g' }]);
    expect(state.run?.nodes.g?.state).toBe('waiting');
    const logs = Array.from({ length: 250 }, (_, i): ServerMessage => ({
      type: 'node_log',
      run_id: run,
      node_id: 'g',
      level: 'info',
      message: i,
      skipped: i === 249 ? 30 : 0,
    }));
    const g = fold(logs, state).run?.nodes.g;
    expect(g?.logs).toHaveLength(200);
    expect(g?.logs.map((l) => l.message).slice(-2)).toEqual([248, 249]);
    expect(g?.logs_dropped, '50 older than the last 200, and 30 the server left out').toBe(80);
  });

  it('adds and removes prompts', () => {
    const asked = fold([
      started,
      { type: 'prompt', run_id: run, prompt_id: 'p1', node_id: 's', prompt: { type: 'bool' }, data: null },
    ]);
    expect(Object.keys(asked.prompts)).toEqual(['p1']);
    const answered = applyMessage(asked, {
      type: 'prompt_answered',
      run_id: run,
      prompt_id: 'p1',
      node_id: 's',
      answer: true,
    });
    expect(answered.prompts).toEqual({});
  });
});
