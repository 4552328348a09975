// Workflow inputs and what a run was given: a parameter marked as an input on its node is saved
// in the file and offered by GET /api/workflows/{path}/inputs; a run started over HTTP with
// inputs and overrides shows them in the Runs tab, and "Run again" gives a run with the same.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, mod, node, openApp, until, workflow, writeWorkflow } from './app';

const greet = workflow([{ id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) }], []);
const app = appSession({ workflows: { 'greet.json': greet, 'called.json': greet } });
const page = (): Page => app.page;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${app.server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const reply = (await response.json()) as T;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(reply)}`);
  return reply;
}

const fileInputs = (file: string): unknown =>
  (JSON.parse(readFileSync(join(app.server.workflows, file), 'utf8')) as { inputs?: unknown }).inputs;

interface RunInfo {
  run_id: string;
  workflow: string;
  status: string;
  params: Record<string, Record<string, unknown>>;
}
interface Details {
  run: RunInfo;
  config: { inputs?: unknown; overrides?: unknown };
}

describe('workflow inputs', () => {
  it('a parameter marked on its node is saved as an input and offered by GET .../inputs', async () => {
    await openApp(page(), app.server, 'greet.json');
    const row = node(page(), 'greetings').locator('[data-param="count"]');
    await row.hover();
    await row.getByRole('button', { name: 'use count as a workflow input' }).click();
    await page().keyboard.press(`${mod}+s`);
    await until(
      () => fileInputs('greet.json'),
      (inputs) => inputs !== undefined,
      'the file to hold the input',
    );
    expect(fileInputs('greet.json')).toEqual({ count: { node: 'greetings', param: 'count' } });
    const reply = await api<{ workflow: string; schema: { properties: Record<string, unknown>; required: string[] } }>(
      'GET',
      'api/workflows/greet.json/inputs',
    );
    expect(reply.workflow).toBe('greet.json');
    expect(reply.schema.properties).toEqual({
      count: { type: 'integer', description: 'how many greetings to make', default: 3 },
    });
    expect(reply.schema.required).toEqual([]);

    await page().getByRole('button', { name: 'close inspector' }).click(); // the workflow's overview
    const listed = page().locator('.gb-input-list [data-input="count"]');
    await listed.waitFor();
    expect(await listed.innerText()).toContain('greetings.count');
    expect(
      await row
        .getByRole('button', { name: "stop using count as workflow input 'count'" })
        .getAttribute('aria-pressed'),
    ).toBe('true');
  });

  it('a run given inputs and overrides over HTTP shows them, and Run again gives them again', async () => {
    writeInputs();
    const body = { workflow: 'called.json', inputs: { count: 2 }, overrides: { greetings: { message: 'Hi' } } };
    const { run_id: first } = await api<{ run_id: string }>('POST', 'api/runs', body);
    const status = () =>
      api<RunInfo>('GET', `api/runs/${first}`).then(
        (r) => r.status,
        () => 'not recorded yet',
      );
    await until(status, (s) => s === 'completed', 'the HTTP run to complete');
    await openApp(page(), app.server, 'called.json');
    await page().getByRole('tab', { name: 'Runs' }).click();
    const runRow = page()
      .locator('.gb-history-list > .gb-history-run')
      .filter({ has: page().locator('.gb-history-name[title="called.json"]') });
    await runRow.first().locator('.gb-history-row').click();
    const given = page().locator('.gb-runpage-given');
    await given.waitFor();
    expect(await given.locator('[data-input="count"]').innerText()).toMatch(/input count\s+2/);
    expect(await given.locator('[data-override="greetings.message"]').innerText()).toMatch(
      /set greetings\.message\s+Hi/,
    );

    await page().getByRole('button', { name: 'Run again' }).click();
    const runs = await until(
      () => api<{ runs: RunInfo[] }>('GET', 'api/runs?limit=10'),
      (list) => list.runs.some((r) => r.run_id !== first && r.workflow === 'called.json' && r.status === 'completed'),
      'the run again to complete',
    );
    const again = runs.runs.find((r) => r.run_id !== first && r.workflow === 'called.json') as RunInfo;
    const details = await api<Details>('GET', `api/runs/${again.run_id}/details`);
    expect(details.config.inputs).toEqual({ count: 2 });
    expect(details.config.overrides).toEqual({ greetings: { message: 'Hi' } });
    expect(again.params.greetings).toEqual({ count: 2, message: 'Hi' });
  });
});

/** called.json with `count` as an input, written as a person's editor would save it. */
function writeInputs(): void {
  const data = { ...greet, inputs: { count: { node: 'greetings', param: 'count' } } };
  writeWorkflow(app.server, 'called.json', data);
}
