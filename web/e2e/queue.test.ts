// The job queue in the editor: while a run is going, Run becomes Queue; every open page shows
// the queue live; cancel and reorder work there; a queued job runs once the run before it ends.

import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, openApp, runStatus, until, workflow } from './app';
import { screenshot } from './browser';

const greet = (count: number) =>
  workflow(
    [
      { id: 'greetings', type: 'Greetings', params: { count }, position: at(0, 0) },
      { id: 'shout', type: 'Shout', params: {}, position: at(300, 0) },
    ],
    [{ source: 'greetings', output: 'out', target: 'shout', input: 'in' }],
  );

const app = appSession({
  testNodes: true,
  workflows: {
    'slow.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 400 }, position: at(0, 0) },
        { id: 'slow', type: 'Slow', params: { delay: 0.25 }, position: at(300, 0) },
      ],
      [{ source: 'greetings', output: 'out', target: 'slow', input: 'in' }],
    ),
    'small.json': greet(3),
    'other.json': greet(2),
  },
});

/** The workflows of the jobs waiting, in their order, as the page's Queue tab lists them. */
const waiting = (page: Page): Promise<string[]> => page.locator('.gb-jobs-waiting .gb-job-workflow').allInnerTexts();
/** The state of the most recent ended job of `file`, or '' if none has ended. */
const ended = async (page: Page, file: string): Promise<string> =>
  (await page
    .locator('.gb-jobs-ended .gb-job', { hasText: file })
    .first()
    .getAttribute('data-state', { timeout: 500 })
    .catch(() => null)) ?? '';

async function queueTab(page: Page): Promise<void> {
  await page.getByRole('tab', { name: /^Queue/ }).click();
  await page.locator('.gb-queue').waitFor();
}

async function queueFile(page: Page, file: string): Promise<void> {
  await openApp(page, app.server, file);
  await page.getByRole('button', { name: 'queue', exact: true }).click();
}

describe('the job queue', () => {
  it('queues runs while one is going, shows them in every page, cancels, reorders and runs them', async () => {
    const first = app.page;
    await openApp(first, app.server, 'slow.json');
    await first.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(first),
      (s) => s === 'running',
      'the first run to start',
    );
    expect(await first.getByRole('button', { name: 'run', exact: true }).count()).toBe(0);

    await queueFile(first, 'small.json');
    await queueFile(first, 'other.json');
    await queueTab(first);
    await until(
      () => waiting(first),
      (w) => w.join() === 'small.json,other.json',
      'both jobs in the queue, in order',
      10_000,
    );

    const second = await app.browser.page();
    await openApp(second, app.server, 'small.json');
    await queueTab(second);
    await until(
      () => waiting(second),
      (w) => w.join() === 'small.json,other.json',
      "the second page's queue",
      10_000,
    );
    await screenshot(second, 'queue-two-waiting');

    await first.getByRole('button', { name: 'move other.json up', exact: true }).click();
    await until(
      () => waiting(second),
      (w) => w.join() === 'other.json,small.json',
      'the second page to see the move',
      10_000,
    );
    await second.getByRole('button', { name: 'cancel small.json', exact: true }).click();
    await until(
      () => waiting(first),
      (w) => w.join() === 'other.json',
      'the first page to see the cancel',
      10_000,
    );
    await until(
      () => ended(first, 'small.json'),
      (s) => s === 'cancelled',
      'the cancelled job listed as ended',
      10_000,
    );

    await first.getByRole('button', { name: 'stop', exact: true }).click();
    await until(
      () => ended(second, 'other.json'),
      (s) => s === 'completed',
      'the queued job to run once the first run ended',
      30_000,
    );
    expect(await waiting(second)).toEqual([]);
    expect(await ended(second, 'small.json')).toBe('cancelled');
    await screenshot(second, 'queue-ran');
    await second.close();
  });

  it('shows the run started with Run as running, labels Queue, and runs a batch count of runs', async () => {
    const page = app.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openApp(page, app.server, 'slow.json');
    await queueTab(page);
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(page),
      (s) => s === 'running',
      'the run to start',
    );
    const running = page.locator('.gb-jobs-running .gb-job');
    await running.waitFor();
    expect(await running.innerText()).toContain('slow.json');
    expect(await page.getByText('No job is running.').count()).toBe(0);
    const queueButton = page.getByRole('button', { name: 'queue', exact: true });
    expect(await queueButton.innerText()).toContain('Queue');
    await screenshot(page, 'queue-1280-running');
    await page.getByRole('button', { name: 'stop slow.json', exact: true }).click();
    await until(
      () => runStatus(page),
      (s) => s === 'stopped',
      'the run to stop from the queue panel',
    );

    await openApp(page, app.server, 'small.json');
    await queueTab(page);
    const done = () => page.locator('.gb-jobs-ended .gb-job-completed', { hasText: 'small.json' }).count();
    const endedBefore = await done();
    await page.getByRole('button', { name: 'run options' }).click();
    await page.getByLabel('batch count').fill('3');
    await page.keyboard.press('Escape');
    expect(await page.getByRole('button', { name: 'run', exact: true }).innerText()).toContain('×3');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(done, (n) => n === endedBefore + 2, 'the two queued runs of the batch to complete');
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
