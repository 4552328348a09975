// Running workflows from the browser: live counts and images, errors on their node, step, pause,
// resume and stop, prompts answered in the node, and the live view surviving a reload.

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  appSession,
  at,
  failing,
  canvasReady,
  node,
  openApp,
  runStatus,
  runToEnd,
  switchTheme,
  until,
  workflow,
} from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const app = appSession({
  testNodes: true,
  async setup(session) {
    copyFileSync(join(ROOT, 'web/e2e/fixtures/resource_nodes.py'), join(session.server.nodes, 'resource_nodes.py'));
    await until(
      async () => JSON.stringify(await (await fetch(`${session.server.url}api/catalog`)).json()),
      (text) => text.includes('"GatedModel"'),
      'the resource fixture in the catalog',
    );
  },
  workflows: {
    'gated.json': workflow(
      [
        { id: 'src', type: 'Announce', params: {}, position: at(0, 0) },
        { id: 'model', type: 'GatedModel', params: {}, position: at(0, 300) },
        { id: 'times', type: 'Times', params: {}, position: at(340, 0) },
      ],
      [
        { source: 'src', output: 'out', target: 'times', input: 'in' },
        { source: 'model', output: 'resource', target: 'times', input: 'by' },
      ],
    ),
    'failing.json': failing,
    'slow.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 40 }, position: at(0, 0) },
        { id: 'slow', type: 'Slow', params: { delay: 0.25 }, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
    ),
    'chatty.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 1000 }, position: at(0, 0) },
        { id: 'shout', type: 'Shout', params: {}, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'shout', input: 'in' }],
    ),
    'batches.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 10 }, position: at(0, 0) },
        { id: 'batches', type: 'Batches', params: {}, position: at(300, 0) },
        { id: 'slow', type: 'Slow', params: { delay: 0 }, position: at(600, 0) },
      ],
      [
        { source: 'greetings', output: 'out', target: 'batches', input: 'in' },
        { source: 'batches', output: 'out', target: 'slow', input: 'in' },
      ],
    ),
    'small.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
        { id: 'shout', type: 'Shout', params: {}, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'shout', input: 'in' }],
    ),
    'ask.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 2 }, position: at(0, 0) },
        { id: 'approve', type: 'Approve', params: {}, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'approve', input: 'in' }],
    ),
  },
});

const finished = (status: string): boolean => ['completed', 'failed', 'stopped'].includes(status);
const count = (p: Page, id: string, output: string): Promise<number> =>
  node(p, id)
    .locator(`.gb-count[data-output="${output}"]`)
    .innerText({ timeout: 1000 })
    .then(Number)
    .catch(() => 0);

describe('running', () => {
  it('runs the source while a resource builds, and the step that needs it once it is built', async () => {
    await openApp(app.page, app.server, 'gated.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run',
    );
    // The model builds until the source has run: built first, it would have given up (-1).
    const last = new URL('/api/outputs', app.server.url);
    for (const [key, value] of Object.entries({ workflow: 'gated.json', node: 'times', output: 'out', index: '2' }))
      last.searchParams.set(key, value);
    const reply = (await (await fetch(last)).json()) as { item: { x: number } };
    expect(reply.item.x).toBe(4);
    expect(await node(app.page, 'model').locator('.gb-node').getAttribute('class')).toContain('gb-state-done');
  });

  it('runs the image example and shows image previews and counts', async () => {
    await openApp(app.page, app.server, 'image_classification.json');
    await node(app.page, 'images').waitFor();
    expect(await runToEnd(app.page, 90_000)).toBe('completed');
    for (const id of ['images', 'classify', 'accuracy', 'dump']) expect(await count(app.page, id, 'out'), id).toBe(60);
    const image = node(app.page, 'images').locator('.gb-media img').first();
    await image.waitFor();
    await until(
      () => image.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)),
      (w) => w > 0,
      'the image to load',
    );
    expect(await node(app.page, 'images').locator('.gb-status').innerText()).toContain('done');
    const model = await node(app.page, 'model').locator('.gb-status').innerText();
    expect(model, 'a resource is built, not counted').toMatch(/^ready\s+\d+(\.\d+)? (ms|s)$/);
    await screenshot(app.page, 'run-image-example');

    await node(app.page, 'accuracy').locator('.gb-node-header').click();
    await app.page.getByRole('tab', { name: /Logs/ }).click();
    await app.page.locator('.gb-log-text', { hasText: 'accuracy' }).waitFor();
    await node(app.page, 'classify').locator('.gb-node-header').click();
    await app.page.getByRole('tab', { name: 'Output' }).click();
    await app.page.locator('.gb-output .gb-json-image').first().waitFor();
    // Each picture has its whole item beside it: label, prediction, confidence, path.
    const item = app.page.locator('.gb-output .gb-json-item').first();
    const keys = await item.locator('.gb-json-fields .gb-json-key').allInnerTexts();
    expect(keys.map((k) => k.replace(/:\s*$/, ''))).toEqual(
      expect.arrayContaining(['label', 'prediction', 'confidence', 'value']),
    );
    expect(await item.innerText()).toMatch(/prediction:\s*"(circle|square|triangle)"/);
    await screenshot(app.page, 'run-image-outputs');

    // A click shows the picture large with its item beside it; ← → page through the output's pictures.
    await item.locator('.gb-json-image').click();
    const viewer = app.page.getByRole('dialog', { name: 'image viewer' });
    await viewer.waitFor();
    expect(await viewer.locator('.gb-viewer-count').innerText()).toBe('1 / 4');
    expect(await viewer.locator('.gb-viewer-fields').innerText()).toMatch(/prediction:\s*"(circle|square|triangle)"/);
    const large = await viewer.locator('img').boundingBox();
    expect(large && large.width >= 320).toBe(true);
    await app.page.keyboard.press('ArrowRight');
    expect(await viewer.locator('.gb-viewer-count').innerText()).toBe('2 / 4');
    await screenshot(app.page, 'run-image-viewer');
    await app.page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'detached' });
    await switchTheme(app.page);
    await screenshot(app.page, 'run-image-outputs-dark');
    await app.page.getByLabel('switch theme').click();
  });

  it('keeps the last log lines, says how many are not shown, and keeps them with cached outputs', async () => {
    await openApp(app.page, app.server, 'chatty.json');
    await runToEnd(app.page);
    await node(app.page, 'shout').locator('.gb-node-header').click();
    await app.page.getByRole('tab', { name: /Logs/ }).click();
    const lines = app.page.locator('.gb-log-text');
    await until(
      () =>
        lines
          .last()
          .innerText()
          .catch(() => ''),
      (t) => t === 'Hello, World! #999',
      'the last line',
    );
    expect(await lines.count()).toBe(200);
    expect(await lines.first().innerText()).toBe('Hello, World! #800');
    expect(await app.page.locator('.gb-log-dropped').innerText()).toMatch(/^800 lines not shown/);
    await screenshot(app.page, 'run-logs-last-lines');

    // The console under the canvas has every node's lines, filtered by node and level.
    await app.page.keyboard.press('`');
    const consolePanel = app.page.getByRole('region', { name: 'console' });
    await consolePanel.waitFor();
    const consoleNodes = () =>
      consolePanel
        .locator('.gb-console-line')
        .evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('data-node')))].sort());
    expect(await consoleNodes()).toEqual(['shout']);
    expect(await consolePanel.locator('.gb-console-line').last().innerText()).toContain('Hello, World! #999');
    // The newest 200 lines are in the page; the others the server sent a click away.
    const kept = Number((await consolePanel.locator('.gb-console-count').innerText()).split(' of ')[0]);
    expect(kept).toBeGreaterThan(200);
    expect(await consolePanel.locator('.gb-console-line').count()).toBe(200);
    await consolePanel.getByRole('button', { name: `Show the ${kept - 200} earlier lines` }).click();
    expect(await consolePanel.locator('.gb-console-line').count()).toBe(kept);
    await consolePanel.getByLabel('console level').selectOption('error');
    expect(await consolePanel.locator('.gb-console-line').count()).toBe(0);
    await consolePanel.getByLabel('console level').selectOption('all');
    await consolePanel.getByLabel('console filter').fill('#99');
    expect(await consolePanel.locator('.gb-console-line').count()).toBe(11);
    await screenshot(app.page, 'run-console');
    await consolePanel.getByLabel('console filter').fill('');
    await consolePanel.getByLabel('hide the console').click();
    await consolePanel.waitFor({ state: 'detached' });

    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => node(app.page, 'shout').locator('.gb-status').innerText(),
      (t) => t.includes('cached'),
      'the cached re-run',
      30_000,
    );
    await until(
      () =>
        lines
          .last()
          .innerText()
          .catch(() => ''),
      (t) => t.startsWith('reused outputs: the lines above were logged by the run'),
      'the note',
    );
    expect(await lines.nth(-2).innerText()).toBe('Hello, World! #999');
    expect(await app.page.locator('.gb-log-dropped').innerText(), 'the 800 lines the cache did not keep').toMatch(
      /^801 lines not shown/,
    );
    expect(await lines.last().isVisible(), 'the newest line is scrolled into view').toBe(true);
    const box = await lines.last().boundingBox();
    const panel = await app.page.locator('.gb-tab-body').boundingBox();
    expect(box && panel && box.y + box.height <= panel.y + panel.height + 1).toBe(true);
    await screenshot(app.page, 'run-logs-cached');
  });

  it('paints an error on the failing node, with its traceback one click away', async () => {
    await openApp(app.page, app.server, 'failing.json');
    await runToEnd(app.page);
    const split = node(app.page, 'split');
    await split.locator('.gb-error-link').waitFor();
    expect(await split.locator('.gb-node').getAttribute('class')).toContain('gb-failed');
    await split.locator('.gb-error-link').click();
    const traceback = app.page.locator('.gb-traceback').first();
    await traceback.waitFor();
    expect(await traceback.innerText()).toContain('KeyError');
    await screenshot(app.page, 'run-error');
  });

  it('goes on past errors when "Continue on error" is ticked in the Run menu', async () => {
    await openApp(app.page, app.server, 'failing.json');
    const options = app.page.getByRole('button', { name: 'run options' });
    const toggle = app.page.getByLabel('continue on error');
    expect(await toggle.count(), 'the option is in the Run menu, not in the top bar').toBe(0);
    await options.click();
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    await screenshot(app.page, 'run-options-menu');
    await app.page.keyboard.press('Escape');
    await toggle.waitFor({ state: 'detached' });
    expect(await options.getAttribute('title'), 'the caret says the option is on').toContain('continue on error is on');
    try {
      await app.page.getByRole('button', { name: 'run', exact: true }).click();
      // The last test's run of this file failed: wait for this run's end, not that one's.
      const status = app.page.locator('.gb-run-status');
      await until(
        () => status.innerText(),
        (text) => text.includes('3 errors'),
        'three errors, and the run going on past them',
        30_000,
      );
      await until(() => runStatus(app.page), finished, 'the run to finish', 30_000);
      expect(await runStatus(app.page), 'every dict fails, and the run still ends on its own').toBe('completed');
    } finally {
      await options.click();
      await toggle.uncheck();
      await app.page.keyboard.press('Escape');
    }
  });

  it('runs only what a node needs', async () => {
    await openApp(app.page, app.server, 'failing.json');
    await node(app.page, 'greetings').getByLabel('run up to greetings').click();
    // The last run of this file (which ran split) may have completed too: wait for this one's view.
    await until(
      () => node(app.page, 'split').locator('.gb-error-link').count(),
      (n) => n === 0,
      'split, not in this run, shown without errors',
      30_000,
    );
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the partial run',
      30_000,
    );
    expect(await count(app.page, 'greetings', 'out')).toBe(3);
    expect(await node(app.page, 'split').locator('.gb-status').innerText(), 'split is not part of this run').toContain(
      'idle',
    );
  });

  it('steps, pauses, resumes and stops', async () => {
    await openApp(app.page, app.server, 'slow.json');
    await node(app.page, 'slow').locator('.gb-node-header').click();
    await app.page.getByRole('button', { name: 'step', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'paused',
      'the first step',
    );
    const first = await count(app.page, 'slow', 'out');
    await app.page.getByRole('button', { name: 'step', exact: true }).click();
    await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n > first,
      'one more unit',
      10_000,
    );
    await until(
      () => runStatus(app.page),
      (s) => s === 'paused',
      'the second step',
    );
    await app.page.getByRole('button', { name: 'resume' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'running',
      'resuming',
    );
    await app.page.getByRole('button', { name: 'pause' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'paused',
      'pausing',
    );
    await screenshot(app.page, 'run-paused');
    await app.page.getByRole('button', { name: 'stop' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'stopped',
      'stopping',
    );
  });

  it('steps a batch pipeline one batch or one dict of one node at a time, its clock still while paused', async () => {
    await openApp(app.page, app.server, 'batches.json');
    const stepButton = app.page.getByRole('button', { name: 'step', exact: true });
    const text = (): Promise<string> => app.page.locator('.gb-run-text').innerText();
    const counts = async (): Promise<number[]> => [
      await count(app.page, 'greetings', 'out'),
      await count(app.page, 'batches', 'out'),
      await count(app.page, 'slow', 'out'),
    ];
    const step = async (said: string, expected: number[]): Promise<void> => {
      await stepButton.click();
      await until(text, (t) => t.startsWith(said), said, 15_000);
      await until(counts, (c) => c.join() === expected.join(), `counts ${expected.join()} after ${said}`, 5000);
    };
    const began = Date.now();
    await step('paused after one value from Greetings', [1, 0, 0]);
    // The batch step's source yields what its batch needs: four greetings make one batch of four.
    await step('paused after one batch of Batches', [4, 4, 0]);
    await step('paused after one dict through Slow', [4, 4, 1]);
    expect(await node(app.page, 'slow').locator('.gb-status-word').innerText(), 'the node that stepped says so').toBe(
      'stepped',
    );
    expect(await node(app.page, 'batches').locator('.gb-status-word').innerText()).toBe('paused');
    await screenshot(app.page, 'run-step-batch');
    const clock = async (): Promise<string> => (await text()).split(' · ')[1] ?? '';
    const still = await clock();
    const since = Date.now();
    // The clock ticks twice a second while a run runs; paused, it must not move.
    await until(
      async () => Date.now() - since,
      (ms) => ms > 1500,
      'a while paused',
      5000,
    );
    expect(await clock()).toBe(still);
    await app.page.getByRole('button', { name: 'resume' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run to finish',
      30_000,
    );
    expect(await counts()).toEqual([10, 10, 10]);
    const shown = await clock();
    const seconds = shown.endsWith(' ms') ? Number(shown.slice(0, -3)) / 1000 : Number(shown.replace(/ s$/, ''));
    expect(
      seconds,
      `the finished run's time (${shown}) leaves out the ${Date.now() - began} ms it mostly stood paused`,
    ).toBeLessThan((Date.now() - began) / 1000 - 1.5);
  });

  it('restores the live view after a reload, and a second window sees the same run', async () => {
    await openApp(app.page, app.server, 'slow.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n >= 2,
      'the run to get going',
    );
    await app.page.reload();
    await app.page.locator('.gb-connection-open').waitFor();
    await until(
      () => runStatus(app.page),
      (s) => s === 'running',
      'the snapshot after the reload',
      5000,
    );
    const seen = await until(
      () => count(app.page, 'slow', 'out'),
      (n) => n >= 2,
      'counts after the reload',
      5000,
    );
    expect(await node(app.page, 'slow').locator('.gb-status').innerText()).toContain('running');
    await screenshot(app.page, 'run-after-reload');

    const second = await app.browser.page();
    await openApp(second, app.server, 'slow.json');
    await until(
      () => runStatus(second),
      (s) => s === 'running',
      "the second window's snapshot",
      5000,
    );
    await until(
      () => count(second, 'slow', 'out'),
      (n) => n >= seen,
      'counts in the second window',
      5000,
    );
    await second.getByRole('button', { name: 'stop' }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'stopped',
      'the first window to see the stop',
    );
    await until(
      () => runStatus(second),
      (s) => s === 'stopped',
      'the second window to see the stop',
    );
    await second.close();
  });

  it("shows a workflow's last results after a reload, when another workflow ran since", async () => {
    await openApp(app.page, app.server, 'small.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => count(app.page, 'shout', 'out'),
      (n) => n === 3,
      'the run of small.json',
      30_000,
    );
    await openApp(app.page, app.server, 'failing.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => app.page.locator('.gb-run-status').innerText(),
      (t) => t.includes('failed'),
      'the run of failing.json',
      30_000,
    );
    await app.page.reload();
    await canvasReady(app.page);
    await openApp(app.page, app.server, 'small.json');
    await until(
      () => count(app.page, 'shout', 'out'),
      (n) => n === 3,
      "small.json's last counts, from the server",
      10_000,
    );
    expect(await node(app.page, 'shout').locator('.gb-status-word').innerText()).toBe('done');
    await node(app.page, 'shout').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Docs, outputs and logs' }).click();
    await app.page.getByRole('tab', { name: /logs/i }).click();
    await until(
      () => app.page.locator('.gb-inspector').innerText(),
      (t) => t.includes('Hello, World! #2'),
      'its logs, kept by the server',
      5000,
    );
    await screenshot(app.page, 'run-last-results-after-reload');
  });

  it('asks a prompt inside the node and carries on with the answer', async () => {
    await openApp(app.page, app.server, 'ask.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    const prompt = node(app.page, 'approve').locator('.gb-prompt');
    await prompt.waitFor({ timeout: 30_000 });
    expect(await prompt.innerText()).toContain('Keep greeting 0?');
    await screenshot(app.page, 'run-prompt');
    await prompt.getByRole('button', { name: 'Yes' }).click();
    await node(app.page, 'approve').locator('.gb-prompt', { hasText: 'Keep greeting 1?' }).waitFor();
    await node(app.page, 'approve').locator('.gb-prompt').getByRole('button', { name: 'No' }).click();
    await until(() => runStatus(app.page), finished, 'the run to finish', 30_000);
    expect(await runStatus(app.page)).toBe('completed');
    expect(await count(app.page, 'approve', 'out')).toBe(2);
  });
});
