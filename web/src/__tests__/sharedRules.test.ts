// The browser's editing rules against the fixtures tests/unit/test_shared_rules.py holds Python's
// to: the problems graphbook/graph.py finds (validate.ts), the wiring left once bypassed and
// muted nodes are out (modes.ts), and which resources fit which parameters (the server's table).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { accepts, decodeCatalog } from '../catalog';
import { type NodeMode, type WorkflowEdge, parseCanonical } from '../workflow/format';
import { liveEdges } from '../workflow/modes';
import { type Problem, validate } from '../workflow/validate';
import { rulesCatalog } from './fixtures';

const fixture = <T>(name: string): T =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../../tests/fixtures/rules/${name}`, import.meta.url)), 'utf8'),
  ) as T;

interface ValidateCase {
  about: string;
  workflow: unknown;
  problems: { node: string | null; message: string; fix: string }[];
}

interface ModesCase {
  about: string;
  off: Record<string, NodeMode>;
  edges: WorkflowEdge[];
  live: WorkflowEdge[];
}

const catalog = decodeCatalog(rulesCatalog);
const wire = ({ source, output, target, input }: WorkflowEdge): WorkflowEdge => ({ source, output, target, input });
const byNode = (a: Problem, b: Problem): number => `${a.node}${a.message}`.localeCompare(`${b.node}${b.message}`);

describe('the rules shared with Python', () => {
  it.each(fixture<ValidateCase[]>('validate.json').map((c) => [c.about, c] as const))(
    'finds the problems graph.py finds: %s',
    (_, c) => {
      const found = validate(parseCanonical(c.workflow, 'fixture.json'), catalog);
      const expected = c.problems.map((p) => ({ node: p.node ?? '', message: p.message, fix: p.fix }));
      expect([...found].sort(byNode)).toEqual([...expected].sort(byNode));
    },
  );

  it.each(fixture<ModesCase[]>('modes.json').map((c) => [c.about, c] as const))(
    'leaves the wiring modes.py leaves: %s',
    (_, c) => {
      expect(liveEdges(c.edges, new Map(Object.entries(c.off))).map(wire)).toEqual(c.live);
    },
  );

  it('fits resources to parameters by the table the server sends', () => {
    expect(accepts(catalog.fits, 'string', 'object')).toBe(false);
    expect(accepts(catalog.fits, 'function', 'string')).toBe(true);
    expect(accepts(catalog.fits, 'list[int]', 'list')).toBe(true);
    expect(accepts(catalog.fits, 'boolean', 'any')).toBe(true);
    expect(accepts({}, 'string', 'string')).toBe(false);
  });
});
