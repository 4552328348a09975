// With no node inspected: the workflow's description, every problem, the run, the shortcuts.

import { clear } from '../actions/run';
import { AppSection } from './AppSection';
import { SHORTCUTS } from '../hooks/useShortcuts';
import { formatSeconds } from '../preview';
import { useEditor } from '../store/editor';
import { useProblems } from '../store/problems';
import { isOffline, useRun } from '../store/run';
import { useUi } from '../store/ui';
import { canvasInputs } from '../workflow/canvas';
import type { NodeInput } from '../workflow/flow';
import { INPUT_NAME, type WorkflowInput } from '../workflow/format';

function FileFields() {
  const file = useEditor((s) => s.file);
  const doc = useEditor((s) => s.doc);
  const setDoc = useEditor((s) => s.setDoc);
  if (!file) return null;
  return (
    <>
      {file.format === 'graphbook013' ? (
        <div className="gb-banner">
          A Graphbook 0.13 file. It is shown as it is; saving (Ctrl+S) writes it in the current format. Autosave leaves
          it alone.
        </div>
      ) : null}
      <label className="gb-field">
        <span>Description</span>
        <textarea
          className="gb-input"
          rows={3}
          value={doc}
          placeholder="What this workflow does (Markdown)"
          onChange={(e) => setDoc(e.target.value)}
        />
      </label>
      <WorkflowInputs />
      <AppSection />
    </>
  );
}

function ProblemList() {
  const byNode = useProblems((s) => s.byNode);
  const inspect = useUi((s) => s.inspect);
  const problems = Object.entries(byNode).flatMap(([node, list]) => list.map((p) => ({ ...p, node })));
  if (!problems.length) return null;
  return (
    <section>
      <h3>Problems</h3>
      <ul className="gb-problem-list">
        {problems.map((p, i) => (
          <li key={i}>
            {p.node ? (
              <button className="gb-link" onClick={() => inspect(p.node, 'errors')}>
                {p.node}
              </button>
            ) : null}{' '}
            {p.message}
            {p.fix ? <div className="gb-muted">{p.fix}</div> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function LastRun({ path }: { path: string | undefined }) {
  const run = useRun((s) => s.run);
  const offline = useRun(isOffline);
  if (!run || run.workflow !== path) return null;
  return (
    <section>
      <h3>Last run</h3>
      <p className="gb-run-line">
        <span
          className={offline ? 'gb-run-stale' : undefined}
          title={offline ? 'as it was when the connection to the server was lost' : undefined}
        >
          {run.status}
          {run.status === 'running' || run.status === 'paused' ? '' : ` · ${formatSeconds(run.seconds)}`} · {run.errors}{' '}
          error{run.errors === 1 ? '' : 's'}
        </span>
        <button
          className="gb-link"
          onClick={() => void clear(null)}
          title="forget every cached output of this workflow, so the next run starts afresh"
        >
          clear cache
        </button>
      </p>
    </section>
  );
}

function Shortcuts() {
  return (
    <section>
      <h3>Shortcuts</h3>
      <dl className="gb-shortcut-list">
        {SHORTCUTS.map(([keys, action]) => (
          <div key={keys}>
            <dt>{keys}</dt>
            <dd>{action}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

export function WorkflowOverview() {
  const file = useEditor((s) => s.file);
  return (
    <div className="gb-inspector-body gb-scroll">
      <h2>{file ? file.path : 'No workflow open'}</h2>
      <FileFields />
      <ProblemList />
      <LastRun path={file?.path} />
      <Shortcuts />
    </div>
  );
}

type Given = [name: string, given: WorkflowInput];

/** Renames an input when the new name is valid and no other input has it. */
function renameInput(inputs: Given[], given: WorkflowInput, name: string): void {
  const taken = inputs.some(([other]) => other === name);
  if (INPUT_NAME.test(name) && !taken) useEditor.getState().setInput(given.node, given.param, nodeInput(given, name));
}

/** The input as its node keeps it, named `name`: its description and narrowing kept. */
function nodeInput({ node: _node, param: _param, ...rest }: WorkflowInput, name: string): NodeInput {
  return { ...rest, name };
}

function InputRow({ name, given, inputs }: { name: string; given: WorkflowInput; inputs: Given[] }) {
  const setInput = useEditor((s) => s.setInput);
  const inspect = useUi((s) => s.inspect);
  return (
    <li data-input={name}>
      <input
        className="gb-input gb-mono"
        aria-label={`name of input ${name}`}
        defaultValue={name}
        onBlur={(e) => renameInput(inputs, given, e.target.value.trim())}
      />
      <button className="gb-link" onClick={() => inspect(given.node)}>
        {given.node}.{given.param}
      </button>
      <button
        className="gb-icon"
        title={`stop using ${given.node}.${given.param} as an input`}
        aria-label={`remove input ${name}`}
        onClick={() => setInput(given.node, given.param, null)}
      >
        ×
      </button>
      <input
        className="gb-input"
        aria-label={`description of input ${name}`}
        placeholder="what to give (optional)"
        value={given.description ?? ''}
        onChange={(e) => {
          const { description: _was, ...kept } = nodeInput(given, name);
          setInput(given.node, given.param, e.target.value ? { ...kept, description: e.target.value } : kept);
        }}
      />
    </li>
  );
}

/** The parameters marked as workflow inputs (the ⇥ on a parameter): what a run or a caller
 * may give by name (`inputs` of POST /api/runs, `graphbook run --input NAME=VALUE`). */
function WorkflowInputs() {
  const listed = useEditor((s) => JSON.stringify(canvasInputs(s.nodes)));
  const inputs = Object.entries(JSON.parse(listed) as Record<string, WorkflowInput>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return (
    <section className="gb-inputs">
      <h3>Inputs</h3>
      {inputs.length === 0 ? (
        <p className="gb-muted">None. Mark a parameter with ⇥ on its node to take it as an input of the workflow.</p>
      ) : (
        <ul className="gb-input-list">
          {inputs.map(([name, given]) => (
            <InputRow key={name} name={name} given={given} inputs={inputs} />
          ))}
        </ul>
      )}
    </section>
  );
}
