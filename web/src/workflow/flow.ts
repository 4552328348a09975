// The open workflow as the editor holds it (React Flow's nodes and edges): graph nodes (one per
// workflow node), group frames and comments, and the wires between them.

import type { Edge, Node } from '@xyflow/react';
import type { InputNarrowing, Json, NodeColor, NodeMode, OutputKind, Point } from './format';

export type GraphNodeData = {
  /** The registered node type (`Split`, `DumpJSONL`, ...). */
  type: string;
  label: string;
  /** The Python module that defines the type, when the file names one. */
  module?: string;
  /** Parameter values set on the node, by name; defaults are not copied in. */
  params: Record<string, Json>;
  /** Folded to its title and ports. */
  collapsed?: boolean;
  /** Left out of runs: `bypass` passes its input through, `mute` lets nothing through. */
  mode?: Exclude<NodeMode, 'active'>;
  /** Its colour on the canvas, saved as the node's `color`. */
  color?: NodeColor;
  /** Its parameters that are workflow inputs, by parameter: saved in the file's top-level `inputs`. */
  inputs?: Record<string, NodeInput>;
  /** Its outputs the workflow shows as results (an app's), by output: saved in the file's `outputs`. */
  shown?: Record<string, NodeOutput>;
  /** A component node's inside, as the file keeps it (web/src/workflow/components.ts). */
  component?: Record<string, Json>;
  /** A library component edited in place, kept inline until the user chooses (never saved). */
  libraryEdit?: LibraryEdit;
};

/** Where an edited inline component came from: the library file and the version it was opened
 * at, and why an update was refused (the file changed since), if it was. */
export type LibraryEdit = { library: string; version: string; refused?: string };

/** A parameter marked as a workflow input: the input's name, what it is for, how it is narrowed. */
export type NodeInput = { name: string; description?: string } & InputNarrowing;

/** An output marked as a result the workflow shows: its name, how it is shown, what it is. */
export type NodeOutput = { name: string; kind: OutputKind; description?: string };

/** A wire's reroute points (flow coordinates, source to target), saved as the edge's `points`. */
export type WireData = { points?: Point[] };

export type GroupNodeData = { label: string };
/** A note on the canvas: Markdown text, saved in the file's `comments`. */
export type CommentNodeData = { text: string };

export type GraphFlowNode = Node<GraphNodeData, 'graph'>;
export type GroupFlowNode = Node<GroupNodeData, 'group'>;
export type CommentFlowNode = Node<CommentNodeData, 'comment'>;
export type FlowNode = GraphFlowNode | GroupFlowNode | CommentFlowNode;
export type FlowEdge = Edge<WireData>;

export function isGraphNode(node: FlowNode): node is GraphFlowNode {
  return node.type === 'graph';
}

export function isGroupNode(node: FlowNode): node is GroupFlowNode {
  return node.type === 'group';
}

export function isCommentNode(node: FlowNode): node is CommentFlowNode {
  return node.type === 'comment';
}

/** What a node is called on the canvas: its label, else a library component's name, else its type. */
export function titleOf(data: GraphNodeData): string {
  const library = data.component?.library;
  return data.label || (typeof library === 'string' ? library : data.libraryEdit?.library) || data.type;
}
