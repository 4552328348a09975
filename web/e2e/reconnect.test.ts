// The page's own websocket dropped mid-run (no reload): the app says it is reconnecting and for
// how long, freezes and greys what it last heard of the run, turns the run controls off, keeps
// retrying with backoff, comes back with the live run from the server's snapshot and follows it
// to the end. The socket is routed through Playwright, which lets the test cut it and refuse
// new ones for a while, as a network outage would.

import type { Page, WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, node, openApp, runStatus, until, workflow } from './app';
import { screenshot } from './browser';

const GREETINGS = 40;

let offline = false;
let attempts = 0;
const open: WebSocketRoute[] = [];

const count = (p: Page, id: string, output: string): Promise<number> =>
  node(p, id)
    .locator(`.gb-count[data-output="${output}"]`)
    .innerText({ timeout: 1000 })
    .then(Number)
    .catch(() => 0);

/** The run's elapsed time, in seconds, as the top bar shows it ("running · 2.4 s"). */
const elapsed = (text: string): number => {
  const [, value = '0', unit] = /· ([\d.]+) (ms|s)\b/.exec(text) ?? [];
  return Number(value) / (unit === 'ms' ? 1000 : 1);
};

/** What the server itself says the run has done so far: `out` of node `id`. */
async function serverCount(id: string): Promise<number> {
  const snapshot = (await (await fetch(`${app.server.url}api/runs/current`)).json()) as {
    run: { nodes: { node_id: string; counts: Record<string, number> }[] } | null;
  };
  return snapshot.run?.nodes.find((n) => n.node_id === id)?.counts.out ?? 0;
}

const app = appSession({
  testNodes: true,
  workflows: {
    'slow.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: GREETINGS }, position: at(0, 0) },
        { id: 'slow', type: 'Slow', params: { delay: 0.2 }, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
    ),
  },
  async setup({ page }) {
    await page.routeWebSocket(/\/ws(\?|$)/, (ws) => {
      attempts += 1;
      if (offline) {
        ws.close({ code: 4000, reason: 'offline' });
        return;
      }
      ws.connectToServer();
      open.push(ws);
    });
  },
});

describe('reconnecting', () => {
  it('shows the live run again after its websocket drops, and follows it to the end', async () => {
    await openApp(app.page, app.server, 'slow.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n >= 2,
      'the run to get going',
    );

    offline = true;
    const before = attempts;
    await Promise.all(open.splice(0).map((ws) => ws.close({ code: 4000, reason: 'dropped' })));
    const reconnecting = app.page.locator('.gb-connection-closed');
    await reconnecting.waitFor({ timeout: 5000 });
    expect(await reconnecting.innerText()).toContain('Reconnecting');
    expect(await reconnecting.getAttribute('title')).toContain('reconnecting');
    const frozen = await count(app.page, 'slow', 'out');
    const status = app.page.locator('[data-run-status]');
    await app.page.locator('[data-run-status][data-stale]').waitFor({ timeout: 1000 });
    const timer = await status.innerText();
    const cut = Date.now();
    await until(
      () => attempts - before,
      (n) => n >= 2,
      'the app to retry while the server is out of reach',
      10_000,
    );
    await until(
      () => reconnecting.innerText(),
      (t) => /Reconnecting…\s*[1-9]\d* s/.test(t),
      'a second offline to show',
      10_000,
    );
    await screenshot(app.page, 'reconnect-offline');
    await app.page.getByLabel('switch theme').click();
    await screenshot(app.page, 'reconnect-offline-dark');
    await app.page.getByLabel('switch theme').click();
    expect(attempts - before, 'the app retried while the app.server was out of reach').toBeGreaterThanOrEqual(2);
    expect(await count(app.page, 'slow', 'out'), 'nothing arrives while offline').toBe(frozen);
    expect(await status.innerText(), "the run's timer stops while nothing is heard of it").toBe(timer);
    expect(await reconnecting.innerText(), 'how long the app.page has been offline').toMatch(
      /Reconnecting…\s*[1-9]\d* s/,
    );
    expect(await node(app.page, 'slow').locator('.gb-status-stale').count(), 'node figures marked stale').toBe(1);
    expect(await node(app.page, 'slow').locator('.gb-node').getAttribute('class')).toContain('gb-stale');
    for (const name of ['queue', 'pause', 'stop']) {
      // while a run goes, Run is Queue
      const button = app.page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), `${name} is off while offline`).toBe(true);
      expect(await button.getAttribute('title'), `${name} says why`).toContain('Not connected to the server');
    }
    const meanwhile = await until(
      () => serverCount('slow'),
      (n) => n > frozen,
      'the run to go on while the page is cut off',
    );

    offline = false;
    const outage = (Date.now() - cut) / 1000;
    await app.page.locator('.gb-connection-open').waitFor({ timeout: 10_000 });
    await until(
      () => runStatus(app.page),
      (s) => s === 'running',
      'the snapshot after reconnecting',
      5000,
    );
    expect(await reconnecting.count(), 'the reconnecting state is gone').toBe(0);
    expect(await status.getAttribute('data-stale')).toBeNull();
    expect(await app.page.locator('.gb-status-stale, .gb-stale').count(), 'nothing marked stale').toBe(0);
    expect(await app.page.getByRole('button', { name: 'stop', exact: true }).isEnabled()).toBe(true);
    await until(
      () => status.innerText(),
      (t) => elapsed(t) > elapsed(timer) + outage,
      'the timer to count the outage too',
      3000,
    );
    expect(await node(app.page, 'slow').locator('.gb-status').innerText()).toContain('running');
    const caughtUp = await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n >= meanwhile,
      'the counts from the snapshot',
      3000,
    );
    await screenshot(app.page, 'reconnect-back');
    await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n > caughtUp,
      'counts to keep going after the reconnect',
      5000,
    );

    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run to finish in the page',
      30_000,
    );
    await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n === GREETINGS,
      'every greeting counted',
    );
    expect(await node(app.page, 'slow').locator('.gb-status').innerText()).toContain('done');
    await screenshot(app.page, 'reconnect-finished');
  });
});
