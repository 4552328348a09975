// The canvas' node and edge kinds, at module scope so React Flow sees one stable object.

import type { EdgeTypes, NodeTypes } from '@xyflow/react';
import { CommentNode } from './CommentNode';
import { GraphNode } from './GraphNode';
import { GroupNode } from './GroupNode';
import { WireEdge } from './WireEdge';

export const nodeTypes = { graph: GraphNode, group: GroupNode, comment: CommentNode } satisfies NodeTypes;

export const edgeTypes = { wire: WireEdge } satisfies EdgeTypes;
