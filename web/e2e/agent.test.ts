// An agent edits the workflow a page has open, through the MCP endpoint (/mcp, the SDK's
// streamable HTTP protocol spoken by plain fetch): the nodes appear live, and Ctrl+Z undoes the
// agent's whole batch in one step.

import { describe, expect, it } from 'vitest';
import { appSession, canvasReady, edgeIds, mod, nodeIds, openApp, readJson, until } from './app';
import { screenshot } from './browser';
import type { Server } from './server';

const app = appSession();

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
}

let nextId = 1;

/** One MCP tool call: a JSON-RPC request POSTed to /mcp, answered as JSON. */
async function callTool(server: Server, name: string, args: unknown): Promise<ToolResult> {
  const response = await fetch(`${server.url}mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(response.status).toBe(200);
  const reply = (await response.json()) as { result: ToolResult };
  return reply.result;
}

const BATCH = [
  { op: 'add_node', type: 'Greetings', id: 'agent_greetings', params: { count: 2 }, position: [0, 400] },
  { op: 'add_node', type: 'Shout', id: 'agent_shout', title: 'Agent shout', position: [400, 400] },
  { op: 'connect', source: 'agent_greetings', target: 'agent_shout' },
];

describe('an agent at work', () => {
  it("shows the agent's batch live, and undoes it in one step", async () => {
    await openApp(app.page, app.server, 'hello.json');
    const before = await nodeIds(app.page);
    const wiresBefore = await edgeIds(app.page);

    const result = await callTool(app.server, 'edit_workflow', { path: 'hello.json', operations: BATCH });
    expect(result.isError ?? false, result.content[0]?.text).toBe(false);
    await until(
      () => nodeIds(app.page),
      (ids) => ids.includes('agent_shout') && ids.includes('agent_greetings'),
      'the agent nodes',
    );
    await until(
      () => edgeIds(app.page),
      (ids) => ids.includes('agent_greetings:out->agent_shout:in'),
      'the agent wire',
    );
    await canvasReady(app.page);
    await screenshot(app.page, 'agent-batch-live');

    await app.page.locator('.react-flow__pane').click({ position: { x: 5, y: 5 } });
    await app.page.keyboard.press(`${mod}+z`);
    await until(
      () => nodeIds(app.page),
      (ids) => !ids.includes('agent_shout'),
      'the undo',
    );
    expect(await nodeIds(app.page)).toEqual(before);
    expect(await edgeIds(app.page)).toEqual(wiresBefore);
    // Autosave writes the undone document back: the agent's nodes leave the file too.
    await until(
      () => readJson(app.server, 'hello.json').nodes.map((n) => n.id),
      (ids) => !ids.includes('agent_shout'),
      'the file to lose the agent nodes',
    );
  });

  it("refuses a batch with one bad operation, and the page's document stays as it was", async () => {
    await openApp(app.page, app.server, 'hello.json');
    const before = await nodeIds(app.page);
    const bad = [
      ...BATCH.slice(0, 2),
      { op: 'connect', source: 'agent_greetings', output: 'nope', target: 'agent_shout' },
    ];
    const result = await callTool(app.server, 'edit_workflow', { path: 'hello.json', operations: bad });
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain('operation 2 (connect agent_greetings.nope -> agent_shout.in)');
    expect(
      readJson(app.server, 'hello.json')
        .nodes.map((n) => n.id)
        .sort(),
    ).toEqual(before);
    expect(await nodeIds(app.page)).toEqual(before);
  });
});
