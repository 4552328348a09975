// Moving between workflow files: naming a new one, what happens to unsaved changes with
// autosave off, a workflow that was run showing its results again when opened again, and
// opening a workflow (in any way) while a past run is open showing that workflow's canvas.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSession, canvasReady, dropFile, node, openApp, readJson, runStatus, until, workflow } from './app';
import { screenshot } from './browser';

const app = appSession();

const title = () => app.page.locator('.gb-file-title');
const dialog = () => app.page.getByRole('dialog');
const openFromList = async (file: string): Promise<void> => {
  await app.page.getByRole('tab', { name: 'Workflows' }).click();
  await app.page.locator(`[data-file="${file}"] .gb-file-name`).click();
};
const count = (id: string): Promise<string> =>
  node(app.page, id)
    .locator('.gb-count[data-output="out"]')
    .innerText({ timeout: 1000 })
    .catch(() => '');

describe('workflow files', () => {
  it('names a new workflow by typing over the suggested name', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'New workflow' }).click();
    await app.page.keyboard.type('mine');
    await screenshot(app.page, 'workflows-new-name');
    await app.page.keyboard.press('Enter');
    await title().filter({ hasText: 'mine.json' }).waitFor();
    expect(await title().innerText()).toContain('mine.json');
    expect(existsSync(join(app.server.workflows, 'mine.json'))).toBe(true);
    expect(existsSync(join(app.server.workflows, 'untitled.jsonmine.json'))).toBe(false);
  });

  it('with autosave off, asks before leaving unsaved changes, and writes only when told to', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await app.page.getByLabel('autosave').uncheck();
    const before = readFileSync(join(app.server.workflows, 'hello.json'), 'utf8');
    await node(app.page, 'greetings').getByLabel('count', { exact: true }).fill('4');

    await openFromList('image_classification.json');
    await dialog().waitFor();
    expect(await dialog().innerText()).toContain('Save the changes to hello.json?');
    await screenshot(app.page, 'workflows-ask-unsaved');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    expect(await title().innerText()).toContain('hello.json');
    expect(await node(app.page, 'greetings').getByLabel('count', { exact: true }).inputValue()).toBe('4');
    expect(readFileSync(join(app.server.workflows, 'hello.json'), 'utf8')).toBe(before);

    await openFromList('image_classification.json');
    await dialog().getByRole('button', { name: "Don't save" }).click();
    await title().filter({ hasText: 'image_classification.json' }).waitFor();
    expect(readFileSync(join(app.server.workflows, 'hello.json'), 'utf8')).toBe(before);

    await openFromList('hello.json');
    await canvasReady(app.page);
    expect(await node(app.page, 'greetings').getByLabel('count', { exact: true }).inputValue()).toBe('10');
    await node(app.page, 'greetings').getByLabel('count', { exact: true }).fill('5');
    await openFromList('mine.json');
    await dialog().getByRole('button', { name: 'Save', exact: true }).click();
    await title().filter({ hasText: 'mine.json' }).waitFor();
    expect(readJson(app.server, 'hello.json').nodes.find((n) => n.id === 'greetings')?.params).toEqual({
      count: 5,
      message: 'Hello, World!',
    });
    await app.page.getByLabel('autosave').check();
  });

  it('shows the last results of a workflow that was run when it is opened again', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run',
    );
    expect(await count('greetings')).toBe('5');
    await openFromList('mine.json');
    await title().filter({ hasText: 'mine.json' }).waitFor();
    await openFromList('hello.json');
    await title().filter({ hasText: 'hello.json' }).waitFor();
    await canvasReady(app.page);
    await until(
      () => count('greetings'),
      (n) => n === '5',
      'the counts of the last run',
    );
    expect(await count('shout_even')).toBe('3');
    expect(await node(app.page, 'say_odd').locator('.gb-status').innerText()).toContain('done');
    await screenshot(app.page, 'workflows-results-kept');
  });

  it('shows the canvas of a workflow opened or created while a past run is open over it', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await app.page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run',
    );
    const runPage = app.page.locator('.gb-runs-page');
    const openPastRun = async (): Promise<void> => {
      await app.page.getByRole('tab', { name: 'Runs' }).click();
      await app.page
        .locator('.gb-history-run[data-kind="workflow"]')
        .filter({ has: app.page.locator('.gb-history-name[title="hello.json"]') })
        .first()
        .locator('.gb-history-row')
        .click();
      await app.page.locator('.gb-runpage-nodes tbody[data-node]').first().waitFor();
    };
    /** The canvas is in front again, showing `file`, with no past run over it. */
    const canvasOf = async (file: string, how: string): Promise<void> => {
      await title().filter({ hasText: file }).waitFor();
      await canvasReady(app.page);
      await until(
        () => runPage.count(),
        (n) => n === 0,
        `the past run to give way to ${file}'s canvas (${how})`,
        5000,
      );
      expect(await app.page.locator('.react-flow__pane').isVisible(), how).toBe(true);
    };

    await openPastRun();
    await openFromList('image_classification.json');
    await canvasOf('image_classification.json', 'opened from the Workflows tab');

    await openPastRun();
    await openFromList('image_classification.json');
    await canvasOf('image_classification.json', 'the open file picked again in the Workflows tab');

    await openPastRun();
    await app.page.evaluate(() => (location.hash = '#hello.json'));
    await canvasOf('hello.json', 'opened by the address');

    await openPastRun();
    await app.page.getByRole('tab', { name: 'Workflows' }).click();
    await app.page.getByRole('button', { name: 'New workflow' }).click();
    await app.page.keyboard.type('fresh');
    await app.page.keyboard.press('Enter');
    await canvasOf('fresh.json', 'a new workflow');

    await openPastRun();
    await dropFile(app.page, 'dropped.json', JSON.stringify(workflow([], [])), '.gb-runs-page');
    await canvasOf('dropped.json', 'a workflow file dropped on the past run');
    expect(existsSync(join(app.server.workflows, 'dropped.json'))).toBe(true);
    await screenshot(app.page, 'workflows-opened-over-past-run');
  });
});
