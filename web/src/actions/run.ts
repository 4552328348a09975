// Starting and steering runs of the open workflow.

import { ApiError } from '../api/http';
import { submitJob } from '../api/jobs';
import { type RunBody, type RunCommand, answerPrompt, clearCache, startRun, steerRun } from '../api/runs';
import type { RunMode } from '../protocol';
import { useCatalog } from '../store/catalog';
import { currentKey, currentWorkflow, useEditor } from '../store/editor';
import { pathPrefix } from '../store/inside';
import { isOffline, useRun } from '../store/run';
import { useUi } from '../store/ui';
import { dumps } from '../workflow/format';
import { type Problem, validate } from '../workflow/validate';
import { failed } from './files';

/** Why the run controls are off while the websocket is down (and the server likely out of reach). */
export const OFFLINE = 'Not connected to the server: reconnecting…';

/** Runs are started and steered only while connected, so that what follows is seen. */
function connected(): boolean {
  if (!isOffline(useRun.getState())) return true;
  useUi.getState().notify(`${OFFLINE} Try again once it is back.`);
  return false;
}

/** The open document's own problems (as the server would find them), or none before the catalog is known. */
function problemsNow(): Problem[] {
  const { catalog, loaded } = useCatalog.getState();
  return loaded ? validate(currentWorkflow(useEditor.getState()).workflow, catalog) : [];
}

/** What a run of the open document asks for: its file, unsaved changes inline; null when it cannot run (said why). */
function runRequest(mode: RunMode, node: string | null): RunBody | null {
  const editor = useEditor.getState();
  if (!editor.file || !connected()) return null;
  const problems = problemsNow();
  const first = problems[0];
  if (first) {
    const where = first.node ? ` Node '${first.node}': ${first.message}.` : ` ${first.message}.`;
    useUi
      .getState()
      .notify(`Not run: the workflow has ${problems.length} problem(s), shown on their nodes.${where}`, 'error');
    if (first.node) useUi.getState().inspect(first.node, 'errors');
    return null;
  }
  const unsaved = currentKey(editor) !== editor.savedKey;
  const graph = unsaved ? (JSON.parse(dumps(currentWorkflow(editor).workflow)) as Record<string, unknown>) : null;
  const path = node === null ? null : pathPrefix(editor.inside) + node; // a node inside an opened component, by its path
  return { workflow: editor.file.path, mode, node: path, graph, continue_on_error: useUi.getState().continueOnError };
}

async function send(body: RunBody | null, start: (body: RunBody) => Promise<unknown>): Promise<boolean> {
  if (!body) return false;
  try {
    useUi.getState().setServerProblems([]);
    await start(body);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.problems.length) {
      useUi.getState().setServerProblems(error.problems);
      useUi
        .getState()
        .notify(`The workflow has ${error.problems.length} problem(s); they are shown on their nodes.`, 'error');
    } else failed(error);
    return false;
  }
}

export async function run(mode: RunMode, node: string | null = null): Promise<void> {
  const body = runRequest(mode, node);
  await send(body, async (b) => {
    const { run_id } = await startRun(b);
    useRun.getState().accepted({ run_id, workflow: b.workflow });
  });
}

/** Adds a job that runs the open document as `run` would, once the runs before it have ended. */
export async function queue(mode: RunMode, node: string | null = null): Promise<void> {
  const body = runRequest(mode, node);
  if (await send(body, submitJob))
    useUi.getState().notify(`Queued ${body?.workflow ?? ''}: it runs when the runs before it end.`);
}

export async function steer(command: RunCommand, node: string | null = null): Promise<void> {
  if (!connected()) return;
  try {
    await steerRun(command, node);
  } catch (error) {
    failed(error);
  }
}

export async function answer(promptId: string, value: unknown): Promise<void> {
  if (!connected()) return;
  try {
    await answerPrompt(promptId, value);
  } catch (error) {
    failed(error);
  }
}

export async function clear(node: string | null): Promise<void> {
  const file = useEditor.getState().file;
  if (!file) return;
  try {
    await clearCache(file.path, node);
  } catch (error) {
    failed(error);
  }
}
