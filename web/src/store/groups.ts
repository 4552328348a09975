// Groups as data: a frame around chosen nodes, which become its children (positions relative
// to it), and ungrouping, which gives them back their absolute positions.

import type { FlowNode, GroupFlowNode } from '../workflow/flow';
import { isGraphNode } from '../workflow/flow';
import { absolutePosition } from '../workflow/canvas';
import { freshId } from './ids';

const PAD = 32;
const HEADER = 28;
const DEFAULT_SIZE = { width: 240, height: 120 };

function size(node: FlowNode): { width: number; height: number } {
  return {
    width: node.measured?.width ?? node.width ?? DEFAULT_SIZE.width,
    height: node.measured?.height ?? node.height ?? DEFAULT_SIZE.height,
  };
}

/** Puts the graph nodes among `ids` into a new group; groups come first, as React Flow needs. */
export function groupNodes(nodes: FlowNode[], ids: ReadonlySet<string>, label = 'Group'): FlowNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const members = nodes.filter((n) => ids.has(n.id) && isGraphNode(n));
  if (!members.length) return nodes;
  const boxes = members.map((n) => ({ ...absolutePosition(n, byId), ...size(n) }));
  const x = Math.min(...boxes.map((b) => b.x)) - PAD;
  const y = Math.min(...boxes.map((b) => b.y)) - PAD - HEADER;
  const width = Math.max(...boxes.map((b) => b.x + b.width)) - x + PAD;
  const height = Math.max(...boxes.map((b) => b.y + b.height)) - y + PAD;
  const group: GroupFlowNode = {
    id: freshId('group', new Set(nodes.map((n) => n.id))),
    type: 'group',
    position: { x, y },
    width,
    height,
    style: { width, height },
    zIndex: -1,
    data: { label },
  };
  const released = ungroupMembers(nodes, new Set(members.map((m) => m.id)));
  const rest = released.map((n) => {
    if (!ids.has(n.id) || !isGraphNode(n)) return n;
    const abs = absolutePosition(n, byId);
    return { ...n, parentId: group.id, position: { x: abs.x - x, y: abs.y - y }, selected: false };
  });
  return [group, ...rest.filter((n) => n.type === 'group'), ...rest.filter((n) => n.type !== 'group')];
}

function ungroupMembers(nodes: FlowNode[], ids: ReadonlySet<string>): FlowNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return nodes.map((n) => {
    if (!ids.has(n.id) || !n.parentId) return n;
    const { parentId: _parent, ...rest } = n;
    return { ...rest, position: absolutePosition(n, byId) } as FlowNode;
  });
}

/** Removes groups `groupIds`, keeping their nodes where they are on the canvas. */
export function ungroup(nodes: FlowNode[], groupIds: ReadonlySet<string>): FlowNode[] {
  const children = new Set(nodes.filter((n) => n.parentId && groupIds.has(n.parentId)).map((n) => n.id));
  return ungroupMembers(nodes, children).filter((n) => !groupIds.has(n.id));
}
