// The palette's origins: badges, the filter by origin, search across packs, category order.

import { describe, expect, it } from 'vitest';
import { decodeCatalog } from '../catalog';
import type { NodeInfo } from '../protocol';
import { ofOrigin, originBadge, originChoices, originCounts, originText } from '../origins';
import { byCategory, paletteGroups, searchNodes } from '../search';

const info = (name: string, category: string, pack: string, pack_kind: NodeInfo['pack_kind']): NodeInfo => ({
  name,
  kind: 'step',
  category,
  inputs: ['in'],
  outputs: ['out'],
  params: [],
  doc: `${name} does things.`,
  code_hash: name,
  gives: 'any',
  pack,
  pack_kind,
  component: '',
});

const specs = Object.values(
  decodeCatalog({
    version: 1,
    failures: [],
    fits: {},
    nodes: [
      info('ImageFolder', 'Sources', 'files', 'builtin'),
      info('Thumbnails', 'Images', 'images', 'builtin'),
      info('WriteCSV', 'Sinks', 'tables', 'builtin'),
      info('Split', 'Filtering', 'core', 'builtin'),
      info('BlurScore', 'Images', 'acme-vision', 'pack'),
      info('Shout', 'Hello', '', 'custom'),
      info('ShapeImages', 'Shapes', 'examples', 'example'),
      info('Mystery', '', '', 'custom'),
    ],
  }).nodes,
);
const names = (list: { name: string }[]): string[] => list.map((s) => s.name);
const byName = (name: string) => specs.find((s) => s.name === name) ?? specs[0]!;

describe('node origins', () => {
  it('keeps the pack and its kind as the server sends them', () => {
    expect(byName('BlurScore')).toMatchObject({ pack: 'acme-vision', pack_kind: 'pack' });
  });

  it('badges packs by name, custom and examples, and leaves the library plain', () => {
    expect(originBadge(byName('ImageFolder'))).toBe('');
    expect(originBadge(byName('BlurScore'))).toBe('acme-vision');
    expect(originBadge(byName('Shout'))).toBe('custom');
    expect(originBadge(byName('ShapeImages'))).toBe('example');
    expect(originText(byName('Thumbnails'))).toBe('built-in (images)');
    expect(originText(byName('BlurScore'))).toBe('node pack acme-vision');
    expect(originText(byName('Shout'))).toBe('custom (custom_nodes/)');
  });

  it('filters by origin and offers only the origins there are', () => {
    expect(names(ofOrigin(specs, 'pack'))).toEqual(['BlurScore']);
    expect(names(ofOrigin(specs, 'custom'))).toEqual(['Shout', 'Mystery']);
    expect(ofOrigin(specs, 'all')).toHaveLength(specs.length);
    expect(originCounts(specs)).toEqual({ all: 8, builtin: 4, pack: 1, custom: 2, example: 1 });
    expect(originChoices(specs).map((c) => `${c.label} ${c.count}`)).toEqual([
      'All 8',
      'Built-in 4',
      'Packs 1',
      'Custom 2',
      'Examples 1',
    ]);
    const libraryOnly = ofOrigin(specs, 'builtin');
    expect(originChoices(libraryOnly)).toEqual([]);
    expect(originChoices([...libraryOnly, byName('Shout')]).map((c) => c.value)).toEqual(['all', 'builtin', 'custom']);
  });

  it('keeps categories as the grouping, in pipeline order, within an origin', () => {
    expect(byCategory(specs).map(([c]) => c)).toEqual([
      'Sources',
      'Images',
      'Sinks',
      'Filtering',
      'Hello',
      'Shapes',
      'Other',
    ]);
    const images = byCategory(specs).find(([c]) => c === 'Images')?.[1];
    expect(names(images ?? [])).toEqual(['BlurScore', 'Thumbnails']);
    expect(paletteGroups(specs, '', 'builtin').map(([c, list]) => [c, names(list)])).toEqual([
      ['Sources', ['ImageFolder']],
      ['Images', ['Thumbnails']],
      ['Sinks', ['WriteCSV']],
      ['Filtering', ['Split']],
    ]);
  });

  it('searches names, categories and pack names, within the origin chosen', () => {
    expect(names(searchNodes(specs, 'acme'))).toEqual(['BlurScore']);
    expect(names(searchNodes(specs, 'tables'))).toEqual(['WriteCSV']);
    expect(names(searchNodes(specs, 'custom'))).toEqual(['Mystery', 'Shout']);
    expect(paletteGroups(specs, 'images', 'all')[0]?.[1].map((s) => s.name)).toEqual([
      'ShapeImages',
      'BlurScore',
      'Thumbnails',
    ]);
    expect(paletteGroups(specs, 'images', 'builtin')).toEqual([['Results', [byName('Thumbnails')]]]);
    expect(paletteGroups(specs, 'thumb', 'pack')).toEqual([['Results', []]]);
  });
});
