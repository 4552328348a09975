// The app's import rules (web/README.md), no circle of imports, and one hook per file, checked
// on the sources.

import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const RULES: [folder: string, never: string[]][] = [
  ['protocol.ts', ['api', 'store', 'canvas', 'panels', 'hooks', 'actions', 'workflow', 'widgets']],
  ['workflow', ['api', 'store', 'canvas', 'panels', 'hooks', 'actions', 'widgets']],
  ['api', ['store', 'canvas', 'panels', 'hooks', 'actions', 'widgets']],
  ['store', ['canvas', 'panels', 'hooks', 'actions', 'widgets']],
  ['actions', ['panels', 'hooks', 'canvas', 'widgets']],
  ['widgets', ['store', 'api', 'actions', 'panels']],
  ['apps', ['store', 'canvas', 'panels', 'hooks', 'actions']],
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__tests__' ? [] : sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => m[1] ?? '');
  return found.map((spec) => relative(SRC, resolve(dirname(file), spec)));
}

describe('architecture', () => {
  const files = sources(SRC);

  it.each(RULES)('%s never imports %j', (area, never) => {
    const mine = files.filter((f) => relative(SRC, f) === area || relative(SRC, f).startsWith(`${area}/`));
    expect(mine.length).toBeGreaterThan(0);
    const broken = mine.flatMap((f) =>
      imports(f)
        .filter((target) => never.some((n) => target === n || target.startsWith(`${n}/`)))
        .map((target) => `${relative(SRC, f)} imports ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('has no circle of files importing each other (type imports too)', () => {
    const id = (path: string): string => path.replace(/\.tsx?$/, '').replace(/\/index$/, '');
    const known = new Set(files.map((f) => id(relative(SRC, f))));
    const edges = new Map(
      files.map(
        (f) =>
          [
            id(relative(SRC, f)),
            imports(f)
              .map(id)
              .filter((t) => known.has(t)),
          ] as const,
      ),
    );
    const done = new Set<string>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      const at = path.indexOf(file);
      if (at >= 0) {
        circles.push([...path.slice(at), file].join(' -> '));
        return;
      }
      if (done.has(file)) return;
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      done.add(file);
    };
    for (const file of edges.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('has one hook per file in hooks/, named like the file', () => {
    for (const file of files.filter((f) => relative(SRC, f).startsWith('hooks/'))) {
      const name = file
        .split('/')
        .pop()
        ?.replace(/\.tsx?$/, '');
      const hooks = [...readFileSync(file, 'utf8').matchAll(/export function (use\w+)/g)].map((m) => m[1]);
      expect(hooks, file).toEqual([name]);
    }
  });
});
