// Adding reroute points to a wire from the canvas (double-click, or the wire's menu).

import type { ReactFlowInstance } from '@xyflow/react';
import { useEditor } from '../store/editor';
import type { Point } from '../workflow/format';
import { withPoint } from '../workflow/reroute';
import type { FlowEdge } from '../workflow/flow';

type Flow = Pick<ReactFlowInstance, 'getInternalNode'>;

/** Where a wire leaves its source and enters its target, in flow coordinates. */
function wireEnds(flow: Flow, edge: FlowEdge): [Point, Point] {
  const end = (nodeId: string, handleId: string | null | undefined, side: 'source' | 'target'): Point => {
    const node = flow.getInternalNode(nodeId);
    if (!node) return { x: 0, y: 0 };
    const origin = node.internals.positionAbsolute;
    const handles = node.internals.handleBounds?.[side] ?? [];
    const handle = handles.find((h) => h.id === handleId) ?? handles[0];
    if (!handle) return origin;
    return { x: origin.x + handle.x + handle.width / 2, y: origin.y + handle.y + handle.height / 2 };
  };
  return [end(edge.source, edge.sourceHandle, 'source'), end(edge.target, edge.targetHandle, 'target')];
}

/** Puts a reroute point at `at` on wire `edgeId`, between the points it passes nearest. */
export function addReroutePoint(flow: Flow, edgeId: string, at: Point): void {
  const editor = useEditor.getState();
  const edge = editor.edges.find((e) => e.id === edgeId);
  if (!edge) return;
  const [source, target] = wireEnds(flow, edge);
  editor.setPoints(edgeId, withPoint(source, edge.data?.points ?? [], target, at));
}
