// The workflow file: reading both formats and writing byte for byte what Python writes.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Workflow, WorkflowFormatError, dumps, naturalCompare } from '../workflow/format';
import { canvasToWorkflow, workflowToCanvas } from '../workflow/canvas';
import { readWorkflow } from '../workflow/load';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const examples = ['workflows', 'graphbook/templates'].flatMap((folder) =>
  readdirSync(join(ROOT, folder))
    .filter((f: string) => f.endsWith('.json'))
    .map((f: string) => join(ROOT, folder, f)),
);
const graphbook013 = join(ROOT, 'tests/fixtures/graphbook013_simple_workflow.json');

const tricky: Workflow = {
  doc: 'Ünïcode — "quotes" and\nnew lines',
  nodes: [
    {
      id: 'n10',
      type: 'B',
      label: '',
      params: { z: [1, 2.5, { a: null }], a: 'é', e: {}, l: [] },
      position: { x: -0.04, y: 12.349 },
    },
    {
      id: 'n2',
      type: 'A',
      label: 'Löwe',
      params: { f: 'def f(d):\n\treturn d\n', t: true },
      position: { x: 3.25, y: -7 },
    },
    { id: '01', type: 'A', label: '', params: {}, position: { x: 0, y: 0 } },
    { id: '1', type: 'A', label: '', params: { n: 0.1 }, position: { x: 1e-7, y: 100.05 } },
    { id: 'r1', type: 'A', label: '', params: {}, position: { x: 3.75, y: -3.25 }, width: 412.25, collapsed: true },
    { id: 'r2', type: 'A', label: '', params: {}, position: { x: 0.25, y: 2.675 }, mode: 'bypass' },
    {
      id: 'r3',
      type: 'A',
      label: '',
      params: {},
      position: { x: 1.15, y: -0.04 },
      collapsed: true,
      mode: 'mute',
      color: 'purple',
    },
    { id: 'r4', type: 'A', label: '', params: {}, position: { x: 2, y: 2 }, color: 'green' },
  ],
  edges: [
    {
      source: 'n2',
      output: 'out',
      target: 'n10',
      input: 'in',
      points: [
        { x: 0.25, y: 2.675 },
        { x: -0.04, y: 100.05 },
      ],
    },
    { source: '1', output: 'resource', target: 'n10', input: 'z' },
    { source: 'n2', output: 'out', target: 'n10', input: 'in', points: [{ x: 9, y: 9 }] },
    { source: '01', output: 'A', target: 'n2', input: 'in' },
  ],
  groups: [
    {
      id: 'g10',
      label: 'Zwölf — "q"',
      position: { x: 0.25, y: -3.75 },
      size: { width: 100.05, height: 50 },
      nodes: ['n10', 'ghost', 'n2'],
    },
    { id: 'g2', label: '', position: { x: 1e-7, y: 2.675 }, size: { width: 300, height: 200 }, nodes: [] },
    { id: 'g1', label: 'r', position: { x: 0, y: 0 }, size: { width: 1, height: 1 }, nodes: ['r2', 'r1', '01'] },
  ],
  comments: [
    { id: 'c10', text: 'Ünï **bold**\n"q"', position: { x: 0.25, y: 2.675 }, width: 412.25 },
    { id: 'c2', text: '', position: { x: 0, y: 0 }, width: 240 },
  ],
  inputs: {
    z_in: { node: 'n10', param: 'a', description: 'Ünï "q"' },
    A: { node: 'n2', param: 't' },
    'b-2': { node: 'r9', param: 'x', description: '' },
  },
};

function pythonDumps(inputs: Record<string, string>): Record<string, string> | null {
  const script = `
import json, sys
from graphbook.workflow import Workflow
inputs = json.load(sys.stdin)
print(json.dumps({name: Workflow.loads(text, name).dumps() for name, text in inputs.items()}))
`;
  try {
    const out = execFileSync('python', ['-c', script], { cwd: ROOT, input: JSON.stringify(inputs), encoding: 'utf8' });
    return JSON.parse(out) as Record<string, string>;
  } catch {
    return null;
  }
}

describe('dumps', () => {
  it('rewrites every example workflow byte for byte', () => {
    for (const path of examples) {
      const text = readFileSync(path, 'utf8');
      expect(dumps(readWorkflow(text, path).workflow)).toBe(text);
    }
  });

  it('writes what graphbook/workflow.py writes, for canonical and Graphbook 0.13 files', () => {
    const trickyText = JSON.stringify({ format: 'graphbook.workflow', version: 1, ...tricky });
    const inputs: Record<string, string> = { tricky: trickyText, old: readFileSync(graphbook013, 'utf8') };
    for (const path of examples) inputs[path] = readFileSync(path, 'utf8');
    const expected = pythonDumps(inputs);
    if (!expected) return; // no Python with graphbook here: the byte-for-byte examples above still ran
    for (const [name, text] of Object.entries(inputs)) {
      expect(dumps(readWorkflow(text, name).workflow), name).toBe(expected[name]);
    }
  });

  it('writes groups after the edges, sorted, and no groups key when there are none', () => {
    const text = dumps(tricky);
    expect(text.indexOf('"groups"')).toBeGreaterThan(text.indexOf('"edges"'));
    expect(text).toContain('      "nodes": ["01", "r1", "r2"]\n');
    expect(text).not.toContain('ghost');
    expect([...text.matchAll(/"id": "(g\d+)"/g)].map((m) => m[1])).toEqual(['g1', 'g2', 'g10']);
    expect(dumps({ ...tricky, groups: [] })).not.toContain('groups');
    expect(dumps({ ...tricky, groups: [] })).toBe(
      dumps({
        doc: tricky.doc,
        nodes: tricky.nodes,
        edges: tricky.edges,
        comments: tricky.comments,
        inputs: tricky.inputs,
      }),
    );
  });

  it('sorts ids naturally and breaks ties by the text', () => {
    expect(['n10', 'n2', '1', '01', 'a'].sort(naturalCompare)).toEqual(['01', '1', 'a', 'n2', 'n10']);
  });

  it('refuses NaN, which is not JSON', () => {
    const bad: Workflow = {
      doc: '',
      nodes: [{ id: 'a', type: 'A', label: '', params: { x: Number.NaN }, position: { x: 0, y: 0 } }],
      edges: [],
    };
    expect(() => dumps(bad)).toThrow(WorkflowFormatError);
  });
});

describe('workflow inputs', () => {
  it('are written after doc, sorted, one line each, and read back through the canvas', () => {
    const text = dumps(tricky);
    expect(text).toContain(
      '  "inputs": {\n    "A": {"node": "n2", "param": "t"},\n    "b-2": {"node": "r9", "param": "x"},\n' +
        '    "z_in": {"node": "n10", "param": "a", "description": "Ünï \\"q\\""}\n  },\n  "nodes"',
    );
    const read = readWorkflow(text, 'tricky.json').workflow;
    expect(read.inputs).toEqual({ A: tricky.inputs?.A, 'b-2': { node: 'r9', param: 'x' }, z_in: tricky.inputs?.z_in });
    const { nodes, edges } = workflowToCanvas(read);
    const back = canvasToWorkflow({ nodes, edges }, read.doc);
    expect(back.inputs).toEqual({ A: tricky.inputs?.A, z_in: tricky.inputs?.z_in }); // r9 is not on the canvas
    expect(dumps({ ...tricky, inputs: {} })).not.toContain('"inputs"');
  });

  it('names a malformed inputs key', () => {
    const bad = (inputs: unknown) => () =>
      readWorkflow(
        JSON.stringify({ format: 'graphbook.workflow', version: 1, nodes: [], edges: [], inputs }),
        'w.json',
      );
    expect(bad([])).toThrow(/'inputs' must be an object/);
    expect(bad({ 'two words': { node: 'a', param: 'b' } })).toThrow(/'two words' is not a word/);
    expect(bad({ a: { node: 'a' } })).toThrow(/inputs\['a'\] needs a node id and a parameter name/);
  });
});

/** The tricky workflow as an app: narrowed inputs, and outputs shown. */
const app: Workflow = {
  ...tricky,
  inputs: {
    z_in: { node: 'n10', param: 'a', description: 'Ünï', minimum: 0, maximum: 2.5, choices: [0, 1.5, 'x'] },
    A: { node: 'n2', param: 't', picker: 'folder' },
    pic: { node: 'n2', param: 'p', picker: 'image', accept: ['.png', '.jpg'] },
  },
  outputs: {
    rows: { node: 'n10', output: 'out', kind: 'table', description: 'Ünï "q"' },
    pics: { node: 'n2', output: 'A', kind: 'images' },
  },
};

describe('an app: narrowed inputs and outputs shown', () => {
  it('are written one a line after doc, as Python writes them, and kept through the canvas', () => {
    const text = dumps(app);
    expect(text).toContain(
      '  "outputs": {\n    "pics": {"node": "n2", "output": "A", "kind": "images"},\n' +
        '    "rows": {"node": "n10", "output": "out", "kind": "table", "description": "Ünï \\"q\\""}\n  },\n  "nodes"',
    );
    expect(text).toContain(
      '"z_in": {"node": "n10", "param": "a", "description": "Ünï", "minimum": 0, "maximum": 2.5, "choices": [0, 1.5, "x"]}',
    );
    const expected = pythonDumps({ app: JSON.stringify({ format: 'graphbook.workflow', version: 1, ...app }) });
    if (expected) expect(text).toBe(expected.app);
    const read = readWorkflow(text, 'app.json').workflow;
    expect(read.outputs).toEqual(app.outputs);
    const { nodes, edges } = workflowToCanvas(read);
    const back = canvasToWorkflow({ nodes, edges }, read.doc);
    expect(back.inputs).toEqual(app.inputs);
    expect(back.outputs).toEqual(app.outputs);
    expect(dumps({ ...app, outputs: {} })).not.toContain('"outputs"');
  });

  it('names a malformed output or narrowing', () => {
    const bad = (more: object) => () =>
      readWorkflow(
        JSON.stringify({ format: 'graphbook.workflow', version: 1, nodes: [], edges: [], ...more }),
        'w.json',
      );
    expect(bad({ outputs: { a: { node: 'n', kind: 'chart' } } })).toThrow(/outputs\['a'\]: 'kind' is one of/);
    expect(bad({ inputs: { a: { node: 'n', param: 'p', picker: 'photo' } } })).toThrow(/'picker' is one of/);
    expect(bad({ inputs: { a: { node: 'n', param: 'p', minimum: '1' } } })).toThrow(/'minimum' must be a number/);
  });
});

describe('reading', () => {
  it('names what is wrong', () => {
    expect(() => readWorkflow('{', 'a.json')).toThrow(/a.json is not valid JSON/);
    expect(() =>
      readWorkflow('{"format": "graphbook.workflow", "version": 2, "nodes": [], "edges": []}', 'a.json'),
    ).toThrow(/version 2 is not supported/);
    expect(() => readWorkflow('{"nodes": []}', 'a.json')).toThrow(/not a workflow file/);
    expect(() =>
      readWorkflow('{"format": "graphbook.workflow", "version": 1, "nodes": [{"id": "x"}], "edges": []}', 'a.json'),
    ).toThrow(/needs a string 'type'/);
  });

  it('reads groups, leaving out ids that name no node, and names what is wrong with them', () => {
    const file = (groups: unknown): string =>
      JSON.stringify({
        format: 'graphbook.workflow',
        version: 1,
        nodes: [{ id: 'a', type: 'Copy' }],
        edges: [],
        groups,
      });
    const { workflow } = readWorkflow(file([{ id: 'g', nodes: ['a', 'ghost'] }]), 'w.json');
    expect(workflow.groups).toEqual([
      { id: 'g', label: '', position: { x: 0, y: 0 }, size: { width: 300, height: 200 }, nodes: ['a'] },
    ]);
    expect(readWorkflow(file([]), 'w.json').workflow.groups).toBeUndefined();
    const group = (fields: Record<string, unknown>): Record<string, unknown> => ({
      id: 'g',
      label: 'G',
      nodes: ['a'],
      ...fields,
    });
    const bad: [unknown, RegExp][] = [
      [{ g: {} }, /w.json: 'groups' must be a list, not an object/],
      [['g'], /groups\[0\] must be an object, not a string/],
      [[{ nodes: ['a'] }], /groups\[0\] needs a non-empty string 'id'/],
      [[group({ label: 3 })], /groups\[0\] \(id 'g'\): 'label' must be a string/],
      [[group({ nodes: 'a' })], /'nodes' must be a list of node ids/],
      [[group({ position: [1, 2] })], /'position' must be \{"x": number, "y": number\}/],
      [[group({ size: { width: 'wide', height: 2 } })], /'size' must be \{"width": number/],
      [[group({ size: { width: 0, height: 2 } })], /'size' must have a positive width and height/],
      [[group({}), group({ nodes: [] })], /two groups have id 'g'; ids must be unique/],
      [[group({ id: 'a' })], /group 'a' has the id of a node; give the group another id/],
      [[group({}), group({ id: 'h' })], /node 'a' is in groups 'g' and 'h'; a node can be in one group only/],
    ];
    for (const [groups, message] of bad)
      expect(() => readWorkflow(file(groups), 'w.json'), JSON.stringify(groups)).toThrow(message);
  });

  it('keeps unknown parameters and edges to missing nodes, so nothing is lost', () => {
    const text =
      '{"format": "graphbook.workflow", "version": 1, "nodes": [{"id": "a", "type": "Nope", "params": {"x": [1]}}], "edges": [{"source": "a", "output": "o", "target": "ghost"}]}';
    const { workflow } = readWorkflow(text, 'a.json');
    expect(workflow.nodes[0]?.params).toEqual({ x: [1] });
    expect(workflow.edges).toEqual([{ source: 'a', output: 'o', target: 'ghost', input: 'in' }]);
  });

  it('reads Graphbook 0.13 files, flattening groups', () => {
    const { workflow, format } = readWorkflow(readFileSync(graphbook013, 'utf8'), 'old.json');
    expect(format).toBe('graphbook013');
    expect(workflow.nodes.length).toBeGreaterThan(0);
  });

  it('resolves wires through a Graphbook 0.13 group', () => {
    const old = {
      version: '0',
      type: 'workflow',
      nodes: [
        { id: 'g', type: 'group', position: { x: 100, y: 100 }, data: {} },
        {
          id: 1,
          type: 'step',
          position: { x: 0, y: 0 },
          data: { name: 'Src', parameters: { n: { type: 'number', value: 3 } } },
        },
        {
          id: 2,
          type: 'step',
          parentId: 'g',
          position: { x: 10, y: 20 },
          data: { name: 'Dst', label: 'Dst', parameters: {} },
        },
        { id: 'x', type: 'export', position: { x: 0, y: 0 }, data: {} },
      ],
      edges: [
        { source: '1', sourceHandle: 'out', target: 'g', targetHandle: 'h' },
        { source: 'g', sourceHandle: 'h_inner', target: '2', targetHandle: 'in' },
        { source: '2', sourceHandle: 'out', target: 'x', targetHandle: 'in' },
      ],
    };
    const { workflow } = readWorkflow(JSON.stringify(old), 'old.json');
    expect(workflow.nodes.map((n) => [n.id, n.type, n.label, n.position])).toEqual([
      ['1', 'Src', '', { x: 0, y: 0 }],
      ['2', 'Dst', '', { x: 110, y: 120 }],
    ]);
    expect(workflow.nodes[0]?.params).toEqual({ n: 3 });
    expect(workflow.edges).toEqual([{ source: '1', output: 'out', target: '2', input: 'in' }]);
    expect(workflow.groups).toEqual([
      { id: 'g', label: '', position: { x: 100, y: 100 }, size: { width: 300, height: 200 }, nodes: ['2'] },
    ]);
  });

  it("keeps a Graphbook 0.13 node's data.module, unless it names no module", () => {
    const old = {
      version: '0',
      type: 'workflow',
      edges: [],
      nodes: [
        {
          id: 1,
          type: 'step',
          position: { x: 0, y: 0 },
          data: { name: 'Data', module: 'graphbook_huggingface.hf_datasets' },
        },
        { id: 2, type: 'step', position: { x: 0, y: 0 }, data: { name: 'Mine', module: 'transient_module' } },
      ],
    };
    const { workflow } = readWorkflow(JSON.stringify(old), 'old.json');
    expect(workflow.nodes.map((n) => n.module)).toEqual(['graphbook_huggingface.hf_datasets', undefined]);
    expect(dumps(workflow)).toContain('"module": "graphbook_huggingface.hf_datasets"');
  });

  it('refuses subflows with a way out', () => {
    const old = {
      version: '0',
      type: 'workflow',
      nodes: [{ id: 9, type: 'subflow', data: { filename: 'clean.json' } }],
      edges: [],
    };
    expect(() => readWorkflow(JSON.stringify(old), 'main.json')).toThrow(
      /subflow of clean.json; subflows are not supported/,
    );
  });
});
