// The server stopped with a page open, and another started on its port: the page says it lost
// the server at once (not after aiohttp's minute-long shutdown), reconnects to the new one,
// notices it is another server (hello's instance id) and takes its catalog, files and runs.

import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSession, at, node, openApp, runStatus, until, workflow } from './app';
import { screenshot } from './browser';
import { ROOT, startServer } from './server';

const greet = workflow([{ id: 'greetings', type: 'Greetings', params: { count: 5 }, position: at(0, 0) }], []);
const app = appSession({ workflows: { 'greet.json': greet } });

describe('a server restarted under an open page', () => {
  it('is noticed at once, and the new server is the one the page shows', async () => {
    await openApp(app.page, app.server, 'greet.json');
    const port = Number(new URL(app.server.url).port);
    const instance = (await (await fetch(`${app.server.url}api/info`)).json()) as { instance: string };

    const started = Date.now();
    const stopping = app.server.stop();
    await app.page.locator('.gb-connection-closed').waitFor({ timeout: 3000 });
    await stopping;
    expect(Date.now() - started, 'serve stopped within seconds with the page open').toBeLessThan(4000);

    // The new server has a node file and a workflow the first did not.
    const next = await startServer({}, port, (folders) => {
      copyFileSync(join(ROOT, 'web/e2e/fixtures/e2e_nodes.py'), join(folders.nodes, 'e2e_nodes.py'));
      for (const name of ['greet.json', 'added.json'])
        writeFileSync(join(folders.workflows, name), JSON.stringify(greet));
    });
    app.server = next;
    const info = (await (await fetch(`${next.url}api/info`)).json()) as { instance: string };
    expect(info.instance, 'each server process has its own instance id').not.toBe(instance.instance);

    await app.page.locator('.gb-connection-open').waitFor({ timeout: 15_000 });
    await app.page.getByRole('tab', { name: 'Nodes' }).click();
    await app.page.locator('[data-node-type="Slow"]').waitFor({ timeout: 10_000 });
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.locator('[data-file="added.json"]').waitFor({ timeout: 5000 });

    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run on the new server to show',
      20_000,
    );
    expect(await node(app.page, 'greetings').locator('.gb-count[data-output="out"]').innerText()).toBe('5');
    await screenshot(app.page, 'restart-new-server');
  });
});
