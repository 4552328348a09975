// The live run store: the link to the server plus the run state folded from server messages.

import { create } from 'zustand';
import type { ConnectionState } from '../api/socket';
import type { ServerMessage } from '../protocol';
import { EMPTY_RUN_STATE, type RunState, type RunView, applyMessage } from './runState';

/** The websocket as the page sees it: up, or lost since `lostAt` (unix s) after `retries` attempts. */
export interface Link {
  connection: ConnectionState;
  lostAt: number | null;
  retries: number;
  /** Whether it was ever open: a page that never reached the server is connecting, not reconnecting. */
  opened: boolean;
}

export const FIRST_LINK: Link = { connection: 'connecting', lostAt: null, retries: 0, opened: false };

export function nextLink(link: Link, connection: ConnectionState, now: number): Link {
  if (connection === 'open') return { connection, lostAt: null, retries: 0, opened: true };
  if (connection === 'closed') return { ...link, connection, lostAt: link.lostAt ?? now };
  return { ...link, connection, retries: link.lostAt === null ? link.retries : link.retries + 1 };
}

/**
 * A run this page asked for that the server accepted (202) but whose run process has not yet
 * said it began: a moment, or seconds when the run process starts anew or joins Ray. Until then
 * the server's current run is the one before.
 */
export interface Starting {
  run_id: string;
  workflow: string;
}

/** Whether a run accepted as `run_id` is still starting, given the run the page now shows (its
 * start may have arrived on the websocket before the HTTP reply). */
export function startingRun(run: RunView | null, accepted: Starting): Starting | null {
  return run?.run_id === accepted.run_id ? null : accepted;
}

/** What is starting after `message`: nothing once a run starts (the server runs one at a time, so
 * the next start is the accepted run's, or its failure to start), or the page sees a new snapshot. */
export function nextStarting(starting: Starting | null, message: ServerMessage): Starting | null {
  if (!starting) return null;
  if (message.type === 'run_started' || message.type === 'snapshot') return null;
  if (message.type === 'run_finished' && message.run_id === starting.run_id) return null;
  return starting;
}

export interface LiveState extends RunState, Link {
  clientId: string;
  /** The run this page started that has not begun yet (shown as "starting…"). */
  starting: Starting | null;
  /** The server accepted a run this page asked for. */
  accepted(run: Starting): void;
  /** The last run of each workflow seen by this page, so a workflow opened again shows its results. */
  last: Record<string, RunView>;
  receive(message: ServerMessage): void;
  /** Messages folded in order, then shown at once: a stream of them costs one render, not one each. */
  receiveAll(messages: ServerMessage[]): void;
  setConnection(state: ConnectionState): void;
  /** A workflow's last run fetched from the server, kept unless the page has seen a later one. */
  keep(run: RunView): void;
}

export const useRun = create<LiveState>()((set, get) => ({
  ...EMPTY_RUN_STATE,
  ...FIRST_LINK,
  clientId: '',
  last: {},
  starting: null,
  accepted(run) {
    set({ starting: startingRun(get().run, run) });
  },
  receive(message) {
    get().receiveAll([message]);
  },
  receiveAll(messages) {
    const state = get();
    let next: RunState = { run: state.run, prompts: state.prompts, catalogVersion: state.catalogVersion };
    let { last, clientId, starting } = state;
    for (const message of messages) {
      if (message.type === 'hello') clientId = message.client_id;
      next = applyMessage(next, message);
      last = rememberRun(last, next.run, message);
      starting = nextStarting(starting, message);
    }
    const changed =
      next.run !== state.run || next.prompts !== state.prompts || next.catalogVersion !== state.catalogVersion;
    if (changed || last !== state.last || clientId !== state.clientId || starting !== state.starting)
      set({ ...next, last, clientId, starting });
  },
  setConnection(connection) {
    set(nextLink(get(), connection, Date.now() / 1000));
  },
  keep(run) {
    if (!runOf(get(), run.workflow)) set({ last: { ...get().last, [run.workflow]: run } });
  },
}));

/** While the websocket is down nothing the page shows of the run is live. */
export const isOffline = (state: Link): boolean => state.connection !== 'open';

/** `last` with the current run as its workflow's latest, and cleared caches cleared there too. */
function rememberRun(
  last: Record<string, RunView>,
  run: RunView | null,
  message: ServerMessage,
): Record<string, RunView> {
  let next = last;
  if (message.type === 'cache_cleared') {
    const kept = last[message.workflow];
    if (kept && kept !== run) {
      const cleared = applyMessage({ ...EMPTY_RUN_STATE, run: kept }, message).run;
      if (cleared) next = { ...next, [message.workflow]: cleared };
    }
  }
  if (run && next[run.workflow] !== run) next = { ...next, [run.workflow]: run };
  return next;
}

/** The run to show for workflow `path`: the current one if it is of that workflow, else its last. */
export function runOf(state: Pick<LiveState, 'run' | 'last'>, path: string | undefined): RunView | null {
  if (!path) return null;
  return state.run?.workflow === path ? state.run : (state.last[path] ?? null);
}
