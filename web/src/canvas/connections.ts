// Which wires the canvas accepts: data outputs into `in`, resources into a parameter, no cycles.

import type { Connection } from '@xyflow/react';
import { type Catalog, accepts } from '../catalog';
import { DATA_INPUT } from '../workflow/format';
import { wrongTypeFix, wrongTypeMessage } from '../workflow/validate';
import type { FlowEdge, FlowNode } from './types';
import { isGraphNode } from './types';

type Wire = Pick<Connection, 'source' | 'target'> & { sourceHandle?: string | null; targetHandle?: string | null };

export function connectionProblem(wire: Wire, nodes: FlowNode[], edges: FlowEdge[], catalog: Catalog): string | null {
  if (wire.source === wire.target) return 'a node cannot feed itself';
  const source = nodes.find((n) => n.id === wire.source);
  const target = nodes.find((n) => n.id === wire.target);
  if (!source || !target || !isGraphNode(source) || !isGraphNode(target)) return 'wires join two nodes';
  const from = catalog.nodes[source.data.type];
  const to = catalog.nodes[target.data.type];
  if (!from || !to) return 'one of the nodes has an unknown type';
  const input = wire.targetHandle ?? DATA_INPUT;
  const output = wire.sourceHandle ?? from.outputs[0] ?? 'out';
  if (!from.outputs.includes(output)) return `${from.name} has no output '${output}'`;
  if (from.kind === 'resource') {
    if (input === DATA_INPUT) return 'a resource feeds a parameter, not the data input';
    const param = to.params.find((p) => p.name === input);
    if (!param) return `${to.name} has no parameter '${input}'`;
    if (!accepts(param.type, from.gives)) return `${wrongTypeMessage(param, wire.source, from)}: ${wrongTypeFix(param)}`;
  } else {
    if (input !== DATA_INPUT) return 'step outputs go into a data input; only resources feed parameters';
    if (!to.inputs.includes(DATA_INPUT)) return `${to.name} takes no input`;
  }
  const duplicate = edges.some(
    (e) => e.source === wire.source && e.target === wire.target && e.sourceHandle === output && e.targetHandle === input,
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
