// web/README.md's table of keys says what the in-app shortcut list says.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SHORTCUTS } from '../hooks/useShortcuts';

const README = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'README.md');

function readmeKeys(): [string, string][] {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## Keys'), text.indexOf('## How it behaves'));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| keys') && !line.startsWith('|---'))
    .map((line) => line.slice(2, -2).split(' | ') as [string, string]);
}

describe('the shortcut list', () => {
  it('is the same in web/README.md and in the app', () => {
    expect(readmeKeys()).toEqual(SHORTCUTS);
  });
});
