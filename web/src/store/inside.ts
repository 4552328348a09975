// A component opened in place: the canvas shows its nodes, and the levels around it wait in
// frames. Folding the open level back into the frames gives the whole document again, so saving,
// running and "unsaved" see the workflow, never only the inside.

import type { FlowEdge, FlowNode } from '../workflow/flow';
import { canvasToWorkflow } from '../workflow/canvas';
import { type ComponentBody, bodyJson, bodyOf } from '../workflow/components';
import type { Json } from '../workflow/format';
import type { History } from './history';
import type { Snapshot } from './document';

/** A level left to open a component: its canvas, its undo history and the component as opened. */
export interface Frame {
  /** The component node's id on this level. */
  id: string;
  nodes: FlowNode[];
  edges: FlowEdge[];
  history: History<Snapshot>;
  /** The node's `component` when it was opened (a library one: the reference). */
  component: Record<string, Json>;
  /** What was shown inside (a library one: the library file's inside). */
  body: ComponentBody;
}

/** How the run names the nodes of the open level: `outer/inner/` (empty at the top). */
export function pathPrefix(inside: readonly Frame[]): string {
  return inside.map((f) => `${f.id}/`).join('');
}

function withInside(body: ComponentBody, nodes: FlowNode[], edges: FlowEdge[]): ComponentBody {
  const inner = canvasToWorkflow({ nodes, edges }, '');
  const ids = new Set(inner.nodes.map((n) => n.id));
  const kept = <T extends { node: string }>(table: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(table).filter(([, p]) => ids.has(p.node)));
  return {
    ...body,
    nodes: inner.nodes,
    edges: inner.edges,
    inputs: kept(body.inputs),
    outputs: kept(body.outputs),
    params: kept(body.params),
  };
}

/** The level around `frame` with the open level (`nodes`, `edges`) folded into its component
 * node: a library component left unchanged stays a reference; an edited one is kept inline. */
export function fold(frame: Frame, nodes: FlowNode[], edges: FlowEdge[]): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const before = JSON.stringify(bodyJson(frame.body));
  const after = bodyJson(withInside(frame.body, nodes, edges));
  const component = JSON.stringify(after) === before ? frame.component : after;
  const folded = frame.nodes.map((n) =>
    n.id === frame.id && n.type === 'graph' ? { ...n, data: { ...n.data, component } } : n,
  );
  return { nodes: folded, edges: frame.edges };
}

/** The whole document: the open level folded through every frame around it. */
export function composed(state: { nodes: FlowNode[]; edges: FlowEdge[]; inside?: readonly Frame[] }): {
  nodes: FlowNode[];
  edges: FlowEdge[];
} {
  let level = { nodes: state.nodes, edges: state.edges };
  for (const frame of [...(state.inside ?? [])].reverse()) level = fold(frame, level.nodes, level.edges);
  return level;
}

/** The inside a component node shows when opened, or null when it cannot be read. */
export function openable(component: Record<string, Json>, library: Record<string, Json> | null): ComponentBody | null {
  try {
    return bodyOf(library ?? component);
  } catch {
    return null;
  }
}
