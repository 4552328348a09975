// A wire on the canvas: React Flow's curve, or a curve through the reroute points the person
// placed on it, each a dot they can drag (double-click one to remove it).

import { memo } from 'react';
import type { PointerEvent } from 'react';
import { BaseEdge, EdgeLabelRenderer, type EdgeProps, getBezierPath, useReactFlow } from '@xyflow/react';
import { useEditor } from '../store/editor';
import type { Point } from '../workflow/format';
import { wirePath } from '../workflow/reroute';
import type { FlowEdge } from '../workflow/flow';

function pointsOf(edgeId: string): Point[] {
  return useEditor.getState().edges.find((e) => e.id === edgeId)?.data?.points ?? [];
}

function RerouteDot({ edgeId, index, point }: { edgeId: string; index: number; point: Point }) {
  const { screenToFlowPosition } = useReactFlow();
  const moveTo = (event: PointerEvent, commit: boolean): void => {
    const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
    const points = pointsOf(edgeId).map((p, i) => (i === index ? { x: at.x, y: at.y } : p));
    useEditor.getState().setPoints(edgeId, points, commit);
  };
  return (
    <div
      className="gb-reroute nodrag nopan"
      data-edge={edgeId}
      data-index={index}
      title="reroute point: drag to move the wire, double-click to remove"
      style={{ transform: `translate(-50%, -50%) translate(${point.x}px, ${point.y}px)` }}
      onPointerDown={(event) => {
        event.stopPropagation();
        event.currentTarget.setPointerCapture(event.pointerId);
      }}
      onPointerMove={(event) => {
        if (event.currentTarget.hasPointerCapture(event.pointerId)) moveTo(event, false);
      }}
      onPointerUp={(event) => {
        if (!event.currentTarget.hasPointerCapture(event.pointerId)) return;
        event.currentTarget.releasePointerCapture(event.pointerId);
        moveTo(event, true);
      }}
      onDoubleClick={(event) => {
        event.stopPropagation();
        useEditor.getState().setPoints(
          edgeId,
          pointsOf(edgeId).filter((_, i) => i !== index),
        );
      }}
    />
  );
}

function WireEdgeView(props: EdgeProps<FlowEdge>) {
  const {
    id,
    sourceX,
    sourceY,
    targetX,
    targetY,
    sourcePosition,
    targetPosition,
    data,
    markerEnd,
    style,
    interactionWidth,
  } = props;
  const points = data?.points ?? [];
  const path = points.length
    ? wirePath({ x: sourceX, y: sourceY }, points, { x: targetX, y: targetY })
    : getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition })[0];
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={style} interactionWidth={interactionWidth} />
      {points.length ? (
        <EdgeLabelRenderer>
          {points.map((p, i) => (
            <RerouteDot key={i} edgeId={id} index={i} point={p} />
          ))}
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
}

export const WireEdge = memo(WireEdgeView);
