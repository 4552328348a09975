// Running a past run again: as it ran (its workflow, parameters, mode, overrides and inputs,
// kept with it), or, when its file changed since, the file as it is now with the same
// overrides and inputs; then back to the canvas to watch it.

import { ApiError } from '../api/http';
import { rerunRun, startRun } from '../api/runs';
import type { RunDetails, RunMode } from '../protocol';
import { useDialog } from '../store/dialog';
import { useFiles } from '../store/files';
import { usePastRuns } from '../store/pastRuns';
import { useUi } from '../store/ui';
import { failed, switchFile } from './files';

const RUN_MODES: RunMode[] = ['all', 'until', 'step', 'trigger'];

/** The question asked before re-running a run whose file changed since. */
export function changedQuestion(details: RunDetails): { title: string; text: string } {
  const name = details.run.workflow;
  const shown = details.changes.slice(0, 6).join('; ');
  const more = details.changes.length > 6 ? `; and ${details.changes.length - 6} more` : '';
  return {
    title: `${name} changed since this run`,
    text: `${shown}${more}. Run it again as this run ran it, or run the file as it is now?`,
  };
}

/** The overrides and inputs a run was given (its record's config), sent again with it. */
export function runSettings(config: Record<string, unknown>): {
  overrides: Record<string, Record<string, unknown>> | null;
  inputs: Record<string, unknown> | null;
} {
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  const overrides = isRecord(config.overrides)
    ? Object.fromEntries(Object.entries(config.overrides).filter(([, v]) => isRecord(v)))
    : {};
  return {
    overrides: Object.keys(overrides).length ? (overrides as Record<string, Record<string, unknown>>) : null,
    inputs: isRecord(config.inputs) ? config.inputs : null,
  };
}

export async function runAgain(details: RunDetails): Promise<void> {
  const { run } = details;
  let asItWas = true;
  if (details.changes.length) {
    const gone = details.changes[0] === 'the file no longer exists';
    const choices = [
      { value: 'then', label: 'Run it as it was', primary: true },
      ...(gone ? [] : [{ value: 'now', label: 'Run the file as it is now' }]),
      { value: 'cancel', label: 'Cancel' },
    ];
    const answer = await useDialog.getState().ask({ ...changedQuestion(details), choices });
    if (answer === 'cancel' || !answer) return;
    asItWas = answer === 'then';
  }
  try {
    if (asItWas) await rerunRun(run.run_id);
    else {
      const config = details.config;
      const mode = RUN_MODES.find((m) => m === config.mode) ?? 'all';
      const node = typeof config.node === 'string' ? config.node : null;
      const { overrides, inputs } = runSettings(config);
      await startRun({
        workflow: run.workflow,
        mode,
        node,
        graph: null,
        continue_on_error: config.continue_on_error === true,
        overrides,
        inputs,
      });
    }
  } catch (error) {
    if (error instanceof ApiError && error.problems.length) {
      useUi
        .getState()
        .notify(
          `Not run: ${error.problems.length} problem(s), the first: ${error.problems[0]?.message ?? ''}`,
          'error',
        );
    } else failed(error);
    return;
  }
  useUi.getState().notify(`Running ${run.workflow} again${asItWas ? ' as run ' + run.run_id + ' ran it' : ''}.`);
  usePastRuns.getState().close();
  if (useFiles.getState().files.some((f) => f.path === run.workflow)) await switchFile(run.workflow);
}
