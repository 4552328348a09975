// Workflow file <-> canvas, groups included.

import { describe, expect, it } from 'vitest';
import type { FlowNode } from '../workflow/flow';
import { groupNodes, ungroup } from '../store/groups';
import { canvasGroups, canvasToWorkflow, workflowToCanvas } from '../workflow/canvas';
import { type Workflow, type WorkflowGroup, dumps } from '../workflow/format';
import { readWorkflow } from '../workflow/load';

const workflow: Workflow = {
  doc: 'd',
  nodes: [
    { id: 'a', type: 'Greetings', label: '', params: { count: 3 }, position: { x: 0, y: 100 } },
    { id: 'b', type: 'Shout', label: 'Loud', params: { loud: true }, position: { x: 300, y: 80 } },
    { id: 'n', type: 'Number', label: '', params: {}, position: { x: 0, y: 300 } },
  ],
  edges: [
    { source: 'a', output: 'out', target: 'b', input: 'in' },
    { source: 'n', output: 'resource', target: 'b', input: 'level' },
  ],
};

describe('workflow <-> canvas', () => {
  it('round-trips a workflow unchanged', () => {
    const canvas = workflowToCanvas(workflow);
    expect(dumps(canvasToWorkflow(canvas, 'd'))).toBe(dumps(workflow));
    expect(canvas.edges.map((e) => e.id)).toEqual(['a:out->b:in', 'n:resource->b:level']);
    expect(canvas.edges[1]?.className).toBe('gb-edge-resource');
  });

  it("keeps a node's module through the canvas", () => {
    const withModule = {
      ...workflow,
      nodes: workflow.nodes.map((n) => (n.id === 'a' ? { ...n, module: 'plugin.nodes' } : n)),
    };
    expect(dumps(canvasToWorkflow(workflowToCanvas(withModule), 'd'))).toBe(dumps(withModule));
  });

  it('makes positions relative to a group on the canvas and absolute in the file', () => {
    const group = {
      id: 'g',
      label: 'Mine',
      position: { x: 250, y: 50 },
      size: { width: 400, height: 200 },
      nodes: ['b'],
    };
    const canvas = workflowToCanvas({ ...workflow, groups: [group] });
    expect(canvas.nodes[0]?.id).toBe('g');
    const b = canvas.nodes.find((n) => n.id === 'b') as FlowNode;
    expect(b.parentId).toBe('g');
    expect(b.position).toEqual({ x: 50, y: 30 });
    expect(dumps(canvasToWorkflow(canvas, 'd'))).toBe(dumps({ ...workflow, groups: [group] }));
    expect(canvasGroups(canvas)).toEqual([group]);
  });

  it('groups and ungroups without moving anything', () => {
    const canvas = workflowToCanvas(workflow);
    const grouped = groupNodes(canvas.nodes, new Set(['a', 'b']));
    expect(grouped[0]?.type).toBe('group');
    expect(grouped.filter((n) => n.parentId === grouped[0]?.id).map((n) => n.id)).toEqual(['a', 'b']);
    const { groups, ...rest } = canvasToWorkflow({ nodes: grouped, edges: canvas.edges }, 'd');
    expect(dumps(rest)).toBe(dumps(workflow));
    expect(groups?.map((g) => [g.id, g.label, g.nodes])).toEqual([['group', 'Group', ['a', 'b']]]);
    const back = ungroup(grouped, new Set([grouped[0]?.id ?? '']));
    expect(back.some((n) => n.type === 'group')).toBe(false);
    expect(dumps(canvasToWorkflow({ nodes: back, edges: canvas.edges }, 'd'))).toBe(dumps(workflow));
  });
});

describe('groups in the file', () => {
  const group: WorkflowGroup = {
    id: 'g',
    label: 'Talkers',
    position: { x: -40, y: 12.5 },
    size: { width: 700, height: 260 },
    nodes: ['b', 'a'],
  };
  const grouped: Workflow = { ...workflow, groups: [group] };

  it('survive file -> canvas -> file byte for byte', () => {
    const text = dumps(grouped);
    expect(text).toContain('"groups": [');
    expect(text).toContain('      "nodes": ["a", "b"]\n');
    const canvas = workflowToCanvas(readWorkflow(text, 'g.json').workflow);
    expect(canvas.nodes.filter((n) => n.parentId === 'g').map((n) => n.id)).toEqual(['a', 'b']);
    expect(dumps(canvasToWorkflow(canvas, 'd'))).toBe(text);
  });

  it('leave no groups key when there are none', () => {
    const text = dumps(canvasToWorkflow(workflowToCanvas({ ...workflow, groups: [] }), 'd'));
    expect(text).not.toContain('groups');
    expect(text).toBe(dumps(workflow));
    const ungrouped = ungroup(workflowToCanvas(grouped).nodes, new Set(['g']));
    expect(canvasToWorkflow({ nodes: ungrouped, edges: [] }, 'd').groups).toBeUndefined();
  });

  it('save where a group was moved and resized, with its nodes moved along', () => {
    const canvas = workflowToCanvas(grouped);
    const nodes = canvas.nodes.map((n) =>
      n.id === 'g' ? { ...n, position: { x: 60, y: 112.54 }, width: 810, height: 300 } : n,
    );
    const saved = canvasToWorkflow({ nodes, edges: canvas.edges }, 'd');
    expect(saved.groups).toEqual([
      { ...group, position: { x: 60, y: 112.5 }, size: { width: 810, height: 300 }, nodes: ['a', 'b'] },
    ]);
    expect(saved.nodes.find((n) => n.id === 'a')?.position).toEqual({ x: 100, y: expect.closeTo(200.04, 6) as number });
  });
});
