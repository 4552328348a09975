// The node's outputs: the latest preview per output, and earlier ones fetched on demand.

import { useState } from 'react';
import { fetchOutput } from '../api/runs';
import { useEditor } from '../store/editor';
import { useGallery } from '../store/gallery';
import type { NodeRun } from '../store/runState';
import { JsonTree } from './JsonTree';

function OutputBrowser({
  node,
  output,
  latest,
  total,
}: {
  node: string;
  output: string;
  latest: { index: number; preview: unknown } | undefined;
  total: number;
}) {
  const workflow = useEditor((s) => s.file?.path ?? '');
  const [shown, setShown] = useState<{ index: number; item: unknown } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const current = shown ?? (latest ? { index: latest.index, item: latest.preview } : null);
  const go = async (index: number): Promise<void> => {
    try {
      const reply = await fetchOutput(workflow, node, output, index);
      setShown({ index: reply.index, item: reply.item });
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section className="gb-output" data-output={output}>
      <header>
        <strong>{output}</strong>
        <span className="gb-muted">{total} handed on</span>
        {total ? (
          <button
            className="gb-link"
            title="every dict as a grid: filter, sort, view"
            onClick={() => useGallery.getState().openGallery(node, output)}
          >
            gallery
          </button>
        ) : null}
        {current ? (
          <span className="gb-pager">
            <button
              className="gb-icon"
              disabled={current.index <= 0}
              onClick={() => void go(current.index - 1)}
              aria-label="previous"
            >
              ‹
            </button>
            <span>#{current.index}</span>
            <button
              className="gb-icon"
              disabled={current.index >= total - 1}
              onClick={() => void go(current.index + 1)}
              aria-label="next"
            >
              ›
            </button>
          </span>
        ) : null}
      </header>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      {current ? <JsonTree value={current.item} /> : <p className="gb-empty">Nothing handed on yet.</p>}
    </section>
  );
}

export function OutputsTab({
  id,
  run,
  runId,
  outputs,
}: {
  id: string;
  run: NodeRun | undefined;
  runId: string;
  outputs: string[];
}) {
  if (!run) return <p className="gb-empty">Run the workflow to see what this node hands on.</p>;
  const names = [...new Set([...outputs, ...Object.keys(run.outputs)])];
  return (
    <div>
      {run.reason ? (
        <p className="gb-muted gb-output-reason">
          {run.action === 'reuse' ? 'Reused in this run: ' : 'Ran in this run because '}
          {run.reason}
        </p>
      ) : null}
      {names.map((o) => (
        <OutputBrowser key={`${runId}:${o}`} node={id} output={o} latest={run.outputs[o]} total={run.counts[o] ?? 0} />
      ))}
    </div>
  );
}
