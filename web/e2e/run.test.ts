// Running workflows from the browser: live counts and images, errors on their node, step, pause,
// resume and stop, prompts answered in the node, and the live view surviving a reload.

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { node, openApp, runStatus, until, writeWorkflow } from './app';
import { type Browser, openBrowser, screenshot } from './browser';
import { ROOT, type Server, startServer } from './server';

let server: Server;
let browser: Browser;
let page: Page;

const workflow = (nodes: unknown[], edges: unknown[]) => ({ format: 'graphbook.workflow', version: 1, nodes, edges });
const at = (x: number, y: number) => ({ x, y });

beforeAll(async () => {
  server = await startServer();
  copyFileSync(join(ROOT, 'web/e2e/fixtures/e2e_nodes.py'), join(server.nodes, 'e2e_nodes.py'));
  writeWorkflow(server, 'failing.json', workflow(
    [
      { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
      { id: 'split', type: 'Split', params: { split_fn: "lambda data: data['missing']" }, position: at(300, 0) },
    ],
    [{ source: 'greetings', output: 'out', target: 'split', input: 'in' }],
  ));
  writeWorkflow(server, 'slow.json', workflow(
    [
      { id: 'greetings', type: 'Greetings', params: { count: 40 }, position: at(0, 0) },
      { id: 'slow', type: 'Slow', params: { delay: 0.25 }, position: at(300, 0) },
    ],
    [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
  ));
  writeWorkflow(server, 'ask.json', workflow(
    [
      { id: 'greetings', type: 'Greetings', params: { count: 2 }, position: at(0, 0) },
      { id: 'approve', type: 'Approve', params: {}, position: at(300, 0) },
    ],
    [{ source: 'greetings', output: 'out', target: 'approve', input: 'in' }],
  ));
  browser = await openBrowser();
  page = await browser.page();
});

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await screenshot(page, `failed-${context.task.name.replace(/\W+/g, '-')}`).catch(() => null);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const finished = (status: string): boolean => ['completed', 'failed', 'stopped'].includes(status);
const count = (p: Page, id: string, output: string): Promise<number> =>
  node(p, id).locator(`.gb-count[data-output="${output}"]`).innerText({ timeout: 1000 }).then(Number).catch(() => 0);

describe('running', () => {
  it('runs the image example and shows image previews and counts', async () => {
    await openApp(page, server, 'image_classification.json');
    await node(page, 'images').waitFor();
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(() => runStatus(page), finished, 'the run to finish', 90_000);
    expect(await runStatus(page)).toBe('completed');
    for (const id of ['images', 'classify', 'accuracy', 'dump']) expect(await count(page, id, 'out'), id).toBe(60);
    const image = node(page, 'images').locator('.gb-media img').first();
    await image.waitFor();
    await until(() => image.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)), (w) => w > 0, 'the image to load');
    expect(await node(page, 'images').locator('.gb-status').innerText()).toContain('done');
    const model = await node(page, 'model').locator('.gb-status').innerText();
    expect(model, 'a resource is built, not counted').toMatch(/^ready\s+\d+(\.\d+)? (ms|s)$/);
    await screenshot(page, 'run-image-example');

    await node(page, 'accuracy').locator('.gb-node-header').click();
    await page.getByRole('tab', { name: /Logs/ }).click();
    await page.locator('.gb-log-text', { hasText: 'accuracy' }).waitFor();
    await node(page, 'classify').locator('.gb-node-header').click();
    await page.getByRole('tab', { name: 'Output' }).click();
    await page.locator('.gb-output .gb-json-image').first().waitFor();
    await screenshot(page, 'run-image-outputs');
    await page.getByLabel('switch theme').click();
    await page.waitForTimeout(300);
    await screenshot(page, 'run-image-outputs-dark');
    await page.getByLabel('switch theme').click();
  });

  it('paints an error on the failing node, with its traceback one click away', async () => {
    await openApp(page, server, 'failing.json');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(() => runStatus(page), finished, 'the run to finish', 30_000);
    const split = node(page, 'split');
    await split.locator('.gb-error-link').waitFor();
    expect(await split.locator('.gb-node').getAttribute('class')).toContain('gb-failed');
    await split.locator('.gb-error-link').click();
    const traceback = page.locator('.gb-traceback').first();
    await traceback.waitFor();
    expect(await traceback.innerText()).toContain('KeyError');
    await screenshot(page, 'run-error');
  });

  it('goes on past errors when "Continue on error" is ticked', async () => {
    await openApp(page, server, 'failing.json');
    const toggle = page.getByLabel('continue on error');
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    try {
      await page.getByRole('button', { name: 'run', exact: true }).click();
      // The last test's run of this file failed: wait for this run's end, not that one's.
      const status = page.locator('.gb-run-status');
      await until(() => status.innerText(), (text) => text.includes('3 errors'), 'three errors, and the run going on past them', 30_000);
      await until(() => runStatus(page), finished, 'the run to finish', 30_000);
      expect(await runStatus(page), 'every dict fails, and the run still ends on its own').toBe('completed');
    } finally {
      await toggle.uncheck();
    }
  });

  it('runs only what a node needs', async () => {
    await openApp(page, server, 'failing.json');
    await node(page, 'greetings').getByLabel('run up to greetings').click();
    await until(() => runStatus(page), (s) => s === 'completed', 'the partial run', 30_000);
    expect(await count(page, 'greetings', 'out')).toBe(3);
    expect(await node(page, 'split').locator('.gb-error-link').count()).toBe(0);
  });

  it('steps, pauses, resumes and stops', async () => {
    await openApp(page, server, 'slow.json');
    await node(page, 'slow').locator('.gb-node-header').click();
    await page.getByRole('button', { name: 'step', exact: true }).click();
    await until(() => runStatus(page), (s) => s === 'paused', 'the first step');
    const first = await count(page, 'slow', 'out');
    await page.getByRole('button', { name: 'step', exact: true }).click();
    await until(() => count(page, 'slow', 'out'), (n) => n > first, 'one more unit', 10_000);
    await until(() => runStatus(page), (s) => s === 'paused', 'the second step');
    await page.getByRole('button', { name: 'resume' }).click();
    await until(() => runStatus(page), (s) => s === 'running', 'resuming');
    await page.getByRole('button', { name: 'pause' }).click();
    await until(() => runStatus(page), (s) => s === 'paused', 'pausing');
    await screenshot(page, 'run-paused');
    await page.getByRole('button', { name: 'stop' }).click();
    await until(() => runStatus(page), (s) => s === 'stopped', 'stopping');
  });

  it('restores the live view after a reload, and a second window sees the same run', async () => {
    await openApp(page, server, 'slow.json');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(() => count(page, 'slow', 'out'), (n) => n >= 2, 'the run to get going');
    await page.reload();
    await page.locator('.gb-connection-open').waitFor();
    expect(await runStatus(page)).toBe('running');
    const seen = await until(() => count(page, 'slow', 'out'), (n) => n >= 2, 'counts after the reload', 5000);
    expect(await node(page, 'slow').locator('.gb-status').innerText()).toContain('running');
    await screenshot(page, 'run-after-reload');

    const second = await browser.page();
    await openApp(second, server, 'slow.json');
    expect(await runStatus(second)).toBe('running');
    await until(() => count(second, 'slow', 'out'), (n) => n >= seen, 'counts in the second window', 5000);
    await second.getByRole('button', { name: 'stop' }).click();
    await until(() => runStatus(page), (s) => s === 'stopped', 'the first window to see the stop');
    await until(() => runStatus(second), (s) => s === 'stopped', 'the second window to see the stop');
    await second.close();
  });

  it('asks a prompt inside the node and carries on with the answer', async () => {
    await openApp(page, server, 'ask.json');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    const prompt = node(page, 'approve').locator('.gb-prompt');
    await prompt.waitFor({ timeout: 30_000 });
    expect(await prompt.innerText()).toContain('Keep greeting 0?');
    await screenshot(page, 'run-prompt');
    await prompt.getByRole('button', { name: 'Yes' }).click();
    await node(page, 'approve').locator('.gb-prompt', { hasText: 'Keep greeting 1?' }).waitFor();
    await node(page, 'approve').locator('.gb-prompt').getByRole('button', { name: 'No' }).click();
    await until(() => runStatus(page), finished, 'the run to finish', 30_000);
    expect(await runStatus(page)).toBe('completed');
    expect(await count(page, 'approve', 'out')).toBe(2);
  });
});
