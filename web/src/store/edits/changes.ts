// The editor's edits made on the canvas itself: React Flow's node and edge changes, new wires, wire points.

import { type Connection, applyEdgeChanges, applyNodeChanges } from '@xyflow/react';
import type { Catalog } from '../../catalog';
import { absolutePosition, toFlowEdge } from '../../workflow/canvas';
import { specOf } from '../../workflow/components';
import { connectionProblem, replacedEdges } from '../../workflow/connections';
import { type FlowEdge, type FlowNode, isGraphNode } from '../../workflow/flow';
import type { Point } from '../../workflow/format';
import { carryPoints } from '../../workflow/reroute';
import type { EditorState, GetEditor, SetEditor } from '../editorState';
import type { Commits } from './commits';

type ChangeActions = Pick<EditorState, 'onNodesChange' | 'onEdgesChange' | 'connect' | 'setPoints'>;

/** How far each node moved on the canvas from `before` to `after` (a group's members move with it); only those that did. */
function offsets(before: FlowNode[], after: FlowNode[]): Map<string, Point> {
  const was = new Map(before.map((n) => [n.id, n]));
  const now = new Map(after.map((n) => [n.id, n]));
  const moved = new Map<string, Point>();
  for (const node of after) {
    const old = was.get(node.id);
    if (!old) continue;
    const a = absolutePosition(old, was);
    const b = absolutePosition(node, now);
    if (a.x !== b.x || a.y !== b.y) moved.set(node.id, { x: b.x - a.x, y: b.y - a.y });
  }
  return moved;
}

export function changeActions(set: SetEditor, get: GetEditor, commits: Commits): ChangeActions {
  return {
    onNodesChange(changes) {
      const structural = changes.some((c) => c.type === 'remove' || c.type === 'add');
      const resized = changes.some((c) => c.type === 'dimensions' && c.setAttributes && c.resizing === false);
      // A resized graph node keeps its width; its height follows its content.
      const before = get().nodes;
      const nodes = applyNodeChanges(changes, before).map((n) =>
        n.type !== 'group' && n.height !== undefined ? { ...n, height: undefined } : n,
      );
      // Dragged together, two nodes (or a group) take the reroute points of the wires between them along.
      const moved = changes.some((c) => c.type === 'position' && c.position)
        ? offsets(before, nodes)
        : new Map<string, Point>();
      const edges = carryPoints(get().edges, moved);
      set(edges === get().edges ? { nodes } : { nodes, edges });
      if (structural || resized) commits.now();
    },
    onEdgesChange(changes) {
      const structural = changes.some((c) => c.type === 'remove' || c.type === 'add');
      set({ edges: applyEdgeChanges(changes, get().edges) });
      if (structural) commits.now();
    },
    connect(connection, catalog) {
      const edges = connected(connection, get().nodes, get().edges, catalog);
      if (typeof edges === 'string') return edges;
      set({ edges });
      commits.now();
      return null;
    },
    setPoints(edgeId, points, commit = true) {
      set({
        edges: get().edges.map((e) => {
          if (e.id !== edgeId) return e;
          return { ...e, data: points.length ? { ...e.data, points } : {} };
        }),
      });
      if (commit) commits.now();
    },
  };
}

/** The wires once `connection` is made, or why it cannot be. */
function connected(
  connection: Connection,
  nodes: FlowNode[],
  edges: FlowEdge[],
  catalog: Catalog,
): FlowEdge[] | string {
  const problem = connectionProblem(connection, nodes, edges, catalog);
  if (problem) return problem;
  const source = nodes.find((n) => n.id === connection.source);
  const spec = source && isGraphNode(source) ? specOf(source.data, catalog) : undefined;
  const edge = toFlowEdge({
    source: connection.source,
    output: connection.sourceHandle ?? spec?.outputs[0] ?? 'out',
    target: connection.target,
    input: connection.targetHandle ?? 'in',
  });
  return [...replacedEdges(connection, edges), edge];
}
