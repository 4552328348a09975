// What a node's footer says, from its run state: a state (for the colour), a word and figures.
// A step counts what went in and out; a resource is only built, so it says how long that took.

import { formatRate, formatSeconds } from '../preview';
import { MAX_ERRORS, type NodeRun } from '../store/runState';
import { waitFigure } from '../timing';

export interface StatusLine {
  state: string;
  word: string;
  figures: string;
}

export interface StatusContext {
  resource: boolean;
  /** A run of this workflow is running or paused. */
  active: boolean;
  paused: boolean;
  /** The run is paused after a step of this node. */
  stepped: boolean;
  /** The run ended completed: a node of it with errors let them through (continue on error). */
  completed?: boolean;
}

const STEP_WORDS: Record<string, string> = { cached: 'cached', done: 'done', failed: 'failed', stopped: 'stopped' };
const RESOURCE_WORDS: Record<string, string> = {
  running: 'building',
  done: 'ready',
  cached: 'not needed',
  failed: 'failed',
  stopped: 'stopped',
};

function quiet(context: StatusContext): StatusLine {
  const word = context.active ? 'waiting' : context.resource ? 'idle' : 'not run';
  return { state: 'waiting', word, figures: '' };
}

function stepFigures(run: NodeRun, state: string): string {
  const out = Object.values(run.counts).reduce((a, b) => a + b, 0);
  return [
    run.received ? `${run.received} in` : '',
    out || run.state !== 'waiting' ? `${out} out` : '',
    state === 'running' ? formatRate(run.rate) : '',
    run.seconds && run.state !== 'running' ? formatSeconds(run.seconds) : '',
    run.timing ? waitFigure(run.timing) : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

export function statusLine(run: NodeRun | undefined, context: StatusContext): StatusLine {
  if (!run) return { state: 'idle', word: 'idle', figures: '' };
  if (run.state === 'waiting' && !run.errors.length && !run.received) return quiet(context);
  const state = context.paused && run.state === 'running' ? 'paused' : run.state;
  if (context.resource) {
    const took = run.seconds && run.state !== 'running' && run.state !== 'cached' ? formatSeconds(run.seconds) : '';
    return { state, word: RESOURCE_WORDS[state] ?? state, figures: took };
  }
  if (state === 'failed' && context.completed) {
    const errors = run.errors.length; // the last MAX_ERRORS are kept
    const count = errors >= MAX_ERRORS ? `${MAX_ERRORS}+` : String(errors);
    const word = `completed with ${count} error${errors === 1 ? '' : 's'}`;
    return { state: 'partial', word, figures: stepFigures(run, state) };
  }
  const word = context.stepped && state === 'paused' ? 'stepped' : (STEP_WORDS[state] ?? state);
  return { state, word, figures: stepFigures(run, state) };
}
