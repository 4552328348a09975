// The editing canvas: React Flow over the editor store, with dropping, wiring and searching.

import { useCallback } from 'react';
import type { DragEvent, MouseEvent } from 'react';
import {
  Background,
  BackgroundVariant,
  ConnectionLineType,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
} from '@xyflow/react';
import type { Edge } from '@xyflow/react';
import { usePointer } from '../hooks/usePointer';
import { EmptyCanvasTemplates } from '../panels/TemplateGallery';
import { useShortcuts } from '../hooks/useShortcuts';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { ComponentPath } from './ComponentPath';
import { ConnectionHint } from './ConnectionHint';
import { ContextMenu } from './ContextMenu';
import { NodeSearch } from './NodeSearch';
import { edgeTypes, nodeTypes } from './nodeTypes';
import { addReroutePoint } from './rerouteActions';
import type { FlowNode } from '../workflow/flow';
import {
  isValidConnection,
  onConnect,
  onConnectEnd,
  onDragStop,
  onEdgeMenu,
  onNodeDoubleClick,
  onNodeMenu,
  onPaneDoubleClick,
  onPaneMenu,
  onSelectionChange,
} from './canvasEvents';
import { useFitted } from './useFitted';

export { READABLE_ZOOM } from './useFitted';

export const DRAG_TYPE = 'application/x-graphbook-node';

function allowDrop(event: DragEvent): void {
  event.preventDefault();
  event.dataTransfer.dropEffect = 'copy';
}

function minimapColor(node: FlowNode): string {
  if (node.type === 'comment') return 'var(--gb-comment)';
  return node.type === 'group' ? 'var(--gb-group)' : 'var(--gb-minimap-node)';
}

/** The minimap's size: smaller on a narrow window, where the default covered a node or two. */
function minimapSize(): { width: number; height: number } {
  return window.innerWidth < 1600 ? { width: 140, height: 96 } : { width: 200, height: 140 };
}

/** What React Flow's handlers need the viewport for: dropping a node, a reroute point, the minimap. */
function useFlowHandlers() {
  const flow = useReactFlow();
  const onDrop = useCallback(
    (event: DragEvent) => {
      // A workflow file goes on to the page's handler (hooks/useFileDrop.ts).
      const type = event.dataTransfer.getData(DRAG_TYPE);
      if (!type) return;
      event.preventDefault();
      useEditor.getState().addNode(type, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [flow],
  );
  /** A double-click on a wire puts a reroute point there, to drag the wire along. */
  const onEdgeDoubleClick = useCallback(
    (event: MouseEvent, edge: Edge) => {
      event.stopPropagation();
      addReroutePoint(flow, edge.id, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [flow],
  );
  return { onDrop, onEdgeDoubleClick };
}

function CanvasMiniMap() {
  const flow = useReactFlow();
  /** A click on the minimap centres the canvas there, at the zoom it has. */
  const onClick = useCallback(
    (_event: MouseEvent, at: { x: number; y: number }) =>
      void flow.setCenter(at.x, at.y, { zoom: flow.getZoom(), duration: 200 }),
    [flow],
  );
  return (
    <MiniMap pannable zoomable nodeColor={minimapColor} nodeStrokeWidth={0} onClick={onClick} style={minimapSize()} />
  );
}

/** React Flow's settings and handlers that do not change from one render to the next. */
const FIXED = {
  nodeTypes,
  edgeTypes,
  onConnect,
  onConnectEnd,
  isValidConnection,
  onNodeDragStop: onDragStop,
  onSelectionDragStop: onDragStop,
  onSelectionChange,
  onDoubleClick: onPaneDoubleClick,
  onNodeContextMenu: onNodeMenu,
  onNodeDoubleClick,
  onEdgeContextMenu: onEdgeMenu,
  onPaneContextMenu: onPaneMenu,
  deleteKeyCode: null,
  selectionKeyCode: 'Shift',
  multiSelectionKeyCode: ['Shift', 'Control', 'Meta'],
  zoomOnDoubleClick: false,
  connectionLineType: ConnectionLineType.Bezier,
  minZoom: 0.1,
  maxZoom: 2,
  proOptions: { hideAttribution: true },
};

/** What lies over the canvas: the component path, node search, context menu, and the hints of an empty one. */
function CanvasOverlays({ empty }: { empty: boolean }) {
  const hasFile = useEditor((s) => !!s.file);
  return (
    <>
      <ComponentPath />
      <NodeSearch />
      <ContextMenu />
      {!hasFile ? <div className="gb-canvas-empty">Open a workflow on the left, or create one.</div> : null}
      {hasFile && empty ? (
        <div className="gb-canvas-hint">
          Drag a node here from the Nodes tab, double-click the canvas to add one by name, or start from a template
          below.
        </div>
      ) : null}
      <EmptyCanvasTemplates />
    </>
  );
}

export function Canvas() {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const onNodesChange = useEditor((s) => s.onNodesChange);
  const onEdgesChange = useEditor((s) => s.onEdgesChange);
  const theme = useUi((s) => s.theme);
  const onPointer = usePointer();
  useShortcuts();
  const ready = useFitted();
  const { onDrop, onEdgeDoubleClick } = useFlowHandlers();
  return (
    <div className="gb-canvas" data-ready={ready} onMouseMove={onPointer} onDragOver={allowDrop} onDrop={onDrop}>
      <ReactFlow<FlowNode, Edge>
        {...FIXED}
        nodes={nodes}
        edges={edges}
        onEdgeDoubleClick={onEdgeDoubleClick}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        colorMode={theme}
      >
        <Background variant={BackgroundVariant.Dots} gap={20} size={1.2} />
        {nodes.length ? <CanvasMiniMap /> : null}
        <Controls showInteractive={false} />
        <ConnectionHint />
      </ReactFlow>
      <CanvasOverlays empty={!nodes.length} />
    </div>
  );
}
