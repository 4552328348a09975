// The node's problems and errors, each traceback one click away.

import type { NodeRun } from '../store/runState';
import type { Problem } from '../workflow/validate';
import { JsonTree } from './JsonTree';

export function ErrorsTab({ run, problems }: { run: NodeRun | undefined; problems: Problem[] }) {
  const errors = run?.errors ?? [];
  if (!errors.length && !problems.length) return <p className="gb-empty">No errors.</p>;
  return (
    <div className="gb-errors">
      {problems.map((p, i) => (
        <div key={`p${i}`} className="gb-error-card">
          <strong>{p.message}</strong>
          {p.fix ? <p>{p.fix}</p> : null}
        </div>
      ))}
      {errors.map((e, i) => (
        <details key={`e${i}`} className="gb-error-card" open={i === errors.length - 1}>
          <summary>
            <strong>{e.error.type}</strong>: {e.error.message}
          </summary>
          <pre className="gb-traceback">{e.error.traceback}</pre>
          {e.item !== undefined && e.item !== null ? (
            <div>
              <div className="gb-muted">while handling</div>
              <JsonTree value={e.item} />
            </div>
          ) : null}
        </details>
      ))}
    </div>
  );
}
