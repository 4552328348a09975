// A small catalog shaped like the server's, for the unit tests, with the server's type-fit table
// (tests/fixtures/rules/catalog.json, held to graphbook/params.py by tests/unit/test_shared_rules.py).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Catalog, decodeCatalog } from '../catalog';
import type { Catalog as CatalogReply } from '../protocol';

/** The catalog the shared rule fixtures are written against: built-in nodes, as the server sends them. */
export const rulesCatalog = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../tests/fixtures/rules/catalog.json', import.meta.url)), 'utf8'),
) as CatalogReply;

export const catalog: Catalog = decodeCatalog({
  version: 1,
  failures: [],
  fits: rulesCatalog.fits,
  nodes: [
    {
      name: 'Greetings',
      kind: 'source',
      category: 'Hello',
      inputs: [],
      outputs: ['out'],
      doc: 'Yields greetings.',
      code_hash: 'a',
      gives: 'any',
      pack: '',
      pack_kind: 'custom',
      component: '',
      params: [{ name: 'count', type: 'int', default: 10, description: '', required: false }],
    },
    {
      name: 'Split',
      kind: 'step',
      category: 'Filtering',
      inputs: ['in'],
      outputs: ['A', 'B'],
      doc: '',
      code_hash: 'b',
      gives: 'any',
      pack: 'core',
      pack_kind: 'builtin',
      component: '',
      params: [{ name: 'split_fn', type: 'function', default: null, description: '', required: true }],
    },
    {
      name: 'Shout',
      kind: 'step',
      category: 'Hello',
      inputs: ['in'],
      outputs: ['out'],
      doc: '',
      code_hash: 'c',
      gives: 'any',
      pack: '',
      pack_kind: 'custom',
      component: '',
      params: [{ name: 'loud', type: 'boolean', default: false, description: '', required: false }],
    },
    {
      name: 'Function',
      kind: 'resource',
      category: 'Util',
      inputs: [],
      outputs: ['resource'],
      doc: '',
      code_hash: 'd',
      gives: 'function',
      pack: 'core',
      pack_kind: 'builtin',
      component: '',
      params: [{ name: 'val', type: 'function', default: null, description: '', required: true }],
    },
  ],
});
