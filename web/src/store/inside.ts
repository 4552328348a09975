// A component opened in place: the canvas shows its nodes, and the levels around it wait in
// frames. Folding the open level back into the frames gives the whole document again, so saving,
// running and "unsaved" see the workflow, never only the inside.

import type { FlowEdge, FlowNode } from '../workflow/flow';
import { canvasToWorkflow } from '../workflow/canvas';
import { type ComponentBody, bodyJson, bodyOf, libraryOf } from '../workflow/components';
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
  /** A library one: the version of the file that was read, which edits are based on. */
  version?: string;
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
 * node: a library component left unchanged stays a reference; an edited one is kept inline,
 * marked with the library file it differs from (`libraryEdit`) until the user chooses to update
 * the file or keep the copy. */
export function fold(frame: Frame, nodes: FlowNode[], edges: FlowEdge[]): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const before = JSON.stringify(bodyJson(frame.body));
  const after = bodyJson(withInside(frame.body, nodes, edges));
  const edited = JSON.stringify(after) !== before;
  const library = edited ? libraryOf(frame.component) : null;
  const component = edited ? after : frame.component;
  const folded = frame.nodes.map((n) => {
    if (n.id !== frame.id || n.type !== 'graph') return n;
    const data = { ...n.data, component };
    const libraryEdit = library && { library: library.library, version: frame.version || library.version };
    return { ...n, data: libraryEdit ? { ...data, libraryEdit } : data };
  });
  return { nodes: folded, edges: frame.edges };
}

/** The library files of the components open in place that were edited: a save holds their
 * edits as copies until the user goes back out and chooses to update the file or keep the copy. */
export function pendingLibraryEdits(state: {
  nodes: FlowNode[];
  edges: FlowEdge[];
  inside?: readonly Frame[];
}): string[] {
  const names: string[] = [];
  let level = { nodes: state.nodes, edges: state.edges };
  for (const frame of [...(state.inside ?? [])].reverse()) {
    level = fold(frame, level.nodes, level.edges);
    const node = level.nodes.find((n) => n.id === frame.id);
    const library = libraryOf(frame.component);
    if (library && node?.type === 'graph' && !libraryOf(node.data.component)) names.push(library.library);
  }
  return names;
}

/** The library file the open level shows, when it is a library component (or an edited copy of one). */
export function editedLibrary(frame: Frame | undefined): string | null {
  if (!frame) return null;
  const node = frame.nodes.find((n) => n.id === frame.id);
  const copy = node?.type === 'graph' ? node.data.libraryEdit?.library : undefined;
  return libraryOf(frame.component)?.library ?? copy ?? null;
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
