// Workflow file <-> canvas, groups included.

import { describe, expect, it } from 'vitest';
import type { FlowNode } from '../canvas/types';
import { groupNodes, ungroup } from '../store/groups';
import { canvasGroups, canvasToWorkflow, workflowToCanvas } from '../workflow/canvas';
import { type Workflow, dumps } from '../workflow/format';

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

  it('makes positions relative to a group on the canvas and absolute in the file', () => {
    const group = { id: 'g', label: 'Mine', position: { x: 250, y: 50 }, size: { width: 400, height: 200 }, nodes: ['b'] };
    const canvas = workflowToCanvas(workflow, [group]);
    expect(canvas.nodes[0]?.id).toBe('g');
    const b = canvas.nodes.find((n) => n.id === 'b') as FlowNode;
    expect(b.parentId).toBe('g');
    expect(b.position).toEqual({ x: 50, y: 30 });
    expect(dumps(canvasToWorkflow(canvas, 'd'))).toBe(dumps(workflow));
    expect(canvasGroups(canvas)).toEqual([group]);
  });

  it('groups and ungroups without moving anything', () => {
    const canvas = workflowToCanvas(workflow);
    const grouped = groupNodes(canvas.nodes, new Set(['a', 'b']));
    expect(grouped[0]?.type).toBe('group');
    expect(grouped.filter((n) => n.parentId === grouped[0]?.id).map((n) => n.id)).toEqual(['a', 'b']);
    expect(dumps(canvasToWorkflow({ nodes: grouped, edges: canvas.edges }, 'd'))).toBe(dumps(workflow));
    const back = ungroup(grouped, new Set([grouped[0]?.id ?? '']));
    expect(back.some((n) => n.type === 'group')).toBe(false);
    expect(dumps(canvasToWorkflow({ nodes: back, edges: canvas.edges }, 'd'))).toBe(dumps(workflow));
  });
});
