// What a new user hit in the editor, each as they would see it: the last outputs of a fast node,
// what an emptied field means, a node file that stopped loading, a problem that outlived its
// value, why a node ran, and a node whose errors the run let through.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, node, openApp, readJson, runStatus, until, workflow, writeWorkflow } from './app';
import { screenshot } from './browser';

const greetings = (count: number) => ({ id: 'greetings', type: 'Greetings', params: { count }, position: at(0, 0) });
const fromGreetings = (target: string) => [{ source: 'greetings', output: 'out', target, input: 'in' }];

const app = appSession({
  testNodes: true,
  workflows: {
    'twenty.json': workflow(
      [greetings(20), { id: 'shout', type: 'Shout', params: {}, position: at(320, 0) }],
      fromGreetings('shout'),
    ),
    'fields.json': workflow([{ ...greetings(4), params: { count: 4, message: 'Hi' } }], []),
    'stale.json': workflow([greetings(4)], []),
    'shared.json': workflow([greetings(4)], []),
    'slow.json': workflow(
      [greetings(2), { id: 'slow', type: 'Slow', params: { delay: 0 }, position: at(320, 0) }],
      fromGreetings('slow'),
    ),
    'empty.json': workflow([], []),
    'frictions.json': {
      ...workflow(
        [greetings(3), { id: 'filter', type: 'Filter', params: { expression: 'missing > 0' }, position: at(360, 0) }],
        fromGreetings('filter'),
      ),
      groups: [
        {
          id: 'talkers',
          label: 'Talkers',
          position: at(-40, -60),
          size: { width: 720, height: 380 },
          nodes: ['greetings', 'filter'],
        },
      ],
    },
    'partial.json': workflow(
      [
        greetings(11),
        {
          id: 'split',
          type: 'Split',
          params: { split_fn: "lambda data: 10 // (data['n'] - 3) > 0" },
          position: at(320, 0),
        },
      ],
      fromGreetings('split'),
    ),
  },
});

const runButton = () => app.page.getByRole('button', { name: 'run', exact: true });
const finished = (s: string) => s === 'completed' || s === 'failed' || s === 'stopped';

/** Runs the open file (each test's own, not run before) and waits for the run's end. */
async function runToEnd(): Promise<string> {
  await runButton().click();
  return until(() => runStatus(app.page), finished, 'the run to end', 30_000);
}

describe('defects a new user hit', () => {
  it('shows the last dict a fast node handed on, and why it ran, said of this run', async () => {
    await openApp(app.page, app.server, 'twenty.json');
    expect(await runToEnd()).toBe('completed');
    await node(app.page, 'shout').locator('.gb-node-header').click();
    await app.page.getByRole('tab', { name: 'Output' }).click();
    const output = app.page.locator('.gb-output[data-output="out"]');
    await until(
      () => output.locator('.gb-pager').innerText(),
      (t) => t.includes('#19'),
      'the pager at the last of 20 dicts',
      5000,
    );
    expect(await output.getByRole('button', { name: 'next' }).isDisabled(), 'nothing after the last').toBe(true);
    expect(await output.innerText()).toContain('Hello, World! #19');
    const reason = await app.page.locator('.gb-output-reason').innerText();
    expect(reason).toBe('Ran in this run because nothing was cached for it before this run');
    await screenshot(app.page, 'defects-last-output');
  });

  it('empties a text or number field to its default, stored as no value and shown as the default', async () => {
    await openApp(app.page, app.server, 'fields.json');
    const message = node(app.page, 'greetings').getByLabel('message', { exact: true });
    const count = node(app.page, 'greetings').getByLabel('count', { exact: true });
    await message.fill('');
    await count.fill('');
    expect(await message.getAttribute('placeholder')).toBe('default: Hello, World!');
    expect(await count.getAttribute('placeholder')).toBe('default: 10');
    const params = () => readJson(app.server, 'fields.json').nodes[0]?.params ?? {};
    await until(params, (p) => !('count' in p), 'the autosave of the emptied fields');
    expect(params(), 'an emptied text field is no value, as an emptied number field is').toEqual({});
    expect(await node(app.page, 'greetings').locator('.gb-reset').count(), 'nothing to reset').toBe(0);
    await screenshot(app.page, 'defects-default-fields');
  });

  it('drops a problem the value it was about no longer has, even when a save of it answers late', async () => {
    await openApp(app.page, app.server, 'stale.json');
    // Saves wait here until the test lets them go: the first (of 2.5) answers after abc is typed.
    const held: Route[] = [];
    await app.page.route('**/api/workflows/stale.json', async (route) => {
      if (route.request().method() === 'PUT') held.push(route);
      else await route.continue();
    });
    const count = node(app.page, 'greetings').getByLabel('count', { exact: true });
    const problems = node(app.page, 'greetings').locator('.gb-problems');
    await count.fill('2.5');
    await until(
      () => held.length,
      (n) => n === 1,
      'the autosave of 2.5 to be sent',
    );
    await count.fill('abc');
    await until(
      () => problems.innerText().catch(() => ''),
      (t) => t.includes("'abc'"),
      'the problem of abc',
    );
    const answered = app.page.waitForResponse(
      (r) => r.url().endsWith('/api/workflows/stale.json') && r.request().method() === 'PUT',
    );
    await held[0]?.continue();
    await answered;
    // The answer about 2.5 came while abc is shown: give it time to (wrongly) appear.
    const shown = await until(
      () => problems.innerText(),
      (t) => t.includes('2.5'),
      'a stale problem',
      2000,
    ).catch(() => null);
    expect(shown, 'the late answer about 2.5 is not shown on the node').toBeNull();
    expect(await problems.innerText()).toContain("'abc'");
    for (const route of held.slice(1)) await route.continue();
    await app.page.unroute('**/api/workflows/stale.json');
    await count.fill('3');
    await until(
      () => problems.count(),
      (n) => n === 0,
      'every problem gone with a good value',
    );
  });

  it('offers Reload, Overwrite and Save as when an autosave is refused for a file saved elsewhere', async () => {
    await openApp(app.page, app.server, 'shared.json');
    const count = node(app.page, 'greetings').getByLabel('count', { exact: true });
    const onDisk = (file = 'shared.json') => readJson(app.server, file).nodes[0]?.params.count;
    const dialog = app.page.getByRole('dialog');
    /** Types `mine` here while another program saves `theirs`: the autosave is refused. */
    async function conflict(mine: string, theirs: number): Promise<void> {
      let held: Route | null = null;
      await app.page.route('**/api/workflows/shared.json', async (route) => {
        if (route.request().method() === 'PUT' && held === null) held = route;
        else await route.continue();
      });
      await count.fill(mine);
      await until(() => held !== null, Boolean, 'the autosave to be sent');
      writeWorkflow(app.server, 'shared.json', workflow([greetings(theirs)], []));
      await (held as unknown as Route).continue();
      await app.page.unroute('**/api/workflows/shared.json');
      await dialog.waitFor({ timeout: 10_000 });
      expect(await dialog.innerText()).toContain('shared.json changed elsewhere');
    }

    await conflict('5', 50);
    await screenshot(app.page, 'defects-save-conflict');
    await dialog.getByRole('button', { name: 'Overwrite' }).click();
    await until(
      () => onDisk(),
      (n) => n === 5,
      "this page's version written over theirs",
    );

    await conflict('6', 60);
    await dialog.getByRole('button', { name: 'Reload' }).click();
    await until(
      () => count.inputValue(),
      (v) => v === '60',
      'their version shown here',
    );
    expect(onDisk()).toBe(60);

    await conflict('7', 70);
    await dialog.getByRole('button', { name: 'Save as new file' }).click();
    await app.page.locator('.gb-file-title', { hasText: 'shared-2.json' }).waitFor();
    expect(onDisk('shared-2.json'), "this page's version in a new file").toBe(7);
    expect(onDisk(), 'theirs kept').toBe(70);
  });

  it('refuses a run of a node whose file no longer loads, saying so on the node', async () => {
    await openApp(app.page, app.server, 'slow.json');
    const file = join(app.server.nodes, 'e2e_nodes.py');
    const good = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, `${good}\ndef oops(:\n`);
      await app.page.getByRole('tab', { name: 'Nodes' }).click();
      await app.page.locator('.gb-palette .gb-banner-error', { hasText: 'e2e_nodes.py' }).waitFor({ timeout: 15_000 });
      await runButton().click();
      const problems = node(app.page, 'slow').locator('.gb-problems');
      await problems.waitFor({ timeout: 10_000 });
      expect(await problems.innerText()).toContain('e2e_nodes.py does not load (SyntaxError');
      expect(await node(app.page, 'slow').locator('.gb-status-word').innerText(), 'nothing ran').toMatch(
        /^(idle|not run)$/,
      );
      expect(await node(app.page, 'greetings').locator('.gb-problems').count(), 'only the nodes of that file').toBe(0);
      await screenshot(app.page, 'defects-broken-node-file');
    } finally {
      writeFileSync(file, good);
    }
    await app.page
      .locator('.gb-palette .gb-banner-error', { hasText: 'e2e_nodes.py' })
      .waitFor({ state: 'detached', timeout: 15_000 });
    expect(await runToEnd()).toBe('completed');
  });

  it('says "completed with 1 error" on a node that failed 1 of 11 dicts in a run going on past errors', async () => {
    await openApp(app.page, app.server, 'partial.json');
    const options = app.page.getByRole('button', { name: 'run options' });
    const toggle = app.page.getByLabel('continue on error');
    await options.click();
    await toggle.check();
    await app.page.keyboard.press('Escape');
    try {
      expect(await runToEnd()).toBe('completed');
      const status = node(app.page, 'split').locator('.gb-status');
      await until(
        () => status.locator('.gb-status-word').innerText(),
        (t) => t === 'completed with 1 error',
        'the node to say it completed with an error',
      );
      expect(await status.getAttribute('class')).toContain('gb-status-partial');
      expect(await status.innerText()).toContain('11 in');
      await screenshot(app.page, 'defects-completed-with-errors');
    } finally {
      await options.click();
      await toggle.uncheck();
      await app.page.keyboard.press('Escape');
    }
  });

  describe('the canvas for a newcomer', () => {
    it('adds to the selection with Shift+click, selecting no page text', async () => {
      await openApp(app.page, app.server, 'hello.json');
      await node(app.page, 'greetings').locator('.gb-title').first().click();
      await node(app.page, 'split')
        .locator('.gb-title')
        .first()
        .click({ modifiers: ['Shift'] });
      await until(
        () => app.page.locator('.react-flow__node-graph.selected').count(),
        (n) => n === 2,
        'both nodes selected',
      );
      expect(await app.page.evaluate(() => window.getSelection()?.toString() ?? ''), 'no page text selected').toBe('');
    });

    it('focuses a new comment, so typing writes in it', async () => {
      await openApp(app.page, app.server, 'hello.json');
      const pane = await app.page.locator('.react-flow__pane').boundingBox();
      if (!pane) throw new Error('no canvas');
      await app.page.mouse.click(pane.x + 60, pane.y + pane.height - 120, { button: 'right' });
      await app.page
        .getByRole('menuitem', { name: 'Add a comment' })
        .or(app.page.getByText('Add a comment'))
        .first()
        .click();
      const comment = app.page.getByLabel('comment', { exact: true });
      await comment.waitFor();
      await until(
        () =>
          app.page.evaluate(
            () =>
              `${document.activeElement?.tagName}.${document.activeElement?.className}:${document.activeElement?.getAttribute('aria-label') ?? ''}`,
          ),
        (l) => l.endsWith(':comment'),
        'the comment focused',
        3000,
      );
      await app.page.keyboard.type('why this split');
      expect(await comment.inputValue()).toBe('why this split');
      await app.page.keyboard.press('Escape');
    });

    it('shows the keys on ?, and Esc closes them', async () => {
      await openApp(app.page, app.server, 'hello.json');
      await app.page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
      await app.page.keyboard.press('?');
      const overlay = app.page.getByRole('dialog', { name: 'keyboard shortcuts' });
      await overlay.waitFor({ timeout: 3000 });
      expect(await overlay.innerText()).toContain('Shift+click');
      await screenshot(app.page, 'defects-keys');
      await app.page.keyboard.press('Escape');
      await overlay.waitFor({ state: 'detached', timeout: 3000 });
    });

    it('keeps the minimap small at 1280 px, and a click on it moves the view there', async () => {
      await app.page.setViewportSize({ width: 1280, height: 800 });
      try {
        await openApp(app.page, app.server, 'hello.json');
        const minimap = app.page.locator('.react-flow__minimap');
        const box = await minimap.boundingBox();
        const canvas = await app.page.locator('.gb-canvas').boundingBox();
        if (!box || !canvas) throw new Error('no minimap');
        expect(box.width * box.height, 'under 5% of the canvas').toBeLessThan(0.05 * canvas.width * canvas.height);
        await screenshot(app.page, 'defects-1280');
        const transform = () => app.page.locator('.react-flow__viewport').getAttribute('style');
        const before = await transform();
        await minimap.click({ position: { x: 4, y: 4 } });
        await until(transform, (t) => t !== before, 'the view to move to where the minimap was clicked', 3000);
      } finally {
        await app.page.setViewportSize({ width: 1920, height: 1080 });
      }
      await openApp(app.page, app.server, 'hello.json');
      await screenshot(app.page, 'defects-1920');
    });

    it("hints how to start on a new workflow's empty canvas", async () => {
      await openApp(app.page, app.server, 'hello.json');
      await app.page.getByRole('tab', { name: 'Workflows' }).click();
      await app.page.getByRole('button', { name: 'New workflow' }).click();
      await app.page.keyboard.type('blank');
      await app.page.keyboard.press('Enter');
      await app.page.locator('.gb-file-title', { hasText: 'blank.json' }).waitFor();
      const hint = app.page.locator('.gb-canvas-hint');
      await hint.waitFor({ timeout: 5000 });
      expect(await hint.innerText()).toMatch(/Drag a node.*double-click the canvas.*template/);
      await screenshot(app.page, 'defects-empty-canvas');
    });

    it('lists a workflow file added on disk without a reload', async () => {
      await openApp(app.page, app.server, 'hello.json');
      await app.page.getByRole('tab', { name: 'Workflows' }).click();
      writeWorkflow(app.server, 'from-disk.json', workflow([greetings(1)], []));
      await app.page.locator('[data-file="from-disk.json"]').waitFor({ timeout: 10_000 });
    });

    it("clears the console of the previous workflow's lines on a switch", async () => {
      await openApp(app.page, app.server, 'hello.json');
      if (!(await app.page.locator('.gb-console').count())) await app.page.keyboard.press('`');
      await runToEnd();
      const lines = app.page.locator('.gb-console-line');
      await until(
        () => lines.count(),
        (n) => n > 0,
        "hello's log lines in the console",
      );
      await app.page.getByRole('tab', { name: 'Workflows' }).click();
      await app.page.locator('[data-file="fields.json"] .gb-file-name').click();
      await app.page.locator('.gb-file-title', { hasText: 'fields.json' }).waitFor();
      await until(
        () => lines.count(),
        (n) => n === 0,
        'the console emptied',
        3000,
      );
    });
  });
});

describe('small frictions', () => {
  const inspecting = () => app.page.locator('[data-inspecting]').count();
  const transform = () =>
    app.page.locator('.react-flow__viewport').evaluate((el) => (el as HTMLElement).style.transform);

  it('renames in place, drags a group by its name, marks changes, says what changed after a failed run', async () => {
    const page = app.page;
    await openApp(page, app.server, 'frictions.json');
    await node(page, 'greetings').locator('.gb-title').dblclick();
    await page.getByLabel('rename greetings').fill('Hello');
    await page.keyboard.press('Enter');
    expect(await node(page, 'greetings').locator('.gb-title').innerText()).toBe('Hello');

    const label = page.locator('.react-flow__node-group[data-id="talkers"]').getByLabel('group name');
    const before = { view: await transform(), box: await node(page, 'greetings').boundingBox() };
    const grip = await label.boundingBox();
    if (!grip || !before.box) throw new Error('no group name on screen');
    await page.mouse.move(grip.x + 20, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + 140, grip.y + grip.height / 2, { steps: 8 });
    await page.mouse.up();
    expect(await transform(), 'the canvas did not pan').toBe(before.view);
    expect((await node(page, 'greetings').boundingBox())?.x).toBeGreaterThan(before.box.x + 60);

    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(page),
      (s) => s === 'failed',
      'the failed run',
    );
    await node(page, 'filter').locator('[data-param="expression"] input').fill('n > 1');
    await node(page, 'filter').locator('.gb-changed-badge').waitFor();
    expect(await node(page, 'greetings').locator('.gb-changed-badge').count()).toBe(0);
    await screenshot(page, 'frictions-changed');
    await page.getByRole('button', { name: 'run', exact: true }).click();
    await until(
      () => runStatus(page),
      (s) => s === 'completed',
      'the run after the fix',
    );
    await node(page, 'filter').locator('.gb-changed-badge').waitFor({ state: 'detached' });
    await node(page, 'filter').getByLabel('about filter').click();
    await page.getByRole('tab', { name: 'Output' }).click();
    const why = page.locator('.gb-output-reason');
    expect(await why.innerText()).toContain('parameters changed: expression');

    await page.keyboard.press('Escape');
    expect(await inspecting(), 'Escape closes the inspector on the node').toBe(0);
    if (!(await page.locator('.gb-inspector').count())) await page.keyboard.press(']');
    await page.getByRole('tab', { name: 'Nodes' }).click();
    await page.locator('[data-node-type="Shout"]').dragTo(page.locator('.gb-inspector'));
    await until(
      () => page.locator('.react-flow__node-graph').count(),
      (n) => n === 3,
      'the node dropped on the inspector, on the canvas',
    );
  });

  it('fills an empty, named workflow with a template picked on its canvas, making no other file', async () => {
    const page = app.page;
    await openApp(page, app.server, 'empty.json');
    await page.locator('.gb-templates-inline [data-template="convert-table"] .gb-template-card').click();
    expect(await page.getByLabel('new file name').inputValue()).toBe('empty.json');
    await page.getByRole('button', { name: 'Fill this file' }).click();
    await until(
      () => readJson(app.server, 'empty.json').nodes.length,
      (n) => n > 0,
      'the template in empty.json',
    );
    const files = await (await fetch(`${app.server.url}api/workflows`)).text();
    expect(files).not.toContain('convert-table');
    await node(page, 'read').waitFor();
  });
});
