// The editor's store: the open workflow on the canvas, its undo history and what is unsaved.
// Its edits live in edits/, one module per concept, each given the store's set and get.

import { create } from 'zustand';
import { type Group, canvasGroups, canvasToWorkflow } from '../workflow/canvas';
import type { Workflow } from '../workflow/format';
import { documentKey } from './document';
import type { EditorState } from './editorState';
import { type Frame, composed } from './inside';
import { changeActions } from './edits/changes';
import { historyActions, makeCommits } from './edits/commits';
import { componentActions } from './edits/components';
import { copyActions } from './edits/copies';
import { closedFile, fileActions } from './edits/file';
import { levelActions } from './edits/levels';
import { lookActions } from './edits/looks';
import { nodeActions } from './edits/nodes';
import { paramActions } from './edits/params';
import { selectionActions } from './edits/selection';

export type { EditorState, OpenFile } from './editorState';

export const useEditor = create<EditorState>()((set, get) => {
  const commits = makeCommits(set, get);
  return {
    ...closedFile(),
    revision: 0,
    ...fileActions(set, get, commits),
    ...changeActions(set, get, commits),
    ...nodeActions(set, get, commits),
    ...paramActions(set, get, commits),
    ...lookActions(set, get, commits),
    ...selectionActions(set, get, commits),
    ...copyActions(set, get, commits),
    ...componentActions(set, get, commits),
    ...levelActions(set, get, commits),
    ...historyActions(get, commits),
  };
});

/** The open document as a workflow file and its groups (a component opened in place folded in). */
export function currentWorkflow(state: Pick<EditorState, 'nodes' | 'edges' | 'doc'> & { inside?: Frame[] }): {
  workflow: Workflow;
  groups: Group[];
} {
  const canvas = composed(state);
  return { workflow: canvasToWorkflow(canvas, state.doc), groups: canvasGroups(canvas) };
}

export function currentKey(state: Pick<EditorState, 'nodes' | 'edges' | 'doc'> & { inside?: Frame[] }): string {
  const { nodes, edges } = composed(state);
  return documentKey(nodes, edges, state.doc);
}
