// The editor's edits to components: make one from the selection, unpack one, change what one shows.

import { canvasToWorkflow, workflowToCanvas } from '../../workflow/canvas';
import { collapse, exposeParam, hideParam, unpack } from '../../workflow/components';
import type { Workflow } from '../../workflow/format';
import { isGraphNode } from '../../workflow/flow';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { freshId } from '../ids';
import type { Commits } from './commits';
import { updateGraphNode } from './nodes';

type ComponentActions = Pick<
  EditorState,
  'makeComponent' | 'unpackComponent' | 'setComponent' | 'setLibraryEdit' | 'hideParam' | 'exposeParam'
>;

export function componentActions(set: SetEditor, get: GetEditor, commits: Commits): ComponentActions {
  return { ...structuralActions(set, get, commits), ...nodeActions(set, get, commits) };
}

/** Edits that redraw the canvas: a component made from the selection, or unpacked. */
function structuralActions(
  set: SetEditor,
  get: GetEditor,
  commits: Commits,
): Pick<ComponentActions, 'makeComponent' | 'unpackComponent'> {
  /** The canvas redrawn from `workflow` (a structural edit), `selected` picked: one undo step. */
  const showWorkflow = (workflow: Workflow, selected: string[]): void => {
    const picked = new Set(selected);
    const { nodes, edges } = workflowToCanvas(workflow);
    set({ nodes: nodes.map((n) => ({ ...n, selected: picked.has(n.id) })), edges });
    commits.now();
  };
  return {
    makeComponent() {
      const { nodes, edges, doc } = get();
      const ids = new Set(nodes.filter((n) => n.selected && isGraphNode(n)).map((n) => n.id));
      if (!ids.size) return null;
      const id = freshId('component', new Set(nodes.map((n) => n.id)));
      showWorkflow(collapse(canvasToWorkflow({ nodes, edges }, doc), ids, id), [id]);
      return id;
    },
    unpackComponent(id, body) {
      const { nodes, edges, doc } = get();
      const { workflow, ids } = unpack(canvasToWorkflow({ nodes, edges }, doc), id, body);
      showWorkflow(workflow, ids);
    },
  };
}

/** Edits to one component node: what it refers to, its library edit, the parameters it shows. */
function nodeActions(
  set: SetEditor,
  get: GetEditor,
  commits: Commits,
): Omit<ComponentActions, 'makeComponent' | 'unpackComponent'> {
  return {
    setComponent(id, component) {
      updateGraphNode(set, get, id, (n) => {
        const { libraryEdit: _settled, ...data } = n.data;
        return { ...n, data: { ...data, component } };
      });
      commits.now();
    },
    setLibraryEdit(id, edit) {
      updateGraphNode(set, get, id, (n) => {
        const { libraryEdit: _was, ...data } = n.data;
        return { ...n, data: edit ? { ...data, libraryEdit: edit } : data };
      });
      commits.now();
    },
    hideParam(id, name) {
      updateGraphNode(set, get, id, (n) => {
        if (!n.data.component) return n;
        const { [name]: _gone, ...params } = n.data.params;
        return { ...n, data: { ...n.data, params, component: hideParam(n.data.component, name) } };
      });
      commits.now();
    },
    exposeParam(id, node, param) {
      updateGraphNode(set, get, id, (n) => {
        const exposed = n.data.component && exposeParam(n.data.component, node, param);
        if (!exposed) return n;
        const params = { ...n.data.params };
        if (exposed.value !== undefined) params[exposed.name] = exposed.value;
        return { ...n, data: { ...n.data, params, component: exposed.component } };
      });
      commits.now();
    },
  };
}
