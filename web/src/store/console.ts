// The console: every log line and error of the current run, in the order they came, for the
// panel under the canvas (filtered there by node and level). A snapshot (a reload, a reconnect)
// starts it again from what the server kept of each node.

import { create } from 'zustand';
import type { ServerMessage } from '../protocol';

export const MAX_LINES = 2000;

export interface ConsoleLine {
  seq: number;
  node: string;
  level: string;
  message: unknown;
}

export interface ConsoleState {
  run: string | null;
  lines: ConsoleLine[];
  /** Lines left out: over MAX_LINES, or by the server. */
  dropped: number;
  receive(message: ServerMessage): void;
  /** Messages folded in order, then shown at once. */
  receiveAll(messages: ServerMessage[]): void;
  /** Forget every line (another workflow opened): the next run's lines start it again. */
  clear(): void;
}

let seq = 0;
const line = (node: string, level: string, message: unknown): ConsoleLine => ({ seq: ++seq, node, level, message });

/** The console after one server message. */
export function foldConsole(
  state: Pick<ConsoleState, 'run' | 'lines' | 'dropped'>,
  message: ServerMessage,
): Pick<ConsoleState, 'run' | 'lines' | 'dropped'> {
  switch (message.type) {
    case 'snapshot': {
      const nodes = message.run?.nodes ?? [];
      const lines = nodes.flatMap((n) => [
        ...n.logs.map((l) => line(n.node_id, l.level, l.message)),
        ...n.errors.map((e) => line(n.node_id, 'error', `${e.error.type}: ${e.error.message}`)),
      ]);
      return {
        run: message.run?.run_id ?? null,
        lines: lines.slice(-MAX_LINES),
        dropped: nodes.reduce((sum, n) => sum + n.logs_dropped, 0),
      };
    }
    case 'run_started':
      return { run: message.run_id, lines: [], dropped: 0 };
    case 'node_log':
    case 'node_error': {
      if (message.run_id !== state.run) return state;
      const added =
        message.type === 'node_log'
          ? line(message.node_id, message.level, message.message)
          : line(message.node_id, 'error', `${message.error.type}: ${message.error.message}`);
      const skipped = message.type === 'node_log' ? message.skipped : 0;
      const over = state.lines.length >= MAX_LINES ? 1 : 0;
      return { ...state, lines: [...state.lines.slice(over), added], dropped: state.dropped + over + skipped };
    }
    default:
      return state;
  }
}

type Folded = Pick<ConsoleState, 'run' | 'lines' | 'dropped'>;

/**
 * The console after `messages`, as folding them one by one would leave it, but with the lines
 * copied once: a second's 200 log lines of a node arrive together, and copying 2,000 lines for
 * each of them made the page stall (bench/frames.py).
 */
export function foldConsoleAll(state: Folded, messages: ServerMessage[]): Folded {
  let { run, dropped } = state;
  let lines: ConsoleLine[] | null = null;
  let changed = false;
  for (const message of messages) {
    if (message.type !== 'node_log' && message.type !== 'node_error') {
      const next = foldConsole({ run, lines: lines ?? state.lines, dropped }, message);
      if (next.run !== run || next.lines !== (lines ?? state.lines)) {
        ({ run, dropped } = next);
        lines = next.lines.slice();
        changed = true;
      }
      continue;
    }
    if (message.run_id !== run) continue;
    lines ??= state.lines.slice();
    lines.push(
      message.type === 'node_log'
        ? line(message.node_id, message.level, message.message)
        : line(message.node_id, 'error', `${message.error.type}: ${message.error.message}`),
    );
    dropped += message.type === 'node_log' ? message.skipped : 0;
    changed = true;
  }
  if (!changed || !lines) return state;
  const over = Math.max(0, lines.length - MAX_LINES);
  return { run, lines: over ? lines.slice(over) : lines, dropped: dropped + over };
}

export const useConsole = create<ConsoleState>()((set, get) => ({
  run: null,
  lines: [],
  dropped: 0,
  receive(message) {
    get().receiveAll([message]);
  },
  receiveAll(messages) {
    const state = get();
    const next = foldConsoleAll(state, messages);
    if (next !== state && (next.lines !== state.lines || next.run !== state.run)) set(next);
  },
  clear() {
    set({ run: null, lines: [], dropped: 0 });
  },
}));
