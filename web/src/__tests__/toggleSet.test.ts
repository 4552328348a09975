// A click adds a key that was not there and takes away one that was.

import { describe, expect, it } from 'vitest';
import { toggled } from '../hooks/useToggleSet';

describe('toggled', () => {
  it('adds a missing key and takes away a present one, leaving the old set as it was', () => {
    const start = new Set(['a']);
    const added = toggled(start, 'b');
    expect([...added]).toEqual(['a', 'b']);
    expect([...toggled(added, 'a')]).toEqual(['b']);
    expect([...start]).toEqual(['a']);
  });
});
