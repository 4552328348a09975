// The picture of a template's graph: boxes where the file places its nodes, wires between them,
// text kept readable and cut to fit.

import { describe, expect, it } from 'vitest';
import { graphPicture } from '../templatePicture';

const at = (x: number, y: number) => ({ x, y });
const split = {
  nodes: [
    { id: 'records', type: 'LoadJSONL', position: at(0, 100) },
    { id: 'split', type: 'Split', title: 'Split by score', position: at(300, 100) },
    { id: 'high', type: 'DumpJSONL', position: at(600, 0) },
    { id: 'low', type: 'DumpJSONL', position: at(600, 200) },
  ],
  edges: [
    { source: 'records', output: 'out', target: 'split', input: 'in' },
    { source: 'split', output: 'A', target: 'high', input: 'in' },
    { source: 'split', output: 'B', target: 'low', input: 'in' },
    { source: 'split', output: 'B', target: 'ghost', input: 'in' },
  ],
};

describe('graphPicture', () => {
  it('places a titled box per node and a curve per wire between nodes that exist', () => {
    const picture = graphPicture(split, 240, 110);
    expect(picture.nodes.map((n) => [n.id, n.full, n.x, n.y])).toEqual([
      ['records', 'LoadJSONL', 0, 100],
      ['split', 'Split by score', 300, 100],
      ['high', 'DumpJSONL', 600, 0],
      ['low', 'DumpJSONL', 600, 200],
    ]);
    expect(picture.edges.map((e) => `${e.source}->${e.target}`)).toEqual([
      'records->split',
      'split->high',
      'split->low',
    ]);
    const [x, y, width, height] = picture.viewBox.split(' ').map(Number);
    expect([x, y]).toEqual([-24, -24]);
    expect(width).toBe(600 + picture.box.width + 48);
    expect(height).toBe(200 + picture.box.height + 48);
    // A wire leaves its source's right side and ends at its target's left side.
    expect(picture.edges[0]?.d).toMatch(
      new RegExp(`^M${picture.box.width} ${100 + picture.box.height / 2} C.* 300 ${100 + picture.box.height / 2}$`),
    );
  });

  it('keeps text about 11 px on screen where it fits, and cuts long titles to fit their box', () => {
    const roomy = graphPicture(split, 480, 220);
    const scale = Math.min(480 / (600 + 220 + 48), 220 / (200 + 72 + 48));
    expect(roomy.fontSize * scale).toBeCloseTo(11, 5);
    expect(roomy.nodes.map((n) => n.label)).toEqual(['LoadJSONL', 'Split by score', 'DumpJSONL', 'DumpJSONL']);
    const small = graphPicture(split, 240, 110);
    expect(small.fontSize).toBe(34);
    expect(small.nodes.map((n) => n.label)).toEqual(['LoadJSONL', 'Split by…', 'DumpJSONL', 'DumpJSONL']);
    const long = {
      nodes: [...split.nodes, { id: 'far', type: 'AVeryLongNodeTypeNameIndeed', position: at(2400, 0) }],
      edges: [],
    };
    const wide = graphPicture(long, 240, 110);
    expect(wide.fontSize).toBe(34);
    const far = wide.nodes.find((n) => n.id === 'far');
    expect(far?.label.endsWith('…')).toBe(true);
    expect(far?.label.length).toBeLessThan(far?.full.length ?? 0);
    expect((far?.label.length ?? 0) * wide.fontSize * 0.58).toBeLessThanOrEqual(wide.box.width);
  });

  it('draws nothing for what is not a workflow, without failing', () => {
    expect(graphPicture(null).nodes).toEqual([]);
    expect(graphPicture({ nodes: [{ id: 'a' }], edges: 'x' }).nodes.map((n) => [n.label, n.x, n.y])).toEqual([
      ['a', 0, 0],
    ]);
  });
});
