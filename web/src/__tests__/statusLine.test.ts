// What a node's footer says: steps count items, resources say they are ready and how long that took.

import { describe, expect, it } from 'vitest';
import { statusLine } from '../canvas/statusLine';
import { timingText } from '../timing';
import { type NodeRun, emptyNode } from '../store/runState';

const node = (fields: Partial<NodeRun>): NodeRun => ({ ...emptyNode('n'), ...fields });
const step = { resource: false, active: false, paused: false, stepped: false };
const resource = { resource: true, active: false, paused: false, stepped: false };
const error = { error: { type: 'OSError', message: 'no weights', traceback: 'Traceback…' }, item: null };

describe('statusLine of a step', () => {
  it('counts what went in and out, with the speed while it runs', () => {
    expect(
      statusLine(node({ state: 'running', received: 4, counts: { A: 2, B: 1 }, rate: 8 }), { ...step, active: true }),
    ).toEqual({
      state: 'running',
      word: 'running',
      figures: '4 in · 3 out · 8.0/s',
    });
    expect(statusLine(node({ state: 'done', received: 60, counts: { out: 60 }, seconds: 2.9 }), step).figures).toBe(
      '60 in · 60 out · 2.9 s',
    );
    expect(statusLine(node({ state: 'failed', received: 1, seconds: 0.005, errors: [error] }), step)).toEqual({
      state: 'failed',
      word: 'failed',
      figures: '1 in · 0 out · 5 ms',
    });
  });

  it('says how much of its time a batch step waited for input, or its GPU sat idle', () => {
    const timing = { batches: 6, compute: 3, waited: 1, device: '', device_busy: null };
    const done = node({ state: 'done', received: 60, counts: { out: 60 }, seconds: 4, timing });
    expect(statusLine(done, step).figures).toBe('60 in · 60 out · 4.0 s · waited 25%');
    expect(timingText(timing)).toBe('6 batches: 3.0 s running them, 1.0 s waiting for input (25% of its time)');
    const gpu = { ...timing, device: 'cuda:0', device_busy: 2.4 };
    expect(statusLine(node({ ...done, timing: gpu }), step).figures).toBe('60 in · 60 out · 4.0 s · GPU idle 40%');
    expect(timingText(gpu)).toContain('; cuda:0 idle 40%');
  });

  it('says a node whose errors the run let through completed with errors, and how many', () => {
    const partial = node({ state: 'failed', received: 11, counts: { out: 10 }, seconds: 0.2, errors: [error] });
    expect(statusLine(partial, { ...step, completed: true })).toEqual({
      state: 'partial',
      word: 'completed with 1 error',
      figures: '11 in · 10 out · 200 ms',
    });
    const many = node({ state: 'failed', errors: Array.from({ length: 20 }, () => error) });
    expect(statusLine(many, { ...step, completed: true }).word).toBe('completed with 20+ errors');
  });

  it('shortens a speed that runs to thousands', () => {
    expect(
      statusLine(node({ state: 'running', counts: { out: 40 }, rate: 47427 }), { ...step, active: true }).figures,
    ).toBe('40 out · 47k/s');
  });

  it('shows no speed while the run is paused', () => {
    expect(
      statusLine(node({ state: 'running', counts: { out: 40 }, rate: 48.7 }), { ...step, active: true, paused: true }),
    ).toEqual({
      state: 'paused',
      word: 'paused',
      figures: '40 out',
    });
  });

  it('says which node the last step ran', () => {
    expect(
      statusLine(node({ state: 'running', received: 4, counts: { out: 4 } }), {
        ...step,
        active: true,
        paused: true,
        stepped: true,
      }),
    ).toEqual({
      state: 'paused',
      word: 'stepped',
      figures: '4 in · 4 out',
    });
  });

  it('says whether it is waiting for its turn or has not run', () => {
    expect(statusLine(node({}), { ...step, active: true }).word).toBe('waiting');
    expect(statusLine(node({}), step).word).toBe('not run');
    expect(statusLine(undefined, step)).toEqual({ state: 'idle', word: 'idle', figures: '' });
  });
});

describe('statusLine of a resource', () => {
  it('is ready once built, with how long building took, and counts nothing', () => {
    expect(statusLine(node({ state: 'done', seconds: 0.087 }), resource)).toEqual({
      state: 'done',
      word: 'ready',
      figures: '87 ms',
    });
    expect(statusLine(node({ state: 'done' }), resource).figures).toBe('');
  });

  it('is building while it runs, waiting before, and not needed when no node that runs needs it', () => {
    expect(statusLine(node({ state: 'running' }), { ...resource, active: true })).toEqual({
      state: 'running',
      word: 'building',
      figures: '',
    });
    expect(statusLine(node({}), { ...resource, active: true }).word).toBe('waiting');
    expect(statusLine(node({}), resource).word).toBe('idle');
    expect(statusLine(node({ state: 'cached' }), resource)).toEqual({
      state: 'cached',
      word: 'not needed',
      figures: '',
    });
  });

  it('fails as a step does, with how long it tried', () => {
    expect(statusLine(node({ state: 'failed', seconds: 1.5, errors: [error] }), resource)).toEqual({
      state: 'failed',
      word: 'failed',
      figures: '1.5 s',
    });
  });
});
