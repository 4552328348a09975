// Small pure helpers: ids, search, previews, clipboard text.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { imagesIn, tensorText } from '../preview';
import { byCategory, searchNodes } from '../search';
import { freshId, snakeCase } from '../store/ids';
import { catalog } from './fixtures';

describe('ids', () => {
  it('are readable and unique', () => {
    expect(snakeCase('DumpJSONL')).toBe('dump_jsonl');
    expect(snakeCase('ShapeImages')).toBe('shape_images');
    expect(freshId('Split', new Set(['split', 'split_2']))).toBe('split_3');
  });
});

describe('search', () => {
  const specs = Object.values(catalog.nodes);
  it('puts names that start with the query first', () => {
    expect(searchNodes(specs, 'sh').map((s) => s.name)[0]).toBe('Shout');
    expect(searchNodes(specs, 'hello').map((s) => s.name)).toEqual(['Greetings', 'Shout']);
    expect(searchNodes(specs, 'zzz')).toEqual([]);
  });
  it('lists the nodes of the category a wire comes from first, then the rest by name', () => {
    const greetings = catalog.nodes['Greetings'];
    const names = searchNodes(specs, '', greetings).map((s) => s.name);
    expect(names.slice(0, 2)).toEqual(['Greetings', 'Shout']);
    expect(names.slice(2)).toEqual([...names.slice(2)].sort((a, b) => a.localeCompare(b)));
    expect(searchNodes(specs, '').map((s) => s.name)[0]).not.toBe('Greetings');
  });
  it('groups by category', () => {
    expect(byCategory(specs).map(([c]) => c)).toEqual(['Filtering', 'Hello', 'Util']);
  });
});

describe('previews', () => {
  it('finds images and summarises tensors', () => {
    const preview = {
      image_paths: [
        { type: 'image', value: 'a.jpg', url: '/api/media/file/data/a.jpg' },
        { type: 'image', value: 'b.jpg', url: null },
      ],
    };
    expect(imagesIn(preview).map((i) => i.url)).toEqual(['/api/media/file/data/a.jpg']);
    expect(
      tensorText({ type: 'tensor', shape: [3, 32, 32], dtype: 'float32', device: 'cpu', min: 0, max: 1, mean: 0.4123 }),
    ).toBe('tensor float32[3×32×32] · cpu · min 0 · max 1 · mean 0.412');
  });
});

describe('clipFromText', () => {
  it('takes a copied selection or a workflow file, and nothing else', async () => {
    const { clipFromText } = await import('../store/clipboard');
    const clip = {
      kind: 'graphbook.clip',
      nodes: [{ id: 'a', type: 'Shout', label: '', params: {}, position: { x: 0, y: 0 } }],
      edges: [],
    };
    expect(clipFromText(JSON.stringify(clip))).toEqual(clip);
    const file = {
      format: 'graphbook.workflow',
      version: 1,
      nodes: [{ id: 'g', type: 'Greetings', params: { count: 2 }, position: { x: 5, y: 6 } }],
      edges: [],
    };
    expect(clipFromText(JSON.stringify(file))?.nodes.map((n) => [n.id, n.params])).toEqual([['g', { count: 2 }]]);
    expect(clipFromText('hello')).toBeNull();
    expect(clipFromText('{"nodes": 3}')).toBeNull();
  });
  it('reads a Graphbook 0.13 file pasted on the canvas, with no server in between', async () => {
    // The reason web/src/workflow/graphbook013.ts exists: files the server opens reach the
    // browser converted, but a paste is read here, at once.
    const { clipFromText } = await import('../store/clipboard');
    const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
    const old = readFileSync(join(root, 'tests/fixtures/graphbook013_simple_workflow.json'), 'utf8');
    const clip = clipFromText(old);
    expect(clip?.nodes.map((n) => n.type)).toEqual([
      'MyFirstStep',
      'Number',
      'MyFirstSource',
      'AddLabel',
      'AddLabel',
      'DumpJSONL',
    ]);
    expect(clip?.edges.length).toBeGreaterThan(0);
  });
});
