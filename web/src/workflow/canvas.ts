// Workflow file <-> canvas: graph nodes with absolute positions in the file, relative to their
// group on the canvas; groups as frame nodes; edges keyed by their four ends so the same wire
// always has the same id.

import type { CommentFlowNode, FlowEdge, FlowNode, GraphFlowNode, GroupFlowNode, NodeInput, NodeOutput } from './flow';
import { isCommentNode, isGraphNode, isGroupNode } from './flow';
import {
  GROUP_SIZE,
  RESOURCE_OUTPUT,
  type Workflow,
  type WorkflowEdge,
  type WorkflowGroup,
  type WorkflowNode,
  type WorkflowInput,
  type WorkflowOutput,
  coordinate,
  edgeKey,
  naturalCompare,
} from './format';

/** A group frame as the file keeps it (`groups` in the canonical format). */
export type Group = WorkflowGroup;

export interface CanvasState {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

export function edgeId(edge: WorkflowEdge): string {
  return `${edge.source}:${edge.output}->${edge.target}:${edge.input}`;
}

export function toFlowEdge(edge: WorkflowEdge): FlowEdge {
  return {
    id: edgeId(edge),
    type: 'wire',
    source: edge.source,
    sourceHandle: edge.output,
    target: edge.target,
    targetHandle: edge.input,
    className: edge.output === RESOURCE_OUTPUT ? 'gb-edge-resource' : 'gb-edge-data',
    data: edge.points?.length ? { points: edge.points.map((p) => ({ ...p })) } : {},
  };
}

export function fromFlowEdge(edge: FlowEdge): WorkflowEdge {
  const wire = {
    source: edge.source,
    output: edge.sourceHandle ?? 'out',
    target: edge.target,
    input: edge.targetHandle ?? 'in',
  };
  const points = edge.data?.points;
  return points?.length ? { ...wire, points: points.map((p) => ({ x: coordinate(p.x), y: coordinate(p.y) })) } : wire;
}

export function workflowToCanvas(workflow: Workflow): CanvasState {
  const groups = workflow.groups ?? [];
  const parentOf = new Map<string, Group>();
  const ids = new Set(workflow.nodes.map((n) => n.id));
  for (const group of groups) for (const id of group.nodes) if (ids.has(id)) parentOf.set(id, group);
  const groupNodes: GroupFlowNode[] = groups.map((g) => ({
    id: g.id,
    type: 'group',
    position: { ...g.position },
    style: { width: g.size.width, height: g.size.height },
    width: g.size.width,
    height: g.size.height,
    data: { label: g.label },
    zIndex: -1,
  }));
  const inputsOf = nodeInputs(workflow);
  const shownOf = nodeOutputs(workflow);
  const graphNodes = workflow.nodes.map((n) =>
    graphFlowNode(n, parentOf.get(n.id), inputsOf.get(n.id), shownOf.get(n.id)),
  );
  const seen = new Set<string>();
  const edges = workflow.edges.filter((e) => !seen.has(edgeKey(e)) && seen.add(edgeKey(e))).map(toFlowEdge);
  const comments: CommentFlowNode[] = (workflow.comments ?? []).map((c) => ({
    id: c.id,
    type: 'comment',
    position: { ...c.position },
    width: c.width,
    data: { text: c.text },
  }));
  return { nodes: [...groupNodes, ...graphNodes, ...comments], edges };
}

/** A workflow node on the canvas: placed inside its `group` if it has one, its workflow `inputs` kept on it. */
function graphFlowNode(
  n: WorkflowNode,
  group: Group | undefined,
  inputs: Record<string, NodeInput> | undefined,
  shown?: Record<string, NodeOutput>,
): GraphFlowNode {
  const position = group ? { x: n.position.x - group.position.x, y: n.position.y - group.position.y } : n.position;
  const node: GraphFlowNode = {
    id: n.id,
    type: 'graph',
    position: { ...position },
    data: {
      type: n.type,
      label: n.label,
      params: structuredClone(n.params),
      ...(n.module ? { module: n.module } : {}),
      ...(n.collapsed ? { collapsed: true } : {}),
      ...(n.mode && n.mode !== 'active' ? { mode: n.mode } : {}),
      ...(n.color ? { color: n.color } : {}),
      ...(inputs ? { inputs } : {}),
      ...(shown ? { shown } : {}),
      ...(n.component ? { component: n.component } : {}),
    },
  };
  if (n.width) node.width = n.width;
  if (group) node.parentId = group.id;
  return node;
}

/** The workflow's inputs by node and parameter, as the canvas keeps them (an input naming a
 * node that is not there is left out: the server lists it as a problem until it is saved). */
function nodeInputs(workflow: Workflow): Map<string, Record<string, NodeInput>> {
  const byNode = new Map<string, Record<string, NodeInput>>();
  for (const [name, { node, param, ...rest }] of Object.entries(workflow.inputs ?? {})) {
    const inputs = byNode.get(node) ?? {};
    inputs[param] = { name, ...rest };
    byNode.set(node, inputs);
  }
  return byNode;
}

/** The workflow's outputs by node and output port, as the canvas keeps them. */
function nodeOutputs(workflow: Workflow): Map<string, Record<string, NodeOutput>> {
  const byNode = new Map<string, Record<string, NodeOutput>>();
  for (const [name, { node, output, ...rest }] of Object.entries(workflow.outputs ?? {})) {
    byNode.set(node, { ...byNode.get(node), [output]: { name, ...rest } });
  }
  return byNode;
}

/** The outputs kept on the canvas' nodes, as the file's top-level `outputs`. */
export function canvasOutputs(nodes: FlowNode[]): Record<string, WorkflowOutput> {
  const outputs: Record<string, WorkflowOutput> = {};
  for (const node of nodes.filter(isGraphNode)) {
    for (const [output, { name, ...rest }] of Object.entries(node.data.shown ?? {}))
      outputs[name] = { node: node.id, output, ...rest };
  }
  return outputs;
}

/** The inputs kept on the canvas' nodes, as the file's top-level `inputs`. */
export function canvasInputs(nodes: FlowNode[]): Record<string, WorkflowInput> {
  const inputs: Record<string, WorkflowInput> = {};
  for (const node of nodes.filter(isGraphNode)) {
    for (const [param, { name, ...rest }] of Object.entries(node.data.inputs ?? {})) {
      inputs[name] = { node: node.id, param, ...rest };
    }
  }
  return inputs;
}

/** A node's position on the canvas, adding the positions of the groups around it. */
export function absolutePosition(node: FlowNode, byId: Map<string, FlowNode>): { x: number; y: number } {
  let { x, y } = node.position;
  let parent = node.parentId ? byId.get(node.parentId) : undefined;
  for (let depth = 0; parent && depth < 32; depth++) {
    x += parent.position.x;
    y += parent.position.y;
    parent = parent.parentId ? byId.get(parent.parentId) : undefined;
  }
  return { x, y };
}

function groupSize(node: GroupFlowNode): { width: number; height: number } {
  const width = node.width ?? node.measured?.width ?? Number(node.style?.width ?? GROUP_SIZE.width);
  const height = node.height ?? node.measured?.height ?? Number(node.style?.height ?? GROUP_SIZE.height);
  return { width: coordinate(width), height: coordinate(height) };
}

/** What a file (or a clip) keeps of any node first: who it is, its parameters, where it stands. */
export function nodeEssentials(n: GraphFlowNode, byId: Map<string, FlowNode>): WorkflowNode {
  return {
    id: n.id,
    type: n.data.type,
    label: n.data.label,
    ...(n.data.module ? { module: n.data.module } : {}),
    params: structuredClone(n.data.params),
    position: absolutePosition(n, byId),
  };
}

export function canvasToWorkflow(state: CanvasState, doc: string): Workflow {
  const byId = new Map(state.nodes.map((n) => [n.id, n]));
  const nodes = state.nodes.filter(isGraphNode).map((n) => ({
    ...nodeEssentials(n, byId),
    ...(n.width ? { width: coordinate(n.width) } : {}),
    ...(n.data.collapsed ? { collapsed: true } : {}),
    ...(n.data.mode ? { mode: n.data.mode } : {}),
    ...(n.data.color ? { color: n.data.color } : {}),
    ...(n.data.component ? { component: n.data.component } : {}),
  }));
  const groups = canvasGroups(state);
  const comments = state.nodes.filter(isCommentNode).map((c) => ({
    id: c.id,
    text: c.data.text,
    position: absolutePosition(c, byId),
    width: coordinate(c.width ?? c.measured?.width ?? 240),
  }));
  const inputs = canvasInputs(state.nodes);
  const outputs = canvasOutputs(state.nodes);
  const workflow: Workflow = { doc, nodes, edges: state.edges.map(fromFlowEdge) };
  return {
    ...workflow,
    ...(Object.keys(inputs).length ? { inputs } : {}),
    ...(Object.keys(outputs).length ? { outputs } : {}),
    ...(groups.length ? { groups } : {}),
    ...(comments.length ? { comments } : {}),
  };
}

export function canvasGroups(state: CanvasState): Group[] {
  const groups = state.nodes.filter(isGroupNode);
  return groups.map((g) => ({
    id: g.id,
    label: g.data.label,
    position: { x: coordinate(g.position.x), y: coordinate(g.position.y) },
    size: groupSize(g),
    nodes: state.nodes
      .filter((n) => n.parentId === g.id)
      .map((n) => n.id)
      .sort(naturalCompare),
  }));
}
