// Starts `graphbook serve` on a free port in a temporary folder holding copies of the example
// workflows and node files; stops it and removes the folder afterwards. The server imports this
// checkout's graphbook (PYTHONPATH), whatever copy of the package is installed.

import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export interface Server {
  url: string;
  folder: string;
  workflows: string;
  nodes: string;
  output(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

async function waitUntilUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`graphbook serve exited (${child.exitCode}):\n${log()}`);
    try {
      const response = await fetch(`${url}api/info`);
      if (response.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`graphbook serve did not answer at ${url}:\n${log()}`);
}

/** `env`: more environment for the server; its PYTHONPATH goes after this checkout's. `port`:
 * the port to listen on (a server started again where another was), else a free one; `prepare`:
 * writes into the folders before the server starts; `more`: more arguments of `serve`. */
export async function startServer(
  env: Record<string, string> = {},
  port?: number,
  prepare?: (folders: { workflows: string; nodes: string }) => void,
  more: string[] = [],
): Promise<Server> {
  const folder = mkdtempSync(join(tmpdir(), 'graphbook-e2e-'));
  const workflows = join(folder, 'workflows');
  const nodes = join(folder, 'custom_nodes');
  mkdirSync(join(folder, 'data'), { recursive: true });
  cpSync(join(ROOT, 'workflows'), workflows, { recursive: true });
  cpSync(join(ROOT, 'custom_nodes'), nodes, { recursive: true, filter: (p) => !p.includes('__pycache__') });
  prepare?.({ workflows, nodes });
  port ??= await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const args = [
    'serve',
    '--port',
    String(port),
    '--workflows',
    workflows,
    '--nodes',
    nodes,
    '--data',
    join(folder, '.runs'),
    '--media',
    join(folder, 'data'),
    ...more,
  ];
  const pythonPath = [ROOT, env.PYTHONPATH, process.env.PYTHONPATH].filter(Boolean).join(delimiter);
  const childEnv = { ...process.env, ...env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' };
  const child = spawn('graphbook', args, { cwd: folder, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await waitUntilUp(url, child, () => log);
  return {
    url,
    folder,
    workflows,
    nodes,
    output: () => log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
