// Wiring as in ComfyUI: a wire dropped on empty canvas opens the node search, listing only the
// nodes it can join, and joins the one picked; a handle that refuses a wire says why while it is
// dragged over it (a step output into a parameter, a cycle), and again when it is dropped.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, edgeIds, emptySpot, handle, mod, node, nodeIds, openApp, until } from './app';
import { screenshot } from './browser';

const app = appSession();

async function center(page: Page, selector: ReturnType<typeof handle>): Promise<{ x: number; y: number }> {
  const box = await selector.boundingBox();
  if (!box) throw new Error(`handle not shown on ${page.url()}`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Presses on a handle and moves to `to`, leaving the button down. */
async function dragFrom(page: Page, from: ReturnType<typeof handle>, to: { x: number; y: number }): Promise<void> {
  const start = await center(page, from);
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move((start.x + to.x) / 2, (start.y + to.y) / 2, { steps: 6 });
  await page.mouse.move(to.x, to.y, { steps: 6 });
}

describe('wiring', () => {
  it('opens the node search where a wire is dropped, lists what fits and joins the picked node', async () => {
    await openApp(app.page, app.server, 'hello.json');
    const spot = await emptySpot(app.page);
    await dragFrom(app.page, handle(app.page, 'greetings', 'source', 'out'), spot);
    await app.page.mouse.up();
    const search = app.page.getByLabel('search nodes');
    await search.waitFor();
    expect(await search.getAttribute('placeholder')).toBe('Add a node to join the wire…');
    const names = await app.page.locator('.gb-search .gb-search-name').allInnerTexts();
    expect(names).toContain('Shout');
    expect(names, 'a source takes no input').not.toContain('Greetings');
    expect(names, 'a resource takes no data').not.toContain('Number');
    await screenshot(app.page, 'wiring-drop-search');
    await search.fill('shout');
    await search.press('Enter');
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('shout'),
      'the new node',
    );
    await until(
      () => edgeIds(app.page),
      (ids) => ids.includes('greetings:out->shout:in'),
      'the joined wire',
    );
  });

  it('says why a handle refuses a wire while it is dragged over it, and when it is dropped', async () => {
    await dragFrom(
      app.page,
      handle(app.page, 'greetings', 'source', 'out'),
      await center(app.page, handle(app.page, 'shout_even', 'target', 'loud')),
    );
    const hint = app.page.locator('.gb-connection-hint');
    await hint.waitFor();
    expect(await hint.innerText()).toBe('step outputs go into a data input; only resources feed parameters');
    await screenshot(app.page, 'wiring-refused-hint');
    await app.page.mouse.up();
    await app.page.locator('.gb-notice-error', { hasText: 'Not wired: step outputs go into a data input' }).waitFor();
    expect(await hint.count()).toBe(0);

    await dragFrom(
      app.page,
      handle(app.page, 'say_odd', 'source', 'out'),
      await center(app.page, handle(app.page, 'split', 'target', 'in')),
    );
    await hint.waitFor();
    expect(await hint.innerText()).toBe('this wire would make a cycle');
    await app.page.mouse.up();
    expect(await edgeIds(app.page)).not.toContain('say_odd:out->split:in');
    expect(await node(app.page, 'split').count()).toBe(1);
  });
});

describe('right-click menus', () => {
  const menuItems = (): Promise<string[]> => app.page.locator('.gb-menu [role="menuitem"] > span').allInnerTexts();

  it('on a node: run up to it, duplicate, delete', async () => {
    await node(app.page, 'split').locator('.gb-node-header').click({ button: 'right' });
    await app.page.locator('.gb-menu').waitFor();
    expect(await menuItems()).toEqual([
      'Run up to here',
      'Bypass',
      'Mute',
      'Make component',
      'Duplicate',
      'Fold to its title',
      'Docs, outputs and logs',
      'Results gallery',
      'Clear its cached outputs',
      'Delete',
    ]);
    await screenshot(app.page, 'menu-node');
    await app.page.getByRole('menuitem', { name: 'Duplicate' }).click();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('split_2'),
      'the copy',
    );
    expect(await app.page.locator('.gb-menu').count()).toBe(0);
    await node(app.page, 'split_2').locator('.gb-node-header').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Delete' }).click();
    await until(
      () => nodeIds(app.page),
      (ids) => !ids.includes('split_2'),
      'the deletion',
    );
    await node(app.page, 'split').locator('.gb-node-header').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Fold to its title' }).click();
    await node(app.page, 'split').locator('.gb-params').waitFor({ state: 'detached' });
    await node(app.page, 'split').locator('.gb-node-header').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Unfold' }).click();
    await node(app.page, 'split').locator('.gb-params').waitFor();
  });

  it('on a wire: delete it; on the canvas: add a node there', async () => {
    const wire = app.page.locator('.react-flow__edge[data-id="split:B->say_odd:in"] path').first();
    const box = await wire.boundingBox();
    if (!box) throw new Error('wire not shown');
    await app.page
      .locator('.react-flow__edge[data-id="split:B->say_odd:in"] .react-flow__edge-interaction')
      .dispatchEvent('contextmenu', { clientX: box.x + box.width / 2, clientY: box.y + box.height / 2, bubbles: true });
    await app.page.getByRole('menuitem', { name: 'Delete the wire' }).click();
    await until(
      () => edgeIds(app.page),
      (ids) => !ids.includes('split:B->say_odd:in'),
      'the wire to go',
    );

    const pane = await app.page.locator('.react-flow__pane').boundingBox();
    if (!pane) throw new Error('no canvas');
    await app.page.mouse.click(pane.x + 30, pane.y + 30, { button: 'right' });
    expect(await menuItems()).toEqual(['Add a node…', 'Add a comment', 'Select all', 'Fit the view']);
    await app.page.getByRole('menuitem', { name: 'Add a node…' }).click();
    await app.page.getByLabel('search nodes').waitFor();
    await app.page.keyboard.press('Escape');
  });

  it('adds a Markdown comment to the canvas, saved in the file', async () => {
    const pane = await app.page.locator('.react-flow__pane').boundingBox();
    if (!pane) throw new Error('no canvas');
    await app.page.mouse.click(pane.x + 30, pane.y + 30, { button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Add a comment' }).click();
    const text = app.page.getByLabel('comment', { exact: true });
    await text.waitFor();
    await text.fill('**Read me** first: split sends even numbers to A.');
    await text.press('Escape');
    const comment = app.page.locator('.gb-comment');
    expect(await comment.locator('strong').innerText()).toBe('Read me');
    await screenshot(app.page, 'canvas-comment');
    await app.page.keyboard.press(`${mod}+s`);
    await until(
      () => app.page.locator('.gb-file-title').getAttribute('data-dirty'),
      (d) => d === 'false',
      'the save',
    );
    const saved = JSON.parse(readFileSync(join(app.server.workflows, 'hello.json'), 'utf8')) as {
      comments?: { id: string; text: string }[];
    };
    expect(saved.comments?.map((c) => [c.id, c.text])).toEqual([
      ['note', '**Read me** first: split sends even numbers to A.'],
    ]);
    await app.page.reload();
    await comment.locator('strong').waitFor();
    await comment.click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Delete the comment' }).click();
    await comment.waitFor({ state: 'detached' });
  });
});
