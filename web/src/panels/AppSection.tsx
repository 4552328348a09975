// The workflow's app, in the overview: the outputs it shows (◉ beside a node's output marks
// one), "Open as app", and a preview of its form as the inputs are being chosen.

import { useEffect, useState } from 'react';
import { previewApp } from '../api/apps';
import { AppForm } from '../apps/AppForm';
import { appPath } from '../apps/route';
import { type FieldValue, type Schema, initialValues } from '../apps/values';
import type { AppInfo } from '../protocol';
import { currentWorkflow, useEditor } from '../store/editor';
import { canvasOutputs } from '../workflow/canvas';
import { INPUT_NAME, OUTPUT_KINDS, type OutputKind, type WorkflowOutput } from '../workflow/format';
import '../styles/appmarks.css';

const PREVIEW_MS = 400;

export function AppSection() {
  const path = useEditor((s) => s.file?.path);
  if (!path) return null;
  return (
    <section className="gb-app-section">
      <h3>App</h3>
      <p className="gb-muted">
        A form over the inputs; its results are the outputs marked ◉ (none marked: the sinks and image nodes).
      </p>
      <OutputList />
      <div className="gb-app-actions">
        <a className="gb-button" href={appPath(path)} target="_blank" rel="noreferrer">
          Open as app
        </a>
        <span className="gb-muted">runs the saved file</span>
      </div>
      <AppPreview path={path} />
    </section>
  );
}

function OutputList() {
  const listed = useEditor((s) => JSON.stringify(canvasOutputs(s.nodes)));
  const setOutput = useEditor((s) => s.setOutput);
  const outputs = Object.entries(JSON.parse(listed) as Record<string, WorkflowOutput>).sort(([a], [b]) =>
    a < b ? -1 : 1,
  );
  const save = (given: WorkflowOutput, name: string, kind: OutputKind): void =>
    setOutput(given.node, given.output, {
      name,
      kind,
      ...(given.description ? { description: given.description } : {}),
    });
  if (!outputs.length) return null;
  return (
    <ul className="gb-output-list">
      {outputs.map(([name, given]) => (
        <li key={name} data-app-output={name}>
          <input
            className="gb-input gb-mono"
            aria-label={`name of output ${name}`}
            defaultValue={name}
            title={`${given.node}.${given.output}`}
            onBlur={(e) => {
              const renamed = e.target.value.trim();
              if (INPUT_NAME.test(renamed) && !outputs.some(([other]) => other === renamed))
                save(given, renamed, given.kind);
            }}
          />
          <select
            className="gb-input"
            aria-label={`how ${name} is shown`}
            value={given.kind}
            onChange={(e) => save(given, name, e.target.value as OutputKind)}
          >
            {OUTPUT_KINDS.map((kind) => (
              <option key={kind}>{kind}</option>
            ))}
          </select>
          <button
            className="gb-icon"
            aria-label={`stop showing ${name}`}
            onClick={() => setOutput(given.node, given.output, null)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The app as the open document makes it (its unsaved edits too), a moment after each change. */
function useAppPreview(path: string): AppInfo | null {
  const key = useEditor((s) => JSON.stringify(currentWorkflow(s).workflow));
  const [info, setInfo] = useState<AppInfo | null>(null);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      previewApp(path, { format: 'graphbook.workflow', version: 1, ...(JSON.parse(key) as object) })
        .then((found) => live && setInfo(found))
        .catch(() => live && setInfo(null));
    }, PREVIEW_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [path, key]);
  return info;
}

function AppPreview({ path }: { path: string }) {
  const info = useAppPreview(path);
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const schema = info ? JSON.stringify(info.schema) : '';
  useEffect(() => {
    if (schema) setValues(initialValues(JSON.parse(schema) as Schema));
  }, [schema]);
  if (!info) return null;
  return (
    <div className="gb-app-preview" aria-label="app preview">
      <AppForm info={info} form={{ values, setValues, errors, setErrors, problem: '' }} />
    </div>
  );
}
