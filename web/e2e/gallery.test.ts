// The results gallery: a node's 200 pictures as a grid that draws only what is in view,
// filtered and sorted by the server, fields on hover, one opened in the image viewer; and the
// grid growing while a run hands on more.

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AppSession, appSession, at, node, openApp, runStatus, until, workflow, writeWorkflow } from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const COUNT = 200;
const confidence = (i: number): number => ((i * 37) % 100) / 100;

const snapshots = (folder: string, delay: number) =>
  workflow([{ id: 'shots', type: 'Snapshots', params: { count: COUNT, folder, delay }, position: at(0, 0) }], []);

async function setup(session: AppSession): Promise<void> {
  copyFileSync(join(ROOT, 'web/e2e/fixtures/gallery_nodes.py'), join(session.server.nodes, 'gallery_nodes.py'));
  const folder = join(session.server.folder, 'data', 'shots');
  writeWorkflow(session.server, 'shots.json', snapshots(folder, 0));
  writeWorkflow(session.server, 'live.json', snapshots(join(session.server.folder, 'data', 'live'), 0.03));
  // a folder under none of the server's roots (workflows, nodes, data, --media)
  const elsewhere = workflow(
    [
      {
        id: 'shots',
        type: 'Snapshots',
        params: { count: 5, folder: join(session.server.folder, 'elsewhere') },
        position: at(0, 0),
      },
    ],
    [],
  );
  writeWorkflow(session.server, 'elsewhere.json', elsewhere);
  await until(
    async () => JSON.stringify(await (await fetch(`${session.server.url}api/catalog`)).json()),
    (text) => text.includes('"Snapshots"'),
    'the gallery node in the catalog',
  );
}

const app = appSession({ setup });
const tiles = () => app.page.locator('.gb-gallery-tile[data-index]');
const count = () => app.page.locator('.gb-gallery-count');
const tileIndexes = async (): Promise<number[]> =>
  tiles().evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-index'))));

async function runToEnd(): Promise<void> {
  await app.page.getByRole('button', { name: 'run', exact: true }).click();
  await until(
    () => runStatus(app.page),
    (s) => s === 'completed',
    'the run to complete',
    60_000,
  );
}

describe('results gallery', () => {
  it('shows 200 outputs as a virtualised grid: filter, sort, scroll, hover, open one', async () => {
    await openApp(app.page, app.server, 'shots.json');
    await runToEnd();
    await node(app.page, 'shots').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Results gallery' }).click();
    await app.page.locator(`.gb-gallery-count[data-total="${COUNT}"]`).waitFor();
    expect(await count().innerText()).toBe(`${COUNT} handed on`);
    await until(
      () => tiles().count(),
      (n) => n > 0,
      'the first tiles',
    );
    const first = await tileIndexes();
    expect(first.length, 'only the tiles in view are in the page').toBeLessThan(COUNT / 2);
    expect(first.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
    await until(
      () =>
        tiles()
          .first()
          .locator('img')
          .evaluate((img: HTMLImageElement) => img.naturalWidth),
      (w) => w > 0,
      'a thumbnail to load',
    );

    // filter on the server: only the cats, counted
    await app.page.getByRole('textbox', { name: 'filter outputs' }).fill('prediction == "cat"');
    const cats = Array.from({ length: COUNT }, (_, i) => i).filter((i) => i % 3 === 0);
    await until(
      () => count().innerText(),
      (t) => t === `${cats.length} of ${COUNT} match`,
      'the cats counted',
    );
    await until(tileIndexes, (shown) => shown.length > 0 && shown.every((i) => i % 3 === 0), 'only cats shown');

    // sort by confidence, highest first
    await app.page.getByLabel('sort by').selectOption('confidence');
    await app.page.getByRole('button', { name: 'sort order' }).click();
    const byScore = [...cats].sort((a, b) => confidence(b) - confidence(a) || a - b);
    await until(
      async () => (await tileIndexes()).slice(0, 6),
      (shown) => JSON.stringify(shown) === JSON.stringify(byScore.slice(0, 6)),
      'the most confident cats first',
    );
    expect(await tiles().first().locator('.gb-gallery-caption').innerText()).toContain(
      String(confidence(byScore[0] as number)),
    );
    await screenshot(app.page, 'gallery-filtered-sorted');

    // scroll to the end: the last tiles come in, the first ones leave the page
    await app.page.locator('.gb-gallery-grid').evaluate((grid) => grid.scrollTo({ top: grid.scrollHeight }));
    const last = byScore.at(-1) as number;
    await until(
      tileIndexes,
      (shown) => shown.includes(last) && !shown.includes(byScore[0] as number),
      'the last tiles, without the first',
    );
    expect((await tileIndexes()).length).toBeLessThan(cats.length);

    // fields on hover
    const tile = app.page.locator(`.gb-gallery-tile[data-index="${last}"]`);
    await tile.hover();
    const card = app.page.getByRole('tooltip');
    await card.waitFor();
    expect(await card.innerText()).toContain(`output #${last}`);
    expect(await card.innerText()).toMatch(/prediction\s+cat/);
    expect(await card.innerText()).toMatch(new RegExp(`confidence\\s+${confidence(last)}`));

    // a click opens it in the image viewer, full size, its fields beside it
    await tile.click();
    const viewer = app.page.getByRole('dialog', { name: 'image viewer' });
    await viewer.waitFor();
    const image = viewer.locator('img');
    expect(await image.getAttribute('src')).toBe(
      `/api/media/file/media/shots/snap${String(last).padStart(4, '0')}.png`,
    );
    await until(
      () => image.evaluate((img: HTMLImageElement) => img.naturalWidth),
      (w) => w === 48,
      'the full image',
    );
    expect(await viewer.innerText()).toMatch(new RegExp(`index:\\s*${last}\\b`));
    await screenshot(app.page, 'gallery-viewer');
    await app.page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'detached' });
    expect(
      await app.page.getByRole('dialog', { name: 'results gallery' }).isVisible(),
      'Esc closes the viewer only',
    ).toBe(true);

    // a filter the server cannot read says what is wrong
    await app.page.getByRole('textbox', { name: 'filter outputs' }).fill('confidence ~ 0.5');
    const alert = app.page.locator('.gb-gallery [role="alert"]');
    await until(
      () => alert.innerText().catch(() => ''),
      (t) => t.includes("unknown operator '~'"),
      'the refusal',
    );
    expect(await tiles().count()).toBe(0);

    await app.page.getByRole('textbox', { name: 'filter outputs' }).fill('');
    for (const [width, height] of [
      [1280, 800],
      [1920, 1080],
    ] as const) {
      await app.page.setViewportSize({ width, height });
      await until(tileIndexes, (shown) => shown.length > 0, 'tiles after resizing');
      await screenshot(app.page, `gallery-${width}x${height}`);
    }
    await app.page.keyboard.press('Escape');
    await app.page.getByRole('dialog', { name: 'results gallery' }).waitFor({ state: 'detached' });
    await app.page.setViewportSize({ width: 1440, height: 900 });
  });

  it('opens full size an image a run read outside the roots (no --media for its folder)', async () => {
    await openApp(app.page, app.server, 'elsewhere.json');
    await runToEnd();
    const media = node(app.page, 'shots').locator('.gb-media');
    await until(
      () => media.locator('img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth)),
      (w) => w.length > 0 && w.every((x) => x > 0),
      'thumbnails on the node',
    );
    expect(await media.innerText()).not.toContain('thumbnails only');
    await media.locator('img').first().click();
    const full = app.page.locator('.gb-viewer-image img');
    await full.waitFor();
    expect(await full.getAttribute('src')).toMatch(/^\/api\/media\/image\?/);
    await until(
      () => full.evaluate((i) => (i as HTMLImageElement).naturalWidth),
      (w) => w === 48,
      'the image whole, as the run read it',
    );
    expect(await app.page.locator('.gb-viewer .gb-image-outside').count()).toBe(0);
    await screenshot(app.page, 'gallery-outside-roots-full');
    await app.page.keyboard.press('Escape');
    await node(app.page, 'shots').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Results gallery' }).click();
    await until(
      () => tiles().count(),
      (n) => n === 5,
      'the five tiles',
    );
    expect(await app.page.locator('.gb-gallery [role="note"]').count()).toBe(0);
    expect(await tiles().first().innerText()).not.toContain('thumbnail only');
    await app.page.keyboard.press('Escape');
  });

  it('grows while the run hands on more', async () => {
    await openApp(app.page, app.server, 'live.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    const handed = node(app.page, 'shots').locator('.gb-count[data-output="out"]');
    await until(
      () => handed.innerText().catch(() => '0'),
      (t) => Number(t) > 0,
      'the first outputs',
    );
    await node(app.page, 'shots').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Results gallery' }).click();
    const seen = Number(
      await until(
        () => count().getAttribute('data-total'),
        (t) => Number(t) > 0,
        'a first page',
      ),
    );
    expect(seen).toBeLessThan(COUNT);
    await app.page.locator(`.gb-gallery-count[data-total="${COUNT}"]`).waitFor({ timeout: 30_000 });
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run to complete',
      30_000,
    );
    expect(await count().innerText()).toBe(`${COUNT} handed on`);
    await app.page.keyboard.press('Escape');
  });
});
