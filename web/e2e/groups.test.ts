// Groups live in the workflow file: a group made in one browser is on disk after a save and
// shows in a fresh browser (empty localStorage); groups an older editor kept in localStorage
// move into the file with the next save.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, mod, node, nodeIds, openApp, until, writeWorkflow } from './app';
import { screenshot } from './browser';

interface SavedGroup {
  id: string;
  label: string;
  position: { x: number; y: number };
  size: { width: number; height: number };
  nodes: string[];
}

const TWO_NODES = {
  format: 'graphbook.workflow',
  version: 1,
  nodes: [
    { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: { x: 0, y: 0 } },
    { id: 'shout', type: 'Shout', params: {}, position: { x: 420, y: 60 } },
  ],
  edges: [{ source: 'greetings', output: 'out', target: 'shout', input: 'in' }],
};

/** A page in a new browser profile: nothing in localStorage but `stored`. */
async function freshPage(stored: Record<string, string> = {}): Promise<Page> {
  const page = await app.freshBrowser();
  await page.goto(app.server.url);
  await page.evaluate((items) => {
    for (const [key, value] of Object.entries(items)) localStorage.setItem(key, value);
  }, stored);
  return page;
}

// Saved with Ctrl+S only, so that what is on disk before it is known.
const AUTOSAVE_OFF = { 'graphbook.autosave': 'off' };

const unsaved = (): Promise<boolean> =>
  app.page
    .locator('.gb-file-title')
    .getAttribute('data-dirty')
    .then((v) => v === 'true');
const savedGroups = (file: string): SavedGroup[] | undefined =>
  (JSON.parse(readFileSync(join(app.server.workflows, file), 'utf8')) as { groups?: SavedGroup[] }).groups;

/** The graph nodes whose boxes lie inside the group's box on screen. */
async function nodesInside(groupId: string): Promise<string[]> {
  const frame = await node(app.page, groupId).boundingBox();
  if (!frame) throw new Error(`group ${groupId} is not shown`);
  const inside: string[] = [];
  for (const id of await nodeIds(app.page)) {
    const box = await node(app.page, id).boundingBox();
    const within =
      box &&
      box.x >= frame.x &&
      box.y >= frame.y &&
      box.x + box.width <= frame.x + frame.width &&
      box.y + box.height <= frame.y + frame.height;
    if (within) inside.push(id);
  }
  return inside;
}

const app = appSession();

describe('groups', () => {
  it('are saved in the file and come back in a fresh browser', async () => {
    writeWorkflow(app.server, 'grouping.json', TWO_NODES);
    await openApp(await freshPage(AUTOSAVE_OFF), app.server, 'grouping.json');
    await node(app.page, 'greetings').locator('.gb-node-header').click();
    await node(app.page, 'shout')
      .locator('.gb-node-header')
      .click({ modifiers: [mod] });
    await app.page.keyboard.press(`${mod}+g`);
    const label = app.page.locator('.react-flow__node-group').getByLabel('group name');
    await label.fill('Talkers');
    expect(await unsaved()).toBe(true);
    await app.page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');

    const groups = savedGroups('grouping.json');
    expect(groups?.map((g) => [g.id, g.label, g.nodes])).toEqual([['group', 'Talkers', ['greetings', 'shout']]]);
    const [group] = groups ?? [];
    if (!group) throw new Error('no group saved');
    expect(group.position.x).toBeLessThan(0);
    expect(group.size.width).toBeGreaterThan(420);
    const stored = await app.page.evaluate(() =>
      Object.keys(localStorage).filter((k) => k.startsWith('graphbook.groups:')),
    );
    expect(stored).toEqual([]);

    await openApp(await freshPage(), app.server, 'grouping.json');
    expect(await app.page.evaluate(() => localStorage.getItem('graphbook.groups:grouping.json'))).toBeNull();
    await app.page.locator('.react-flow__node-group').waitFor();
    expect(await app.page.locator('.react-flow__node-group').count()).toBe(1);
    expect(await node(app.page, 'group').getByLabel('group name').inputValue()).toBe('Talkers');
    expect(await nodesInside('group')).toEqual(['greetings', 'shout']);
    expect(await unsaved()).toBe(false);
    await screenshot(app.page, 'groups-reloaded');

    await node(app.page, 'group').getByLabel('group name').fill('Loud talkers');
    const autosaved = await until(
      () => savedGroups('grouping.json')?.[0]?.label,
      (l) => l === 'Loud talkers',
      'the autosave',
    );
    expect(autosaved).toBe('Loud talkers');
  });

  it('take over the groups an older editor kept in this browser, saving them with the next save', async () => {
    writeWorkflow(app.server, 'legacy.json', TWO_NODES);
    const before = readFileSync(join(app.server.workflows, 'legacy.json'), 'utf8');
    const kept: SavedGroup[] = [
      {
        id: 'old',
        label: 'Kept here',
        position: { x: -40, y: -80 },
        size: { width: 760, height: 300 },
        nodes: ['greetings', 'shout'],
      },
    ];
    await freshPage({ ...AUTOSAVE_OFF, 'graphbook.groups:legacy.json': JSON.stringify(kept) });
    await openApp(app.page, app.server, 'legacy.json');
    await app.page.locator('.react-flow__node-group').waitFor();
    expect(await node(app.page, 'old').getByLabel('group name').inputValue()).toBe('Kept here');
    expect(await nodesInside('old')).toEqual(['greetings', 'shout']);
    expect(await unsaved()).toBe(true);
    expect(readFileSync(join(app.server.workflows, 'legacy.json'), 'utf8')).toBe(before);

    await app.page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');
    expect(savedGroups('legacy.json')).toEqual(kept);
    expect(await app.page.evaluate(() => localStorage.getItem('graphbook.groups:legacy.json'))).toBeNull();
  });
});
