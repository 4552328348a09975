// Components in the browser: written byte for byte as Python writes them, the node a component
// shows, and making one from nodes and unpacking it again.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  bodyOf,
  collapse,
  componentFileName,
  componentNameProblem,
  hiddenParams,
  libraryOf,
  specOf,
  unpack,
} from '../workflow/components';
import { isGraphNode } from '../workflow/flow';
import { pendingLibraryEdits } from '../store/inside';
import { currentKey, currentWorkflow, useEditor } from '../store/editor';
import { dumps, parseCanonical } from '../workflow/format';
import { catalog } from './fixtures';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const text = readFileSync(join(ROOT, 'tests/fixtures/component_workflow.json'), 'utf8');
const withComponent = () => parseCanonical(JSON.parse(text), 'fixture');

describe('components', () => {
  it('are written as graphbook/workflow.py writes them', () => {
    expect(dumps(withComponent())).toBe(text);
  });

  it('show their exposed ports and parameters, typed as the inner ones', () => {
    const node = withComponent().nodes.find((n) => n.id === 'component');
    const spec = node && specOf(node, catalog);
    expect(spec?.inputs).toEqual(['in']);
    expect(spec?.outputs).toEqual(['out']);
    expect(spec?.params.map((p) => [p.name, p.type, p.default])).toEqual([['loud', 'boolean', true]]);
    expect(specOf({ type: 'Component', component: { library: 'missing' } }, catalog)).toBeUndefined();
  });

  it('unpack into plain nodes with the values set on the component, and collapse back', () => {
    const workflow = withComponent();
    const component = workflow.nodes.find((n) => n.id === 'component')?.component;
    const body = component && bodyOf(component);
    if (!body) throw new Error('no inline component in the fixture');
    const { workflow: plain, ids } = unpack(workflow, 'component', body);
    expect(ids).toEqual(['first', 'second']);
    expect(plain.nodes.find((n) => n.id === 'first')?.params).toEqual({ loud: false });
    expect(plain.nodes.find((n) => n.id === 'second')?.position).toEqual({ x: 640, y: 0 });
    const wires = plain.edges.map((e) => `${e.source}>${e.target}`).sort();
    expect(wires).toEqual(['first>second', 'greetings>first', 'second>library']);

    const packed = collapse(plain, new Set(['first', 'second']), 'again');
    const again = packed.nodes.find((n) => n.id === 'again');
    expect(again?.params).toEqual({ loud: false });
    expect(packed.edges.map((e) => `${e.source}.${e.output}>${e.target}.${e.input}`).sort()).toEqual([
      'again.out>library.in',
      'greetings.out>again.in',
    ]);
    const inner = again?.component && bodyOf(again.component);
    expect(inner?.inputs).toEqual({ in: { node: 'first', port: 'in' } });
    expect(inner?.outputs).toEqual({ out: { node: 'second', port: 'out' } });
    expect(inner?.nodes.map((n) => [n.id, n.position.x])).toEqual([
      ['first', 0],
      ['second', 320],
    ]);
    const saved = dumps(packed);
    expect(dumps(parseCanonical(JSON.parse(saved), 'again'))).toBe(saved);
  });
});

describe('a component in the editor', () => {
  const editor = () => useEditor.getState();
  const ids = () =>
    editor()
      .nodes.map((n) => n.id)
      .sort();
  const dirty = () => currentKey(editor()) !== editor().savedKey;

  it('is made, opened in place, edited and left, each one undo step, saving the whole workflow', () => {
    editor().open({ path: 'c.json', format: 'canonical', hash: 'h' }, withComponent());
    const { workflow } = currentWorkflow(editor());
    const component = workflow.nodes.find((n) => n.id === 'component')?.component;
    const body = component && bodyOf(component);
    if (!body) throw new Error('no inline component in the fixture');

    editor().openComponent('component', body);
    expect(ids()).toEqual(['first', 'second']);
    expect(dirty()).toBe(false); // the whole document is what it was
    expect(currentWorkflow(editor()).workflow.nodes.map((n) => n.id)).toEqual(['component', 'greetings', 'library']);
    editor().setParam('second', 'loud', true);
    editor().commit();
    expect(dirty()).toBe(true);
    const saved = dumps(currentWorkflow(editor()).workflow);
    expect(JSON.parse(saved).nodes[0].component.nodes[1].params).toEqual({ loud: true });

    editor().leaveComponent(0);
    expect(ids()).toEqual(['component', 'greetings', 'library']);
    expect(dumps(currentWorkflow(editor()).workflow)).toBe(saved);
    editor().undo();
    expect(dumps(currentWorkflow(editor()).workflow)).toBe(text); // the edits inside: one step

    editor().hideParam('component', 'loud');
    const hidden = currentWorkflow(editor()).workflow.nodes.find((n) => n.id === 'component');
    expect(hidden?.params).toEqual({});
    expect(hidden?.component && specOf(hidden, catalog)?.params).toEqual([]);
    editor().undo();
    expect(dumps(currentWorkflow(editor()).workflow)).toBe(text);

    const shown = currentWorkflow(editor()).workflow.nodes.find((n) => n.id === 'component');
    expect(shown?.component && hiddenParams(shown.component, catalog)).toEqual([{ node: 'second', param: 'loud' }]);
    editor().exposeParam('component', 'second', 'loud'); // `loud` is taken: second_loud
    const exposed = currentWorkflow(editor()).workflow.nodes.find((n) => n.id === 'component');
    expect(exposed && specOf(exposed, catalog)?.params.map((p) => p.name)).toEqual(['loud', 'second_loud']);
    expect(exposed?.component && hiddenParams(exposed.component, catalog)).toEqual([]);
    editor().undo();
    expect(dumps(currentWorkflow(editor()).workflow)).toBe(text);

    editor().select(['greetings', 'component']);
    const made = editor().makeComponent();
    expect(ids()).toEqual(['component_2', 'library']);
    editor().undo();
    expect(ids()).toEqual(['component', 'greetings', 'library']);
    expect(made).toBe('component_2');
  });

  it('marks a library component edited in place until the user updates the file or keeps the copy', () => {
    editor().open({ path: 'c.json', format: 'canonical', hash: 'h' }, withComponent());
    const { workflow } = currentWorkflow(editor());
    const inline = workflow.nodes.find((n) => n.id === 'component')?.component;
    const body = inline && bodyOf(inline); // what the library file `shouts` holds, say
    if (!body) throw new Error('no inline component in the fixture');
    const library = () => {
      const node = editor().nodes.find((n) => n.id === 'library');
      if (!node || !isGraphNode(node)) throw new Error('no library node');
      return node.data;
    };

    editor().openComponent('library', body);
    editor().leaveComponent(0);
    expect(library().component).toEqual({ library: 'shouts', version: '0123456789ab' });
    expect(library().libraryEdit).toBeUndefined(); // opened and left unchanged: still the reference

    editor().openComponent('library', body);
    expect(pendingLibraryEdits(editor())).toEqual([]);
    editor().setParam('second', 'loud', false);
    editor().commit();
    expect(pendingLibraryEdits(editor())).toEqual(['shouts']); // a save now holds a copy
    editor().leaveComponent(0);
    expect(libraryOf(library().component)).toBeNull(); // kept inline, with the edit
    expect(library().libraryEdit).toEqual({ library: 'shouts', version: '0123456789ab' });
    const copy = library().component;
    expect(copy && bodyOf(copy)?.nodes.find((n) => n.id === 'second')?.params).toEqual({ loud: false });

    editor().setComponent('library', { library: 'shouts', version: 'fedcba987654' }); // updated
    expect(library().libraryEdit).toBeUndefined();
    expect(libraryOf(library().component)).toEqual({ library: 'shouts', version: 'fedcba987654' });
    editor().undo();
    expect(library().libraryEdit).toEqual({ library: 'shouts', version: '0123456789ab' });

    editor().setLibraryEdit('library', null); // kept as a copy
    expect(library().libraryEdit).toBeUndefined();
    expect(library().component).toEqual(copy);
  });
});

describe('library component names', () => {
  it('come from the title and are explained when they cannot be used', () => {
    expect(componentFileName('Clean rows!')).toBe('clean_rows');
    expect(componentFileName('  ')).toBe('component');
    expect(componentFileName('.hidden')).toBe('hidden');
    expect(componentNameProblem('clean_rows')).toBeNull();
    expect(componentNameProblem('team/clean-rows.v2')).toBeNull();
    expect(componentNameProblem('')).toBe('give the component a name');
    expect(componentNameProblem('x.json')).toContain('leave out ".json"');
    expect(componentNameProblem('my rows')).toContain("use letters, digits, '_', '-'");
    expect(componentNameProblem('../x')).toContain('use letters, digits');
    expect(componentNameProblem('a/../b')).toContain('use letters, digits');
  });
});
