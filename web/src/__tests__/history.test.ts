// Undo history as data.

import { describe, expect, it } from 'vitest';
import { canRedo, canUndo, record, redo, startHistory, undo } from '../store/history';

const same = (a: number, b: number): boolean => a === b;

describe('history', () => {
  it('undoes and redoes in order', () => {
    let h = startHistory(0);
    h = record(h, 1, same);
    h = record(h, 2, same);
    h = undo(h);
    expect(h.present).toBe(1);
    h = undo(h);
    expect(h.present).toBe(0);
    expect(canUndo(h)).toBe(false);
    h = redo(h);
    expect(h.present).toBe(1);
    expect(canRedo(h)).toBe(true);
  });

  it('ignores a snapshot equal to the present, and a new edit drops the redo stack', () => {
    let h = record(startHistory(0), 0, same);
    expect(h.past).toEqual([]);
    h = undo(record(record(h, 1, same), 2, same));
    h = record(h, 5, same);
    expect(h.present).toBe(5);
    expect(canRedo(h)).toBe(false);
    expect(undo(h).present).toBe(1);
  });

  it('keeps a bounded past', () => {
    let h = startHistory(0);
    for (let i = 1; i <= 10; i++) h = record(h, i, same, 3);
    expect(h.past).toEqual([7, 8, 9]);
  });

  it('does nothing with nothing to undo or redo', () => {
    const h = startHistory(0);
    expect(undo(h)).toBe(h);
    expect(redo(h)).toBe(h);
  });
});
