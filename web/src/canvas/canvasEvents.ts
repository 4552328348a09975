// What the canvas does on wiring, clicks and right-clicks: handlers over the stores, at module scope
// (they read the stores when called, so React Flow gets the same functions on every render).

import type { MouseEvent } from 'react';
import type { Connection, Edge, FinalConnectionState } from '@xyflow/react';
import { openComponent } from '../actions/components';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { connectionProblem } from '../workflow/connections';
import type { FlowNode } from '../workflow/flow';
import { wireOf } from './ConnectionHint';

export function isValidConnection(wire: Edge | Connection): boolean {
  const { nodes: all, edges: wires } = useEditor.getState();
  return connectionProblem(wire, all, wires, useCatalog.getState().catalog) === null;
}

export function onConnect(wire: Connection): void {
  const problem = useEditor.getState().connect(wire, useCatalog.getState().catalog);
  if (problem) useUi.getState().notify(problem, 'error');
}

/** A wire dropped on empty canvas opens the node search to join it; one dropped on a handle that refuses it says why. */
export function onConnectEnd(event: globalThis.MouseEvent | TouchEvent, state: FinalConnectionState): void {
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
}

/** A double-click on empty canvas opens the node search there. */
export function onPaneDoubleClick(event: MouseEvent): void {
  const target = event.target as HTMLElement;
  if (!target.classList.contains('react-flow__pane')) return;
  useUi.getState().openSearch({ x: event.clientX, y: event.clientY });
}

/** One graph node picked: the inspector follows it; a deleted one inspected: the inspector lets go. */
export function onSelectionChange({ nodes: picked }: { nodes: FlowNode[] }): void {
  const one = picked.length === 1 && picked[0]?.type === 'graph' ? picked[0].id : null;
  const ui = useUi.getState();
  if (one && one !== ui.inspected) ui.inspect(one);
  if (!picked.length && ui.inspected && !useEditor.getState().nodes.some((n) => n.id === ui.inspected))
    ui.inspect(null);
}

/** A double-click on a component node opens it in place (the path above the canvas leads back out). */
export function onNodeDoubleClick(_event: MouseEvent, node: FlowNode): void {
  if (node.type === 'graph' && node.data.component) void openComponent(node.id);
}

export function onNodeMenu(event: MouseEvent, node: FlowNode): void {
  event.preventDefault();
  const on = node.type === 'group' ? 'group' : node.type === 'comment' ? 'comment' : 'node';
  useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on, id: node.id });
}

export function onEdgeMenu(event: MouseEvent, edge: Edge): void {
  event.preventDefault();
  useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on: 'edge', id: edge.id });
}

export function onPaneMenu(event: MouseEvent | globalThis.MouseEvent): void {
  event.preventDefault();
  useUi.getState().openMenu({ x: event.clientX, y: event.clientY, on: 'pane' });
}

/** Nodes let go after a drag: their new places are one undo step. */
export function onDragStop(): void {
  useEditor.getState().commit();
}
