// The live run store: connection state plus the run state folded from server messages.

import { create } from 'zustand';
import type { ConnectionState } from '../api/socket';
import type { ServerMessage } from '../protocol';
import { EMPTY_RUN_STATE, type RunState, applyMessage } from './runState';

export interface LiveState extends RunState {
  connection: ConnectionState;
  clientId: string;
  receive(message: ServerMessage): void;
  setConnection(state: ConnectionState): void;
}

export const useRun = create<LiveState>()((set, get) => ({
  ...EMPTY_RUN_STATE,
  connection: 'connecting',
  clientId: '',
  receive(message) {
    if (message.type === 'hello') set({ clientId: message.client_id });
    const state = get();
    const next = applyMessage({ run: state.run, prompts: state.prompts, catalogVersion: state.catalogVersion }, message);
    if (next.run !== state.run || next.prompts !== state.prompts || next.catalogVersion !== state.catalogVersion) set(next);
  },
  setConnection(connection) {
    set({ connection });
  },
}));
