// The Runs tab: past runs with their status, time, duration and counts, kept across reloads, a
// run's details one click away; and the system stats, polled only while they are shown.

import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, failing, openApp, runStatus, switchTheme, until } from './app';
import { screenshot } from './browser';

const app = appSession({
  workflows: {
    'failing.json': failing,
  },
});

const runs = (): Locator => app.page.locator('.gb-history-run');
const statuses = (): Promise<(string | null)[]> =>
  runs().evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
const stat = (name: string): Locator => app.page.locator(`.gb-system-row[data-stat="${name}"] .gb-system-value`);

async function runAndWait(status: string): Promise<void> {
  await app.page.getByRole('button', { name: 'run', exact: true }).click();
  // The status shown before may be the last run's: wait for this run's own ending.
  await until(
    () => runStatus(app.page),
    (s) => s === status,
    `the run to end ${status}`,
    30_000,
  );
}

describe('the Runs tab', () => {
  it('says what will appear there, and shows the system stats without moving', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await app.page.getByRole('tab', { name: 'Runs' }).click();
    await app.page.locator('.gb-history-empty').waitFor();
    expect(await app.page.locator('.gb-history-empty').innerText()).toContain('No runs yet');
    const before = await app.page.locator('.gb-system').boundingBox();
    await until(
      () => stat('CPU').innerText(),
      (t) => /^\d+%$/.test(t),
      'the CPU figure',
    );
    expect(await stat('Memory').innerText()).toMatch(/^[\d.]+ [KMGT]?B \/ [\d.]+ [KMGT]?B$/);
    expect(await stat('Workers').innerText()).toBe('inline');
    expect(await stat('Cache').innerText()).toMatch(/ \/ 1\.0 GB$/);
    expect(await app.page.locator('.gb-system').boundingBox()).toEqual(before);
    await screenshot(app.page, 'history-empty');
  });

  it('lists a finished run with its counts, newest first, and a failed one with its error', async () => {
    await runAndWait('completed');
    await until(statuses, (s) => s[0] === 'completed', 'the finished run in the list');
    const row = runs().first();
    expect(await row.locator('.gb-history-name').innerText()).toBe('hello.json');
    expect(await row.locator('.gb-history-status').innerText()).toBe('finished');
    expect(await row.locator('.gb-history-items').innerText()).toBe('10 items');
    expect(await row.locator('time').innerText()).toBe('just now');
    expect(await row.locator('time').getAttribute('title')).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    expect(await row.locator('.gb-history-duration').innerText()).toMatch(/^[\d.]+ (ms|s)$/);

    await row.locator('.gb-history-row').click();
    await app.page.locator('.gb-runpage-nodes tbody[data-node]').first().waitFor();
    const counts = await app.page
      .locator('.gb-runpage-nodes tbody[data-node]')
      .evaluateAll((rows) =>
        rows.map((tr) => [tr.getAttribute('data-node'), tr.querySelector('.gb-runpage-counts')?.textContent ?? '']),
      );
    expect(Object.fromEntries(counts)).toEqual({ greetings: '10', split: 'A 5 · B 5', shout_even: '5', say_odd: '5' });
    await screenshot(app.page, 'history-finished');
    await app.page.keyboard.press('Escape');
    await app.page.locator('.gb-runs-page').waitFor({ state: 'detached' });

    await openApp(app.page, app.server, 'failing.json');
    await app.page.getByRole('tab', { name: 'Runs' }).click();
    await runAndWait('failed');
    await until(statuses, (s) => s.length === 2 && s[0] === 'failed', 'the failed run first');
    const failed = runs().first();
    expect(await failed.locator('.gb-history-status').innerText()).toBe('failed');
    await failed.locator('.gb-history-row').click();
    await app.page.locator('.gb-runpage-runerror').waitFor();
    expect(await app.page.locator('.gb-runpage-runerror').innerText()).toContain("node 'split'");
    expect(await app.page.locator('.gb-runpage').getAttribute('data-run')).toBe(await failed.getAttribute('data-run'));
    await screenshot(app.page, 'history-failed');
    await switchTheme(app.page);
    await screenshot(app.page, 'history-failed-dark');
    await app.page.getByLabel('switch theme').click();
    await app.page.getByRole('button', { name: '← Canvas' }).click();
  });

  it('keeps the runs across a reload', async () => {
    await app.page.reload();
    await app.page.locator('.gb-connection-open').waitFor();
    await app.page.getByRole('tab', { name: 'Runs' }).click();
    await until(statuses, (s) => s.length === 2, 'the runs after the reload');
    expect(await statuses()).toEqual(['failed', 'completed']);
    expect(await runs().nth(1).locator('.gb-history-items').innerText()).toBe('10 items');
  });

  it('polls the system stats only while they are shown', async () => {
    let polls = 0;
    let marks = 0;
    app.page.on('request', (request) => {
      if (request.url().endsWith('/api/system')) polls += 1;
      if (request.url().endsWith('/api/info?mark')) marks += 1;
    });
    /** Requests leave in the order the page makes them: once this one is seen, any before it is too. */
    const requestsSoFar = async (): Promise<void> => {
      const seen = marks;
      await app.page.evaluate(() => fetch('/api/info?mark').then(() => null));
      await until(
        () => marks,
        (n) => n > seen,
        'the marker request',
      );
    };
    // The page's clock is the test's to move on: a minute of polling passes at once.
    await app.page.clock.install();
    await app.page.reload();
    await app.page.getByRole('tab', { name: 'Runs' }).click();
    await app.page.locator('.gb-system-row').first().waitFor();
    await until(
      () => polls,
      (n) => n > 0,
      'the first poll',
    );
    const first = polls;
    await app.page.clock.runFor(60_000);
    await until(
      () => polls,
      (n) => n > first,
      'polls while the stats are shown',
    );
    await app.page.getByRole('tab', { name: 'Nodes' }).click();
    await app.page.locator('.gb-system-row').first().waitFor({ state: 'detached' });
    await requestsSoFar();
    const seen = polls;
    await app.page.clock.runFor(60_000);
    await requestsSoFar();
    expect(polls).toBe(seen);
  });
});
