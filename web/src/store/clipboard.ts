// Copy and paste as data: a clip holds nodes (absolute positions) and the wires among them;
// pasting gives every node a fresh id and keeps the wires between the copies.

import type { FlowEdge, FlowNode } from '../workflow/flow';
import { isGraphNode } from '../workflow/flow';
import type { WorkflowEdge, WorkflowNode } from '../workflow/format';
import { fromFlowEdge, nodeEssentials } from '../workflow/canvas';
import { readWorkflowData } from '../workflow/load';
import { freshId } from './ids';

export interface Clip {
  kind: 'graphbook.clip';
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

export function isClip(value: unknown): value is Clip {
  return typeof value === 'object' && value !== null && (value as Clip).kind === 'graphbook.clip';
}

/** The selected nodes (and the nodes inside selected groups), with the wires among them. */
export function makeClip(nodes: FlowNode[], edges: FlowEdge[]): Clip | null {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const groups = new Set(nodes.filter((n) => n.selected && n.type === 'group').map((n) => n.id));
  const picked = nodes.filter(isGraphNode).filter((n) => n.selected || (n.parentId && groups.has(n.parentId)));
  if (!picked.length) return null;
  const ids = new Set(picked.map((n) => n.id));
  return {
    kind: 'graphbook.clip',
    nodes: picked.map((n) => ({
      ...nodeEssentials(n, byId),
      ...(n.data.mode ? { mode: n.data.mode } : {}),
    })),
    edges: edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map(fromFlowEdge),
  };
}

/** The clip's nodes and wires with fresh ids, moved so that their top-left corner is at `at`. */
export function pasteClip(clip: Clip, taken: ReadonlySet<string>, at: { x: number; y: number }): Clip {
  const left = Math.min(...clip.nodes.map((n) => n.position.x));
  const top = Math.min(...clip.nodes.map((n) => n.position.y));
  const used = new Set(taken);
  const rename = new Map<string, string>();
  for (const node of clip.nodes) {
    const id = freshId(node.id.replace(/_\d+$/, ''), used);
    used.add(id);
    rename.set(node.id, id);
  }
  const nodes = clip.nodes.map((n) => ({
    ...n,
    id: rename.get(n.id) as string,
    params: structuredClone(n.params),
    position: { x: n.position.x - left + at.x, y: n.position.y - top + at.y },
  }));
  const moved = (p: { x: number; y: number }) => ({ x: p.x - left + at.x, y: p.y - top + at.y });
  const edges = clip.edges.map((e) => ({
    ...e,
    source: rename.get(e.source) as string,
    target: rename.get(e.target) as string,
    ...(e.points ? { points: e.points.map(moved) } : {}),
  }));
  return { kind: 'graphbook.clip', nodes, edges };
}

/** Nodes in clipboard text: a copied selection, or a workflow file (ours or Graphbook 0.13's). */
export function clipFromText(text: string): Clip | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (isClip(data)) return data;
  try {
    const { workflow } = readWorkflowData(data, 'the clipboard');
    return workflow.nodes.length ? { kind: 'graphbook.clip', nodes: workflow.nodes, edges: workflow.edges } : null;
  } catch {
    return null;
  }
}
