// The live run store: the link to the server plus the run state folded from server messages.

import { create } from 'zustand';
import type { ConnectionState } from '../api/socket';
import type { ServerMessage } from '../protocol';
import { EMPTY_RUN_STATE, type RunState, applyMessage } from './runState';

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
  receive(message: ServerMessage): void;
  setConnection(state: ConnectionState): void;
}

export const useRun = create<LiveState>()((set, get) => ({
  ...EMPTY_RUN_STATE,
  ...FIRST_LINK,
  clientId: '',
  receive(message) {
    if (message.type === 'hello') set({ clientId: message.client_id });
    const state = get();
    const next = applyMessage({ run: state.run, prompts: state.prompts, catalogVersion: state.catalogVersion }, message);
    if (next.run !== state.run || next.prompts !== state.prompts || next.catalogVersion !== state.catalogVersion) set(next);
  },
  setConnection(connection) {
    set(nextLink(get(), connection, Date.now() / 1000));
  },
}));

/** While the websocket is down nothing the page shows of the run is live. */
export const isOffline = (state: Link): boolean => state.connection !== 'open';
