// What the browser tests do in the app: open it, find nodes, drag, wire, wait.

import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type Browser, openBrowser, screenshot } from './browser';
import { ROOT, type Server, startServer } from './server';

/** What a test file drives: one server, its browsers, and the page in use. */
export interface AppSession {
  server: Server;
  browser: Browser;
  /** The page the tests act on; a test may point it at another page (a fresh browser's). */
  page: Page;
  /** A page in a new browser profile (empty localStorage), closed with the session. */
  freshBrowser(): Promise<Page>;
}

export interface SessionOptions {
  /** Copy web/e2e/fixtures/e2e_nodes.py (Slow, Approve, ...) into the server's node folder. */
  testNodes?: boolean;
  /** Files to write into the workflows folder before the browser opens. */
  workflows?: Record<string, unknown>;
  /** More environment for the server (PYTHONPATH: a folder of installed node packs). */
  env?: Record<string, string>;
  /** More arguments of `graphbook serve` (`--apps`). */
  args?: string[];
  /** Runs once the server is up and the first page exists (routes, more files). */
  setup?(session: AppSession): Promise<void> | void;
}

/**
 * Starts `graphbook serve` and Chromium for the test file, screenshots the page of any failing
 * test into e2e/screenshots/failed-NAME.png, and stops both afterwards. Its fields are set in
 * `beforeAll`: read them inside tests, not at the top of the file.
 */
export function appSession(options: SessionOptions = {}): AppSession {
  const browsers: Browser[] = [];
  const session = {} as AppSession;
  session.freshBrowser = async () => {
    const browser = await openBrowser();
    browsers.push(browser);
    session.page = await browser.page();
    return session.page;
  };
  beforeAll(async () => {
    session.server = await startServer(options.env, undefined, undefined, options.args);
    if (options.testNodes)
      copyFileSync(join(ROOT, 'web/e2e/fixtures/e2e_nodes.py'), join(session.server.nodes, 'e2e_nodes.py'));
    for (const [file, data] of Object.entries(options.workflows ?? {})) writeWorkflow(session.server, file, data);
    await session.freshBrowser();
    session.browser = browsers[0] as Browser;
    await options.setup?.(session);
  });
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && session.page) {
      await screenshot(session.page, `failed-${context.task.name.replace(/\W+/g, '-')}`).catch(() => null);
    }
  });
  afterAll(async () => {
    for (const browser of browsers) await browser.close().catch(() => null);
    await session.server?.stop();
  });
  return session;
}

/** A workflow file's contents: nodes at their positions and the edges between them. */
export const workflow = (nodes: unknown[], edges: unknown[]) => ({
  format: 'graphbook.workflow',
  version: 1,
  nodes,
  edges,
});
export const at = (x: number, y: number) => ({ x, y });

/** Greetings into a Split whose function reads a key the dicts do not have: a run that fails. */
export const failing = workflow(
  [
    { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
    { id: 'split', type: 'Split', params: { split_fn: "lambda data: data['missing']" }, position: at(300, 0) },
  ],
  [{ source: 'greetings', output: 'out', target: 'split', input: 'in' }],
);

export async function openApp(page: Page, server: Server, file?: string): Promise<void> {
  await page.goto(`${server.url}${file ? `#${file}` : ''}`);
  await page.locator('.gb-connection-open').waitFor();
  if (file) await page.locator('.gb-file-title', { hasText: file }).waitFor();
  await canvasReady(page);
}

/** The canvas has shown the open file and fitted the view to it. */
export async function canvasReady(page: Page): Promise<void> {
  await page.locator('.gb-canvas[data-ready="true"]').waitFor();
  await viewSettled(page);
}

/** The browser has painted twice since now: what the last click or key did is on screen. */
export async function painted(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))),
  );
}

/** The canvas's pan and zoom have stopped moving (an animated fit or zoom has ended). */
export async function viewSettled(page: Page): Promise<void> {
  const transform = () => page.locator('.react-flow__viewport').evaluate((el) => (el as HTMLElement).style.transform);
  let last = await transform();
  for (let still = 0; still < 3;) {
    await painted(page);
    const now = await transform();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/** Switches between the light and the dark theme and waits until the page shows the new one. */
export async function switchTheme(page: Page): Promise<void> {
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme ?? '');
  const before = await theme();
  await page.getByLabel('switch theme').click();
  await until(theme, (now) => now !== before, 'the other theme');
  await painted(page);
}

export const node = (page: Page, id: string): Locator => page.locator(`.react-flow__node[data-id="${id}"]`);

export function handle(page: Page, id: string, kind: 'source' | 'target', name: string): Locator {
  return node(page, id).locator(`.react-flow__handle.${kind}[data-handleid="${name}"]`);
}

async function center(locator: Locator): Promise<{ x: number; y: number }> {
  const box = await locator.boundingBox();
  if (!box) throw new Error('element is not visible');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

export async function dragFromPalette(page: Page, type: string, at: { x: number; y: number }): Promise<void> {
  await page.getByRole('tab', { name: 'Nodes' }).click();
  await page.locator(`[data-node-type="${type}"]`).dragTo(page.locator('.react-flow__pane'), { targetPosition: at });
}

export async function wire(page: Page, from: [string, string], to: [string, string]): Promise<void> {
  const start = await center(handle(page, from[0], 'source', from[1]));
  const end = await center(handle(page, to[0], 'target', to[1]));
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move((start.x + end.x) / 2, (start.y + end.y) / 2, { steps: 5 });
  await page.mouse.move(end.x, end.y, { steps: 5 });
  await page.mouse.up();
}

/**
 * Wires `from` to `to` and waits for the wire to be there; a drag the browser dropped (a loaded
 * machine moves the mouse in bursts, and React Flow may not see the handle under it) is made
 * again, twice at most. For wires the editor must refuse, use `wire` and look.
 */
export async function connect(page: Page, from: [string, string], to: [string, string]): Promise<void> {
  const id = `${from[0]}:${from[1]}->${to[0]}:${to[1]}`;
  for (let attempt = 1; ; attempt++) {
    await wire(page, from, to);
    try {
      await until(
        () => edgeIds(page),
        (ids) => ids.includes(id),
        `the wire ${id}`,
        5_000,
      );
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

export async function edgeIds(page: Page): Promise<string[]> {
  return page.locator('.react-flow__edge').evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? '').sort());
}

export async function nodeIds(page: Page): Promise<string[]> {
  return page
    .locator('.react-flow__node-graph')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? '').sort());
}

/** Polls `read` until `ok` holds; fails with the last value seen. */
export async function until<T>(
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  what: string,
  timeout = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: T = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 150));
    last = await read();
  }
  return last;
}

export function readJson(
  server: Server,
  file: string,
): { nodes: { id: string; type: string; params: Record<string, unknown> }[]; edges: unknown[] } {
  return JSON.parse(readFileSync(join(server.workflows, file), 'utf8')) as ReturnType<typeof readJson>;
}

export function writeWorkflow(server: Server, file: string, data: unknown): void {
  writeFileSync(join(server.workflows, file), typeof data === 'string' ? data : `${JSON.stringify(data, null, 2)}\n`);
}

/** The run status the top bar shows now, '' before any run (it does not wait for one). */
export async function runStatus(page: Page): Promise<string> {
  return page.evaluate(() => document.querySelector('[data-run-status]')?.getAttribute('data-run-status') ?? '');
}

/** The id of the run the run controls show ('' before any). */
export async function runId(page: Page): Promise<string> {
  return page.evaluate(() => document.querySelector('[data-run-id]')?.getAttribute('data-run-id') ?? '');
}

/** Clicks Run and waits for that run (not the one shown before it) to end; its status. */
export async function runToEnd(page: Page, timeout = 30_000): Promise<string> {
  const before = await runId(page);
  await page.getByRole('button', { name: 'run', exact: true }).click();
  const ended = ['completed', 'failed', 'stopped'];
  const [, status] = await until(
    async () => [await runId(page), await runStatus(page)] as const,
    ([id, status]) => id !== '' && id !== before && ended.includes(status),
    'the run to finish',
    timeout,
  );
  return status;
}

/** Drops a file with `text` on `target` (the canvas unless told), as a file dragged from the desktop. */
export async function dropFile(page: Page, name: string, text: string, target = '.gb-canvas'): Promise<void> {
  const transfer = await page.evaluateHandle(
    ([fileName, body]) => {
      const data = new DataTransfer();
      data.items.add(new File([body], fileName, { type: 'application/json' }));
      return data;
    },
    [name, text] as const,
  );
  const on = page.locator(target);
  await on.dispatchEvent('dragover', { dataTransfer: transfer });
  await on.dispatchEvent('drop', { dataTransfer: transfer });
}

export const mod = process.platform === 'darwin' ? 'Meta' : 'Control';

/** A point on the canvas (client coordinates) right of or below every node, zooming out if needed. */
export async function emptySpot(page: Page): Promise<{ x: number; y: number }> {
  for (let attempt = 0; attempt < 4; attempt++) {
    const pane = await page.locator('.react-flow__pane').boundingBox();
    const boxes = await page
      .locator('.react-flow__node')
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON() as DOMRect));
    if (!pane) throw new Error('no canvas');
    const right = Math.max(pane.x, ...boxes.map((b) => b.right));
    const bottom = Math.max(pane.y, ...boxes.map((b) => b.bottom));
    if (right + 60 < pane.x + pane.width - 280) return { x: right + 40, y: pane.y + 40 };
    if (bottom + 60 < pane.y + pane.height - 220) return { x: pane.x + 80, y: bottom + 40 };
    await page.locator('.react-flow__controls-zoomout').click();
    await viewSettled(page);
  }
  throw new Error('no empty place on the canvas');
}
