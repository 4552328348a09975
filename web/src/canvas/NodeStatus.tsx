// The node's footer: state, counts and speed while it runs, its first error once it fails.
// One line of fixed height, so the node never changes size while it runs.

import type { NodeRun } from '../store/runState';
import { useRun } from '../store/run';
import { isActive } from '../store/runState';
import { useUi } from '../store/ui';
import { timingText } from '../timing';
import { statusLine } from './statusLine';

const STALE = 'As it was when the connection to the server was lost; reconnecting…';

interface Props {
  id: string;
  run: NodeRun | undefined;
  resource: boolean;
  /** Offline: what it shows may be out of date. */
  stale: boolean;
}

export function NodeStatus({ id, run, resource, stale }: Props) {
  const inspect = useUi((s) => s.inspect);
  const active = useRun((s) => isActive(s.run));
  const paused = useRun((s) => s.run?.status === 'paused');
  const stepped = useRun((s) => s.run?.status === 'paused' && s.run.paused_node === id);
  const completed = useRun((s) => s.run?.status === 'completed');
  const line = statusLine(run, { resource, active, paused, stepped, completed });
  const error = run?.errors[run.errors.length - 1];
  const timing = run?.timing ? timingText(run.timing) : '';
  const title = stale && run ? STALE : [run?.reason, timing].filter(Boolean).join('\n') || undefined;
  return (
    <div className={`gb-status gb-status-${line.state}${stale && run ? ' gb-status-stale' : ''}`} title={title}>
      <div className="gb-progress" />
      <span className="gb-status-word">{line.word}</span>
      <span className="gb-status-figures">{line.figures}</span>
      {run && error ? (
        <button className="gb-error-link nodrag" title="show the traceback" onClick={() => inspect(id, 'errors')}>
          ⚠ {run.errors.length > 1 ? `${run.errors.length} errors` : error.error.type}
        </button>
      ) : null}
    </div>
  );
}
