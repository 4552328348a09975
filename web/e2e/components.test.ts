// Components: three nodes made into one (Ctrl+Shift+E), run; saved to the library, offered in
// the palette, used in a second workflow that runs; unpacked back into plain nodes.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  appSession,
  at,
  dragFromPalette,
  mod,
  node,
  nodeIds,
  openApp,
  runStatus,
  connect,
  until,
  workflow,
} from './app';
import { screenshot } from './browser';

const chain = workflow(
  [
    { id: 'greetings', type: 'Greetings', params: { count: 4 }, position: at(0, 0) },
    { id: 'first', type: 'Shout', params: {}, position: at(320, 0) },
    { id: 'second', type: 'Shout', params: { loud: true }, position: at(640, 0) },
    { id: 'third', type: 'Shout', params: {}, position: at(960, 0) },
    { id: 'end', type: 'Shout', params: {}, position: at(1280, 0) },
  ],
  [
    { source: 'greetings', output: 'out', target: 'first', input: 'in' },
    { source: 'first', output: 'out', target: 'second', input: 'in' },
    { source: 'second', output: 'out', target: 'third', input: 'in' },
    { source: 'third', output: 'out', target: 'end', input: 'in' },
  ],
);

const other = workflow(
  [
    { id: 'hello', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
    { id: 'last', type: 'Shout', params: {}, position: at(900, 0) },
  ],
  [],
);

const app = appSession({ workflows: { 'first.json': chain, 'second.json': other } });

const finished = (status: string): boolean => ['completed', 'failed', 'stopped'].includes(status);
const count = (p: Page, id: string, output = 'out'): Promise<number> =>
  node(p, id)
    .locator(`.gb-count[data-output="${output}"]`)
    .innerText({ timeout: 1000 })
    .then(Number)
    .catch(() => 0);
const saved = (file: string): { nodes: { id: string; type: string; component?: Record<string, unknown> }[] } =>
  JSON.parse(readFileSync(join(app.server.workflows, file), 'utf8')) as ReturnType<typeof saved>;

/** Runs the open workflow and waits for this run's end on the server, then on the page (which
 * may still show the previous workflow's finished run when the click lands). */
async function runToEnd(page: Page): Promise<void> {
  const posted = page.waitForResponse((r) => r.url().endsWith('/api/runs') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'run', exact: true }).click();
  const { run_id: id } = (await (await posted).json()) as { run_id: string };
  const current = async (): Promise<string> => {
    const body = (await (await fetch(new URL('/api/runs/current', page.url()))).json()) as {
      run?: { run_id: string; status: string };
    };
    return body.run?.run_id === id ? body.run.status : 'another run';
  };
  await until(current, finished, 'the run to finish', 60_000);
  await until(() => runStatus(page), finished, 'the page to show the end', 60_000);
  expect(await current()).toBe('completed');
}

describe('components', () => {
  it('makes one of three nodes, saves it to the library and uses it in another workflow', async () => {
    await openApp(app.page, app.server, 'first.json');
    await node(app.page, 'first').locator('.gb-node-header').click();
    await node(app.page, 'second')
      .locator('.gb-node-header')
      .click({ modifiers: ['Shift'] });
    await node(app.page, 'third')
      .locator('.gb-node-header')
      .click({ modifiers: ['Shift'] });
    await app.page.keyboard.press(`${mod}+Shift+E`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'component,end,greetings',
      'the component',
    );
    const made = node(app.page, 'component');
    expect(await made.getAttribute('class')).toContain(' selected');
    await app.page.keyboard.press(`${mod}+s`);
    await until(
      () =>
        saved('first.json')
          .nodes.map((n) => n.id)
          .join(),
      (ids) => ids === 'component,end,greetings',
      'the save',
    );
    const inside = saved('first.json').nodes.find((n) => n.id === 'component')?.component as {
      nodes: { id: string }[];
    };
    expect(inside.nodes.map((n) => n.id)).toEqual(['first', 'second', 'third']);

    await runToEnd(app.page);
    expect(await count(app.page, 'end')).toBe(4);
    expect(await count(app.page, 'component')).toBe(4); // the sum of the inner nodes' run
    await screenshot(app.page, 'components-made');

    await made.locator('.gb-title').dblclick(); // opens it in place: its nodes show their own run
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'first,second,third',
      'the nodes inside',
    );
    expect(await app.page.getByRole('navigation', { name: 'component path' }).innerText()).toContain('first.json');
    expect(await count(app.page, 'third')).toBe(4);
    expect(await node(app.page, 'second').locator('.gb-status').innerText()).toContain('done');
    await screenshot(app.page, 'components-inside');
    await app.page
      .getByRole('navigation', { name: 'component path' })
      .getByRole('button', { name: 'first.json' })
      .click();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'component,end,greetings',
      'back out',
    );
    expect(await app.page.locator('.gb-file-title').getAttribute('data-dirty')).toBe('false');

    await made.click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Save to library…' }).click();
    await app.page.getByRole('dialog').getByRole('button', { name: 'Save', exact: true }).click();
    const file = join(app.server.folder, 'components', 'component.json');
    await until(
      () => existsSync(file),
      (there) => there,
      'the library file',
    );
    await until(
      () => app.page.locator('[data-node-type="components/component"]').count(),
      (n) => n > 0,
      'the palette entry',
      10_000,
    ).catch(() => 0);

    await openApp(app.page, app.server, 'second.json');
    await dragFromPalette(app.page, 'components/component', { x: 450, y: 200 });
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('component'),
      'the library component on the canvas',
    );
    await connect(app.page, ['hello', 'out'], ['component', 'in']);
    await connect(app.page, ['component', 'out'], ['last', 'in']);
    await app.page.keyboard.press(`${mod}+s`);
    await until(
      () => saved('second.json').nodes.find((n) => n.id === 'component')?.component,
      (c) => !!c,
      'the save',
    );
    expect(saved('second.json').nodes.find((n) => n.id === 'component')?.component).toMatchObject({
      library: 'component',
    });
    await runToEnd(app.page);
    expect(await count(app.page, 'last')).toBe(3);
    expect(await count(app.page, 'component')).toBe(3);
    await screenshot(app.page, 'components-library');

    await node(app.page, 'component').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Unpack' }).click();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'first,hello,last,second,third',
      'the unpacked nodes',
    );
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.join() === 'component,hello,last',
      'undo of the unpack',
    );
  });
});
