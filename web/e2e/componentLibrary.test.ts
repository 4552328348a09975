// Library components edited from the editor: one opened in place and edited is marked as
// differing from its file, then updates the file (another workflow gets it when opened) or is
// kept as a copy; an update after someone else changed the file says so and offers to overwrite;
// a port the file no longer has shows on the node. Saving a component asks for its file name.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, mod, node, nodeIds, openApp, until, viewSettled, workflow } from './app';
import { screenshot } from './browser';

/** first -> second (both Shout): `in` feeds first, `out` is second's. */
const shouts = (loud: { first?: boolean; second?: boolean } = {}, exposeOut = true) => ({
  format: 'graphbook.component',
  version: 1,
  inputs: { in: { node: 'first', input: 'in' } },
  outputs: exposeOut ? { out: { node: 'second', output: 'out' } } : {},
  params: {},
  nodes: [
    { id: 'first', type: 'Shout', params: loud.first ? { loud: true } : {}, position: at(0, 0) },
    { id: 'second', type: 'Shout', params: loud.second ? { loud: true } : {}, position: at(320, 0) },
  ],
  edges: [{ source: 'first', output: 'out', target: 'second', input: 'in' }],
});
const text = (data: unknown): string => `${JSON.stringify(data, null, 2)}\n`;
const versionOf = (raw: string): string => createHash('sha256').update(raw).digest('hex').slice(0, 12);

const using = (source: string, end: string, version: string) =>
  workflow(
    [
      { id: source, type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
      { id: 'shouts', type: 'Component', params: {}, position: at(360, 0), component: { library: 'shouts', version } },
      { id: end, type: 'Shout', params: {}, position: at(720, 0) },
    ],
    [
      { source, output: 'out', target: 'shouts', input: 'in' },
      { source: 'shouts', output: 'out', target: end, input: 'in' },
    ],
  );

const made = workflow(
  [
    { id: 'greetings', type: 'Greetings', params: { count: 2 }, position: at(0, 0) },
    { id: 'a', type: 'Shout', params: {}, position: at(340, 0) },
    { id: 'b', type: 'Shout', params: { loud: true }, position: at(680, 0) },
  ],
  [
    { source: 'greetings', output: 'out', target: 'a', input: 'in' },
    { source: 'a', output: 'out', target: 'b', input: 'in' },
  ],
);

const first = text(shouts());
const pairs = workflow(
  [
    { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
    {
      id: 'pair',
      type: 'Component',
      params: {},
      position: at(360, 0),
      component: { library: 'pair', version: versionOf(first) },
    },
  ],
  [{ source: 'greetings', output: 'out', target: 'pair', input: 'in' }],
);
const finished = (status: string): boolean => ['completed', 'failed', 'stopped'].includes(status);

/** Runs the open workflow and waits until the page shows this run's end. */
async function runToEnd(page: Page): Promise<void> {
  const posted = page.waitForResponse((r) => r.url().endsWith('/api/runs') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'run', exact: true }).click();
  const { run_id: id } = (await (await posted).json()) as { run_id: string };
  await until(
    () =>
      page
        .locator(`[data-run-id="${id}"]`)
        .getAttribute('data-run-status', { timeout: 1000 })
        .catch(() => ''),
    (s) => finished(s ?? ''),
    'the run to end',
  );
}
const app = appSession({
  workflows: { 'made.json': made },
  setup(session) {
    const folder = join(session.server.folder, 'components');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'shouts.json'), first);
    writeFileSync(join(folder, 'taken.json'), first);
    writeFileSync(join(folder, 'pair.json'), first);
    for (const [file, data] of [
      ['uses.json', using('greetings', 'end', versionOf(first))],
      ['also.json', using('hello', 'last', versionOf(first))],
      ['pairs.json', pairs],
    ] as const)
      writeFileSync(join(session.server.workflows, file), text(data));
  },
});

const libraryFile = (name: string) => join(app.server.folder, 'components', `${name}.json`);
const library = (name: string) =>
  JSON.parse(readFileSync(libraryFile(name), 'utf8')) as ReturnType<typeof shouts> & { nodes: { params: object }[] };
const loudInFile = (name: string): string[] =>
  existsSync(libraryFile(name))
    ? library(name)
        .nodes.filter((n) => 'loud' in n.params)
        .map((n) => (n as { id: string }).id)
    : [];
const savedNode = (file: string, id: string) =>
  (
    JSON.parse(readFileSync(join(app.server.workflows, file), 'utf8')) as {
      nodes: { id: string; component?: Record<string, unknown> }[];
    }
  ).nodes.find((n) => n.id === id);
const bar = (page: Page) => node(page, 'shouts').locator('.gb-library-edit');
const path = (page: Page) => page.getByRole('navigation', { name: 'component path' });

/** Opens `shouts` in place, sets `loud` on the inner node `inner`, and goes back out. */
async function editInside(page: Page, file: string, inner: string): Promise<void> {
  await node(page, 'shouts').locator('.gb-title').dblclick();
  await until(
    () => nodeIds(page),
    (ids) => ids.join() === 'first,second',
    'the nodes inside',
  );
  await node(page, inner).getByRole('checkbox').check();
  await path(page).getByRole('button', { name: file }).click();
  await until(
    () => nodeIds(page),
    (ids) => ids.includes('shouts'),
    'back out',
  );
}

async function save(page: Page, file: string, done: (node: ReturnType<typeof savedNode>) => boolean): Promise<void> {
  await page.keyboard.press(`${mod}+s`);
  await until(() => savedNode(file, 'shouts'), done, `the save of ${file}`);
}

describe('library components in the editor', () => {
  it('updates the library file from an edit in place, or keeps the edit as a copy', async () => {
    await openApp(app.page, app.server, 'uses.json');
    await node(app.page, 'shouts').locator('.gb-title').dblclick();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'first,second',
      'the nodes inside',
    );
    expect(await path(app.page).innerText()).toContain('components/shouts.json');
    await screenshot(app.page, 'library-inside');
    await node(app.page, 'second').getByRole('checkbox').check();
    await path(app.page).getByRole('button', { name: 'uses.json' }).click();
    await bar(app.page).waitFor();
    expect(await bar(app.page).innerText()).toContain('differs from components/shouts.json');
    await screenshot(app.page, 'library-differs');
    expect(loudInFile('shouts')).toEqual([]); // nothing written before the user chooses

    await bar(app.page).getByRole('button', { name: 'Update components/shouts.json' }).click();
    await until(
      () => loudInFile('shouts'),
      (loud) => loud.join() === 'second',
      'the library file updated',
    );
    await bar(app.page).waitFor({ state: 'detached' });
    const updated = versionOf(readFileSync(libraryFile('shouts'), 'utf8'));
    await save(app.page, 'uses.json', (n) => n?.component?.version === updated);
    expect(savedNode('uses.json', 'shouts')?.component).toEqual({ library: 'shouts', version: updated });

    // another workflow that uses it gets the new version when opened
    await openApp(app.page, app.server, 'also.json');
    await node(app.page, 'shouts').locator('.gb-title').dblclick();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'first,second',
      'the nodes inside',
    );
    expect(await node(app.page, 'second').getByRole('checkbox').isChecked()).toBe(true);
    await path(app.page).getByRole('button', { name: 'also.json' }).click();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('shouts'),
      'back out',
    );
    expect(await bar(app.page).count()).toBe(0); // opened and left unchanged: still the reference

    // someone else changes the file meanwhile: the update says so, and can overwrite
    await editInside(app.page, 'also.json', 'first');
    await bar(app.page).waitFor();
    const put = await fetch(new URL('/api/components/shouts.json', app.server.url), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...shouts({ second: true }), doc: 'their edit' }),
    });
    expect(put.status).toBe(200);
    await bar(app.page).getByRole('button', { name: 'Update components/shouts.json' }).click();
    await until(
      () => bar(app.page).innerText(),
      (shown) => shown.includes('changed by someone else'),
      'the refusal on the node',
    );
    expect(library('shouts')).toMatchObject({ doc: 'their edit' }); // theirs is kept until told
    await screenshot(app.page, 'library-refused');
    await bar(app.page).getByRole('button', { name: 'Overwrite components/shouts.json' }).click();
    await until(
      () => loudInFile('shouts'),
      (loud) => loud.join() === 'first,second',
      'the overwrite',
    );
    await bar(app.page).waitFor({ state: 'detached' });

    // keep as a copy: the file stays, the workflow holds the edited inside
    const before = readFileSync(libraryFile('shouts'), 'utf8');
    await node(app.page, 'shouts').locator('.gb-title').dblclick();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'first,second',
      'the nodes inside',
    );
    await node(app.page, 'first').getByRole('checkbox').uncheck();
    await path(app.page).getByRole('button', { name: 'also.json' }).click();
    await bar(app.page).getByRole('button', { name: 'Keep as a copy in this workflow' }).click();
    await bar(app.page).waitFor({ state: 'detached' });
    await save(app.page, 'also.json', (n) => !!n?.component && !('library' in n.component));
    expect(readFileSync(libraryFile('shouts'), 'utf8')).toBe(before);

    // the file loses the port uses.json wires: opening it says so on the node
    writeFileSync(libraryFile('shouts'), text(shouts({}, false)));
    await openApp(app.page, app.server, 'uses.json');
    const problems = node(app.page, 'shouts').locator('.gb-problems');
    await until(
      () => problems.innerText({ timeout: 1000 }).catch(() => ''),
      (shown) => shown.includes("has no output 'out'") && shown.includes('components/shouts.json'),
      'the lost port on the node',
    );
  });

  it('names a library component, shows its ports opened, and its run after a library edit', async () => {
    const page = app.page;
    const pair = node(page, 'pair');
    await openApp(page, app.server, 'pairs.json');
    expect(await pair.locator('.gb-title').innerText()).toBe('pair');
    await runToEnd(page);

    await pair.locator('.gb-title').dblclick();
    await until(
      () => nodeIds(page),
      (ids) => ids.join() === 'first,second',
      'the nodes inside',
    );
    expect(await node(page, 'first').locator('[data-exposed="in"]').isVisible()).toBe(true);
    expect(await node(page, 'second').locator('[data-exposed="out"]').isVisible()).toBe(true);
    await screenshot(page, 'library-inside-ports');
    await node(page, 'second').getByRole('checkbox').check();
    await path(page).getByRole('button', { name: 'pairs.json' }).click();
    await pair.locator('.gb-library-edit').getByRole('button', { name: 'Update components/pair.json' }).click();
    await pair.locator('.gb-library-edit').waitFor({ state: 'detached' });

    await runToEnd(page); // `first` inside is reused, `second` runs again
    expect(await pair.locator('.gb-node').getAttribute('class')).toContain('gb-state-done');
    expect(await pair.locator('.gb-title').innerText()).toBe('pair');
    await pair.getByLabel('about pair').click();
    await page.getByRole('tab', { name: 'Output' }).click();
    const output = page.locator('.gb-inspector .gb-output[data-output="out"]');
    expect(await output.innerText()).toContain('3 handed on');
    expect(await output.innerText()).not.toContain('Nothing handed on yet.');
    expect(await output.locator('[class*="gb-json"]').first().isVisible()).toBe(true);
    await screenshot(page, 'library-component-output');
  });

  it('asks for the file name when saving a component to the library', async () => {
    await openApp(app.page, app.server, 'made.json');
    await node(app.page, 'a').locator('.gb-node-header').click();
    await node(app.page, 'b')
      .locator('.gb-node-header')
      .click({ modifiers: ['Shift'] });
    await app.page.keyboard.press(`${mod}+Shift+E`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'component,greetings',
      'the component',
    );
    await node(app.page, 'component').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Save to library…' }).click();
    const dialog = app.page.getByRole('dialog', { name: 'Save “component” to the library' });
    const name = dialog.getByLabel('File name');
    const why = dialog.locator('#gb-library-save-why');
    const saveButton = dialog.getByRole('button', { name: 'Save', exact: true });
    expect(await name.inputValue()).toBe('component'); // the node's title as a file name
    await viewSettled(app.page);
    await screenshot(app.page, 'library-save-dialog');

    await name.fill('my rows');
    expect(await why.innerText()).toContain("use letters, digits, '_', '-'");
    expect(await saveButton.isDisabled()).toBe(true);
    await name.fill('taken');
    expect(await why.innerText()).toContain('components/taken.json is in the library already');
    expect(await saveButton.isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Overwrite' }).waitFor();
    await screenshot(app.page, 'library-save-taken');

    await name.fill('greeting_rows');
    await name.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await until(
      () => existsSync(libraryFile('greeting_rows')),
      (there) => there,
      'the library file',
    );
    expect(library('greeting_rows').nodes.map((n) => (n as { id: string }).id)).toEqual(['a', 'b']);
    expect(readFileSync(libraryFile('taken'), 'utf8')).toBe(first);
    await app.page.keyboard.press(`${mod}+s`);
    await until(
      () => savedNode('made.json', 'component')?.component,
      (c) => c?.library === 'greeting_rows',
      'the node referring to the library file',
    );
  });
});
