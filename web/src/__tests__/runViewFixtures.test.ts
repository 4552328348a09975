// The browser's fold against the fixtures graphbook/runview.py (the server's snapshot) is checked
// against too, by tests/unit/test_runview.py: the live page and a reloaded one show the same.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeServer } from '../protocol';
import { EMPTY_RUN_STATE, type RunState, applyMessage } from '../store/runState';

const FIXTURES = fileURLToPath(new URL('../../../tests/fixtures/runview/', import.meta.url));

interface Fixture {
  about: string;
  steps: { message: { type: string }; expect: unknown }[];
}

/** What a person sees, in the fixtures' terms: errors and logs counted, outputs by index. */
function seen(state: RunState): unknown {
  const run = state.run;
  const nodes = run
    ? Object.fromEntries(
        Object.values(run.nodes).map((n) => [
          n.node_id,
          {
            ...n,
            errors: n.errors.length,
            logs: n.logs.length,
            outputs: Object.fromEntries(Object.entries(n.outputs).map(([name, shown]) => [name, shown.index])),
          },
        ]),
      )
    : {};
  return { run: run ? { ...run, nodes } : null, prompts: Object.keys(state.prompts).sort() };
}

/** Where `actual` differs from `expected`; objects need only hold the keys expected. */
function differences(expected: unknown, actual: unknown, where = ''): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(expected) && isObject(actual)) {
    return Object.entries(expected).flatMap(([key, value]) =>
      key in actual ? differences(value, actual[key], `${where}.${key}`) : [`${where}.${key}: missing`],
    );
  }
  return JSON.stringify(expected) === JSON.stringify(actual)
    ? []
    : [`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

const files = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort();

describe('the fold of run messages', () => {
  it('has fixtures to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });

  it.each(files)('shows what %s expects after each message', (name) => {
    const fixture = JSON.parse(readFileSync(FIXTURES + name, 'utf-8')) as Fixture;
    let state = EMPTY_RUN_STATE;
    fixture.steps.forEach((step, number) => {
      state = applyMessage(state, decodeServer(JSON.stringify(step.message)));
      expect(differences(step.expect, seen(state)), `step ${number} (${step.message.type})`).toEqual([]);
    });
  });

  it('reports a differing state', () => {
    expect(differences({ a: { b: 1 } }, { a: { b: 2, c: 3 } })).toEqual(['.a.b: expected 1, got 2']);
    expect(differences({ a: 1 }, {})).toEqual(['.a: missing']);
  });
});
