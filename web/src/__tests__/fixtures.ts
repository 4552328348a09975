// A small catalog shaped like the server's, for the unit tests.

import { type Catalog, decodeCatalog } from '../catalog';

export const catalog: Catalog = decodeCatalog({
  version: 1,
  failures: [],
  nodes: [
    { name: 'Greetings', kind: 'source', category: 'Hello', inputs: [], outputs: ['out'], doc: 'Yields greetings.', code_hash: 'a', gives: 'any', pack: '', pack_kind: 'custom', component: '',
      params: [{ name: 'count', type: 'int', default: 10, description: '', required: false }] },
    { name: 'Split', kind: 'step', category: 'Filtering', inputs: ['in'], outputs: ['A', 'B'], doc: '', code_hash: 'b', gives: 'any', pack: 'core', pack_kind: 'builtin', component: '',
      params: [{ name: 'split_fn', type: 'function', default: null, description: '', required: true }] },
    { name: 'Shout', kind: 'step', category: 'Hello', inputs: ['in'], outputs: ['out'], doc: '', code_hash: 'c', gives: 'any', pack: '', pack_kind: 'custom', component: '',
      params: [{ name: 'loud', type: 'boolean', default: false, description: '', required: false }] },
    { name: 'Function', kind: 'resource', category: 'Util', inputs: [], outputs: ['resource'], doc: '', code_hash: 'd', gives: 'function', pack: 'core', pack_kind: 'builtin', component: '',
      params: [{ name: 'val', type: 'function', default: null, description: '', required: true }] },
  ],
});
