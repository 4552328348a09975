// A workflow run's metrics in the Runs tab: a run by `graphbook run` into the server's store,
// whose source reports a metric per dict and whose batch step's load function reports one per
// item in 2 worker processes, shows their curves against steps, one line per node, and not the
// engine's one-point figures of each node (its Nodes table has those).

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type AppSession, appSession, at, openApp, workflow } from './app';
import { ROOT } from './server';

const NODES = `
from graphbook import batch, log_metric, source, step


def load(item):
    log_metric("value", item * 2)  # in a worker process
    return item


@step("Metered/MeteredCount")
@source()
def metered_count(ctx):
    for i in range(12):
        ctx.log_metric("value", i)
        yield {"items": [i]}


@step("Metered/MeteredBatch")
@batch(4, "items", load_fn=load)
def metered_batch(ctx, outputs, items, data):
    pass
`;

const metered = workflow(
  [
    { id: 'count', type: 'MeteredCount', position: at(0, 0), params: {} },
    { id: 'batch', type: 'MeteredBatch', position: at(300, 0), params: {} },
  ],
  [{ source: 'count', output: 'out', target: 'batch', input: 'in' }],
);

/** `graphbook run` in the server's folder, into the server's store. */
function graphbookRun(session: AppSession): Promise<void> {
  return new Promise((done, fail) => {
    const pythonPath = [ROOT, process.env.PYTHONPATH].filter(Boolean).join(delimiter); // this checkout's graphbook
    const env = { ...process.env, PYTHONPATH: pythonPath, GRAPHBOOK_HOME: join(session.server.folder, '.runs') };
    const child = spawn('graphbook', ['run', 'metered.json', '--workers', '2', '--quiet'], {
      cwd: session.server.folder,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`graphbook run exited ${code}:\n${output}`))));
  });
}

const app = appSession({
  async setup(session) {
    mkdirSync(join(session.server.folder, 'custom_nodes'), { recursive: true });
    writeFileSync(join(session.server.folder, 'custom_nodes', 'metered.py'), NODES);
    writeFileSync(join(session.server.folder, 'metered.json'), JSON.stringify(metered));
    await graphbookRun(session);
  },
});

const page = (): Page => app.page;
const chart = (name: string): Locator => page().locator(`.gb-chart[data-chart="${name}"]`);

describe("a workflow run's metrics", () => {
  it('show as curves in the Runs tab, a line per node, against steps', async () => {
    await openApp(page(), app.server);
    await page().getByRole('tab', { name: 'Runs' }).click();
    const run = page()
      .locator('.gb-history-list > .gb-history-run[data-kind="workflow"]')
      .filter({ has: page().locator('.gb-history-name[title="metered.json"]') });
    await run.locator('.gb-history-row').click();
    await chart('value').waitFor();
    expect(await chart('value').locator('.gb-chart-legend button').allInnerTexts()).toEqual(['count', 'batch']);
    const points = await chart('value')
      .locator('svg g[data-line]')
      .evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-points'))));
    expect(points).toEqual([12, 12]); // the source's 12 dicts, the 12 items loaded in the workers
    expect(await page().locator('.gb-chart').count()).toBe(1); // no one-point charts of items_out, seconds...
    expect(await page().locator('.gb-runpage').innerText()).toContain('steps');
  });
});
