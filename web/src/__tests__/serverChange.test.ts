// A workflow the server wrote (an agent's edit, another tab's save) reaching the page that has
// it open: one undo step, saved; other files and the page's own content change nothing.

import { beforeEach, describe, expect, it } from 'vitest';
import { applyServerChange } from '../actions/files';
import type { WorkflowChanged } from '../protocol';
import { currentKey, useEditor } from '../store/editor';

const editor = () => useEditor.getState();
const ids = () =>
  editor()
    .nodes.map((n) => n.id)
    .sort();
const dirty = () => currentKey(editor()) !== editor().savedKey;

const node = (id: string, x = 0) => ({ id, type: 'Greetings', label: '', params: {}, position: { x, y: 0 } });
const changed = (path: string, hash: string, nodes: ReturnType<typeof node>[]): WorkflowChanged => ({
  type: 'workflow_changed',
  path,
  hash,
  workflow: { format: 'graphbook.workflow', version: 1, nodes, edges: [] },
});

beforeEach(() => {
  editor().open({ path: 'a.json', format: 'canonical', hash: 'h1' }, { doc: '', nodes: [node('mine')], edges: [] });
});

describe('a workflow the server wrote', () => {
  it('shows on the open file as one undo step, saved', () => {
    applyServerChange(changed('a.json', 'h2', [node('mine'), node('agent_1', 300), node('agent_2', 600)]));
    expect(ids()).toEqual(['agent_1', 'agent_2', 'mine']);
    expect(editor().file?.hash).toBe('h2');
    expect(dirty()).toBe(false);
    editor().undo();
    expect(ids()).toEqual(['mine']);
    editor().redo();
    expect(ids()).toEqual(['agent_1', 'agent_2', 'mine']);
  });

  it('keeps edits the page had made as a step of their own before it', () => {
    editor().addNode('Split', { x: 0, y: 200 });
    applyServerChange(changed('a.json', 'h2', [node('mine'), node('agent_1', 300)]));
    expect(ids()).toEqual(['agent_1', 'mine']);
    editor().undo();
    expect(ids()).toEqual(['mine', 'split']);
  });

  it('changes nothing for another file, the same hash, or content the canvas shows already', () => {
    const history = editor().history;
    applyServerChange(changed('b.json', 'h2', [node('other')]));
    applyServerChange(changed('a.json', 'h1', [node('other')]));
    expect(ids()).toEqual(['mine']);
    applyServerChange(changed('a.json', 'h3', [node('mine')]));
    expect(editor().file?.hash).toBe('h3');
    expect(editor().history).toBe(history);
  });
});
