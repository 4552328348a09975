// Which wires the canvas accepts: data outputs into `in`, resources into a parameter, no cycles.

import type { Connection } from '@xyflow/react';
import { type Catalog, type NodeInfo, accepts } from '../catalog';
import { specOf } from './components';
import { DATA_INPUT } from './format';
import { wrongTypeFix, wrongTypeMessage } from './validate';
import type { FlowEdge, FlowNode } from './flow';
import { isGraphNode } from './flow';

type Wire = Pick<Connection, 'source' | 'target'> & { sourceHandle?: string | null; targetHandle?: string | null };

export function connectionProblem(wire: Wire, nodes: FlowNode[], edges: FlowEdge[], catalog: Catalog): string | null {
  if (wire.source === wire.target) return 'a node cannot feed itself';
  const source = nodes.find((n) => n.id === wire.source);
  const target = nodes.find((n) => n.id === wire.target);
  if (!source || !target || !isGraphNode(source) || !isGraphNode(target)) return 'wires join two nodes';
  const from = specOf(source.data, catalog);
  const to = specOf(target.data, catalog);
  if (!from || !to) return 'one of the nodes has an unknown type';
  const input = wire.targetHandle ?? DATA_INPUT;
  const output = wire.sourceHandle ?? from.outputs[0] ?? 'out';
  if (!from.outputs.includes(output)) return `${from.name} has no output '${output}'`;
  if (from.kind === 'resource') {
    if (input === DATA_INPUT) return 'a resource feeds a parameter, not the data input';
    const param = to.params.find((p) => p.name === input);
    if (!param) return `${to.name} has no parameter '${input}'`;
    if (!accepts(catalog.fits, param.type, from.gives))
      return `${wrongTypeMessage(param, wire.source, from)}: ${wrongTypeFix(param)}`;
  } else {
    if (input !== DATA_INPUT) return 'step outputs go into a data input; only resources feed parameters';
    if (!to.inputs.includes(DATA_INPUT)) return `${to.name} takes no input`;
  }
  const duplicate = edges.some(
    (e) =>
      e.source === wire.source && e.target === wire.target && e.sourceHandle === output && e.targetHandle === input,
  );
  if (duplicate) return 'these two are wired already';
  if (reaches(wire.target, wire.source, edges)) return 'this wire would make a cycle';
  return null;
}

function reaches(from: string, to: string, edges: FlowEdge[]): boolean {
  const seen = new Set<string>();
  const todo = [from];
  while (todo.length) {
    const current = todo.pop() as string;
    if (current === to) return true;
    if (seen.has(current)) continue;
    seen.add(current);
    for (const e of edges) if (e.source === current) todo.push(e.target);
  }
  return false;
}

/** Edges left after wiring `wire`: a parameter takes one wire, so an older one is replaced. */
export function replacedEdges(wire: Wire, edges: FlowEdge[]): FlowEdge[] {
  const input = wire.targetHandle ?? DATA_INPUT;
  if (input === DATA_INPUT) return edges;
  return edges.filter((e) => !(e.target === wire.target && e.targetHandle === input));
}

/** Where a wire dragged from a handle and dropped on empty canvas started. */
export interface LooseEnd {
  node: string;
  handle: string;
  /** `source`: it left an output; `target`: it left an input or a parameter. */
  side: 'source' | 'target';
}

/**
 * The wire that joins a loose end to a new node of kind `spec` (id `id`), or null when none fits:
 * an output into the new node's `in`, a resource into its first parameter that can take it; an
 * input from the new node's first output, a parameter from a resource that gives what it takes.
 */
export function completeWire(
  end: LooseEnd,
  spec: NodeInfo,
  id: string,
  nodes: FlowNode[],
  catalog: Catalog,
): Connection | null {
  const other = nodes.find((n) => n.id === end.node);
  const from = other && isGraphNode(other) ? specOf(other.data, catalog) : undefined;
  if (!from) return null;
  if (end.side === 'source') {
    if (from.kind === 'resource') {
      const param =
        spec.params.find((p) => p.type !== 'resource' && accepts(catalog.fits, p.type, from.gives)) ??
        spec.params.find((p) => p.type === 'resource');
      return param ? { source: end.node, sourceHandle: end.handle, target: id, targetHandle: param.name } : null;
    }
    return spec.inputs.includes(DATA_INPUT)
      ? { source: end.node, sourceHandle: end.handle, target: id, targetHandle: DATA_INPUT }
      : null;
  }
  if (end.handle === DATA_INPUT) {
    const output = spec.kind !== 'resource' ? spec.outputs[0] : undefined;
    return output ? { source: id, sourceHandle: output, target: end.node, targetHandle: DATA_INPUT } : null;
  }
  const param = from.params.find((p) => p.name === end.handle);
  if (spec.kind !== 'resource' || !param || !accepts(catalog.fits, param.type, spec.gives)) return null;
  return { source: id, sourceHandle: spec.outputs[0] ?? 'resource', target: end.node, targetHandle: end.handle };
}
