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

export interface LiveState extends RunState, Link {
  clientId: string;
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
  receive(message) {
    get().receiveAll([message]);
  },
  receiveAll(messages) {
    const state = get();
    let next: RunState = { run: state.run, prompts: state.prompts, catalogVersion: state.catalogVersion };
    let { last, clientId } = state;
    for (const message of messages) {
      if (message.type === 'hello') clientId = message.client_id;
      next = applyMessage(next, message);
      last = rememberRun(last, next.run, message);
    }
    const changed =
      next.run !== state.run || next.prompts !== state.prompts || next.catalogVersion !== state.catalogVersion;
    if (changed || last !== state.last || clientId !== state.clientId) set({ ...next, last, clientId });
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
