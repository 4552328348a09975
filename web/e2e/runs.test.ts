// Past runs in the Runs tab: a run opened over the canvas (each node's items, time, logs and
// errors), run again as it was when its file changed since, two runs compared side by side,
// long counts written whole; and real training runs (a three-trial search by `graphbook train`
// into the server's store) as loss curves, overlaid per search, with hover values and a log scale.

import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type AppSession, appSession, failing, openApp, readJson, runStatus, until, writeWorkflow } from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

/** Runs a command to its end in the server's folder, with the server's store as GRAPHBOOK_HOME. */
function run(session: AppSession, command: string[], timeout = 170_000): Promise<string> {
  return new Promise((done, fail) => {
    const env = { ...process.env, GRAPHBOOK_HOME: join(session.server.folder, '.runs'), PYTHONUNBUFFERED: '1' };
    const child = spawn(command[0] as string, command.slice(1), {
      cwd: session.server.folder,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) done(output);
      else fail(new Error(`${command.join(' ')} exited ${code}:\n${output.slice(-3000)}`));
    });
  });
}

/** A finished workflow run whose source handed on 1,234,567 items, put straight into the store. */
const BIG_RUN = `
from graphbook.store import Store
store = Store()
run = store.start_run("workflow", "big.json", {"mode": "all", "node": None, "params": {}})
counts = {"source": {"out": 1234567}, "sink": {"kept": 1234000, "dropped": 567}}
store.save_run_nodes(run, [
    {"node_id": "source", "title": "Source", "state": "done", "counts": counts["source"], "seconds": 3723.5},
    {"node_id": "sink", "title": "Sink", "state": "done", "counts": counts["sink"], "seconds": 3723.4},
])
store.finish_run(run, "completed", counts)
`;

const app = appSession({
  workflows: {
    'failing.json': failing,
  },
  async setup(session) {
    for (const file of ['train_line.py', 'line_grid.yaml'])
      copyFileSync(join(ROOT, 'web/e2e/fixtures', file), join(session.server.folder, file));
    // A real search: three trials trained in processes, each a training run with its metrics;
    // it trains while the workflow tests run, and the training tests wait for it.
    training = run(session, ['graphbook', 'train', 'train_line.py', '--grid', 'line_grid.yaml', '--parallel', '3']);
    training.catch(() => null); // reported by the test that waits for it
    await run(session, ['python', '-c', BIG_RUN]);
  },
});
let training: Promise<string> = Promise.resolve('');

const page = (): Page => app.page;
const rows = (): Locator => page().locator('.gb-history-list > .gb-history-run');
const row = (kind: string, name?: string): Locator =>
  rows()
    .filter({ has: page().locator(`.gb-history-name${name ? `[title="${name}"]` : ''}`) })
    .and(page().locator(`[data-kind="${kind}"]`));

async function runAndWait(status: string): Promise<void> {
  await page().getByRole('button', { name: 'run', exact: true }).click();
  await until(
    () => runStatus(page()),
    (s) => s === status,
    `the run to end ${status}`,
    30_000,
  );
}

async function openRunsTab(): Promise<void> {
  await page().getByRole('tab', { name: 'Runs' }).click();
  await rows().first().waitFor();
}

const cellTexts = (locator: Locator, cell: string): Promise<Record<string, string>> =>
  locator.evaluateAll(
    (els, selector) =>
      Object.fromEntries(
        els.map((el) => [el.getAttribute('data-node') ?? '', el.querySelector(selector)?.textContent ?? '']),
      ),
    cell,
  );

/** The element shows all of its text: nothing is cut off or hidden by an ellipsis. */
async function whole(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    let parent = el.parentElement;
    while (parent && getComputedStyle(parent).overflow === 'visible') parent = parent.parentElement;
    const clip = parent?.getBoundingClientRect();
    return (
      el.scrollWidth <= el.clientWidth + 1 && (!clip || (box.right <= clip.right + 1 && box.left >= clip.left - 1))
    );
  });
}

describe('past runs', () => {
  it("open over the canvas with each node's items, time, logs and errors", async () => {
    await openApp(page(), app.server, 'hello.json');
    await runAndWait('completed');
    await openRunsTab();
    await until(
      () => row('workflow', 'hello.json').count(),
      (n) => n === 1,
      'the hello.json run in the list',
    );
    await row('workflow', 'hello.json').locator('.gb-history-row').click();
    const nodes = page().locator('.gb-runpage-nodes tbody[data-node]');
    await nodes.first().waitFor();
    expect(await cellTexts(nodes, '.gb-runpage-counts')).toEqual({
      greetings: '10',
      say_odd: '5',
      shout_even: '5',
      split: 'A 5 · B 5',
    });
    expect(await nodes.locator('.gb-state-done').count()).toBe(4);
    await page().locator('tbody[data-node="say_odd"] .gb-runpage-node').click();
    const logs = page().locator('tbody[data-node="say_odd"] .gb-runpage-logs pre > div');
    expect(await logs.count()).toBe(5);
    expect(await logs.first().innerText()).toContain('Hello, World!');
    await screenshot(page(), 'runs-open-1440');
    await page().setViewportSize({ width: 1280, height: 720 });
    await screenshot(page(), 'runs-open-1280');
    await page().setViewportSize({ width: 1440, height: 900 });

    await openApp(page(), app.server, 'failing.json');
    await runAndWait('failed');
    await openRunsTab();
    await row('workflow', 'failing.json').locator('.gb-history-row').click();
    const error = page().locator('tbody[data-node="split"] .gb-runpage-error');
    await error.waitFor(); // the failing node opens by itself
    expect(await error.locator('summary').innerText()).toContain('KeyError');
    expect(await error.locator('pre').innerText()).toContain('Traceback');
    expect(await page().locator('.gb-runpage-runerror').innerText()).toContain("node 'split'");
    await page().keyboard.press('Escape');
    await page().locator('.gb-runs-page').waitFor({ state: 'detached' });
  });

  it('run again as they ran, saying what changed in the file since; or the file as it is now', async () => {
    await openApp(page(), app.server, 'hello.json');
    const changed = readJson(app.server, 'hello.json');
    const greetings = changed.nodes.find((n) => n.id === 'greetings');
    if (greetings) greetings.params.count = 4;
    writeWorkflow(app.server, 'hello.json', changed);
    await openRunsTab();
    await row('workflow', 'hello.json').locator('.gb-history-row').click();
    const banner = page().locator('.gb-runpage-changes');
    await banner.waitFor();
    expect(await banner.innerText()).toContain('greetings.count: 10 → 4');
    await screenshot(page(), 'runs-changed');

    await page().getByRole('button', { name: 'Run again' }).click();
    await page().locator('.gb-dialog').waitFor();
    expect(await page().locator('.gb-dialog h2').innerText()).toBe('hello.json changed since this run');
    await page().getByRole('button', { name: 'Run it as it was' }).click();
    await page().locator('.gb-runs-page').waitFor({ state: 'detached' }); // back on the canvas to watch it
    await until(
      () => row('workflow', 'hello.json').count(),
      (n) => n === 2,
      'the run again in the list',
    );
    await until(
      () => row('workflow', 'hello.json').first().getAttribute('data-status'),
      (s) => s === 'completed',
      'the run again to finish',
    );
    expect(await row('workflow', 'hello.json').first().locator('.gb-history-items').innerText()).toBe('10 items'); // as it was: 10, not 4

    await row('workflow', 'hello.json').first().locator('.gb-history-row').click();
    await page().getByRole('button', { name: 'Run again' }).click();
    await page().getByRole('button', { name: 'Run the file as it is now' }).click();
    await until(
      () => row('workflow', 'hello.json').count(),
      (n) => n === 3,
      'the run of the file now',
    );
    await until(
      () => row('workflow', 'hello.json').first().getAttribute('data-status'),
      (s) => s === 'completed',
      'it to finish',
    );
    expect(await row('workflow', 'hello.json').first().locator('.gb-history-items').innerText()).toBe('4 items');
  });

  it('compare side by side: items per node, time, parameters that differ', async () => {
    const hello = row('workflow', 'hello.json');
    // From a run's page, its previous run is one click away.
    await hello.nth(0).locator('.gb-history-row').click();
    await page().getByRole('button', { name: 'Compare with the previous run' }).click();
    const runIds = [await hello.nth(1).getAttribute('data-run'), await hello.nth(0).getAttribute('data-run')];
    expect(await page().locator('.gb-compare').getAttribute('data-runs')).toBe(runIds.join(','));
    await page().keyboard.press('Escape');

    await hello.nth(0).locator('.gb-history-pick').check();
    expect(await page().locator('.gb-history-compare button').first().isDisabled()).toBe(true);
    await hello.nth(1).locator('.gb-history-pick').check();
    await page().getByRole('button', { name: 'Compare 2' }).click();
    const compare = page().locator('.gb-compare');
    await compare.waitFor();
    const greetings = compare.locator('.gb-compare-nodes [data-node="greetings"] .gb-compare-counts');
    expect(await greetings.allInnerTexts()).toEqual(['4', '10']);
    expect(
      await compare.locator('.gb-compare-nodes [data-node="greetings"] .gb-compare-seconds').first().innerText(),
    ).toMatch(/^[\d.]+ (ms|s)$/);
    const param = compare.locator('.gb-compare-params [data-param="greetings.count"] .gb-compare-value');
    expect(await param.allInnerTexts()).toEqual(['4', '10']);
    expect(await compare.locator('.gb-compare-params [data-param]').count()).toBe(1);
    await screenshot(page(), 'runs-compare-1440');
    await page().setViewportSize({ width: 1280, height: 720 });
    await screenshot(page(), 'runs-compare-1280');
    await page().setViewportSize({ width: 1440, height: 900 });
    await page().keyboard.press('Escape');
    await page().locator('.gb-history-compare').getByRole('button', { name: 'Clear' }).click();
  });

  it('write long counts whole, in the list and opened', async () => {
    await page().setViewportSize({ width: 1280, height: 720 });
    const big = row('workflow', 'big.json');
    const items = big.locator('.gb-history-items');
    expect(await items.innerText()).toBe('1,234,567 items');
    expect(await whole(items)).toBe(true);
    await big.locator('.gb-history-row').click();
    const nodes = page().locator('.gb-runpage-nodes tbody[data-node]');
    await nodes.first().waitFor();
    expect(await cellTexts(nodes, '.gb-runpage-counts')).toEqual({
      source: '1,234,567',
      sink: 'dropped 567 · kept 1,234,000',
    });
    for (const cell of await page().locator('.gb-runpage-counts').all()) expect(await whole(cell)).toBe(true);
    expect(await page().locator('.gb-runpage-items').innerText()).toBe('1,234,567 items');
    await screenshot(page(), 'runs-long-counts-1280');
    await page().keyboard.press('Escape');
    await page().setViewportSize({ width: 1440, height: 900 });
  });
});

describe('training runs', () => {
  const chart = (name: string): Locator => page().locator(`.gb-chart[data-chart="${name}"]`);
  const pointsPerLine = (name: string): Promise<number[]> =>
    chart(name)
      .locator('svg g[data-line]')
      .evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-points'))));

  it(
    'show a search with its trials, their loss curves overlaid, hover values and a log scale',
    { timeout: 240_000 },
    async () => {
      await training;
      await page().reload();
      await page().locator('.gb-connection-open').waitFor();
      await openRunsTab();
      const search = row('search');
      expect(await search.locator('.gb-history-items').innerText()).toBe('3 trials');
      expect(await rows().and(page().locator('[data-kind="train"]')).count()).toBe(0); // trials sit under their search
      await search.getByRole('button', { name: 'show the trials' }).click();
      expect(await search.locator('.gb-history-trial .gb-history-name').allInnerTexts()).toEqual([
        'trial-0',
        'trial-1',
        'trial-2',
      ]);

      await search.locator('.gb-history-head').first().locator('.gb-history-row').click();
      const trials = page().locator('.gb-runpage-trials tbody tr');
      await trials.first().waitFor();
      expect(await trials.count()).toBe(3);
      expect(await page().locator('.gb-runpage-best').innerText()).toContain('trial-0'); // lr 0.3 learns the line best
      await chart('loss').waitFor();
      const counts = await pointsPerLine('loss');
      expect(counts).toHaveLength(6); // 3 trials × training and validation
      expect(counts.every((n) => n >= 8)).toBe(true);
      expect(await chart('loss').locator('.gb-chart-legend button').allInnerTexts()).toEqual([
        'trial-0 · training',
        'trial-0 · validation',
        'trial-1 · training',
        'trial-1 · validation',
        'trial-2 · training',
        'trial-2 · validation',
      ]);
      expect(await chart('loss').locator('.gb-chart-y text').count()).toBeGreaterThanOrEqual(3);
      expect(
        await chart('loss')
          .locator('.gb-chart-x text')
          .evaluateAll((els) => els.map((e) => e.textContent)),
      ).toContain('batches');

      const box = await chart('loss').locator('.gb-chart-catch').boundingBox();
      if (!box) throw new Error('no plot');
      await page().mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
      const tip = chart('loss').locator('.gb-chart-tip');
      await tip.waitFor();
      expect(await tip.locator('.gb-chart-tip-row').count()).toBe(6);
      expect(await tip.locator('.gb-chart-tip-value').first().innerText()).toMatch(/^\d/);
      await screenshot(page(), 'runs-search-hover-1440');

      const yTicks = (): Promise<string[]> =>
        chart('loss')
          .locator('.gb-chart-y text')
          .evaluateAll((els) => els.map((e) => e.textContent ?? ''));
      const linear = await yTicks();
      await chart('loss').getByRole('button', { name: 'log scale' }).click();
      expect(await chart('loss').getAttribute('data-scale')).toBe('log');
      const log = await yTicks();
      expect(log).not.toEqual(linear);
      expect(log.some((t) => /^(0\.0*1|1|10|1e-\d)$/.test(t))).toBe(true); // powers of ten
      await page().mouse.move(0, 0);
      await screenshot(page(), 'runs-search-log-1440');
      await page().setViewportSize({ width: 1280, height: 720 });
      await screenshot(page(), 'runs-search-1280');
      await page().setViewportSize({ width: 1440, height: 900 });

      await chart('loss').locator('.gb-chart-legend button', { hasText: 'trial-2 · training' }).click();
      expect(await pointsPerLine('loss')).toHaveLength(5); // hidden from the plot, kept in the legend
    },
  );

  it('open one trial with its training and validation curves', async () => {
    await page().keyboard.press('Escape');
    await row('search').locator('.gb-history-trial', { hasText: 'trial-1' }).locator('.gb-history-row').click();
    await chart('loss').waitFor();
    expect(await chart('loss').locator('.gb-chart-legend button').allInnerTexts()).toEqual(['training', 'validation']);
    const [training, validation] = await pointsPerLine('loss');
    expect(training).toBe(24); // 48 batches, reported every 2
    expect(validation).toBe(8); // validated every 6
    expect(await page().locator('.gb-runpage-facts').first().innerText()).toContain('48 of 48 batches');
    expect(await page().locator('.gb-runpage-params [data-param="lr"]').innerText()).toContain('0.05'); // its learning rate
    await screenshot(page(), 'runs-trial-1440');
  });
});
