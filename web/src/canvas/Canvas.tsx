// The editing canvas: React Flow over the editor store, with dropping, wiring and searching.

import { useCallback, useEffect, useState } from 'react';
import type { DragEvent, MouseEvent } from 'react';
import {
  Background,
  BackgroundVariant,
  ConnectionLineType,
  Controls,
  MiniMap,
  ReactFlow,
  useNodesInitialized,
  useReactFlow,
} from '@xyflow/react';
import type { Connection, Edge, FinalConnectionState, ReactFlowInstance } from '@xyflow/react';
import { openComponent } from '../actions/components';
import { usePointer } from '../hooks/usePointer';
import { EmptyCanvasTemplates } from '../panels/TemplateGallery';
import { useShortcuts } from '../hooks/useShortcuts';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { ComponentPath } from './ComponentPath';
import { ConnectionHint, wireOf } from './ConnectionHint';
import { ContextMenu } from './ContextMenu';
import { connectionProblem } from '../workflow/connections';
import { NodeSearch } from './NodeSearch';
import { edgeTypes, nodeTypes } from './nodeTypes';
import { addReroutePoint } from './rerouteActions';
import type { FlowNode } from '../workflow/flow';

export const DRAG_TYPE = 'application/x-graphbook-node';

function allowDrop(event: DragEvent): void {
  event.preventDefault();
  event.dataTransfer.dropEffect = 'copy';
}

/** Below this zoom node labels are too small to read. */
export const READABLE_ZOOM = 0.75;

/**
 * Fits the workflow in view; when that would make it unreadably small, shows it at a readable
 * zoom from its left edge instead (where a pipeline starts), centred vertically if it fits.
 */
async function fitReadable(flow: ReactFlowInstance): Promise<void> {
  await flow.fitView({ padding: 0.15, maxZoom: 1 });
  if (flow.getViewport().zoom >= READABLE_ZOOM) return;
  const bounds = flow.getNodesBounds(flow.getNodes());
  const pane = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  const height = bounds.height * READABLE_ZOOM;
  const top = pane && height < pane.height - 60 ? (pane.height - height) / 2 : 40;
  await flow.setViewport({ x: 40 - bounds.x * READABLE_ZOOM, y: top - bounds.y * READABLE_ZOOM, zoom: READABLE_ZOOM });
}

function minimapColor(node: FlowNode): string {
  if (node.type === 'comment') return 'var(--gb-comment)';
  return node.type === 'group' ? 'var(--gb-group)' : 'var(--gb-minimap-node)';
}

/** The minimap's size: smaller on a narrow window, where the default covered a node or two. */
function minimapSize(): { width: number; height: number } {
  return window.innerWidth < 1600 ? { width: 140, height: 96 } : { width: 200, height: 140 };
}

export function Canvas() {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const revision = useEditor((s) => s.revision);
  const onNodesChange = useEditor((s) => s.onNodesChange);
  const onEdgesChange = useEditor((s) => s.onEdgesChange);
  const theme = useUi((s) => s.theme);
  const flow = useReactFlow();
  const onPointer = usePointer();
  useShortcuts();

  const measured = useNodesInitialized();
  const [fitted, setFitted] = useState(-1);
  useEffect(() => {
    if (fitted === revision || (!measured && nodes.length)) return;
    if (!nodes.length) return setFitted(revision);
    void fitReadable(flow).then(() => setFitted(revision));
  }, [revision, measured, fitted, nodes.length, flow]);

  const isValidConnection = useCallback((wire: Edge | Connection) => {
    const { nodes: all, edges: wires } = useEditor.getState();
    return connectionProblem(wire, all, wires, useCatalog.getState().catalog) === null;
  }, []);
  const onConnect = useCallback((wire: Connection) => {
    const problem = useEditor.getState().connect(wire, useCatalog.getState().catalog);
    if (problem) useUi.getState().notify(problem, 'error');
  }, []);
  /** A wire dropped on empty canvas opens the node search to join it; one dropped on a handle that refuses it says why. */
  const onConnectEnd = useCallback((event: globalThis.MouseEvent | TouchEvent, state: FinalConnectionState) => {
    if (!state.fromHandle || !state.fromNode) return;
    const point = 'changedTouches' in event ? event.changedTouches[0] : event;
    if (!point) return;
    const wire = wireOf(state);
    if (state.toHandle && state.isValid === false && wire) {
      const { nodes: all, edges: wires } = useEditor.getState();
      const problem = connectionProblem(wire, all, wires, useCatalog.getState().catalog);
      if (problem) useUi.getState().notify(`Not wired: ${problem}`, 'error');
      return;
    }
    if (state.toNode || !(event.target as HTMLElement).classList.contains('react-flow__pane')) return;
    const from = {
      node: state.fromNode.id,
      handle: state.fromHandle.id ?? (state.fromHandle.type === 'source' ? 'out' : 'in'),
      side: state.fromHandle.type,
    };
    useUi.getState().openSearch({ x: point.clientX, y: point.clientY, from });
  }, []);
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
  const onDoubleClick = useCallback((event: MouseEvent) => {
    const target = event.target as HTMLElement;
    if (!target.classList.contains('react-flow__pane')) return;
    useUi.getState().openSearch({ x: event.clientX, y: event.clientY });
  }, []);
  const onSelectionChange = useCallback(({ nodes: picked }: { nodes: FlowNode[] }) => {
    const one = picked.length === 1 && picked[0]?.type === 'graph' ? picked[0].id : null;
    const ui = useUi.getState();
    if (one && one !== ui.inspected) ui.inspect(one);
    if (!picked.length && ui.inspected && !useEditor.getState().nodes.some((n) => n.id === ui.inspected))
      ui.inspect(null);
  }, []);

  /** A double-click on a component node opens it in place (the path above the canvas leads back out). */
  const onNodeDoubleClick = useCallback((_event: MouseEvent, node: FlowNode) => {
    if (node.type === 'graph' && node.data.component) void openComponent(node.id);
  }, []);
  const onNodeMenu = useCallback((event: MouseEvent, node: FlowNode) => {
    event.preventDefault();
    const on = node.type === 'group' ? 'group' : node.type === 'comment' ? 'comment' : 'node';
    useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on, id: node.id });
  }, []);
  const onEdgeMenu = useCallback((event: MouseEvent, edge: Edge) => {
    event.preventDefault();
    useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on: 'edge', id: edge.id });
  }, []);
  /** A double-click on a wire puts a reroute point there, to drag the wire along. */
  const onEdgeDoubleClick = useCallback(
    (event: MouseEvent, edge: Edge) => {
      event.stopPropagation();
      addReroutePoint(flow, edge.id, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [flow],
  );
  const onPaneMenu = useCallback((event: MouseEvent | globalThis.MouseEvent) => {
    event.preventDefault();
    useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on: 'pane' });
  }, []);

  /** A click on the minimap centres the canvas there, at the zoom it has. */
  const onMinimapClick = useCallback(
    (_event: MouseEvent, at: { x: number; y: number }) =>
      void flow.setCenter(at.x, at.y, { zoom: flow.getZoom(), duration: 200 }),
    [flow],
  );
  const hasFile = useEditor((s) => !!s.file);
  return (
    <div
      className="gb-canvas"
      data-ready={fitted === revision}
      onMouseMove={onPointer}
      onDragOver={allowDrop}
      onDrop={onDrop}
    >
      <ReactFlow<FlowNode, Edge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onEdgeDoubleClick={onEdgeDoubleClick}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onConnectEnd={onConnectEnd}
        isValidConnection={isValidConnection}
        onNodeDragStop={() => useEditor.getState().commit()}
        onSelectionDragStop={() => useEditor.getState().commit()}
        onSelectionChange={onSelectionChange}
        onDoubleClick={onDoubleClick}
        onNodeContextMenu={onNodeMenu}
        onNodeDoubleClick={onNodeDoubleClick}
        onEdgeContextMenu={onEdgeMenu}
        onPaneContextMenu={onPaneMenu}
        deleteKeyCode={null}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={['Shift', 'Control', 'Meta']}
        zoomOnDoubleClick={false}
        connectionLineType={ConnectionLineType.Bezier}
        colorMode={theme}
        minZoom={0.1}
        maxZoom={2}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={20} size={1.2} />
        {nodes.length ? (
          <MiniMap
            pannable
            zoomable
            nodeColor={minimapColor}
            nodeStrokeWidth={0}
            onClick={onMinimapClick}
            style={minimapSize()}
          />
        ) : null}
        <Controls showInteractive={false} />
        <ConnectionHint />
      </ReactFlow>
      <ComponentPath />
      <NodeSearch />
      <ContextMenu />
      {!hasFile ? <div className="gb-canvas-empty">Open a workflow on the left, or create one.</div> : null}
      {hasFile && !nodes.length ? (
        <div className="gb-canvas-hint">
          Drag a node here from the Nodes tab, double-click the canvas to add one by name, or start from a template
          below.
        </div>
      ) : null}
      <EmptyCanvasTemplates />
    </div>
  );
}
