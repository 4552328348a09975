// When the editor's edits become undo steps: at once, or once typing pauses; undo and redo.

import { type Snapshot, sameDocument, snapshot } from '../document';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import { type History, canRedo, canUndo, record, redo, undo } from '../history';

export interface Commits {
  /** The canvas as it is now recorded as one undo step (unless nothing changed). */
  now(): void;
  /** Typing in a widget commits once it pauses, so one word is one undo step. */
  soon(): void;
  /** Any commit still waiting dropped (a load or an undo replaces what it would record). */
  cancel(): void;
  /** The canvas shown as `history`'s present. */
  restore(history: History<Snapshot>): void;
}

export function makeCommits(set: SetEditor, get: GetEditor): Commits {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cancel = (): void => clearTimeout(timer);
  const now = (): void => {
    cancel();
    const { nodes, edges, doc, history } = get();
    set({ history: record(history, snapshot(nodes, edges, doc), sameDocument) });
  };
  const soon = (): void => {
    cancel();
    timer = setTimeout(now, 500);
  };
  const restore = (history: History<Snapshot>): void => {
    cancel();
    const { nodes, edges } = history.present;
    set({ history, nodes, edges, revision: get().revision + 1 });
  };
  return { now, soon, cancel, restore };
}

export function historyActions(get: GetEditor, commits: Commits): Pick<EditorState, 'commit' | 'undo' | 'redo'> {
  return {
    commit: commits.now,
    undo() {
      commits.now();
      if (canUndo(get().history)) commits.restore(undo(get().history));
    },
    redo() {
      if (canRedo(get().history)) commits.restore(redo(get().history));
    },
  };
}
