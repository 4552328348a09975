// With no node inspected: the workflow's description, every problem, the run, the shortcuts.

import { clear } from '../actions/run';
import { SHORTCUTS } from '../hooks/useShortcuts';
import { formatSeconds } from '../preview';
import { useEditor } from '../store/editor';
import { useProblems } from '../store/problems';
import { isOffline, useRun } from '../store/run';
import { useUi } from '../store/ui';

export function WorkflowOverview() {
  const file = useEditor((s) => s.file);
  const doc = useEditor((s) => s.doc);
  const setDoc = useEditor((s) => s.setDoc);
  const byNode = useProblems((s) => s.byNode);
  const run = useRun((s) => s.run);
  const offline = useRun(isOffline);
  const inspect = useUi((s) => s.inspect);
  const problems = Object.entries(byNode).flatMap(([node, list]) => list.map((p) => ({ ...p, node })));
  return (
    <div className="gb-inspector-body gb-scroll">
      <h2>{file ? file.path : 'No workflow open'}</h2>
      {file?.format === 'graphbook013' ? (
        <div className="gb-banner">A Graphbook 0.13 file. It is shown as it is; saving (Ctrl+S) writes it in the current format. Autosave leaves it alone.</div>
      ) : null}
      {file ? (
        <label className="gb-field">
          <span>Description</span>
          <textarea className="gb-input" rows={3} value={doc} placeholder="What this workflow does (Markdown)" onChange={(e) => setDoc(e.target.value)} />
        </label>
      ) : null}
      {problems.length ? (
        <section>
          <h3>Problems</h3>
          <ul className="gb-problem-list">
            {problems.map((p, i) => (
              <li key={i}>
                {p.node ? <button className="gb-link" onClick={() => inspect(p.node, 'errors')}>{p.node}</button> : null} {p.message}
                {p.fix ? <div className="gb-muted">{p.fix}</div> : null}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {run && run.workflow === file?.path ? (
        <section>
          <h3>Last run</h3>
          <p className="gb-run-line">
            <span className={offline ? 'gb-run-stale' : undefined} title={offline ? 'as it was when the connection to the server was lost' : undefined}>
              {run.status}
              {run.status === 'running' || run.status === 'paused' ? '' : ` · ${formatSeconds(run.seconds)}`} · {run.errors} error{run.errors === 1 ? '' : 's'}
            </span>
            <button className="gb-link" onClick={() => void clear(null)} title="forget every cached output of this workflow, so the next run starts afresh">
              clear cache
            </button>
          </p>
        </section>
      ) : null}
      <section>
        <h3>Shortcuts</h3>
        <dl className="gb-shortcuts">
          {SHORTCUTS.map(([keys, action]) => (
            <div key={keys}>
              <dt>{keys}</dt>
              <dd>{action}</dd>
            </div>
          ))}
        </dl>
      </section>
    </div>
  );
}
