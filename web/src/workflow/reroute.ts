// Reroute points on a wire: the path through them, where a new point goes, and how they follow
// moved nodes. Pure geometry.

import type { Point } from './format';
import type { FlowEdge } from './flow';

/** A curve from `a` to `b` leaving and arriving level, as React Flow draws a wire between two handles. */
function segment(a: Point, b: Point): string {
  const dx = Math.max(Math.abs(b.x - a.x) / 2, 25);
  return `C ${a.x + dx},${a.y} ${b.x - dx},${b.y} ${b.x},${b.y}`;
}

/** The SVG path of a wire from `source` through `points` to `target`, level at every point. */
export function wirePath(source: Point, points: readonly Point[], target: Point): string {
  const stops = [source, ...points, target];
  const parts = [`M ${source.x},${source.y}`];
  for (let i = 1; i < stops.length; i++) parts.push(segment(stops[i - 1] as Point, stops[i] as Point));
  return parts.join(' ');
}

function distanceToChord(p: Point, a: Point, b: Point): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length = dx * dx + dy * dy;
  const t = length === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

/** `points` with `at` added where the wire passes nearest to it, so the wire keeps its order. */
export function withPoint(source: Point, points: readonly Point[], target: Point, at: Point): Point[] {
  const stops = [source, ...points, target];
  let best = 0;
  let bestDistance = Infinity;
  for (let i = 1; i < stops.length; i++) {
    const distance = distanceToChord(at, stops[i - 1] as Point, stops[i] as Point);
    if (distance < bestDistance) [best, bestDistance] = [i - 1, distance];
  }
  return [...points.slice(0, best), { x: at.x, y: at.y }, ...points.slice(best)];
}

const same = (a: Point, b: Point): boolean => Math.abs(a.x - b.x) < 1e-6 && Math.abs(a.y - b.y) < 1e-6;

/**
 * The wires after nodes moved by `moved` (node id → how far it went, on the canvas): a wire whose
 * two ends moved by the same offset (nodes dragged together, or the group they are in) takes its
 * reroute points along; a wire with one end moved keeps them where they were put, as ComfyUI's
 * and Blender's reroute nodes stay put. Wires that do not change are returned as they were.
 */
export function carryPoints(edges: FlowEdge[], moved: ReadonlyMap<string, Point>): FlowEdge[] {
  let changed = false;
  const carried = edges.map((edge) => {
    const points = edge.data?.points;
    const by = moved.get(edge.source);
    const other = moved.get(edge.target);
    if (!points?.length || !by || !other || !same(by, other)) return edge;
    changed = true;
    return { ...edge, data: { ...edge.data, points: points.map((p) => ({ x: p.x + by.x, y: p.y + by.y })) } };
  });
  return changed ? carried : edges;
}
