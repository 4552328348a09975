// Building a workflow in the browser: palette, wiring, parameters, saving, undo, copy and paste,
// search, files, and files that do not validate.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appSession,
  canvasReady,
  dragFromPalette,
  edgeIds,
  emptySpot,
  mod,
  node,
  nodeIds,
  openApp,
  painted,
  readJson,
  switchTheme,
  until,
  viewSettled,
  connect,
  wire,
  writeWorkflow,
} from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const app = appSession();

const unsaved = (): Promise<boolean> =>
  app.page
    .locator('.gb-file-title')
    .getAttribute('data-dirty')
    .then((v) => v === 'true');

describe('the editor', () => {
  it('shows the workflows folder and opens a file', async () => {
    await openApp(app.page, app.server);
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    const files = await app.page.locator('.gb-file').evaluateAll((els) => els.map((e) => e.getAttribute('data-file')));
    expect(files).toEqual(expect.arrayContaining(['hello.json', 'image_classification.json']));
    await app.page.locator('.gb-file-name', { hasText: 'hello.json' }).click();
    await app.page.locator('.gb-file-title', { hasText: 'hello.json' }).waitFor();
    await canvasReady(app.page);
    expect(await nodeIds(app.page)).toEqual(['greetings', 'say_odd', 'shout_even', 'split']);
    await screenshot(app.page, 'editor-hello-light');
  });

  it('builds a workflow: drag from the palette, wire, set a parameter, save, reload', async () => {
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'New workflow' }).click();
    const name = app.page.getByLabel('file name');
    await name.fill('built.json');
    await name.press('Enter');
    await app.page.locator('.gb-file-title', { hasText: 'built.json' }).waitFor();
    await canvasReady(app.page);

    await dragFromPalette(app.page, 'Greetings', { x: 200, y: 200 });
    await dragFromPalette(app.page, 'Shout', { x: 560, y: 240 });
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 2,
      'two dropped nodes',
    );
    expect(await nodeIds(app.page)).toEqual(['greetings', 'shout']);

    await connect(app.page, ['greetings', 'out'], ['shout', 'in']);
    await until(
      () => edgeIds(app.page),
      (ids) => ids.length === 1,
      'the wire',
    );
    expect(await edgeIds(app.page)).toEqual(['greetings:out->shout:in']);

    const count = node(app.page, 'greetings').getByLabel('count', { exact: true });
    await count.fill('3');
    expect(await unsaved()).toBe(true);
    await app.page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');
    const saved = readJson(app.server, 'built.json');
    expect(saved.nodes.map((n) => [n.id, n.type, n.params])).toEqual([
      ['greetings', 'Greetings', { count: 3 }],
      ['shout', 'Shout', {}],
    ]);
    expect(saved.edges).toEqual([{ source: 'greetings', output: 'out', target: 'shout', input: 'in' }]);
    await screenshot(app.page, 'editor-built');

    await app.page.reload();
    await app.page.locator('.gb-file-title', { hasText: 'built.json' }).waitFor();
    await canvasReady(app.page);
    expect(await node(app.page, 'greetings').getByLabel('count', { exact: true }).inputValue()).toBe('3');
    const wires = await until(
      () => edgeIds(app.page),
      (ids) => ids.length === 1,
      'the saved wire',
    );
    expect(wires).toEqual(['greetings:out->shout:in']);
  });

  it('refuses wires between incompatible handles and types', async () => {
    const pane = await app.page.locator('.react-flow__pane').boundingBox();
    const below = await node(app.page, 'greetings').boundingBox();
    if (!pane || !below) throw new Error('no canvas');
    await dragFromPalette(app.page, 'Function', { x: below.x - pane.x, y: below.y - pane.y + below.height + 90 });
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('function'),
      'the Function node',
    );
    await wire(app.page, ['function', 'resource'], ['shout', 'in']);
    await wire(app.page, ['greetings', 'out'], ['shout', 'loud']);
    // A function cannot be a boolean: the resource's type does not fit the parameter.
    await wire(app.page, ['function', 'resource'], ['shout', 'loud']);
    await painted(app.page);
    expect(await edgeIds(app.page)).toEqual(['greetings:out->shout:in']);
  });

  it('undoes and redoes, copies and pastes', async () => {
    await node(app.page, 'shout').locator('.gb-node-header').click();
    await app.page.keyboard.press('Delete');
    await until(
      () => nodeIds(app.page),
      (ids) => !ids.includes('shout'),
      'the deletion',
    );
    expect(
      await until(
        () => edgeIds(app.page),
        (ids) => ids.length === 0,
        'the wires to go',
      ),
    ).toEqual([]);
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('shout'),
      'undo',
    );
    // Edges render a frame after their nodes: wait for them rather than read them at once.
    const restored = await until(
      () => edgeIds(app.page),
      (ids) => ids.length === 1,
      'the restored wire',
    );
    expect(restored).toEqual(['greetings:out->shout:in']);
    await app.page.keyboard.press(`${mod}+Shift+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => !ids.includes('shout'),
      'redo',
    );
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('shout'),
      'undo again',
    );

    await node(app.page, 'greetings').locator('.gb-node-header').click();
    await node(app.page, 'shout')
      .locator('.gb-node-header')
      .click({ modifiers: [mod] });
    await app.page.keyboard.press(`${mod}+c`);
    await app.page.mouse.move(700, 600);
    await app.page.keyboard.press(`${mod}+v`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 5,
      'the pasted nodes',
    );
    expect(await nodeIds(app.page)).toEqual(['function', 'greetings', 'greetings_2', 'shout', 'shout_2']);
    const pasted = await until(
      () => edgeIds(app.page),
      (ids) => ids.includes('greetings_2:out->shout_2:in'),
      'the pasted wire',
    );
    expect(pasted).toContain('greetings_2:out->shout_2:in');
    expect(await node(app.page, 'greetings_2').getByLabel('count', { exact: true }).inputValue()).toBe('3');
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 3,
      'undoing the paste',
    );
  });

  it('adds a node from the search that double-clicking opens, and groups nodes', async () => {
    const spot = await emptySpot(app.page);
    await app.page.mouse.dblclick(spot.x, spot.y);
    const search = app.page.getByLabel('search nodes');
    await search.fill('spli');
    await search.press('Enter');
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('split'),
      'the searched node',
    );

    await app.page.keyboard.press('Escape');
    await node(app.page, 'greetings').locator('.gb-node-header').click();
    await node(app.page, 'shout')
      .locator('.gb-node-header')
      .click({ modifiers: [mod] });
    await app.page.keyboard.press(`${mod}+g`);
    await app.page.locator('.react-flow__node-group').waitFor();
    await app.page.keyboard.press('f');
    await viewSettled(app.page);
    await screenshot(app.page, 'editor-group-search');
    await app.page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');
    expect(readJson(app.server, 'built.json').nodes.map((n) => n.id)).toEqual([
      'function',
      'greetings',
      'shout',
      'split',
    ]);
    await app.page.reload();
    await app.page.locator('.react-flow__node-group').waitFor();
    expect(await app.page.locator('.react-flow__node-group').count()).toBe(1);
  });

  it('opens a workflow that does not validate, shows its problems, and leaves the file alone', async () => {
    const text = `{"format": "graphbook.workflow", "version": 1, "nodes": [
  {"id": "rows", "type": "LoadJSONL", "params": {"start_from": "soon"}, "position": {"x": 0, "y": 0}},
  {"id": "ghost", "type": "Splitt", "params": {"split_fn": "lambda d: 1", "extra": [1, 2]}, "position": {"x": 320, "y": 0}}
], "edges": [{"source": "rows", "output": "out", "target": "ghost", "input": "in"}, {"source": "ghost", "output": "A", "target": "nowhere"}]}
`;
    writeWorkflow(app.server, 'broken.json', text);
    await openApp(app.page, app.server, 'broken.json');
    await node(app.page, 'ghost').locator('.gb-problems').waitFor();
    expect(await node(app.page, 'ghost').locator('.gb-problems').innerText()).toContain("unknown node type 'Splitt'");
    expect(await node(app.page, 'rows').locator('.gb-problems').innerText()).toContain(
      "required parameter 'jsonl_path' has no value",
    );
    expect(await node(app.page, 'ghost').locator('.gb-node').getAttribute('class')).toContain('gb-has-problems');
    await node(app.page, 'ghost').locator('.gb-node-header').click();
    await painted(app.page);
    // Autosave writes only a file with unsaved changes: opening and selecting made none.
    expect(await unsaved()).toBe(false);
    await screenshot(app.page, 'editor-invalid');
    expect(readFileSync(join(app.server.workflows, 'broken.json'), 'utf8')).toBe(text);
  });

  it('opens a Graphbook 0.13 file as it is, in the dark theme', async () => {
    const old = readFileSync(join(ROOT, 'tests/fixtures/graphbook013_simple_workflow.json'), 'utf8');
    writeFileSync(join(app.server.workflows, 'old.json'), old);
    await openApp(app.page, app.server, 'old.json');
    await app.page.locator('.gb-banner', { hasText: 'Graphbook 0.13' }).waitFor();
    expect((await nodeIds(app.page)).length).toBeGreaterThan(0);
    await switchTheme(app.page);
    await screenshot(app.page, 'editor-graphbook013-dark');
    await app.page.getByLabel('switch theme').click();
    expect(readFileSync(join(app.server.workflows, 'old.json'), 'utf8')).toBe(old);
  });

  it('shows a new node file in the palette without a reload', async () => {
    await app.page.getByRole('tab', { name: 'Nodes' }).click();
    writeFileSync(
      join(app.server.nodes, 'fresh.py'),
      'from graphbook import step\n\n\n@step("Fresh/Brand New")\ndef brand_new(ctx, data):\n    """Appeared while the page was open."""\n',
    );
    await app.page.locator('[data-node-type="Brand New"]').waitFor({ timeout: 20_000 });
    writeFileSync(join(app.server.nodes, 'broken.py'), 'def oops(:\n');
    await app.page.locator('.gb-banner-error', { hasText: 'broken.py' }).waitFor({ timeout: 20_000 });
    await screenshot(app.page, 'palette-live');
  });

  it('autosaves, box-selects, shows docs, renames and deletes files', async () => {
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'New workflow' }).click();
    await app.page.getByLabel('file name').fill('auto');
    await app.page.getByLabel('file name').press('Enter');
    await app.page.locator('.gb-file-title', { hasText: 'auto.json' }).waitFor();
    await canvasReady(app.page);
    await dragFromPalette(app.page, 'Greetings', { x: 220, y: 220 });
    await dragFromPalette(app.page, 'Shout', { x: 520, y: 220 });
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 2,
      'two nodes',
    );
    expect(await unsaved()).toBe(true);
    await until(unsaved, (dirty) => !dirty, 'the autosave', 8000);
    expect(readJson(app.server, 'auto.json').nodes.map((n) => n.id)).toEqual(['greetings', 'shout']);

    await node(app.page, 'greetings').locator('.gb-node-header').getByLabel('about greetings').click();
    await app.page.locator('.gb-docs', { hasText: 'Yields `count` numbered greetings'.replace(/`/g, '') }).waitFor();

    const pane = await app.page.locator('.react-flow__pane').boundingBox();
    if (!pane) throw new Error('no canvas');
    const a = await node(app.page, 'greetings').boundingBox();
    const b = await node(app.page, 'shout').boundingBox();
    if (!a || !b) throw new Error('nodes not shown');
    await app.page.mouse.click(pane.x + 10, pane.y + pane.height - 10);
    await app.page.keyboard.down('Shift');
    await app.page.mouse.move(Math.min(a.x, b.x) - 20, Math.min(a.y, b.y) - 20);
    await app.page.mouse.down();
    await app.page.mouse.move(
      Math.max(a.x + a.width, b.x + b.width) + 20,
      Math.max(a.y + a.height, b.y + b.height) + 20,
      { steps: 8 },
    );
    await app.page.mouse.up();
    await app.page.keyboard.up('Shift');
    await until(
      () => app.page.locator('.react-flow__node-graph.selected').count(),
      (n) => n === 2,
      'the box selection',
    );
    await app.page.keyboard.press('Delete');
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 0,
      'deleting the selection',
    );
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 2,
      'undoing the deletion',
    );

    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.locator('[data-file="auto.json"]').hover();
    await app.page.getByLabel('rename auto.json').click();
    await app.page.getByLabel('file name').fill('renamed.json');
    await app.page.getByLabel('file name').press('Enter');
    await app.page.locator('.gb-file-title', { hasText: 'renamed.json' }).waitFor();
    await until(
      () =>
        existsSync(join(app.server.workflows, 'renamed.json')) && !existsSync(join(app.server.workflows, 'auto.json')),
      (ok) => ok,
      'the rename on disk',
    );

    app.page.once('dialog', (dialog) => void dialog.accept());
    await app.page.locator('[data-file="renamed.json"]').hover();
    await app.page.getByLabel('delete renamed.json').click();
    await app.page.locator('.gb-canvas-empty').waitFor();
    await until(
      () => existsSync(join(app.server.workflows, 'renamed.json')),
      (exists) => !exists,
      'the deletion on disk',
    );
  });
});
