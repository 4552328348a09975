// The editor's edits to the selected nodes: pick them, delete them, group or ungroup them.

import { isGraphNode } from '../../workflow/flow';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { groupNodes, ungroup } from '../groups';
import type { Commits } from './commits';

type SelectionActions = Pick<
  EditorState,
  'select' | 'deleteSelection' | 'deleteNode' | 'groupSelection' | 'ungroupSelection'
>;

export function selectionActions(set: SetEditor, get: GetEditor, commits: Commits): SelectionActions {
  return {
    select(ids) {
      const wanted = new Set(ids);
      set({
        nodes: get().nodes.map((n) => ({ ...n, selected: wanted.has(n.id) })),
        edges: get().edges.map((e) => ({ ...e, selected: false })),
      });
    },
    deleteSelection() {
      const { nodes, edges } = get();
      const groups = new Set(nodes.filter((n) => n.selected && n.type === 'group').map((n) => n.id));
      const gone = new Set(nodes.filter((n) => n.selected && n.type !== 'group').map((n) => n.id));
      if (!groups.size && !gone.size && !edges.some((e) => e.selected)) return;
      const kept = ungroup(nodes, groups).filter((n) => !gone.has(n.id));
      const keptEdges = edges.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target));
      set({ nodes: kept, edges: keptEdges });
      commits.now();
    },
    deleteNode(id) {
      get().select([id]);
      get().deleteSelection();
    },
    groupSelection() {
      const { nodes } = get();
      const ids = new Set(nodes.filter((n) => n.selected && isGraphNode(n)).map((n) => n.id));
      if (!ids.size) return;
      set({ nodes: groupNodes(nodes, ids) });
      commits.now();
    },
    ungroupSelection() {
      const { nodes } = get();
      const selected = nodes.filter((n) => n.selected);
      const groups = new Set(
        selected.map((n) => (n.type === 'group' ? n.id : n.parentId)).filter((id): id is string => !!id),
      );
      if (!groups.size) return;
      set({ nodes: ungroup(nodes, groups) });
      commits.now();
    },
  };
}
