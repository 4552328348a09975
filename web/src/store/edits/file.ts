// The editor's edits to the open file as a whole: open, close, saved, replaced, its description.

import { workflowToCanvas } from '../../workflow/canvas';
import { snapshot, sameDocument } from '../document';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { record, startHistory } from '../history';
import type { Commits } from './commits';

type FileActions = Pick<EditorState, 'open' | 'close' | 'markSaved' | 'replaceDocument' | 'setDoc'>;

/** The store with no file open. */
export function closedFile(): Pick<
  EditorState,
  'file' | 'doc' | 'nodes' | 'edges' | 'savedKey' | 'history' | 'inside'
> {
  const empty = snapshot([], [], '');
  return { file: null, doc: '', nodes: [], edges: [], savedKey: empty.key, history: startHistory(empty), inside: [] };
}

export function fileActions(set: SetEditor, get: GetEditor, commits: Commits): FileActions {
  return {
    open(file, workflow, keepView = false) {
      commits.cancel();
      const { nodes, edges } = workflowToCanvas(workflow);
      const first = snapshot(nodes, edges, workflow.doc);
      const revision = get().revision + (keepView ? 0 : 1);
      set({
        file,
        doc: workflow.doc,
        nodes,
        edges,
        savedKey: first.key,
        history: startHistory(first),
        revision,
        inside: [],
      });
    },
    close() {
      commits.cancel();
      set({ ...closedFile(), revision: get().revision + 1 });
    },
    markSaved(key, hash, path) {
      const file = get().file;
      if (file) set({ savedKey: key, file: { path: path ?? file.path, hash, format: 'canonical' } });
    },
    replaceDocument(workflow, hash) {
      const file = get().file;
      if (!file) return;
      if (get().inside.length) get().leaveComponent(0); // the server's file replaces the whole document
      commits.now(); // edits still waiting for their commit are a step of their own, before this one
      const { nodes, edges } = workflowToCanvas(workflow);
      const next = snapshot(nodes, edges, workflow.doc);
      const history = record(get().history, next, sameDocument);
      const revision = get().revision + 1;
      set({ nodes, edges, doc: workflow.doc, history, savedKey: next.key, file: { ...file, hash }, revision });
    },
    setDoc(doc) {
      set({ doc });
      commits.soon();
    },
  };
}
