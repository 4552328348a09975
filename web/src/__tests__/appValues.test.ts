// An app's form as data: the field each input's JSON Schema asks for, the values it starts
// with (a run reopened: its inputs), and the values a run is asked with.

import { describe, expect, it } from 'vitest';
import { pageOf, appPath } from '../apps/route';
import { type Schema, fieldKind, initialValues, inputValues, labelOf, valuesOf } from '../apps/values';

const schema: Schema = {
  properties: {
    folder: { type: 'string', format: 'folder', default: 'data/shapes' },
    threshold: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
    top_k: { type: 'integer', default: 1 },
    preset: { type: 'string', enum: ['none', 'imagenet'], default: 'none' },
    fast: { type: 'boolean', default: false },
    labels: { type: 'array', items: { type: 'string' }, default: ['cat', 'dog'] },
    sizes: { type: 'array', items: { type: 'integer' } },
    extra: { type: 'object', default: { a: 1 } },
    rule: { type: 'string', contentMediaType: 'text/x-python' },
  },
};

describe('an app form', () => {
  it('asks for each input the way its schema says', () => {
    const kinds = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, p]) => [k, fieldKind(p)]));
    expect(kinds).toEqual({
      folder: 'path',
      threshold: 'number',
      top_k: 'integer',
      preset: 'choice',
      fast: 'boolean',
      labels: 'list',
      sizes: 'list',
      extra: 'json',
      rule: 'code',
    });
  });

  it('starts from the defaults and asks a run with typed values', () => {
    const values = initialValues(schema);
    expect(values).toMatchObject({
      folder: 'data/shapes',
      threshold: '0.5',
      preset: 'none',
      fast: false,
      labels: ['cat', 'dog'],
    });
    values.threshold = '0.75';
    values.top_k = '3';
    values.sizes = ['64', '128'];
    expect(inputValues(schema, values)).toMatchObject({
      threshold: 0.75,
      top_k: 3,
      sizes: [64, 128],
      extra: { a: 1 },
      labels: ['cat', 'dog'],
    });
  });

  it('sends what is not a number as it was typed, for the server to refuse beside the field', () => {
    expect(inputValues(schema, { ...initialValues(schema), threshold: 'lots' }).threshold).toBe('lots');
  });

  it('reopens a run with the inputs it was given', () => {
    const values = valuesOf(schema, { threshold: 0.9, labels: ['x'] });
    expect(values.threshold).toBe('0.9');
    expect(values.labels).toEqual(['x']);
    expect(values.folder).toBe('data/shapes');
  });

  it('labels inputs by their names', () => {
    expect(labelOf('max_distance')).toBe('Max distance');
  });
});

describe('the pages', () => {
  it('are found from the address, a run by ?job=', () => {
    expect(pageOf({ pathname: '/', search: '' })).toEqual({ kind: 'editor' });
    expect(pageOf({ pathname: '/apps', search: '' })).toEqual({ kind: 'apps' });
    expect(pageOf({ pathname: '/app/sub/my%20flow.json', search: '?job=abc' })).toEqual({
      kind: 'app',
      workflow: 'sub/my flow.json',
      job: 'abc',
    });
    expect(appPath('sub/my flow.json', 'abc')).toBe('/app/sub/my%20flow.json?job=abc');
  });
});
