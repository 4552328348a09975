// Workflows in and out of the page: a workflow file (ours or Graphbook 0.13's) dropped on the
// canvas is added to the folder and opened; a selection copied in one browser is JSON on the
// system clipboard, which pasted in another browser adds the same nodes and wires.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSession, dropFile, edgeIds, mod, node, nodeIds, openApp, until } from './app';
import { screenshot } from './browser';
import { ROOT } from './server';

const app = appSession();

describe('import and export', () => {
  it('opens a Graphbook 0.13 workflow dropped on the canvas, and one of ours under a free name', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await dropFile(
      app.page,
      'old_pipeline.json',
      readFileSync(join(ROOT, 'tests/fixtures/graphbook013_simple_workflow.json'), 'utf8'),
    );
    await app.page.locator('.gb-file-title', { hasText: 'old_pipeline.json' }).waitFor();
    expect((await nodeIds(app.page)).length).toBeGreaterThan(2);
    expect(existsSync(join(app.server.workflows, 'old_pipeline.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(app.server.workflows, 'old_pipeline.json'), 'utf8')).format).toBe(
      'graphbook.workflow',
    );
    await screenshot(app.page, 'transfer-dropped-013');

    await dropFile(app.page, 'hello.json', readFileSync(join(app.server.workflows, 'hello.json'), 'utf8'));
    await app.page.locator('.gb-file-title', { hasText: 'hello-2.json' }).waitFor();
    expect(await nodeIds(app.page)).toEqual(['greetings', 'say_odd', 'shout_even', 'split']);
    await app.page.locator('.gb-notice', { hasText: 'Imported hello.json as hello-2.json' }).waitFor();

    await dropFile(app.page, 'notes.json', '{"not": "a workflow"');
    await app.page.locator('.gb-notice-error', { hasText: 'notes.json is not a workflow' }).waitFor();
    expect(await app.page.locator('.gb-file-title').innerText()).toContain('hello-2.json');
  });

  it('copies a selection as JSON that another browser pastes with its wires', async () => {
    await app.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: app.server.url.replace(/\/$/, ''),
    });
    const first = app.page;
    await openApp(first, app.server, 'hello.json');
    await node(first, 'greetings').locator('.gb-node-header').click();
    await node(first, 'split')
      .locator('.gb-node-header')
      .click({ modifiers: [mod] });
    await first.keyboard.press(`${mod}+c`);
    const text = await until(
      () => first.evaluate(() => navigator.clipboard.readText()),
      (t) => t.includes('graphbook.clip'),
      'the JSON on the clipboard',
    );
    expect(
      JSON.parse(text)
        .nodes.map((n: { id: string }) => n.id)
        .sort(),
    ).toEqual(['greetings', 'split']);

    const second = await app.freshBrowser();
    await openApp(second, app.server, 'image_classification.json');
    await second.evaluate((json) => {
      const data = new DataTransfer();
      data.setData('text/plain', json);
      window.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data }));
    }, text);
    await until(
      () => nodeIds(second),
      (ids) => ids.includes('greetings') && ids.includes('split'),
      'the pasted nodes',
    );
    await until(
      () => edgeIds(second),
      (ids) => ids.includes('greetings:out->split:in'),
      'the pasted wire',
    );
    await screenshot(second, 'transfer-pasted-in-another-browser');
  });
});
