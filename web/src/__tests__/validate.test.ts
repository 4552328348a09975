// The client's checks mirror graphbook/graph.py's problems.

import { describe, expect, it } from 'vitest';
import type { Workflow } from '../workflow/format';
import { validate } from '../workflow/validate';
import { catalog } from './fixtures';

const node = (id: string, type: string, params: Workflow['nodes'][number]['params'] = {}) => ({
  id,
  type,
  label: '',
  params,
  position: { x: 0, y: 0 },
});

describe('validate', () => {
  it('finds nothing wrong with a good workflow', () => {
    const wf: Workflow = {
      doc: '',
      nodes: [node('g', 'Greetings'), node('s', 'Split', { split_fn: 'lambda d: True' }), node('o', 'Shout')],
      edges: [
        { source: 'g', output: 'out', target: 's', input: 'in' },
        { source: 's', output: 'A', target: 'o', input: 'in' },
      ],
    };
    expect(validate(wf, catalog)).toEqual([]);
  });

  it('names every problem on its node', () => {
    const wf: Workflow = {
      doc: '',
      nodes: [
        node('g', 'Greetings', { count: 'many', colour: 1 }),
        node('s', 'Split'),
        node('x', 'Splitt'),
        node('f', 'Function', { val: 'lambda d: 1' }),
      ],
      edges: [
        { source: 'g', output: 'nope', target: 's', input: 'in' },
        { source: 'f', output: 'resource', target: 's', input: 'in' },
        { source: 's', output: 'A', target: 'g', input: 'in' },
        { source: 's', output: 'B', target: 'ghost', input: 'in' },
      ],
    };
    const messages = validate(wf, catalog).map((p) => `${p.node}: ${p.message}`);
    expect(messages).toEqual([
      "x: unknown node type 'Splitt'",
      "g: has no output 'nope' (edge to 's')",
      "s: resource 'f' is wired to its data input 'in'",
      "g: takes no input, but 's' is wired into it",
      "s: an edge connects it to node 'ghost', which does not exist",
      "g: Greetings has no parameter 'colour'",
      "g: parameter 'count' expects a whole number, got str 'many'",
      "s: required parameter 'split_fn' has no value",
      's: is part of a cycle: s -> g -> s',
    ]);
    expect(validate(wf, catalog).find((p) => p.node === 'x')?.fix).toBe("did you mean 'Split'?");
  });

  it('takes a wired parameter as given', () => {
    const wf: Workflow = {
      doc: '',
      nodes: [node('s', 'Split'), node('f', 'Function', { val: 'lambda d: 1' })],
      edges: [{ source: 'f', output: 'resource', target: 's', input: 'split_fn' }],
    };
    expect(validate(wf, catalog)).toEqual([]);
  });

  it('refuses a resource wired into a parameter that cannot take what it gives, naming the fix', () => {
    const wf: Workflow = {
      doc: '',
      nodes: [node('o', 'Shout'), node('f', 'Function', { val: 'lambda d: 1' })],
      edges: [{ source: 'f', output: 'resource', target: 'o', input: 'loud' }],
    };
    expect(validate(wf, catalog)).toEqual([
      {
        node: 'o',
        message:
          "parameter 'loud' expects true or false, but resource 'f' (Function) gives Python source of a function (a `def` or a `lambda`)",
        fix: "delete the wire and give 'loud' a value, or wire a resource that gives true or false",
      },
    ]);
  });
});

describe('messages', () => {
  it('quote values as Python does', async () => {
    const { pyRepr } = await import('../workflow/validate');
    expect(pyRepr('soon')).toBe("'soon'");
    expect(pyRepr("it's")).toBe('"it\'s"');
    expect(pyRepr([true, null, 1.5, { a: 'b' }])).toBe("[True, None, 1.5, {'a': 'b'}]");
  });
});
