// The editor's edits to how a node shows and whether it runs: folded, coloured, bypassed or muted.

import type { GraphFlowNode } from '../../workflow/flow';
import { isGraphNode } from '../../workflow/flow';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import type { Commits } from './commits';
import { updateGraphNode } from './nodes';

type LookActions = Pick<EditorState, 'setCollapsed' | 'setColor' | 'setMode' | 'toggleMode'>;

export function lookActions(set: SetEditor, get: GetEditor, commits: Commits): LookActions {
  return {
    setCollapsed(id, collapsed) {
      updateGraphNode(set, get, id, (n) => {
        const { collapsed: _was, ...data } = n.data;
        return { ...n, data: collapsed ? { ...data, collapsed } : data };
      });
      commits.now();
    },
    setColor(id, color) {
      updateGraphNode(set, get, id, (n) => {
        const { color: _was, ...data } = n.data;
        return { ...n, data: color ? { ...data, color } : data };
      });
      commits.now();
    },
    setMode(ids, mode) {
      const wanted = new Set(ids);
      set({
        nodes: get().nodes.map((n) => {
          if (!wanted.has(n.id) || !isGraphNode(n)) return n;
          const { mode: _was, ...data } = n.data;
          return { ...n, data: mode === 'active' ? data : { ...data, mode } };
        }),
      });
      commits.now();
    },
    toggleMode(mode) {
      const picked = get().nodes.filter((n) => n.selected && isGraphNode(n)) as GraphFlowNode[];
      if (!picked.length) return;
      const all = picked.every((n) => n.data.mode === mode);
      get().setMode(
        picked.map((n) => n.id),
        all ? 'active' : mode,
      );
    },
  };
}
