// What the node logged, newest last.

import type { NodeRun } from '../store/runState';
import { JsonTree } from './JsonTree';

export function LogsTab({ run }: { run: NodeRun | undefined }) {
  if (!run?.logs.length) return <p className="gb-empty">No logs.</p>;
  return (
    <ol className="gb-logs">
      {run.logs.map((entry, i) => (
        <li key={i} className={`gb-log gb-log-${entry.level}`}>
          <span className="gb-log-level">{entry.level}</span>
          {typeof entry.message === 'string' ? <span className="gb-log-text">{entry.message}</span> : <JsonTree value={entry.message} />}
        </li>
      ))}
    </ol>
  );
}
