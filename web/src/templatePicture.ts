// A small picture of a workflow's graph (the templates gallery): its nodes as boxes where the
// file places them, titled, and its wires as curves from an output to an input (pure; the SVG
// is drawn by panels/TemplateGallery.tsx).

import { isObject } from './workflow/format';

export interface PictureNode {
  id: string;
  /** The node's title, or its type; cut to fit its box (`full` is the whole of it). */
  label: string;
  full: string;
  type: string;
  x: number;
  y: number;
}

export interface PictureEdge {
  key: string;
  /** An SVG path: a curve from the source's right side to the target's left side. */
  d: string;
  source: string;
  target: string;
}

export interface Picture {
  viewBox: string;
  /** Box size and font size in the picture's units. */
  box: { width: number; height: number };
  fontSize: number;
  nodes: PictureNode[];
  edges: PictureEdge[];
}

/** A node's box where it is placed (about the canvas's node size), and the margin around them. */
const BOX = { width: 220, height: 72 };
const MARGIN = 24;
/** The text height wanted on screen, in pixels, and the most it may be in the picture's units. */
const SCREEN_FONT = 11;
const MAX_FONT = 34;
/** Average width of a character, in font sizes (a sans-serif's). */
const CHAR_WIDTH = 0.58;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function cut(label: string, chars: number): string {
  return label.length <= chars ? label : `${label.slice(0, Math.max(1, chars - 1))}…`;
}

/**
 * The picture of `workflow` (a workflow file's JSON) shown `width` x `height` pixels: node text
 * stays about SCREEN_FONT pixels high whatever the graph's size, and is cut to fit its box.
 */
export function graphPicture(workflow: unknown, width = 240, height = 110): Picture {
  const data = isObject(workflow) ? workflow : {};
  const raw = Array.isArray(data.nodes) ? data.nodes.filter(isObject) : [];
  const placed = raw.map((n, i) => {
    const position = isObject(n.position) ? n.position : {};
    const full = text(n.title) || text(n.type) || text(n.id);
    return { id: text(n.id) || `node${i}`, full, type: text(n.type), x: num(position.x), y: num(position.y) };
  });
  const vx = placed.length ? Math.min(...placed.map((n) => n.x)) : 0;
  const vy = placed.length ? Math.min(...placed.map((n) => n.y)) : 0;
  const right = placed.length ? Math.max(...placed.map((n) => n.x)) + BOX.width : BOX.width;
  const bottom = placed.length ? Math.max(...placed.map((n) => n.y)) + BOX.height : BOX.height;
  const viewWidth = right - vx + 2 * MARGIN;
  const viewHeight = bottom - vy + 2 * MARGIN;
  const scale = Math.min(width / viewWidth, height / viewHeight);
  const fontSize = Math.min(MAX_FONT, SCREEN_FONT / scale);
  const chars = Math.max(3, Math.floor((BOX.width - fontSize) / (fontSize * CHAR_WIDTH)));
  const nodes = placed.map((n) => ({ ...n, label: cut(n.full, chars) }));
  const at = new Map(nodes.map((n) => [n.id, n]));
  const edges = (Array.isArray(data.edges) ? data.edges.filter(isObject) : []).flatMap((e, i) => {
    const source = at.get(text(e.source));
    const target = at.get(text(e.target));
    if (!source || !target) return [];
    const [x1, y1] = [source.x + BOX.width, source.y + BOX.height / 2];
    const [x2, y2] = [target.x, target.y + BOX.height / 2];
    const bend = Math.max(40, Math.abs(x2 - x1) / 2);
    const d = `M${x1} ${y1} C${x1 + bend} ${y1} ${x2 - bend} ${y2} ${x2} ${y2}`;
    return [
      {
        key: `${source.id}:${text(e.output)}->${target.id}:${text(e.input)}:${i}`,
        d,
        source: source.id,
        target: target.id,
      },
    ];
  });
  return {
    viewBox: `${vx - MARGIN} ${vy - MARGIN} ${viewWidth} ${viewHeight}`,
    box: { ...BOX },
    fontSize,
    nodes,
    edges,
  };
}
