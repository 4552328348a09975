// `graphbook serve --apps`: the apps list and app pages only. The editor's page leads to the
// apps; graph edits and node-file writes are refused over HTTP and over MCP, while an app
// still runs.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSession, at, workflow } from './app';
import { screenshot } from './browser';

const numbers = {
  ...workflow(
    [
      { id: 'rows', type: 'LoadJSONL', params: { jsonl_path: 'data/rows.jsonl' }, position: at(0, 0) },
      { id: 'out', type: 'DumpJSONL', params: { jsonl_path: 'out/rows.jsonl' }, position: at(300, 0) },
    ],
    [{ source: 'rows', output: 'out', target: 'out', input: 'in' }],
  ),
  doc: 'Copies a table of rows.',
  inputs: { start: { node: 'rows', param: 'start_from', minimum: 0 } },
  outputs: { copied: { node: 'out', output: 'out', kind: 'table' } },
};

const app = appSession({ args: ['--apps'], workflows: { 'copy.json': numbers } });

interface Reply {
  status: number;
  body: { error: { code: string }; result: McpResult };
}
interface McpResult {
  tools: { name: string }[];
  isError: boolean;
  content: { text: string }[];
}

async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`${app.server.url}${path.slice(1)}`, {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

/** One MCP call over HTTP (the server's /mcp is stateless: no session to open first). */
async function mcp(method: string, params: object): Promise<McpResult> {
  const reply = await call('POST', '/mcp', { jsonrpc: '2.0', id: 1, method, params });
  expect(reply.status).toBe(200);
  return reply.body.result;
}

describe('serve --apps', () => {
  it('serves the apps, and the editor page leads there', async () => {
    const page = app.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(app.server.url);
    await page.locator('[data-app="copy.json"]').waitFor();
    expect(new URL(page.url()).pathname).toBe('/apps');
    expect(await page.getByRole('link', { name: 'Open the editor' }).count()).toBe(0);
    await screenshot(page, 'apps-list');
    await page.locator('[data-app="copy.json"]').click();
    await page.locator('[data-field="start"]').waitFor();
    expect(await page.getByRole('link', { name: 'Open in editor' }).count()).toBe(0);
  });

  it('refuses graph edits and node-file writes over HTTP and MCP', async () => {
    const file = join(app.server.workflows, 'copy.json');
    const before = readFileSync(file, 'utf8');
    for (const [method, path, body] of [
      ['PUT', '/api/workflows/copy.json', numbers],
      ['DELETE', '/api/workflows/copy.json', undefined],
      ['POST', '/api/templates/classify-folder', { path: 'new.json' }],
      ['POST', '/api/runs', { workflow: 'copy.json' }],
    ] as const) {
      const refused = await call(method, path, body);
      expect([refused.status, refused.body.error.code], `${method} ${path}`).toEqual([403, 'apps_only']);
    }
    const tools = (await mcp('tools/list', {})).tools.map((t) => t.name);
    expect(tools).toContain('run_app');
    expect(tools).not.toContain('edit_workflow');
    expect(tools).not.toContain('write_node_file');
    for (const [name, args] of [
      ['edit_workflow', { path: 'copy.json', operations: [{ op: 'delete_node', node: 'out' }] }],
      ['write_node_file', { path: 'evil.py', source: 'import os\n' }],
    ] as const) {
      const result = await mcp('tools/call', { name, arguments: args });
      expect(result.isError, name).toBe(true);
      expect(result.content[0]?.text).toContain('serves apps only');
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(() => readFileSync(join(app.server.nodes, 'evil.py'))).toThrow();
  });
});
