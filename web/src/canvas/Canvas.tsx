// The editing canvas: React Flow over the editor store, with dropping, wiring and searching.

import { useCallback, useEffect, useState } from 'react';
import type { DragEvent, MouseEvent } from 'react';
import { Background, BackgroundVariant, ConnectionLineType, Controls, MiniMap, ReactFlow, useNodesInitialized, useReactFlow } from '@xyflow/react';
import type { Connection, Edge } from '@xyflow/react';
import { usePointer } from '../hooks/usePointer';
import { useShortcuts } from '../hooks/useShortcuts';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { connectionProblem } from './connections';
import { NodeSearch } from './NodeSearch';
import { nodeTypes } from './nodeTypes';
import type { FlowNode } from './types';

export const DRAG_TYPE = 'application/x-graphbook-node';

function allowDrop(event: DragEvent): void {
  event.preventDefault();
  event.dataTransfer.dropEffect = 'copy';
}

function minimapColor(node: FlowNode): string {
  return node.type === 'group' ? 'var(--gb-group)' : 'var(--gb-minimap-node)';
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
    void flow.fitView({ padding: 0.2, maxZoom: 1 }).then(() => setFitted(revision));
  }, [revision, measured, fitted, nodes.length, flow]);

  const isValidConnection = useCallback(
    (wire: Edge | Connection) => {
      const { nodes: all, edges: wires } = useEditor.getState();
      return connectionProblem(wire, all, wires, useCatalog.getState().catalog) === null;
    },
    [],
  );
  const onConnect = useCallback((wire: Connection) => {
    const problem = useEditor.getState().connect(wire, useCatalog.getState().catalog);
    if (problem) useUi.getState().notify(problem, 'error');
  }, []);
  const onDrop = useCallback(
    (event: DragEvent) => {
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
    if (!picked.length && ui.inspected && !useEditor.getState().nodes.some((n) => n.id === ui.inspected)) ui.inspect(null);
  }, []);

  const hasFile = useEditor((s) => !!s.file);
  return (
    <div className="gb-canvas" data-ready={fitted === revision} onMouseMove={onPointer} onDragOver={allowDrop} onDrop={onDrop}>
      <ReactFlow<FlowNode, Edge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        isValidConnection={isValidConnection}
        onNodeDragStop={() => useEditor.getState().commit()}
        onSelectionDragStop={() => useEditor.getState().commit()}
        onSelectionChange={onSelectionChange}
        onDoubleClick={onDoubleClick}
        deleteKeyCode={null}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={['Control', 'Meta']}
        zoomOnDoubleClick={false}
        connectionLineType={ConnectionLineType.Bezier}
        colorMode={theme}
        minZoom={0.1}
        maxZoom={2}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={20} size={1.2} />
        <MiniMap pannable zoomable nodeColor={minimapColor} nodeStrokeWidth={0} />
        <Controls showInteractive={false} />
      </ReactFlow>
      <NodeSearch />
      {!hasFile ? <div className="gb-canvas-empty">Open a workflow on the left, or create one.</div> : null}
    </div>
  );
}
