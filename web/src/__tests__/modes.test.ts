// Bypassed and muted nodes (as graphbook/modes.py takes them out), reroute points, and the
// editor's actions for both.

import { beforeEach, describe, expect, it } from 'vitest';
import { withPoint, wirePath } from '../workflow/reroute';
import { isGraphNode } from '../workflow/flow';
import { currentWorkflow, useEditor } from '../store/editor';
import { type Workflow, dumps, parseCanonical } from '../workflow/format';
import { liveEdges, runningPart } from '../workflow/modes';
import { validate } from '../workflow/validate';
import { catalog } from './fixtures';

const wire = (source: string, target: string, output = 'out', input = 'in') => ({ source, output, target, input });

function chain(): Workflow {
  return {
    doc: '',
    nodes: [
      { id: 'rows', type: 'Greetings', label: '', params: { count: 3 }, position: { x: 0, y: 0 } },
      { id: 'split', type: 'Split', label: '', params: {}, position: { x: 300, y: 0 } },
      { id: 'high', type: 'Shout', label: '', params: {}, position: { x: 600, y: 0 } },
      { id: 'low', type: 'Shout', label: '', params: {}, position: { x: 600, y: 200 } },
    ],
    edges: [wire('rows', 'split'), wire('split', 'high', 'A'), wire('split', 'low', 'B')],
  };
}

describe('bypass and mute', () => {
  it('wires what feeds a bypassed step to everything it fed, and cuts a muted one off', () => {
    const edges = chain().edges;
    expect(liveEdges(edges, new Map([['split', 'bypass']]))).toEqual([wire('rows', 'high'), wire('rows', 'low')]);
    expect(liveEdges(edges, new Map([['split', 'mute']]))).toEqual([]);
    expect(liveEdges(edges, new Map([['rows', 'bypass']]))).toEqual([
      wire('split', 'high', 'A'),
      wire('split', 'low', 'B'),
    ]);
    const twoInARow = [wire('a', 'b'), wire('b', 'c'), wire('c', 'd')];
    expect(
      liveEdges(
        twoInARow,
        new Map([
          ['b', 'bypass'],
          ['c', 'bypass'],
        ]),
      ),
    ).toEqual([wire('a', 'd')]);
  });

  it('does not check a node that does not run: a bypassed Split needs no split_fn', () => {
    const workflow = chain();
    expect(validate(workflow, catalog).map((p) => p.message)).toContain("required parameter 'split_fn' has no value");
    const bypassed = {
      ...workflow,
      nodes: workflow.nodes.map((n) => (n.id === 'split' ? { ...n, mode: 'bypass' as const } : n)),
    };
    expect(validate(bypassed, catalog)).toEqual([]);
    expect(runningPart(bypassed).nodes.map((n) => n.id)).toEqual(['rows', 'high', 'low']);
  });

  it('reads and writes the mode, writes nothing for a node that runs, and names a bad one', () => {
    const text = dumps({
      ...chain(),
      nodes: chain().nodes.map((n) => (n.id === 'low' ? { ...n, mode: 'mute' as const } : n)),
    });
    expect(text).toContain('"position": {"x": 600, "y": 200},\n      "mode": "mute"\n');
    expect(parseCanonical(JSON.parse(text), 'f').nodes.find((n) => n.id === 'low')?.mode).toBe('mute');
    expect(dumps(chain())).not.toContain('"mode"');
    const bad = JSON.parse(text) as { nodes: { mode?: string }[] };
    (bad.nodes[1] as { mode?: string }).mode = 'off';
    expect(() => parseCanonical(bad, 'f.json')).toThrow(/'mode' must be "bypass" or "mute"/);
  });
});

describe('reroute points', () => {
  it('goes through every point, level at each', () => {
    const path = wirePath({ x: 0, y: 0 }, [{ x: 100, y: 50 }], { x: 200, y: 0 });
    expect(path).toBe('M 0,0 C 50,0 50,50 100,50 C 150,50 150,0 200,0');
  });

  it('puts a new point between the two it is nearest to', () => {
    const points = [
      { x: 100, y: 0 },
      { x: 200, y: 0 },
    ];
    const ends = [
      { x: 0, y: 0 },
      { x: 300, y: 0 },
    ] as const;
    expect(withPoint(ends[0], points, ends[1], { x: 150, y: 10 })).toEqual([
      { x: 100, y: 0 },
      { x: 150, y: 10 },
      { x: 200, y: 0 },
    ]);
    expect(withPoint(ends[0], points, ends[1], { x: 20, y: 5 })[0]).toEqual({ x: 20, y: 5 });
    expect(withPoint(ends[0], [], ends[1], { x: 20, y: 5 })).toEqual([{ x: 20, y: 5 }]);
  });

  it('leave the wire the same wire: its types are checked as before', () => {
    const workflow = chain();
    workflow.nodes.push({
      id: 'fn',
      type: 'Function',
      label: '',
      params: { val: 'lambda d: 3' },
      position: { x: 0, y: 300 },
    });
    workflow.edges.push({ ...wire('fn', 'rows', 'resource', 'count'), points: [{ x: 50, y: 200 }] });
    const messages = validate(workflow, catalog).map((p) => p.message);
    expect(messages).toContain(
      "parameter 'count' expects a whole number, but resource 'fn' (Function) gives Python source of a function (a `def` or a `lambda`)",
    );
  });

  it('are saved on their edge, rounded, and read back', () => {
    const workflow = { ...chain(), edges: [{ ...wire('rows', 'split'), points: [{ x: 10.04, y: 20.25 }] }] };
    const text = dumps(workflow);
    expect(text).toContain(
      '{"source": "rows", "output": "out", "target": "split", "input": "in", "points": [{"x": 10, "y": 20.2}]}',
    );
    expect(parseCanonical(JSON.parse(text), 'f').edges[0]?.points).toEqual([{ x: 10, y: 20.2 }]);
    expect(() =>
      parseCanonical({ ...JSON.parse(text), edges: [{ ...wire('a', 'b'), points: [{ x: 1 }] }] }, 'f.json'),
    ).toThrow(/edges\[0\]: points\[0\] must be \{"x": number, "y": number\}/);
  });
});

describe('the editor', () => {
  const editor = () => useEditor.getState();
  const modeOf = (id: string) => {
    const node = editor().nodes.find((n) => n.id === id);
    return node && isGraphNode(node) ? node.data.mode : 'missing';
  };
  beforeEach(() => editor().open({ path: 'w.json', format: 'canonical', hash: '' }, chain()));

  it('bypasses the selection with Ctrl+B, and turns it back on the second time, each one undo step', () => {
    editor().select(['split', 'low']);
    editor().toggleMode('bypass');
    expect([modeOf('split'), modeOf('low'), modeOf('rows')]).toEqual(['bypass', 'bypass', undefined]);
    expect(currentWorkflow(editor()).workflow.nodes.find((n) => n.id === 'split')?.mode).toBe('bypass');
    editor().toggleMode('mute');
    expect(modeOf('split')).toBe('mute');
    editor().toggleMode('mute');
    expect(modeOf('split')).toBeUndefined();
    editor().undo();
    expect(modeOf('split')).toBe('mute');
    editor().undo();
    expect(modeOf('split')).toBe('bypass');
  });

  it('moves reroute points without an undo step until one is let go', () => {
    const id = editor().edges[0]?.id ?? '';
    editor().setPoints(id, [{ x: 1, y: 1 }]);
    editor().setPoints(id, [{ x: 5, y: 5 }], false);
    editor().setPoints(id, [{ x: 9, y: 9 }], true);
    expect(currentWorkflow(editor()).workflow.edges.find((e) => e.source === 'rows')?.points).toEqual([{ x: 9, y: 9 }]);
    editor().undo();
    expect(editor().edges[0]?.data?.points).toEqual([{ x: 1, y: 1 }]);
  });

  it("carries a wire's points when both its ends move together (also inside a moved group), not when one does", () => {
    const [first, second] = editor().edges.map((e) => e.id);
    editor().setPoints(first ?? '', [{ x: 150, y: 40 }]);
    editor().setPoints(second ?? '', [{ x: 450, y: 40 }]);
    const points = (source: string) => editor().edges.find((e) => e.source === source)?.data?.points;
    editor().onNodesChange([{ type: 'position', id: 'split', position: { x: 300, y: 50 }, dragging: true }]);
    expect([points('rows'), points('split')]).toEqual([[{ x: 150, y: 40 }], [{ x: 450, y: 40 }]]);
    editor().onNodesChange([
      { type: 'position', id: 'rows', position: { x: 10, y: 20 }, dragging: true },
      { type: 'position', id: 'split', position: { x: 310, y: 70 }, dragging: true },
    ]);
    expect([points('rows'), points('split')]).toEqual([[{ x: 160, y: 60 }], [{ x: 450, y: 40 }]]);
    editor().select(['rows', 'split']);
    editor().groupSelection();
    const group = editor().nodes.find((n) => n.type === 'group');
    if (!group) throw new Error('no group');
    editor().onNodesChange([
      { type: 'position', id: group.id, position: { x: group.position.x - 100, y: group.position.y }, dragging: true },
    ]);
    expect([points('rows'), points('split')]).toEqual([[{ x: 60, y: 60 }], [{ x: 450, y: 40 }]]);
  });

  it('copies a node with its mode, and moves the points of the wires it pastes with the nodes', () => {
    const id = editor().edges[0]?.id ?? '';
    editor().setPoints(id, [{ x: 150, y: 40 }]);
    editor().setMode(['split'], 'bypass');
    editor().select(['rows', 'split']);
    const clip = editor().copySelection();
    expect(clip).not.toBeNull();
    editor().paste(clip!, { x: 1000, y: 1000 });
    const pasted = editor().edges.find((e) => e.source === 'rows_2');
    expect(pasted?.data?.points).toEqual([{ x: 1150, y: 1040 }]);
    expect(modeOf('split_2')).toBe('bypass');
  });
});
