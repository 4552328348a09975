// The editor's copies of nodes: copy, paste, duplicate.

import { toFlowEdge } from '../../workflow/canvas';
import type { FlowNode } from '../../workflow/flow';
import type { WorkflowNode } from '../../workflow/format';
import { makeClip, pasteClip } from '../clipboard';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import type { Commits } from './commits';

/** A pasted workflow node as a selected canvas node. */
function pastedNode(n: WorkflowNode): FlowNode {
  const mode = n.mode && n.mode !== 'active' ? { mode: n.mode } : {};
  return {
    id: n.id,
    type: 'graph',
    position: n.position,
    data: { type: n.type, label: n.label, params: n.params, ...mode },
    selected: true,
  };
}

export function copyActions(
  set: SetEditor,
  get: GetEditor,
  commits: Commits,
): Pick<EditorState, 'duplicate' | 'copySelection' | 'paste'> {
  return {
    duplicate(ids) {
      const wanted = new Set(ids);
      const clip = makeClip(
        get().nodes.map((n) => ({ ...n, selected: wanted.has(n.id) })),
        get().edges,
      );
      if (!clip) return;
      const left = Math.min(...clip.nodes.map((n) => n.position.x));
      const top = Math.min(...clip.nodes.map((n) => n.position.y));
      get().paste(clip, { x: left + 40, y: top + 40 });
    },
    copySelection() {
      return makeClip(get().nodes, get().edges);
    },
    paste(clip, at) {
      const { nodes, edges } = get();
      if (!clip.nodes.length) return;
      const pasted = pasteClip(clip, new Set(nodes.map((n) => n.id)), at);
      set({
        nodes: [...nodes.map((n) => ({ ...n, selected: false })), ...pasted.nodes.map(pastedNode)],
        edges: [...edges.map((e) => ({ ...e, selected: false })), ...pasted.edges.map(toFlowEdge)],
      });
      commits.now();
    },
  };
}
