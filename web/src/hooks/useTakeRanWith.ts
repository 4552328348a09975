// Takes the open workflow's node settings as a run of it starts (store/ranWith.ts), so the
// nodes changed since are marked on the canvas.

import { useEffect } from 'react';
import { useEditor } from '../store/editor';
import { useRanWith } from '../store/ranWith';
import { useRun } from '../store/run';

export function useTakeRanWith(): void {
  useEffect(
    () =>
      useRun.subscribe((state, before) => {
        const run = state.run;
        const editor = useEditor.getState();
        if (!run || run.run_id === before.run?.run_id || editor.inside.length) return;
        if (run.workflow === editor.file?.path) useRanWith.getState().take(run.workflow, run.run_id, editor.nodes);
      }),
    [],
  );
}
