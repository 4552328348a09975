// Keeps the problems store in step with the document, the catalog and the server's reports.

import { useEffect } from 'react';
import { useCatalog } from '../store/catalog';
import { currentWorkflow, useEditor } from '../store/editor';
import { mergeProblems, useProblems, validate } from '../store/problems';
import { useUi } from '../store/ui';

function recompute(): void {
  const { catalog, loaded } = useCatalog.getState();
  const editor = useEditor.getState();
  const client = loaded && editor.file ? validate(currentWorkflow(editor).workflow, catalog) : [];
  const byNode = mergeProblems(client, useUi.getState().serverProblems);
  const total = Object.values(byNode).reduce((sum, list) => sum + list.length, 0);
  useProblems.setState({ byNode, total });
}

export function useProblemSync(): void {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = (): void => {
      clearTimeout(timer);
      timer = setTimeout(recompute, 120);
    };
    recompute();
    const stops = [
      useEditor.subscribe((s, prev) => {
        if (s.nodes !== prev.nodes || s.edges !== prev.edges) soon();
        if (s.history.present !== prev.history.present && s.file === prev.file) useUi.getState().setServerProblems([]);
      }),
      useCatalog.subscribe(soon),
      useUi.subscribe((s, prev) => s.serverProblems !== prev.serverProblems && soon()),
    ];
    return () => {
      clearTimeout(timer);
      stops.forEach((stop) => stop());
    };
  }, []);
}
