// Apps: the classify-folder template opened as an app, a folder picked, a threshold changed,
// run, its gallery and table shown, the CSV downloaded (the same file `graphbook run --input`
// writes); two browsers running the app at once, each with its own results; bad values refused
// beside their fields with nothing queued; the editor's "Open as app" and preview.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type AppSession, appSession, at, openApp, until, workflow, writeWorkflow } from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function setup(session: AppSession): Promise<void> {
  const made = await fetch(`${session.server.url}api/templates/classify-folder`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ path: 'classify.json' }),
  });
  expect(made.status).toBe(201);
  const table = workflow(
    [
      { id: 'read', type: 'ReadCSV', params: { path: 'data/samples/shapes.csv' }, position: at(0, 0) },
      { id: 'write', type: 'WriteParquet', params: { path: 'out/t.parquet', overwrite: true }, position: at(300, 0) },
    ],
    [{ source: 'read', output: 'out', target: 'write', input: 'in' }],
  );
  writeWorkflow(session.server, 'table.json', {
    ...table,
    inputs: { table: { node: 'read', param: 'path', picker: 'file', accept: ['.csv'] } },
  });
}

const app = appSession({ setup });
const shapes = () => join(app.server.folder, 'data', 'samples', 'shapes');
const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);

async function openAppPage(page: Page, file: string, first = 'folder'): Promise<void> {
  await page.goto(`${app.server.url}app/${file}`);
  await field(page, first).waitFor();
}

async function runAndWait(page: Page): Promise<string> {
  await page.getByRole('button', { name: '▶ Run' }).click();
  const run = page.locator('.gb-apprun[data-state="completed"]');
  await run.waitFor({ timeout: 60_000 });
  return (await run.getAttribute('data-job')) ?? '';
}

async function pickShapes(page: Page): Promise<void> {
  await field(page, 'folder').getByRole('button', { name: 'Browse…' }).click();
  const picker = page.getByRole('dialog', { name: 'choose a folder' });
  await picker.getByLabel('folder to browse').selectOption('media');
  await picker.locator('[data-entry="samples"]').click();
  await picker.locator('[data-entry="shapes"]').click();
  await picker.locator('[data-entry="circle"]').waitFor();
  await picker.getByRole('button', { name: 'Choose this folder' }).click();
}

/** A screenshot of the page from its top. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.locator('.gb-apppage').evaluate((el) => el.scrollTo(0, 0));
  await screenshot(page, name);
}

/** What `graphbook run --input` writes for these values, in the server's folder. */
function cliPredictions(threshold: number): string {
  const env = { ...process.env, PYTHONPATH: [ROOT, process.env.PYTHONPATH].filter(Boolean).join(':') };
  const args = ['run', join(app.server.workflows, 'classify.json'), '--quiet'];
  args.push('--input', `folder=${shapes()}`, '--input', `threshold=${threshold}`);
  execFileSync('graphbook', args, { cwd: app.server.folder, env, stdio: 'pipe' });
  return readFileSync(join(app.server.folder, 'out', 'predictions.csv'), 'utf8');
}

describe('apps', () => {
  it('runs classify-folder as an app: folder picked, threshold changed, gallery, table, CSV', async () => {
    const page = app.page;
    await page.setViewportSize(DESKTOP);
    await openAppPage(page, 'classify.json');
    await pickShapes(page);
    expect(await field(page, 'folder').locator('input').first().inputValue()).toBe(shapes());
    await field(page, 'threshold').locator('input.gb-number').fill('0.9');
    const job = await runAndWait(page);
    const gallery = page.locator('[data-result="gallery"]');
    await gallery.locator('.gb-tile img').first().waitFor();
    await until(
      () =>
        gallery
          .locator('.gb-tile img')
          .first()
          .evaluate((img: HTMLImageElement) => img.naturalWidth),
      (width) => width > 0,
      'a thumbnail drawn',
    );
    expect(await gallery.locator('.gb-tile').first().innerText()).toContain('prediction');
    const table = page.locator('[data-result="predictions"]');
    expect(await table.locator('th').allInnerTexts()).toEqual(['image', 'label', 'prediction', 'confidence']);
    expect(await table.locator('.gb-pager').innerText()).toMatch(/1–25 of 52/);
    await table.getByRole('button', { name: 'confidence' }).click();
    await until(
      () => table.locator('tbody tr td:nth-child(4)').allInnerTexts(),
      (cells) => cells.length === 25 && Number(cells[0]) <= Number(cells[24]) && Number(cells[0]) >= 0.9,
      'the rows sorted by confidence',
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      table.locator('[data-download="predictions.csv"]').click(),
    ]);
    const saved = join(app.server.folder, 'downloaded.csv');
    await download.saveAs(saved);
    expect(readFileSync(saved, 'utf8')).toBe(cliPredictions(0.9));
    expect(await page.locator('[aria-label="link to this run"]').inputValue()).toBe(
      `${app.server.url}app/classify.json?job=${job}`,
    );
    await shoot(page, 'apps-desktop');
    await page.setViewportSize(PHONE);
    await shoot(page, 'apps-phone');
    await page.locator('[data-result="gallery"]').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'apps-phone-results');
    await page.setViewportSize(DESKTOP);
  });

  it('gives two browsers running the app at once each their own results', async () => {
    const first = app.page;
    const second = await app.freshBrowser();
    for (const [page, threshold] of [
      [first, '0.9'],
      [second, '0'],
    ] as const) {
      await openAppPage(page, 'classify.json');
      await field(page, 'threshold').locator('input.gb-number').fill(threshold);
    }
    const [one, two] = await Promise.all([runAndWait(first), runAndWait(second)]);
    expect(one).not.toBe(two);
    expect(await first.locator('[data-result="predictions"] .gb-pager').innerText()).toMatch(/of 52/);
    expect(await second.locator('[data-result="predictions"] .gb-pager').innerText()).toMatch(/of 60/);
    await first.reload();
    await first.locator(`.gb-apprun-item[data-run="${two}"]`).click();
    await first.locator(`.gb-apprun[data-job="${two}"][data-state="completed"]`).waitFor();
    expect(await field(first, 'threshold').locator('input.gb-number').inputValue()).toBe('0');
    app.page = first;
  });

  it('refuses each bad value beside its field, and queues nothing', async () => {
    const page = app.page;
    const jobs = async (): Promise<number> => {
      const listing = (await (await fetch(`${app.server.url}api/jobs`)).json()) as { finished: unknown[] };
      return listing.finished.length;
    };
    const before = await jobs();
    await openAppPage(page, 'classify.json');
    const refused = async (values: Record<string, string>, words: Record<string, string>): Promise<void> => {
      for (const [name, value] of Object.entries(values)) await field(page, name).locator('input').first().fill(value);
      await page.getByRole('button', { name: '▶ Run' }).click();
      for (const [name, text] of Object.entries(words))
        expect(await page.locator(`[data-error-for="${name}"]`).innerText()).toContain(text);
    };
    await refused(
      { threshold: '1.5', folder: '/etc' },
      { threshold: 'above the maximum 1', folder: "outside the server's folders" },
    );
    await refused(
      { threshold: 'lots', folder: join(app.server.folder, 'data', 'nowhere') },
      { threshold: 'expects a number', folder: 'there is no folder' },
    );
    await shoot(page, 'apps-refused');
    await openAppPage(page, 'table.json', 'table');
    const upload = field(page, 'table').locator('input[type="file"]');
    await upload.setInputFiles({ name: 'huge.csv', mimeType: 'text/csv', buffer: Buffer.alloc((32 << 20) + 1) });
    expect(await page.locator('[data-error-for="table"]').innerText()).toContain('may have 32.0 MiB at most');
    await upload.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('a,b\n') });
    await until(
      () => page.locator('[data-error-for="table"]').innerText(),
      (t) => t.includes('is not a .csv file'),
      'the refusal',
    );
    await upload.setInputFiles({ name: 'small.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
    await until(
      () => field(page, 'table').locator('input').first().inputValue(),
      (v) => v.endsWith('/uploads/') === false && v.endsWith('small.csv'),
      'the uploaded path',
    );
    expect(await page.locator('[data-error-for="table"]').count()).toBe(0);
    expect(await jobs()).toBe(before);
  });

  it('opens the workflow as an app from the editor, with a preview of its form', async () => {
    const page = app.page;
    await page.setViewportSize({ width: 1440, height: 900 }); // wide enough for the inspector
    await openApp(page, app.server, 'classify.json');
    const section = page.locator('.gb-app-section');
    await section.locator('.gb-app-preview [data-field="threshold"]').waitFor();
    expect(
      await section
        .locator('.gb-app-preview [data-field]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-field'))),
    ).toEqual(['folder', 'threshold']);
    expect(await section.getByRole('link', { name: 'Open as app' }).getAttribute('href')).toBe('/app/classify.json');
    await screenshot(page, 'apps-editor');
    const toggle = page.locator('.react-flow__node[data-id="images"] [data-output-toggle="out"]');
    const saved = (): Record<string, unknown> =>
      (
        JSON.parse(readFileSync(join(app.server.workflows, 'classify.json'), 'utf8')) as {
          outputs: Record<string, unknown>;
        }
      ).outputs;
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await until(saved, (outputs) => 'images' in outputs, 'the output saved (autosave)');
    expect(saved().images).toEqual({ node: 'images', output: 'out', kind: 'table' });
    await toggle.click();
    await until(saved, (outputs) => !('images' in outputs) && 'gallery' in outputs, 'the output unmarked');
  });
});
