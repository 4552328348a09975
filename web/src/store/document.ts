// The editable document as undo history sees it: nodes, edges and groups without selection
// state, and a key that is equal exactly when two documents would save to the same file.

import type { FlowEdge, FlowNode } from '../workflow/flow';
import { canvasToWorkflow, workflowToCanvas } from '../workflow/canvas';
import { type Workflow, dumps } from '../workflow/format';

export interface Snapshot {
  nodes: FlowNode[];
  edges: FlowEdge[];
  key: string;
}

export function documentKey(nodes: FlowNode[], edges: FlowEdge[], doc: string): string {
  try {
    return dumps(canvasToWorkflow({ nodes, edges }, doc));
  } catch (error) {
    return `unsaveable: ${(error as Error).message} ${Math.random()}`;
  }
}

/** The key of `workflow` as it would show on the canvas: what a file just read saves to. */
export function workflowKey(workflow: Workflow): string {
  const { nodes, edges } = workflowToCanvas(workflow);
  return documentKey(nodes, edges, workflow.doc);
}

export function snapshot(nodes: FlowNode[], edges: FlowEdge[], doc: string): Snapshot {
  const clean = nodes.map((n) => ({ ...n, selected: false, dragging: false }) as FlowNode);
  const cleanEdges = edges.map((e) => ({ ...e, selected: false }));
  return { nodes: clean, edges: cleanEdges, key: documentKey(nodes, edges, doc) };
}

export const sameDocument = (a: Snapshot, b: Snapshot): boolean => a.key === b.key;
