// How the Queue tab words a job: the overrides it sets, its mode, unsaved edits.

import { describe, expect, it } from 'vitest';
import { howText, overridesText } from '../jobWords';
import type { Job, RunRequest } from '../protocol';

const request: RunRequest = {
  workflow: 'sort.json',
  mode: 'all',
  node: null,
  graph: null,
  continue_on_error: false,
  overrides: null,
  inputs: null,
  retry_interrupted: false,
  app: false,
};
const job = (fields: Partial<RunRequest>, inline = false): Job => ({
  id: 'j',
  state: 'queued',
  request: { ...request, ...fields },
  created: 0,
  position: 0,
  run_id: null,
  started: null,
  ended: null,
  error: null,
  counts: {},
  errors: 0,
  attempts: 0,
  inline,
});

describe('a job in words', () => {
  it('lists each override as node.param=value, values as JSON', () => {
    expect(overridesText(job({ overrides: { images: { limit: 10, folder: 'a b' }, sort: { overwrite: true } } }))).toBe(
      'images.limit=10 images.folder="a b" sort.overwrite=true',
    );
    expect(overridesText(job({}))).toBe('');
  });

  it('says how it runs only when it is not a plain run of the file', () => {
    expect(howText(job({}))).toBe('');
    expect(howText(job({ mode: 'until', node: 'sort' }, true))).toBe('until sort · unsaved edits');
  });
});
