// Whether the open document differs from the file as last opened or saved.

import { useMemo } from 'react';
import { currentKey, useEditor } from '../store/editor';

export function useDirty(): boolean {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const doc = useEditor((s) => s.doc);
  const inside = useEditor((s) => s.inside);
  const savedKey = useEditor((s) => s.savedKey);
  const key = useMemo(() => currentKey({ nodes, edges, doc, inside }), [nodes, edges, doc, inside]);
  return key !== savedKey;
}
