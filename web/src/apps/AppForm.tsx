// The app's form: what it does, a field per input, Run. A workflow with problems is shown, not
// run (its problems listed); a refusal that names no field is shown above Run.

import type { Dispatch, SetStateAction } from 'react';
import type { AppInfo } from '../protocol';
import { Field } from './Fields';
import type { FieldValue, Property, Schema } from './values';

export interface FormState {
  values: Record<string, FieldValue>;
  setValues: Dispatch<SetStateAction<Record<string, FieldValue>>>;
  errors: Record<string, string>;
  setErrors: Dispatch<SetStateAction<Record<string, string>>>;
  problem: string;
}

interface Props {
  info: AppInfo;
  form: FormState;
  /** Run; none in a preview (the form is shown, not run). */
  onRun?: () => void;
}

export function AppForm({ info, form, onRun }: Props) {
  const properties = Object.entries((info.schema as Schema).properties ?? {});
  const setError = (name: string, message: string | null): void =>
    form.setErrors((errors) => {
      const { [name]: _was, ...rest } = errors;
      return message ? { ...rest, [name]: message } : rest;
    });
  return (
    <section className="gb-appform" aria-label="inputs">
      {info.doc ? <p className="gb-appdoc">{info.doc}</p> : null}
      {properties.length === 0 ? <p className="gb-muted">This app takes no inputs: Run runs it as it is.</p> : null}
      {properties.map(([name, prop]) => (
        <Field
          key={name}
          name={name}
          prop={prop as Property}
          value={form.values[name] ?? ''}
          onChange={(value) => {
            form.setValues((values) => ({ ...values, [name]: value }));
            setError(name, null);
          }}
          workflow={onRun ? info.workflow : null}
          maxUpload={info.max_upload}
          error={form.errors[name]}
          onError={(message) => setError(name, message)}
        />
      ))}
      <Refusals info={info} form={form} known={properties.map(([name]) => name)} />
      {onRun ? (
        <button className="gb-button gb-primary gb-apprun-button" disabled={info.problems.length > 0} onClick={onRun}>
          ▶ Run
        </button>
      ) : null}
    </section>
  );
}

/** What stops the run that no field shows: the workflow's problems, an input the form has not
 * (a run reopened from an older version), the server's refusal. */
function Refusals({ info, form, known }: { info: AppInfo; form: FormState; known: string[] }) {
  const stray = Object.keys(form.errors).filter((name) => !known.includes(name));
  return (
    <>
      {stray.map((name) => (
        <div key={name} className="gb-banner gb-banner-error" data-error-for={name} role="alert">
          {name}: {form.errors[name]}
        </div>
      ))}
      {info.problems.length ? (
        <div className="gb-banner gb-banner-error">
          This workflow cannot run until its problems are fixed:
          <ul>
            {info.problems.map((p, i) => (
              <li key={i}>{`${p.node_id ? `${p.node_id}: ` : ''}${p.message}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {form.problem ? <div className="gb-banner gb-banner-error gb-preline">{form.problem}</div> : null}
    </>
  );
}
