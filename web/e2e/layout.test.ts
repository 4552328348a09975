// Room for the canvas: the panels around it fold away (buttons and [ ] ` keys, remembered), the
// inspector starts folded on a narrow screen, and a workflow opens at a zoom its labels can be
// read at.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, canvasReady, mod, openApp, painted, readJson, runStatus, until, writeWorkflow } from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const TEMPLATES = join(ROOT, 'graphbook/templates');
const templates = readdirSync(TEMPLATES).filter((f) => f.endsWith('.json'));

const app = appSession({
  testNodes: true,
  setup(session) {
    for (const file of templates)
      writeWorkflow(session.server, `template-${file}`, readFileSync(join(TEMPLATES, file), 'utf8'));
  },
});

const zoom = (page: Page): Promise<number> =>
  page.locator('.react-flow__viewport').evaluate((el) => new DOMMatrix(getComputedStyle(el).transform).a);
const canvasWidth = async (page: Page): Promise<number> => (await page.locator('.gb-canvas').boundingBox())?.width ?? 0;

describe('the layout', () => {
  it('at 1280×720 folds the inspector, and opens the image example at a readable zoom', async () => {
    await app.page.setViewportSize({ width: 1280, height: 720 });
    await openApp(app.page, app.server, 'image_classification.json');
    expect(await app.page.locator('.gb-inspector').count(), 'the inspector starts folded').toBe(0);
    expect(await canvasWidth(app.page)).toBeGreaterThan(1000);
    expect(await zoom(app.page)).toBeGreaterThanOrEqual(0.75);
    const title = app.page.locator('.react-flow__node[data-id="images"] .gb-title');
    expect(await title.evaluate((el) => el.getBoundingClientRect().height)).toBeGreaterThanOrEqual(12);
    await screenshot(app.page, 'layout-1280-image-example');

    await app.page.getByRole('button', { name: 'hide the side panel' }).click();
    expect(await app.page.locator('.gb-sidebar').count()).toBe(0);
    expect(await canvasWidth(app.page)).toBe(1280);
    await app.page.keyboard.press('[');
    await app.page.locator('.gb-sidebar').waitFor();
    await app.page.keyboard.press(']');
    await app.page.locator('.gb-inspector').waitFor();
    await screenshot(app.page, 'layout-1280-panels-open');
    await app.page.keyboard.press(']');
    await app.page.locator('.gb-inspector').waitFor({ state: 'detached' });

    // Asking for a node's docs opens the folded inspector on them.
    await app.page.locator('.react-flow__node[data-id="classify"]').getByLabel('about classify').click();
    await app.page.locator('.gb-inspector [data-inspecting="classify"]').waitFor();
  });

  it('keeps the panels as they were left, and fits a small workflow at 1440×900', async () => {
    await app.page.setViewportSize({ width: 1440, height: 900 });
    await openApp(app.page, app.server, 'hello.json');
    await canvasReady(app.page);
    expect(await app.page.locator('.gb-inspector').count(), 'left open before the reload').toBe(1);
    const z = await zoom(app.page);
    expect(z).toBeGreaterThanOrEqual(0.75);
    expect(z).toBeLessThanOrEqual(1);
    await screenshot(app.page, 'layout-1440-hello');
  });

  it('loads with the catalog and the file list fetched once, and its assets compressed and cached', async () => {
    const asked: string[] = [];
    const assets: { url: string; encoding: string; cache: string }[] = [];
    const answered: string[] = [];
    app.page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    app.page.on('requestfinished', (r) => answered.push(new URL(r.url()).pathname));
    app.page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/assets/')) {
        assets.push({
          url: r.url(),
          encoding: r.headers()['content-encoding'] ?? '',
          cache: r.headers()['cache-control'] ?? '',
        });
      }
    });
    await app.page.reload();
    await canvasReady(app.page);
    // Both answers have arrived and been shown: a second fetch caused by either would have left by now.
    await until(
      () => answered,
      (a) => a.includes('/api/catalog') && a.includes('/api/workflows'),
      'the catalog and the file list',
    );
    await painted(app.page);
    expect(asked.filter((p) => p === '/api/catalog')).toHaveLength(1);
    expect(asked.filter((p) => p === '/api/workflows')).toHaveLength(1);
    const script = assets.find((a) => /\/index-[\w-]+\.js$/.test(a.url));
    expect(script?.encoding).toBe('br');
    expect(script?.cache).toBe('public, max-age=31536000, immutable');
  });
});

describe('node size', () => {
  it('folds a node to its title and ports, widens one by dragging its edge, and saves both', async () => {
    await app.page.setViewportSize({ width: 1440, height: 900 });
    await openApp(app.page, app.server, 'hello.json');
    const split = app.page.locator('.react-flow__node[data-id="split"]');
    const before = await split.boundingBox();
    await split.getByLabel('fold split').click();
    await until(
      () => split.boundingBox().then((b) => b?.height ?? 0),
      (h) => !!before && h < before.height - 40,
      'the fold',
    );
    expect(await split.locator('.gb-params').count()).toBe(0);
    expect(await app.page.locator('.react-flow__edge').count(), 'its wires stay').toBe(3);

    const say = app.page.locator('.react-flow__node[data-id="say_odd"]');
    const box = await say.boundingBox();
    if (!box) throw new Error('node not shown');
    await say.click();
    const edge = say.locator('.gb-resize');
    const grip = await edge.boundingBox();
    if (!grip) throw new Error('no resize grip');
    await app.page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await app.page.mouse.down();
    await app.page.mouse.move(grip.x + 120, grip.y + grip.height / 2, { steps: 8 });
    await app.page.mouse.up();
    const wider = await say.boundingBox();
    expect(wider && wider.width).toBeGreaterThan(box.width + 50);
    await say.click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Colour green' }).click();
    expect(await say.locator('.gb-node').getAttribute('class')).toContain('gb-color-green');
    await screenshot(app.page, 'layout-fold-and-resize');

    await app.page.keyboard.press(`${mod}+s`);
    await until(
      () => app.page.locator('.gb-file-title').getAttribute('data-dirty'),
      (d) => d === 'false',
      'the save',
    );
    const saved = readJson(app.server, 'hello.json').nodes as {
      id: string;
      width?: number;
      collapsed?: boolean;
      color?: string;
    }[];
    expect(saved.find((n) => n.id === 'split')?.collapsed).toBe(true);
    expect(saved.find((n) => n.id === 'say_odd')?.color, "the colour picked in the node's menu").toBe('green');
    expect(saved.find((n) => n.id === 'say_odd')?.width).toBeGreaterThan(270);
    await app.page.reload();
    await canvasReady(app.page);
    expect(await split.locator('.gb-params').count(), 'still folded after a reload').toBe(0);
    expect((await say.boundingBox())?.width).toBeGreaterThan(box.width + 50);
    await split.getByLabel('unfold split').click();
    await split.locator('.gb-params').waitFor();
  });
});

describe('the top bar', () => {
  /** Elements of the top bar whose text is cut (an ellipsis) or that stick out of the window. */
  const cut = (page: Page): Promise<string[]> =>
    page.locator('.gb-topbar').evaluate((bar) => {
      const wrong: string[] = [];
      if (bar.scrollWidth > bar.clientWidth) wrong.push(`the bar scrolls (${bar.scrollWidth} > ${bar.clientWidth})`);
      for (const el of Array.from(bar.querySelectorAll<HTMLElement>('.gb-file-title, .gb-run-text, button'))) {
        const box = el.getBoundingClientRect();
        if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
          wrong.push(`cut: ${el.className} "${el.innerText}"`);
        if (box.right > window.innerWidth) wrong.push(`outside: ${el.className} "${el.innerText}"`);
        if (!box.width || !box.height)
          wrong.push(`hidden: ${el.className} "${el.getAttribute('aria-label') ?? el.innerText}"`);
      }
      return wrong;
    });

  it("fits at 1024×720, 1280×720 and 1440×900: the file name, the buttons and a step's status whole", async () => {
    await openApp(app.page, app.server, 'image_classification.json');
    const title = app.page.locator('.react-flow__node[data-id="images"] .gb-title');
    expect(
      await title.evaluate((el) => el.scrollWidth <= el.clientWidth),
      'a node of the default width shows "ShapeImages" whole',
    ).toBe(true);
    await app.page.getByRole('button', { name: 'step', exact: true }).click();
    await until(
      () => app.page.locator('.gb-run-text').innerText(),
      (t) => t.startsWith('paused after'),
      'the first step',
      60_000,
    );
    for (const [width, height] of [
      [1024, 720],
      [1280, 720],
      [1440, 900],
    ] as const) {
      await app.page.setViewportSize({ width, height });
      // "image_classification.json", 25 characters: the longest example's name, whole.
      expect(await cut(app.page), `at ${width}×${height}`).toEqual([]);
      expect(await app.page.locator('.gb-file-title').innerText()).toContain('image_classification.json');
      expect(
        await app.page.locator('.gb-file-title').evaluate((el) => el.scrollWidth <= el.clientWidth),
        `no ellipsis at ${width}`,
      ).toBe(true);
      // Narrower than 1280 px Step, Pause and Stop are icons; their names stay in their tooltips.
      const step = app.page.getByRole('button', { name: 'step', exact: true });
      expect(await step.innerText()).toBe(width < 1280 ? '' : 'Step');
      expect(await step.getAttribute('title')).toContain('Run one unit of work');
      expect(await app.page.locator('.gb-run-status').getAttribute('title')).toMatch(/^paused after .* · /);
      await screenshot(app.page, `layout-topbar-${width}`);
    }
    await app.page.getByRole('button', { name: 'stop' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'stopped',
      'the stop',
      30_000,
    );
  });

  it('ellipsizes a long file name, naming it whole in its tooltip, and keeps every control in the window', async () => {
    const long = 'a_rather_long_workflow_name_for_the_night_batch_of_images.json';
    writeWorkflow(app.server, long, readJson(app.server, 'hello.json'));
    await openApp(app.page, app.server, long);
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run',
      30_000,
    );
    for (const [width, height] of [
      [1024, 720],
      [1280, 720],
    ] as const) {
      await app.page.setViewportSize({ width, height });
      const title = app.page.locator('.gb-file-title');
      expect(await title.getAttribute('title')).toBe(long);
      expect(
        await title.evaluate(
          (el) => el.scrollWidth > el.clientWidth && getComputedStyle(el).textOverflow === 'ellipsis',
        ),
        'cut with an ellipsis',
      ).toBe(true);
      const controls = (await cut(app.page)).filter((w) => !w.includes('gb-file-title'));
      expect(controls, `at ${width}×${height}`).toEqual([]);
      await screenshot(app.page, `layout-topbar-long-name-${width}`);
    }
  });
});

describe('the system panel', () => {
  const GB = 1024 ** 3;
  /** The panel's rows whose figure is cut, or that reach out of the panel or the window, meters out of line; and each row's text. */
  const fit = (page: Page): Promise<{ wrong: string[]; rows: string[] }> =>
    page.locator('.gb-system').evaluate((panel) => {
      const wrong: string[] = [];
      const edge = panel.getBoundingClientRect();
      const rows = Array.from(panel.querySelectorAll<HTMLElement>('.gb-system-row'));
      for (const row of rows) {
        for (const part of Array.from(row.children) as HTMLElement[]) {
          const box = part.getBoundingClientRect();
          if (part.scrollWidth > part.clientWidth)
            wrong.push(`cut: ${row.dataset.stat} "${part.innerText}" (${part.scrollWidth} > ${part.clientWidth})`);
          if (box.left < edge.left || box.right > edge.right || box.bottom > window.innerHeight)
            wrong.push(`outside: ${row.dataset.stat} "${part.innerText}"`);
        }
        const meter = row.querySelector('.gb-system-meter')?.getBoundingClientRect();
        if (meter && meter.width < 20) wrong.push(`no meter: ${row.dataset.stat} (${meter.width} px)`);
      }
      const meters = Array.from(panel.querySelectorAll('.gb-system-meter'), (m) => m.getBoundingClientRect());
      if (new Set(meters.map((m) => `${m.left},${m.right}`)).size > 1) wrong.push('the meters do not line up');
      return { wrong, rows: rows.map((r) => r.innerText.replace(/\s+/g, ' ')) };
    });

  it("shows every figure whole at 1280×720 and 1024×720, a big machine's too", async () => {
    const page = await app.freshBrowser();
    // The server's answer with the figures of a machine bigger than this one (and a GPU it lacks).
    await page.route('**/api/system', async (route) => {
      const response = await route.fetch();
      const stats = (await response.json()) as Record<string, unknown>;
      const gpus = [{ index: 0, name: 'NVIDIA H100 80GB HBM3', memory_used: 77.7 * GB, memory_total: 79.6 * GB }];
      await route.fulfill({ response, json: { ...stats, memory_used: 63.7 * GB, memory_total: 95.4 * GB, gpus } });
    });
    await openApp(page, app.server, 'hello.json');
    await page.getByRole('tab', { name: 'Runs' }).click();
    const memory = page.locator('.gb-system-row[data-stat="Memory"] .gb-system-value');
    await until(
      () => memory.innerText(),
      (t) => t === '63.7 GB / 95.4 GB',
      'the figures',
    );
    for (const [width, height] of [
      [1280, 720],
      [1024, 720],
    ] as const) {
      await page.setViewportSize({ width, height });
      const { wrong, rows } = await fit(page);
      expect(wrong, `at ${width}×${height}`).toEqual([]);
      expect(rows).toContain('Memory 63.7 GB / 95.4 GB');
      expect(rows).toContain('GPU 0 77.7 GB / 79.6 GB');
      await screenshot(page, `layout-system-${width}`);
    }
  });
});

/** Room a node needs below it to grow after a run: a strip of images and a line of status. */
const GROWTH = 44;

/** Pairs of nodes whose boxes (each grown by GROWTH below) overlap, in canvas units. */
const overlaps = (page: Page): Promise<string[]> =>
  page.evaluate((growth) => {
    const zoom = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport') as Element).transform)
      .a;
    const boxes = Array.from(document.querySelectorAll<HTMLElement>('.react-flow__node-graph'), (el) => {
      const b = el.getBoundingClientRect();
      return { id: el.dataset.id ?? '', left: b.left, right: b.right, top: b.top, bottom: b.bottom + growth * zoom };
    });
    const wrong: string[] = [];
    for (const [i, a] of boxes.entries())
      for (const b of boxes.slice(i + 1))
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
          wrong.push(`${a.id} × ${b.id}`);
    return wrong;
  }, GROWTH);

/** Labels on the nodes cut short with no way to read them whole (its tooltip naming it), and path fields too narrow. */
const clipped = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const wrong: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.gb-param-name, .gb-title'))) {
      const text = el.innerText.replace(/^⇥/, '').trim();
      if (el.scrollWidth > el.clientWidth + 1 && !(el.title ?? '').includes(text)) wrong.push(`cut: "${text}"`);
      if (el.classList.contains('gb-param-name') && el.scrollWidth > el.clientWidth + 1)
        wrong.push(`name cut: "${text}"`);
    }
    for (const input of Array.from(document.querySelectorAll<HTMLInputElement>('.gb-param-value input[type="text"]')))
      if (input.offsetWidth < 140) wrong.push(`narrow field: ${input.offsetWidth} px`);
    return wrong;
  });

describe('templates and labels', () => {
  it('opens every template with room between its nodes and its labels whole at 100% zoom', async () => {
    const page = app.page;
    for (const [width, height] of [
      [1280, 800],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const file of templates) {
        await openApp(page, app.server, `template-${file}`);
        expect(await overlaps(page), `${file} at ${width}×${height}`).toEqual([]);
        if (file.startsWith('sort-by') || file.startsWith('quality'))
          await screenshot(page, `layout-template-${file.replace('.json', '')}-${width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const file of templates) {
      await openApp(page, app.server, `template-${file}`);
      expect(await clipped(page), file).toEqual([]);
    }
  });

  it('keeps the shortcuts in the inspector, the sidebar tabs whole beside the queue badge, and text unselected by a drag', async () => {
    const page = app.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openApp(page, app.server, 'hello.json');
    if (!(await page.locator('.gb-inspector').count())) await page.keyboard.press(']');
    const list = page.locator('.gb-inspector .gb-shortcut-list');
    await list.waitFor();
    expect(
      await list.evaluate((el) => {
        const panel = (el.closest('.gb-inspector') as HTMLElement).getBoundingClientRect();
        return Array.from(el.querySelectorAll('dt, dd'))
          .filter((c) => c.getBoundingClientRect().right > panel.right + 1 || c.scrollWidth > c.clientWidth + 1)
          .map((c) => (c as HTMLElement).innerText);
      }),
    ).toEqual([]);

    // a run going and a job waiting: the Queue tab's badge shows
    const post = (path: string, body: unknown) =>
      fetch(new URL(path, app.server.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    writeWorkflow(app.server, 'slow.json', {
      format: 'graphbook.workflow',
      version: 1,
      nodes: [
        { id: 'greetings', type: 'Greetings', params: { count: 400 }, position: { x: 0, y: 0 } },
        { id: 'slow', type: 'Slow', params: { delay: 0.25 }, position: { x: 300, y: 0 } },
      ],
      edges: [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
    });
    const request = { workflow: 'slow.json', mode: 'all', node: null, graph: null, continue_on_error: false };
    expect((await post('/api/runs', request)).status).toBeLessThan(300);
    expect((await post('/api/jobs', request)).status).toBeLessThan(300);
    await page.locator('.gb-tab-count').waitFor();
    const cutTabs = await page
      .locator('.gb-sidebar [role="tab"]')
      .evaluateAll((tabs) =>
        tabs.filter((t) => t.scrollWidth > t.clientWidth + 1).map((t) => (t as HTMLElement).innerText),
      );
    expect(cutTabs).toEqual([]);
    await screenshot(page, 'layout-1280-queue-badge');
    await post('/api/runs/current/stop', {});

    const bar = await page.locator('.gb-topbar .gb-spacer').boundingBox();
    if (!bar) throw new Error('no top bar');
    await page.mouse.move(bar.x + 10, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + 200, bar.y + 400, { steps: 6 });
    await page.mouse.up();
    expect(await page.evaluate(() => window.getSelection()?.toString() ?? '')).toBe('');
  });
});
