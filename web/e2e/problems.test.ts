// What stops a run, said where it happens: a wire whose types cannot match is refused while
// editing and in a file; a value typed wrong refuses the run with a problem on its node; a run
// that fails before its nodes start shows its error on the node and ends failed in the Runs tab.

import { describe, expect, it } from 'vitest';
import { appSession, at, edgeIds, node, openApp, painted, runStatus, until, wire, workflow } from './app';
import { screenshot } from './browser';

const app = appSession({
  workflows: {
    'model_path.json': workflow(
      [
        { id: 'model', type: 'ShapesModel', params: {}, position: at(0, 0) },
        { id: 'greetings', type: 'Greetings', params: { count: 2 }, position: at(0, 260) },
        { id: 'dump', type: 'DumpJSONL', params: {}, position: at(340, 120) },
      ],
      [
        { source: 'greetings', output: 'out', target: 'dump', input: 'in' },
        { source: 'model', output: 'resource', target: 'dump', input: 'jsonl_path' },
      ],
    ),
    'early.json': workflow(
      [
        { id: 'half', type: 'Number', params: { val: 2.5 }, position: at(0, 0) },
        { id: 'greetings', type: 'Greetings', params: {}, position: at(300, 0) },
        { id: 'shout', type: 'Shout', params: {}, position: at(620, 0) },
      ],
      [
        { source: 'half', output: 'resource', target: 'greetings', input: 'count' },
        { source: 'greetings', output: 'out', target: 'shout', input: 'in' },
      ],
    ),
  },
});

const notice = () => app.page.locator('.gb-notice-error').last();
const runButton = () => app.page.getByRole('button', { name: 'run', exact: true });

describe('problems', () => {
  it('refuses a model wired into a path, while wiring and in a file, naming the node and the fix', async () => {
    await openApp(app.page, app.server, 'image_classification.json');
    const before = await edgeIds(app.page);
    await wire(app.page, ['model', 'resource'], ['dump', 'jsonl_path']);
    await painted(app.page);
    expect(await edgeIds(app.page)).toEqual(before);

    await openApp(app.page, app.server, 'model_path.json');
    const problems = node(app.page, 'dump').locator('.gb-problems');
    await problems.waitFor();
    expect(await problems.innerText()).toContain(
      "parameter 'jsonl_path' expects a string, but resource 'model' (ShapesModel) gives a Python object",
    );
    await runButton().click();
    await notice().waitFor();
    expect(await notice().innerText()).toContain('Not run: the workflow has 1 problem(s)');
    expect(await app.page.locator('.gb-error-card').first().innerText()).toContain(
      "delete the wire and give 'jsonl_path' a value",
    );
    expect(await runStatus(app.page)).toBe('');
    await screenshot(app.page, 'problems-wire-type');
  });

  it('refuses to run with a whole number field holding 2.5 or abc, and shows it on the node', async () => {
    await openApp(app.page, app.server, 'hello.json');
    const count = node(app.page, 'greetings').getByLabel('count', { exact: true });
    const problems = node(app.page, 'greetings').locator('.gb-problems');
    for (const typed of ['2.5', 'abc']) {
      await count.fill(typed);
      await until(
        () => problems.innerText().catch(() => ''),
        (t) => t.includes("parameter 'count' expects a whole number"),
        `the problem of ${typed}`,
      );
      await runButton().click();
      await until(
        () =>
          notice()
            .innerText()
            .catch(() => ''),
        (t) => t.includes("Node 'greetings': parameter 'count' expects a whole number"),
        'the refusal',
      );
      expect(await runStatus(app.page), 'nothing ran').toBe('');
    }
    await screenshot(app.page, 'problems-int-field');
    await count.fill('3');
    await until(
      () => problems.count(),
      (n) => n === 0,
      'the problem to go',
    );
    await runButton().click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'completed',
      'the run with 3',
    );
    expect(await node(app.page, 'greetings').locator('.gb-count[data-output="out"]').innerText()).toBe('3');
  });

  it('shows a run that fails before its nodes start on the node and as failed in the Runs tab', async () => {
    await openApp(app.page, app.server, 'early.json');
    await runButton().click();
    await until(
      () => runStatus(app.page),
      (s) => s === 'failed',
      'the run to fail',
    );
    const greetings = node(app.page, 'greetings');
    await greetings.locator('.gb-error-link').waitFor();
    expect(await greetings.locator('.gb-error-link').innerText()).toContain('ParamError');
    expect(await greetings.locator('.gb-node').getAttribute('class')).toContain('gb-failed');
    await greetings.locator('.gb-error-link').click();
    expect(await app.page.locator('.gb-error-card summary').first().innerText()).toContain(
      "parameter 'count' expects a whole number",
    );

    await app.page.getByRole('tab', { name: 'Runs' }).click();
    const latest = app.page.locator('.gb-history-run').first();
    await until(
      () => latest.getAttribute('data-status').catch(() => ''),
      (s) => s === 'failed',
      'the run record to end failed',
    );
    await latest.locator('.gb-history-row').click();
    expect(await app.page.locator('.gb-runpage-runerror').innerText()).toContain("node 'greetings': ");
    await screenshot(app.page, 'problems-early-failure');
  });
});
