// What a past run was given (its record's inputs and overrides), read back to show it and to
// send it again with Run again.

import { describe, expect, it } from 'vitest';
import { runSettings } from '../actions/pastRuns';

describe('runSettings', () => {
  it('reads the inputs and overrides a run record kept', () => {
    const config = { mode: 'all', inputs: { count: 2 }, overrides: { greetings: { message: 'Hi' } } };
    expect(runSettings(config)).toEqual({ inputs: { count: 2 }, overrides: { greetings: { message: 'Hi' } } });
  });

  it('gives null for a run given neither, and leaves out what is not an object', () => {
    expect(runSettings({ mode: 'all' })).toEqual({ inputs: null, overrides: null });
    expect(runSettings({ inputs: [1], overrides: { a: 3, b: { x: 1 } } })).toEqual({
      inputs: null,
      overrides: { b: { x: 1 } },
    });
  });
});
