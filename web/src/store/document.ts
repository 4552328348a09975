// The editable document as undo history sees it: nodes and edges without selection state, and
// a key that is equal exactly when two documents would save to the same file and groups.

import type { FlowEdge, FlowNode } from '../canvas/types';
import { canvasGroups, canvasToWorkflow } from '../workflow/canvas';
import { dumps } from '../workflow/format';

export interface Snapshot {
  nodes: FlowNode[];
  edges: FlowEdge[];
  key: string;
}

export function documentKey(nodes: FlowNode[], edges: FlowEdge[], doc: string): string {
  try {
    return dumps(canvasToWorkflow({ nodes, edges }, doc)) + JSON.stringify(canvasGroups({ nodes, edges }));
  } catch (error) {
    return `unsaveable: ${(error as Error).message} ${Math.random()}`;
  }
}

export function snapshot(nodes: FlowNode[], edges: FlowEdge[], doc: string): Snapshot {
  const clean = nodes.map((n) => ({ ...n, selected: false, dragging: false }) as FlowNode);
  const cleanEdges = edges.map((e) => ({ ...e, selected: false }));
  return { nodes: clean, edges: cleanEdges, key: documentKey(nodes, edges, doc) };
}

export const sameDocument = (a: Snapshot, b: Snapshot): boolean => a.key === b.key;
