// The editor store: wiring rules, undo and redo, copy and paste, groups, the unsaved mark.

import { beforeEach, describe, expect, it } from 'vitest';
import { isGraphNode } from '../workflow/flow';
import { currentKey, currentWorkflow, useEditor } from '../store/editor';
import { catalog } from './fixtures';

const editor = () => useEditor.getState();
const ids = () => editor().nodes.map((n) => n.id);
const dirty = () => currentKey(editor()) !== editor().savedKey;

beforeEach(() => {
  editor().open({ path: 'a.json', format: 'canonical', hash: 'h' }, { doc: '', nodes: [], edges: [] });
});

describe('editing', () => {
  it('adds nodes with readable ids and marks the file unsaved', () => {
    expect(dirty()).toBe(false);
    editor().addNode('Greetings', { x: 0, y: 0 });
    editor().addNode('Greetings', { x: 0, y: 100 });
    expect(ids()).toEqual(['greetings', 'greetings_2']);
    expect(dirty()).toBe(true);
    editor().markSaved(currentKey(editor()), 'h2');
    expect(dirty()).toBe(false);
  });

  it('accepts data into data and resources into parameters only', () => {
    const g = editor().addNode('Greetings', { x: 0, y: 0 });
    const s = editor().addNode('Split', { x: 200, y: 0 });
    const f = editor().addNode('Function', { x: 0, y: 200 });
    expect(editor().connect({ source: g, sourceHandle: 'out', target: s, targetHandle: 'split_fn' }, catalog)).toMatch(
      /only resources feed parameters/,
    );
    expect(editor().connect({ source: f, sourceHandle: 'resource', target: s, targetHandle: 'in' }, catalog)).toMatch(
      /not the data input/,
    );
    expect(editor().connect({ source: s, sourceHandle: 'A', target: g, targetHandle: 'in' }, catalog)).toMatch(
      /takes no input/,
    );
    expect(editor().connect({ source: g, sourceHandle: 'out', target: s, targetHandle: 'in' }, catalog)).toBeNull();
    expect(
      editor().connect({ source: f, sourceHandle: 'resource', target: s, targetHandle: 'split_fn' }, catalog),
    ).toBeNull();
    expect(currentWorkflow(editor()).workflow.edges).toEqual([
      { source: g, output: 'out', target: s, input: 'in' },
      { source: f, output: 'resource', target: s, input: 'split_fn' },
    ]);
  });

  it('refuses a wire that would make a cycle', () => {
    const a = editor().addNode('Shout', { x: 0, y: 0 });
    const b = editor().addNode('Shout', { x: 200, y: 0 });
    expect(editor().connect({ source: a, sourceHandle: 'out', target: b, targetHandle: 'in' }, catalog)).toBeNull();
    expect(editor().connect({ source: b, sourceHandle: 'out', target: a, targetHandle: 'in' }, catalog)).toMatch(
      /cycle/,
    );
  });

  it('undoes and redoes adding, wiring, parameters and deleting', () => {
    const g = editor().addNode('Greetings', { x: 0, y: 0 });
    const s = editor().addNode('Shout', { x: 200, y: 0 });
    editor().connect({ source: g, sourceHandle: 'out', target: s, targetHandle: 'in' }, catalog);
    editor().setParam(g, 'count', 3);
    editor().commit();
    editor().select([s]);
    editor().deleteSelection();
    expect(ids()).toEqual([g]);
    expect(editor().edges).toEqual([]);
    editor().undo();
    expect(ids()).toEqual([g, s]);
    expect(editor().edges).toHaveLength(1);
    editor().undo();
    const node = editor().nodes.find((n) => n.id === g);
    expect(node && isGraphNode(node) ? node.data.params : null).toEqual({});
    editor().redo();
    editor().redo();
    expect(ids()).toEqual([g]);
  });

  it('pastes copies with fresh ids and the wires among them', () => {
    const g = editor().addNode('Greetings', { x: 0, y: 0 });
    const s = editor().addNode('Shout', { x: 200, y: 0 });
    editor().connect({ source: g, sourceHandle: 'out', target: s, targetHandle: 'in' }, catalog);
    editor().select([g, s]);
    const clip = editor().copySelection();
    expect(clip?.nodes).toHaveLength(2);
    editor().paste(clip!, { x: 0, y: 300 });
    expect(ids()).toEqual(['greetings', 'shout', 'greetings_2', 'shout_2']);
    expect(editor().edges.map((e) => e.id)).toEqual(['greetings:out->shout:in', 'greetings_2:out->shout_2:in']);
    expect(
      editor()
        .nodes.filter((n) => n.selected)
        .map((n) => n.id),
    ).toEqual(['greetings_2', 'shout_2']);
    editor().undo();
    expect(ids()).toEqual(['greetings', 'shout']);
  });

  it('groups the selection and ungroups it, one undo step each', () => {
    const g = editor().addNode('Greetings', { x: 0, y: 0 });
    const s = editor().addNode('Shout', { x: 300, y: 0 });
    editor().select([g, s]);
    editor().groupSelection();
    expect(editor().nodes[0]?.type).toBe('group');
    expect(currentWorkflow(editor()).groups[0]?.nodes).toEqual([g, s]);
    editor().undo();
    expect(editor().nodes.some((n) => n.type === 'group')).toBe(false);
  });

  it('saves groups in the file: making, renaming, moving, resizing and deleting one marks it unsaved, and undo covers it', () => {
    const g = editor().addNode('Greetings', { x: 0, y: 0 });
    const s = editor().addNode('Shout', { x: 300, y: 0 });
    const saved = (): void => editor().markSaved(currentKey(editor()), 'h');
    const fileGroups = () => currentWorkflow(editor()).workflow.groups;
    saved();
    editor().select([g, s]);
    editor().groupSelection();
    expect(dirty()).toBe(true);
    expect(fileGroups()?.map((x) => [x.id, x.label, x.nodes])).toEqual([['group', 'Group', [g, s]]]);
    saved();

    editor().setGroupLabel('group', 'Talk');
    editor().commit(); // what a pause in typing does
    expect(dirty()).toBe(true);
    expect(fileGroups()?.[0]?.label).toBe('Talk');
    saved();
    editor().onNodesChange([{ type: 'position', id: 'group', position: { x: 500, y: 400 } }]);
    editor().commit();
    expect(dirty()).toBe(true);
    expect(fileGroups()?.[0]?.position).toEqual({ x: 500, y: 400 });
    saved();
    editor().onNodesChange([
      { type: 'dimensions', id: 'group', dimensions: { width: 900, height: 333 }, setAttributes: true },
    ]);
    editor().commit();
    expect(dirty()).toBe(true);
    expect(fileGroups()?.[0]?.size).toEqual({ width: 900, height: 333 });

    editor().undo();
    expect(fileGroups()?.[0]?.size).not.toEqual({ width: 900, height: 333 });
    editor().undo();
    expect(fileGroups()?.[0]?.position).not.toEqual({ x: 500, y: 400 });
    editor().undo();
    expect(fileGroups()?.[0]?.label).toBe('Group');
    editor().redo();
    expect(fileGroups()?.[0]?.label).toBe('Talk');

    editor().select(['group']);
    editor().deleteSelection();
    expect(fileGroups()).toBeUndefined();
    expect(ids()).toEqual([g, s]);
  });

  it('opens a file with its groups', () => {
    const group = {
      id: 'box',
      label: 'Box',
      position: { x: -10, y: -10 },
      size: { width: 400, height: 300 },
      nodes: ['a'],
    };
    const node = { id: 'a', type: 'Greetings', label: '', params: {}, position: { x: 20, y: 30 } };
    editor().open(
      { path: 'b.json', format: 'canonical', hash: 'h' },
      { doc: '', nodes: [node], edges: [], groups: [group] },
    );
    expect(dirty()).toBe(false);
    expect(editor().nodes.find((n) => n.id === 'a')?.parentId).toBe('box');
    expect(currentWorkflow(editor()).workflow.groups).toEqual([group]);
  });
});
