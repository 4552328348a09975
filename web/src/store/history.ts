// Undo history as data: a present snapshot between two stacks, with a bounded past.

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
}

export const HISTORY_LIMIT = 100;

export function startHistory<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

/** Records `next` as the present unless it equals it; a new edit clears what could be redone. */
export function record<T>(
  history: History<T>,
  next: T,
  equal: (a: T, b: T) => boolean,
  limit = HISTORY_LIMIT,
): History<T> {
  if (equal(history.present, next)) return history;
  const past = [...history.past, history.present].slice(-limit);
  return { past, present: next, future: [] };
}

export function undo<T>(history: History<T>): History<T> {
  const previous = history.past[history.past.length - 1];
  if (previous === undefined) return history;
  return { past: history.past.slice(0, -1), present: previous, future: [history.present, ...history.future] };
}

export function redo<T>(history: History<T>): History<T> {
  const next = history.future[0];
  if (next === undefined) return history;
  return { past: [...history.past, history.present], present: next, future: history.future.slice(1) };
}

export const canUndo = <T>(history: History<T>): boolean => history.past.length > 0;
export const canRedo = <T>(history: History<T>): boolean => history.future.length > 0;
