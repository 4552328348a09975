// The node library in the editor: the templates gallery on an empty canvas and from "New"
// (a template created, opened and run), the palette telling built-ins, installed packs,
// custom_nodes/ and examples apart, and the "classify a folder" pipeline built by dragging.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { TemplateList } from '../src/protocol';
import {
  appSession,
  canvasReady,
  dragFromPalette,
  edgeIds,
  node,
  nodeIds,
  openApp,
  readJson,
  runStatus,
  until,
  connect,
  workflow,
} from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

/** An installed node pack, as pip would leave it: a module and its dist-info naming the entry point. */
const packs = mkdtempSync(join(tmpdir(), 'graphbook-e2e-packs-'));
writeFileSync(
  join(packs, 'acme_vision_nodes.py'),
  [
    'from typing import Any, ClassVar',
    'from graphbook.steps import Step',
    '',
    'class BlurScore(Step):',
    '    """Scores how blurred each image is (a node of an installed pack)."""',
    '    Category: ClassVar[str] = "Images"',
    '',
    '    def on_data(self, data: Any) -> None:',
    '        data["blur"] = 0.0',
    '',
  ].join('\n'),
);
mkdirSync(join(packs, 'acme_vision-0.1.0.dist-info'));
writeFileSync(
  join(packs, 'acme_vision-0.1.0.dist-info', 'METADATA'),
  'Metadata-Version: 2.1\nName: acme-vision\nVersion: 0.1.0\n',
);
writeFileSync(
  join(packs, 'acme_vision-0.1.0.dist-info', 'entry_points.txt'),
  '[graphbook.nodes]\nacme = acme_vision_nodes\n',
);
afterAll(() => rmSync(packs, { recursive: true, force: true }));

const app = appSession({ env: { PYTHONPATH: packs }, workflows: { 'empty.json': workflow([], []) } });

const finished = (status: string): boolean => ['completed', 'failed', 'stopped'].includes(status);
const gallery = (p: Page) => p.locator('.gb-templates-inline');

async function templates(): Promise<TemplateList['templates']> {
  const response = await fetch(`${app.server.url}api/templates`);
  return ((await response.json()) as TemplateList).templates;
}

async function shoot(p: Page, name: string): Promise<void> {
  for (const width of [1280, 1024]) {
    await p.setViewportSize({ width, height: 800 });
    await screenshot(p, `${name}-${width}`);
  }
  await p.setViewportSize({ width: 1440, height: 900 });
}

describe('templates', () => {
  it('shows the gallery on an empty canvas; a template picked is created, opened and runs', async () => {
    const known = await templates();
    expect(known.length).toBeGreaterThan(0);
    await openApp(app.page, app.server, 'empty.json');
    await gallery(app.page).waitFor();
    const cards = gallery(app.page).locator('.gb-template');
    await until(
      () => cards.count(),
      (n) => n === known.length,
      'a card per template',
    );
    for (const t of known) {
      const card = gallery(app.page).locator(`[data-template="${t.name}"]`);
      expect(await card.locator('.gb-template-title').innerText()).toBe(t.title);
      expect(await card.locator('.gb-template-line').innerText()).toBe(t.description);
      const nodes = (t.workflow.nodes ?? []) as unknown[];
      expect(await card.locator('svg .gb-template-node').count(), `${t.name}: a box per node`).toBe(nodes.length);
      expect(await card.locator('svg .gb-template-wire').count(), `${t.name}: a curve per wire`).toBe(
        ((t.workflow.edges ?? []) as unknown[]).length,
      );
    }
    await shoot(app.page, 'templates-gallery');

    const chosen = known[0]!;
    await gallery(app.page).locator(`[data-template="${chosen.name}"] .gb-template-card`).click();
    const name = app.page.getByLabel('new file name');
    // The open file is empty and named: the template may fill it; another name makes a new file.
    expect(await name.inputValue()).toBe('empty.json');
    await app.page.keyboard.type('from_template');
    await app.page.keyboard.press('Enter');
    await app.page.locator('.gb-file-title', { hasText: 'from_template.json' }).waitFor();
    await canvasReady(app.page);
    const ids = ((chosen.workflow.nodes ?? []) as { id: string }[]).map((n) => n.id).sort();
    expect(await nodeIds(app.page)).toEqual(ids);
    expect(await gallery(app.page).count(), 'the gallery leaves a canvas with nodes').toBe(0);
    expect(
      readJson(app.server, 'from_template.json')
        .nodes.map((n) => n.id)
        .sort(),
    ).toEqual(ids);
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.locator('[data-file="from_template.json"]').waitFor();

    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(() => runStatus(app.page), finished, 'the template run to finish', 60_000);
    expect(await runStatus(app.page)).toBe('completed');
  });

  it('refuses a name that is taken, and is offered from New over any canvas; Esc closes it', async () => {
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'Templates…' }).click();
    const dialog = app.page.locator('.gb-templates-dialog');
    await dialog.waitFor();
    await shoot(app.page, 'templates-dialog');
    const chosen = (await templates())[0]!;
    await dialog.locator(`[data-template="${chosen.name}"] .gb-template-card`).click();
    const name = app.page.getByLabel('new file name');
    expect(await name.inputValue(), 'named after the template').toBe(`${chosen.name}.json`);
    await name.fill('from_template.json');
    await name.press('Enter');
    await app.page.locator('.gb-notice', { hasText: 'from_template.json exists already' }).waitFor();
    expect(await app.page.locator('.gb-file-title').innerText()).toContain('from_template.json');
    await name.press('Escape');
    await dialog.focus();
    await app.page.keyboard.press('Escape');
    await until(
      () => dialog.count(),
      (n) => n === 0,
      'the dialog to close',
    );
  });

  it('stays out of the way on a new workflow: nodes drop through it, and × hides it', async () => {
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'New workflow' }).click();
    await app.page.keyboard.type('dropped');
    await app.page.keyboard.press('Enter');
    await app.page.locator('.gb-file-title', { hasText: 'dropped.json' }).waitFor();
    await gallery(app.page).waitFor();
    const box = await gallery(app.page).boundingBox();
    const pane = await app.page.locator('.react-flow__pane').boundingBox();
    if (!box || !pane) throw new Error('no gallery or canvas');
    await dragFromPalette(app.page, 'Greetings', { x: box.x - pane.x + 200, y: box.y - pane.y - 120 });
    await until(
      () => nodeIds(app.page),
      (ids) => ids.length === 1,
      'the dropped node',
    );
    expect(await gallery(app.page).count()).toBe(0);

    await openApp(app.page, app.server, 'empty.json');
    await gallery(app.page).waitFor();
    await app.page.getByLabel('close the templates').click();
    expect(await gallery(app.page).count()).toBe(0);
    expect(existsSync(join(app.server.workflows, 'dropped.json'))).toBe(true);
  });
});

describe('the palette', () => {
  const item = (p: Page, type: string) => p.locator(`.gb-palette [data-node-type="${type}"]`);
  const listed = (p: Page) =>
    p
      .locator('.gb-palette [data-node-type]')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-node-type'), e.getAttribute('data-origin')]));

  it('marks where each node comes from and filters by origin', async () => {
    await openApp(app.page, app.server, 'empty.json');
    await app.page.getByRole('tab', { name: 'Nodes' }).click();
    await item(app.page, 'BlurScore').waitFor();
    const badge = (type: string) => item(app.page, type).locator('.gb-origin').allInnerTexts();
    expect(await badge('Split'), 'the library needs no badge').toEqual([]);
    expect(await badge('BlurScore')).toEqual(['acme-vision']);
    expect(await badge('Greetings')).toEqual(['custom']);
    expect(await badge('ShapeImages')).toEqual(['example']);
    expect(await item(app.page, 'BlurScore').getAttribute('title')).toContain('node pack acme-vision');
    await shoot(app.page, 'palette-origins');

    const origin = app.page.getByLabel('node origin');
    expect(await origin.locator('option').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^All \(\d+\)$/), 'Packs (1)', 'Custom (2)']),
    );
    await origin.selectOption('pack');
    expect(await listed(app.page)).toEqual([['BlurScore', 'pack']]);
    await origin.selectOption('custom');
    expect((await listed(app.page)).map(([, o]) => o)).toEqual(['custom', 'custom']);
    await origin.selectOption('builtin');
    const builtins = await listed(app.page);
    expect(builtins.length).toBeGreaterThan(5);
    expect(builtins.every(([, o]) => o === 'builtin')).toBe(true);

    const search = app.page.getByLabel('filter nodes');
    await search.fill('acme-vision');
    await app.page.locator('.gb-palette .gb-empty', { hasText: 'in Built-in' }).waitFor();
    await origin.selectOption('all');
    expect(await listed(app.page), 'search finds a pack by its name').toEqual([['BlurScore', 'pack']]);
    await search.fill('');

    await item(app.page, 'BlurScore').dblclick();
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('blur_score'),
      'the pack node added',
    );
    await app.page.locator('.react-flow__node[data-id="blur_score"]').getByLabel('about blur_score').click();
    await app.page.locator('.gb-docs-origin', { hasText: 'node pack acme-vision' }).waitFor();
  });
});

/** Writes the library's sample data `names` (graphbook.templates.samples) under the server's working folder. */
function makeSamples(...names: string[]): void {
  const code = `from pathlib import Path\nfrom graphbook.templates.samples import make_sample\nfor name in ${JSON.stringify(names)}: make_sample(name, Path('.'))`;
  execFileSync('python', ['-c', code], {
    cwd: app.server.folder,
    env: { ...process.env, PYTHONPATH: ROOT },
    stdio: 'pipe',
  });
}

/** Drops node kind `type` at `at` (on the canvas) and returns the new node's id. */
async function drop(p: Page, type: string, at: { x: number; y: number }): Promise<string> {
  const before = await nodeIds(p);
  await dragFromPalette(p, type, at);
  const after = await until(
    () => nodeIds(p),
    (ids) => ids.length === before.length + 1,
    `${type} dropped`,
  );
  return after.find((id) => !before.includes(id)) ?? '';
}

describe('the classify-a-folder pipeline, built by dragging', () => {
  it('loads a folder, classifies it with a TorchScript model, makes thumbnails and shows them with predictions', async () => {
    const catalog = (await (await fetch(`${app.server.url}api/catalog`)).json()) as { nodes: { name: string }[] };
    const needed = ['ImageFolder', 'TorchScriptModel', 'ClassifyImages', 'Thumbnails'];
    expect(
      needed.filter((n) => !catalog.nodes.some((s) => s.name === n)),
      'the library nodes this pipeline needs (files, models, images packs)',
    ).toEqual([]);
    makeSamples('shapes', 'shapesnet');
    expect(readdirSync(join(app.server.folder, 'data/samples/shapes')).sort()).toEqual([
      'circle',
      'square',
      'triangle',
    ]);
    const p = app.page;
    await openApp(p, app.server, 'empty.json');
    await p.getByRole('tab', { name: 'Workflows' }).click();
    await p.getByRole('button', { name: 'New workflow' }).click();
    await p.keyboard.type('classify');
    await p.keyboard.press('Enter');
    await p.locator('.gb-file-title', { hasText: 'classify.json' }).waitFor();
    await canvasReady(p);
    if (await p.locator('.gb-inspector').count()) await p.getByLabel('hide the inspector').click();

    const folder = await drop(p, 'ImageFolder', { x: 60, y: 60 });
    const model = await drop(p, 'TorchScriptModel', { x: 120, y: 560 });
    const classify = await drop(p, 'ClassifyImages', { x: 450, y: 60 });
    const thumbs = await drop(p, 'Thumbnails', { x: 840, y: 60 });

    await node(p, folder).getByLabel('folder', { exact: true }).fill('data/samples/shapes');
    await node(p, folder).getByLabel('labels_from_folders', { exact: true }).check();
    await node(p, model).getByLabel('path', { exact: true }).fill('models/shapesnet.pt');
    await node(p, classify).getByLabel('preset', { exact: true }).fill('none');
    await node(p, classify).getByLabel('size', { exact: true }).fill('64');
    await node(p, classify).getByLabel('crop', { exact: true }).fill('0');
    await node(p, classify).getByLabel('labels', { exact: true }).fill('circle,square,triangle');
    await node(p, thumbs).getByLabel('size', { exact: true }).fill('48');
    await node(p, thumbs).getByLabel('folder', { exact: true }).fill('data/thumbs');

    await connect(p, [folder, 'out'], [classify, 'in']);
    await connect(p, [model, 'resource'], [classify, 'model']);
    await connect(p, [classify, 'out'], [thumbs, 'in']);
    await until(
      () => edgeIds(p),
      (ids) => ids.length === 3,
      'three wires',
    );
    expect(await edgeIds(p)).toEqual(
      [`${classify}:out->${thumbs}:in`, `${folder}:out->${classify}:in`, `${model}:resource->${classify}:model`].sort(),
    );
    await screenshot(p, 'classify-built');

    await p.getByRole('button', { name: 'run', exact: true }).click();
    // The status may still show another file's last run: wait for this one's last node to end.
    await node(p, thumbs)
      .locator('.gb-status', { hasText: /done|failed/ })
      .waitFor({ timeout: 90_000 });
    await until(() => runStatus(p), finished, 'the classify run to finish', 30_000);
    expect(await runStatus(p)).toBe('completed');
    const count = node(p, thumbs).locator('.gb-count[data-output="out"]');
    await until(
      () => count.innerText().then(Number),
      (n) => n === 60,
      'all 60 images through Thumbnails',
    );
    expect(readdirSync(join(app.server.folder, 'data/thumbs')).length).toBeGreaterThan(0);

    // The node shows the thumbnails it made; its output preview, each with its prediction.
    const image = node(p, thumbs).locator('.gb-media img').first();
    await image.waitFor();
    await until(
      () => image.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)),
      (w) => w > 0,
      'a thumbnail to load',
    );
    const sources = await node(p, thumbs)
      .locator('.gb-media img')
      .evaluateAll((imgs) => imgs.map((i) => i.getAttribute('src') ?? ''));
    expect(sources.some((s) => s.includes('thumbs'))).toBe(true);
    await p.getByLabel('show the inspector').click();
    const outputs = p.locator('.gb-inspector');
    const inspecting = async (): Promise<boolean> =>
      new RegExp(`\\bid\\s+${thumbs}\\b`).test(await outputs.innerText());
    await until(
      async () => (await inspecting()) || (await node(p, thumbs).locator('.gb-node-header').click(), inspecting()),
      (shown) => shown,
      'the inspector on the Thumbnails node',
    );
    await p.getByRole('tab', { name: 'Output' }).click();
    await outputs.getByText('prediction').first().waitFor();
    expect(await outputs.innerText()).toMatch(/prediction:\s*"(circle|square|triangle)"/);
    expect(await outputs.locator('img').count(), 'the image and its thumbnail').toBeGreaterThanOrEqual(2);
    await screenshot(p, 'classify-ran');
  });
});
