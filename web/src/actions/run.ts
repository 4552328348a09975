// Starting and steering runs of the open workflow.

import { ApiError } from '../api/http';
import { type RunCommand, answerPrompt, clearCache, startRun, steerRun } from '../api/runs';
import type { RunMode } from '../protocol';
import { currentKey, currentWorkflow, useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { dumps } from '../workflow/format';
import { failed } from './files';

export async function run(mode: RunMode, node: string | null = null): Promise<void> {
  const editor = useEditor.getState();
  if (!editor.file) return;
  const unsaved = currentKey(editor) !== editor.savedKey;
  const graph = unsaved ? (JSON.parse(dumps(currentWorkflow(editor).workflow)) as Record<string, unknown>) : null;
  try {
    useUi.getState().setServerProblems([]);
    await startRun({ workflow: editor.file.path, mode, node, graph });
  } catch (error) {
    if (error instanceof ApiError && error.problems.length) {
      useUi.getState().setServerProblems(error.problems);
      useUi.getState().notify(`The workflow has ${error.problems.length} problem(s); they are shown on their nodes.`, 'error');
    } else failed(error);
  }
}

export async function steer(command: RunCommand, node: string | null = null): Promise<void> {
  try {
    await steerRun(command, node);
  } catch (error) {
    failed(error);
  }
}

export async function answer(promptId: string, value: unknown): Promise<void> {
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
