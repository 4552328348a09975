// The canvas' node kinds, at module scope so React Flow sees one stable object.

import type { NodeTypes } from '@xyflow/react';
import { CommentNode } from './CommentNode';
import { GraphNode } from './GraphNode';
import { GroupNode } from './GroupNode';

export const nodeTypes = { graph: GraphNode, group: GroupNode, comment: CommentNode } satisfies NodeTypes;
