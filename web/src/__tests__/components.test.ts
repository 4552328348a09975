// Components in the browser: written byte for byte as Python writes them, the node a component
// shows, and making one from nodes and unpacking it again.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bodyOf, collapse, hiddenParams, specOf, unpack } from '../workflow/components';
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
});
