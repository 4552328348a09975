// Bypassed and muted nodes, as graphbook.modes takes them out: what is left of the wiring.
// A muted node gives nothing; a bypassed step's inputs are wired straight to what its outputs
// feed; a bypassed node with no data input is muted. Neither is checked (it does not run).

import { DATA_INPUT, type NodeMode, type Workflow, type WorkflowEdge, edgeKey } from './format';

/** The nodes that do not run, by id. */
export function offModes(workflow: Workflow): Map<string, NodeMode> {
  return new Map(workflow.nodes.filter((n) => n.mode && n.mode !== 'active').map((n) => [n.id, n.mode as NodeMode]));
}

/** The edges between nodes that run, with a wire through each bypassed step; each once, in order. */
export function liveEdges(edges: WorkflowEdge[], off: ReadonlyMap<string, NodeMode>): WorkflowEdge[] {
  if (!off.size) return edges;
  const inputs = new Map<string, WorkflowEdge[]>();
  for (const edge of edges)
    if (edge.input === DATA_INPUT) inputs.set(edge.target, [...(inputs.get(edge.target) ?? []), edge]);
  const kept = new Map<string, WorkflowEdge>();
  const keep = (edge: WorkflowEdge): void => void (kept.has(edgeKey(edge)) || kept.set(edgeKey(edge), edge));
  for (const edge of edges) {
    if (off.has(edge.target)) continue;
    if (!off.has(edge.source)) keep(edge);
    else if (edge.input === DATA_INPUT) {
      for (const [source, output] of feeding(edge.source, off, inputs, new Set())) keep({ ...edge, source, output });
    }
  }
  return [...kept.values()];
}

function feeding(
  id: string,
  off: ReadonlyMap<string, NodeMode>,
  inputs: Map<string, WorkflowEdge[]>,
  seen: Set<string>,
): [string, string][] {
  if (off.get(id) === 'mute' || seen.has(id)) return [];
  seen.add(id);
  return (inputs.get(id) ?? []).flatMap((e) =>
    off.has(e.source) ? feeding(e.source, off, inputs, seen) : [[e.source, e.output] as [string, string]],
  );
}

/** The workflow that runs: bypassed and muted nodes out, wires through the bypassed ones. */
export function runningPart(workflow: Workflow): Workflow {
  const off = offModes(workflow);
  if (!off.size) return workflow;
  return { ...workflow, nodes: workflow.nodes.filter((n) => !off.has(n.id)), edges: liveEdges(workflow.edges, off) };
}
