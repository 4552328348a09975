// The editor's way into a component and back out: its nodes shown in place, folded back on leaving.

import { workflowToCanvas } from '../../workflow/canvas';
import { isGraphNode } from '../../workflow/flow';
import { sameDocument, snapshot } from '../document';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { record, startHistory } from '../history';
import { type Frame, fold } from '../inside';
import type { Commits } from './commits';

export function levelActions(
  set: SetEditor,
  get: GetEditor,
  commits: Commits,
): Pick<EditorState, 'openComponent' | 'leaveComponent'> {
  return {
    openComponent(id, body, version) {
      const node = get().nodes.find((n) => n.id === id);
      if (!node || !isGraphNode(node) || !node.data.component) return;
      commits.now();
      const { nodes, edges, history, inside } = get();
      const frame: Frame = { id, nodes, edges, history, component: node.data.component, body, version };
      const shown = workflowToCanvas({ doc: '', nodes: body.nodes, edges: body.edges });
      const first = snapshot(shown.nodes, shown.edges, '');
      set({
        inside: [...inside, frame],
        nodes: shown.nodes,
        edges: shown.edges,
        history: startHistory(first),
        revision: get().revision + 1,
      });
    },
    leaveComponent(depth) {
      commits.now();
      let { nodes, edges, history } = get();
      const inside = [...get().inside];
      while (inside.length > Math.max(0, depth)) {
        const frame = inside.pop() as Frame;
        ({ nodes, edges } = fold(frame, nodes, edges));
        history = frame.history;
      }
      history = record(history, snapshot(nodes, edges, get().doc), sameDocument);
      set({ inside, nodes, edges, history, revision: get().revision + 1 });
    },
  };
}
