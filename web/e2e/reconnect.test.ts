// The page's own websocket dropped mid-run (no reload): the app says it is reconnecting and for
// how long, freezes and greys what it last heard of the run, turns the run controls off, keeps
// retrying with backoff, comes back with the live run from the server's snapshot and follows it
// to the end. The socket is routed through Playwright, which lets the test cut it and refuse
// new ones for a while, as a network outage would.

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, WebSocketRoute } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { node, openApp, runStatus, until, writeWorkflow } from './app';
import { type Browser, openBrowser, screenshot } from './browser';
import { ROOT, type Server, startServer } from './server';

const GREETINGS = 40;
const OUTAGE_MS = 1500;

let server: Server;
let browser: Browser;
let page: Page;
let offline = false;
let attempts = 0;
const open: WebSocketRoute[] = [];

const at = (x: number, y: number) => ({ x, y });
const count = (p: Page, id: string, output: string): Promise<number> =>
  node(p, id).locator(`.gb-count[data-output="${output}"]`).innerText({ timeout: 1000 }).then(Number).catch(() => 0);

/** The run's elapsed time, in seconds, as the top bar shows it ("running · 2.4 s"). */
const elapsed = (text: string): number => {
  const [, value = '0', unit] = /· ([\d.]+) (ms|s)\b/.exec(text) ?? [];
  return Number(value) / (unit === 'ms' ? 1000 : 1);
};

/** What the server itself says the run has done so far: `out` of node `id`. */
async function serverCount(id: string): Promise<number> {
  const snapshot = (await (await fetch(`${server.url}api/runs/current`)).json()) as {
    run: { nodes: { node_id: string; counts: Record<string, number> }[] } | null;
  };
  return snapshot.run?.nodes.find((n) => n.node_id === id)?.counts.out ?? 0;
}

beforeAll(async () => {
  server = await startServer();
  copyFileSync(join(ROOT, 'web/e2e/fixtures/e2e_nodes.py'), join(server.nodes, 'e2e_nodes.py'));
  writeWorkflow(server, 'slow.json', {
    format: 'graphbook.workflow',
    version: 1,
    nodes: [
      { id: 'greetings', type: 'Greetings', params: { count: GREETINGS }, position: at(0, 0) },
      { id: 'slow', type: 'Slow', params: { delay: 0.2 }, position: at(300, 0) },
    ],
    edges: [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
  });
  browser = await openBrowser();
  page = await browser.page();
  await page.routeWebSocket(/\/ws(\?|$)/, (ws) => {
    attempts += 1;
    if (offline) {
      ws.close({ code: 4000, reason: 'offline' });
      return;
    }
    ws.connectToServer();
    open.push(ws);
  });
});

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await screenshot(page, `failed-${context.task.name.replace(/\W+/g, '-')}`).catch(() => null);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('reconnecting', () => {
  it('shows the live run again after its websocket drops, and follows it to the end', async () => {
    await openApp(page, server, 'slow.json');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(() => count(page, 'slow', 'out'), (n) => n >= 2, 'the run to get going');

    offline = true;
    const before = attempts;
    await Promise.all(open.splice(0).map((ws) => ws.close({ code: 4000, reason: 'dropped' })));
    const reconnecting = page.locator('.gb-connection-closed');
    await reconnecting.waitFor({ timeout: 5000 });
    expect(await reconnecting.innerText()).toContain('Reconnecting');
    expect(await reconnecting.getAttribute('title')).toContain('reconnecting');
    const frozen = await count(page, 'slow', 'out');
    const status = page.locator('[data-run-status]');
    await page.locator('[data-run-status][data-stale]').waitFor({ timeout: 1000 });
    const timer = await status.innerText();
    await page.waitForTimeout(OUTAGE_MS);
    await screenshot(page, 'reconnect-offline');
    await page.getByLabel('switch theme').click();
    await screenshot(page, 'reconnect-offline-dark');
    await page.getByLabel('switch theme').click();
    expect(attempts - before, 'the app retried while the server was out of reach').toBeGreaterThanOrEqual(2);
    expect(await count(page, 'slow', 'out'), 'nothing arrives while offline').toBe(frozen);
    expect(await status.innerText(), "the run's timer stops while nothing is heard of it").toBe(timer);
    expect(await reconnecting.innerText(), 'how long the page has been offline').toMatch(/Reconnecting…\s*[1-9]\d* s/);
    expect(await node(page, 'slow').locator('.gb-status-stale').count(), 'node figures marked stale').toBe(1);
    expect(await node(page, 'slow').locator('.gb-node').getAttribute('class')).toContain('gb-stale');
    for (const name of ['run', 'pause', 'stop']) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), `${name} is off while offline`).toBe(true);
      expect(await button.getAttribute('title'), `${name} says why`).toContain('Not connected to the server');
    }
    const meanwhile = await serverCount('slow');
    expect(meanwhile, 'the run went on while the page was cut off').toBeGreaterThan(frozen);

    offline = false;
    await page.locator('.gb-connection-open').waitFor({ timeout: 10_000 });
    expect(await runStatus(page)).toBe('running');
    expect(await reconnecting.count(), 'the reconnecting state is gone').toBe(0);
    expect(await status.getAttribute('data-stale')).toBeNull();
    expect(await page.locator('.gb-status-stale, .gb-stale').count(), 'nothing marked stale').toBe(0);
    expect(await page.getByRole('button', { name: 'stop', exact: true }).isEnabled()).toBe(true);
    await until(() => status.innerText(), (t) => elapsed(t) > elapsed(timer) + OUTAGE_MS / 1000, 'the timer to count the outage too', 3000);
    expect(await node(page, 'slow').locator('.gb-status').innerText()).toContain('running');
    const caughtUp = await until(() => count(page, 'slow', 'out'), (n) => n >= meanwhile, 'the counts from the snapshot', 3000);
    await screenshot(page, 'reconnect-back');
    await until(() => count(page, 'slow', 'out'), (n) => n > caughtUp, 'counts to keep going after the reconnect', 5000);

    await until(() => runStatus(page), (s) => s === 'completed', 'the run to finish in the page', 30_000);
    await until(() => count(page, 'slow', 'out'), (n) => n === GREETINGS, 'every greeting counted');
    expect(await node(page, 'slow').locator('.gb-status').innerText()).toContain('done');
    await screenshot(page, 'reconnect-finished');
  });
});
