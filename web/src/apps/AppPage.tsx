// An app's page (/app/WORKFLOW): its form, Run (a queued job; wrong values refused beside their
// fields, nothing queued), the run it follows (?job=ID: a link to it can be shared) and the
// runs it made. Two people on the same app each follow their own run.

import { useCallback, useEffect, useState } from 'react';
import { fetchApp, runApp } from '../api/apps';
import { ApiError } from '../api/http';
import type { AppInfo, Job } from '../protocol';
import { AppForm } from './AppForm';
import { appPath } from './route';
import { RunPanel } from './RunPanel';
import { RunsList } from './RunsList';
import { ENDED, useAppRun } from './useAppRun';
import { type FieldValue, type Schema, initialValues, inputValues, valuesOf } from './values';

function useAppInfo(workflow: string) {
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    fetchApp(workflow)
      .then(setInfo)
      .catch((e: Error) => setError(e.message));
  }, [workflow]);
  return { info, error };
}

/** The form's values and the refusals beside its fields. */
function useFormState(info: AppInfo | null) {
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState('');
  useEffect(() => {
    if (info) setValues(initialValues(info.schema as Schema));
  }, [info]);
  return { values, setValues, errors, setErrors, problem, setProblem };
}

export function AppPage({ workflow, job }: { workflow: string; job: string | null }) {
  const { info, error } = useAppInfo(workflow);
  const form = useFormState(info);
  const [current, setCurrent] = useState(job);
  const [version, setVersion] = useState(0);
  const { run, update } = useAppRun(current);
  const open = useCallback(
    (found: Job | null, inputs?: Record<string, unknown>) => {
      setCurrent(found?.id ?? null);
      window.history.replaceState(null, '', appPath(workflow, found?.id));
      if (info && inputs) form.setValues(valuesOf(info.schema as Schema, inputs));
      form.setErrors({});
    },
    [workflow, info, form],
  );
  useReopenOnLoad(info, run, job, form.setValues);
  const ended = run !== null && ENDED.includes(run.job.state);
  useEffect(() => setVersion((v) => v + 1), [ended, current]);
  const submit = useSubmit(workflow, info, form, open);
  return (
    <AppLayout info={info} error={error} workflow={workflow}>
      <div className="gb-appside">
        {info ? <AppForm info={info} form={form} onRun={() => void submit()} /> : null}
        <RunsList
          workflow={workflow}
          version={version}
          current={current}
          onOpen={(found) => open(found, found.request.inputs ?? {})}
        />
      </div>
      <section className="gb-appresult" aria-label="this run">
        {run ? (
          <RunPanel run={run} onChange={update} />
        ) : (
          <p className="gb-muted gb-appresult-empty">Fill in the form and press Run: the results show here.</p>
        )}
      </section>
    </AppLayout>
  );
}

type Form = ReturnType<typeof useFormState>;

/** Run: the form's values asked for; a refusal shown beside the fields it names (else above
 * Run), a run queued followed. */
function useSubmit(workflow: string, info: AppInfo | null, form: Form, open: (job: Job) => void) {
  return async (): Promise<void> => {
    if (!info) return;
    form.setProblem('');
    try {
      const asked = await runApp(workflow, inputValues(info.schema as Schema, form.values));
      form.setErrors({});
      open(asked.job);
    } catch (e) {
      const refused = e instanceof ApiError ? e : null;
      form.setErrors(refused?.fields ?? {});
      form.setProblem(refused && Object.keys(refused.fields).length ? '' : describe(e));
    }
  };
}

/** A page opened on a run (a shared link): the form shows the inputs that run was given. */
function useReopenOnLoad(
  info: AppInfo | null,
  run: ReturnType<typeof useAppRun>['run'],
  job: string | null,
  set: (values: Record<string, FieldValue>) => void,
): void {
  const [done, setDone] = useState(false);
  useEffect(() => {
    if (done || !info || !run || run.job.id !== job) return;
    set(valuesOf(info.schema as Schema, run.inputs));
    setDone(true);
  }, [done, info, run, job, set]);
}

function describe(error: unknown): string {
  if (!(error instanceof ApiError)) return String(error);
  const problems = error.problems.map((p) => `${p.node_id ? `${p.node_id}: ` : ''}${p.message}`);
  return problems.length ? `${error.message.split('\n')[0]}\n${problems.join('\n')}` : error.message;
}

function AppLayout({
  info,
  error,
  workflow,
  children,
}: {
  info: AppInfo | null;
  error: string;
  workflow: string;
  children: React.ReactNode;
}) {
  return (
    <div className="gb-apppage">
      <header className="gb-apphead">
        <a className="gb-button gb-quiet" href="/apps">
          ← Apps
        </a>
        <h1 className="gb-ellipsis">{info?.title ?? workflow}</h1>
        <span className="gb-spacer" />
        {info && !info.apps_only ? (
          <a className="gb-button gb-quiet" href={`/#${workflow}`} title="open the workflow in the editor">
            Open in editor
          </a>
        ) : null}
      </header>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <main className="gb-appgrid">{children}</main>
    </div>
  );
}
