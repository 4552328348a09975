// The editor's edits that add nodes and comments or change their words.

import { COMPONENT, LIBRARY_PREFIX } from '../../workflow/components';
import type { FlowNode, GraphFlowNode } from '../../workflow/flow';
import { isGraphNode } from '../../workflow/flow';
import { useCatalog } from '../catalog';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { freshId } from '../ids';
import type { Commits } from './commits';

type NodeActions = Pick<EditorState, 'addNode' | 'addComment' | 'setLabel' | 'setCommentText' | 'setGroupLabel'>;

/** The graph node `id` replaced by `update(node)`; every other node left as it is. */
export function updateGraphNode(
  set: SetEditor,
  get: GetEditor,
  id: string,
  update: (node: GraphFlowNode) => GraphFlowNode,
): void {
  set({ nodes: get().nodes.map((n) => (n.id === id && isGraphNode(n) ? update(n) : n)) });
}

/** The current version of a library component (the catalog's `components/NAME` entry), recorded on a node made from it. */
function libraryVersion(name: string): string {
  return useCatalog.getState().catalog.nodes[name]?.code_hash ?? '';
}

/** `node` added to `nodes`, the only one selected. */
function withAdded(nodes: FlowNode[], node: FlowNode): FlowNode[] {
  return [...nodes.map((n) => ({ ...n, selected: false })), node];
}

export function nodeActions(set: SetEditor, get: GetEditor, commits: Commits): NodeActions {
  return {
    addNode(type, position, params = {}) {
      const { nodes } = get();
      const library = type.startsWith(LIBRARY_PREFIX) ? type.slice(LIBRARY_PREFIX.length) : null;
      const id = freshId(library ? (library.split('/').pop() ?? type) : type, new Set(nodes.map((n) => n.id)));
      const data = library
        ? { type: COMPONENT, label: '', params, component: { library, version: libraryVersion(type) } }
        : { type, label: '', params };
      set({ nodes: withAdded(nodes, { id, type: 'graph', position, data, selected: true }) });
      commits.now();
      return id;
    },
    addComment(position) {
      const { nodes } = get();
      const id = freshId('note', new Set(nodes.map((n) => n.id)));
      const comment: FlowNode = { id, type: 'comment', position, width: 240, data: { text: '' }, selected: true };
      set({ nodes: withAdded(nodes, comment) });
      commits.now();
      return id;
    },
    setLabel(id, label) {
      updateGraphNode(set, get, id, (n) => ({ ...n, data: { ...n.data, label } }));
      commits.soon();
    },
    setCommentText(id, text) {
      set({ nodes: get().nodes.map((n) => (n.id === id && n.type === 'comment' ? { ...n, data: { text } } : n)) });
      commits.soon();
    },
    setGroupLabel(id, label) {
      set({ nodes: get().nodes.map((n) => (n.id === id && n.type === 'group' ? { ...n, data: { label } } : n)) });
      commits.soon();
    },
  };
}
