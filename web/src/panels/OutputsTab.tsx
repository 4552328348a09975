// The node's outputs: the latest preview per output, and earlier ones fetched on demand.

import { useState } from 'react';
import { fetchOutput } from '../api/runs';
import { useEditor } from '../store/editor';
import { useGallery } from '../store/gallery';
import type { NodeRunView } from '../hooks/useNodeRun';
import { JsonTree } from './JsonTree';

interface Shown {
  index: number;
  item: unknown;
}

/** The item shown (the latest until another is asked for) and a way to fetch another by index. */
function useBrowse(node: string, output: string, latest: { index: number; preview: unknown } | undefined) {
  const workflow = useEditor((s) => s.file?.path ?? '');
  const [shown, setShown] = useState<Shown | null>(null);
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
  return { current, error, go };
}

function Pager({ index, total, go }: { index: number; total: number; go: (index: number) => Promise<void> }) {
  return (
    <span className="gb-pager">
      <button className="gb-icon" disabled={index <= 0} onClick={() => void go(index - 1)} aria-label="previous">
        ‹
      </button>
      <span>#{index}</span>
      <button className="gb-icon" disabled={index >= total - 1} onClick={() => void go(index + 1)} aria-label="next">
        ›
      </button>
    </span>
  );
}

/** `node` and `output`: where the server keeps the dicts (a component's: the inner node's);
 * `name`: the output as the node shows it. */
function OutputBrowser({
  node,
  output,
  name,
  latest,
  total,
}: {
  node: string;
  output: string;
  name: string;
  latest: { index: number; preview: unknown } | undefined;
  total: number;
}) {
  const { current, error, go } = useBrowse(node, output, latest);
  return (
    <section className="gb-output" data-output={name}>
      <header>
        <strong>{name}</strong>
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
        {current ? <Pager index={current.index} total={total} go={go} /> : null}
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
  run: NodeRunView | undefined;
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
        <OutputBrowser
          key={`${runId}:${o}`}
          node={run.sources?.[o]?.node ?? id}
          output={run.sources?.[o]?.output ?? o}
          name={o}
          latest={run.outputs[o]}
          total={run.counts[o] ?? 0}
        />
      ))}
    </div>
  );
}
