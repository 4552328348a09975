// An app's form fields, one per input, each from its JSON Schema property: text, numbers (a
// slider too when bounded), a choice, a checkbox, a list, JSON, and paths picked (or uploaded)
// under the server's roots. A value the server refused shows its reason beside its field.

import { type ReactNode, useState } from 'react';
import { type FieldProps, type FieldValue, type Json, type Property, fieldKind, labelOf } from './values';
import { PathField } from './PathField';

export function Field(props: FieldProps) {
  const { name, prop, error } = props;
  const id = `gb-input-${name}`;
  return (
    <div className={`gb-appfield${error ? ' gb-appfield-invalid' : ''}`} data-field={name}>
      <label className="gb-appfield-label" htmlFor={id}>
        {labelOf(name)}
        {prop.minimum !== undefined || prop.maximum !== undefined ? (
          <span className="gb-muted"> {bounds(prop)}</span>
        ) : null}
      </label>
      <FieldInput {...props} id={id} />
      {prop.description ? <div className="gb-appfield-help">{prop.description}</div> : null}
      {error ? (
        <div className="gb-appfield-error" role="alert" data-error-for={name}>
          {error}
        </div>
      ) : null}
    </div>
  );
}

function bounds(prop: Property): string {
  if (prop.minimum !== undefined && prop.maximum !== undefined) return `(${prop.minimum} to ${prop.maximum})`;
  return prop.minimum !== undefined ? `(at least ${prop.minimum})` : `(at most ${prop.maximum})`;
}

function FieldInput(props: FieldProps & { id: string }): ReactNode {
  const kind = fieldKind(props.prop);
  if (kind === 'boolean') return <BooleanInput {...props} />;
  if (kind === 'choice') return <ChoiceInput {...props} />;
  if (kind === 'number' || kind === 'integer') return <NumberInput {...props} />;
  if (kind === 'path') return <PathField {...props} />;
  if (kind === 'list') return <ListInput {...props} />;
  if (kind === 'json' || kind === 'code') return <AreaInput {...props} mono />;
  return <TextInput {...props} />;
}

type InputProps = FieldProps & { id: string };

function TextInput({ id, value, onChange, disabled }: InputProps) {
  return (
    <input
      id={id}
      className="gb-input"
      value={String(value ?? '')}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

function AreaInput({ id, value, onChange, disabled }: InputProps & { mono?: boolean }) {
  return (
    <textarea
      id={id}
      className="gb-input gb-mono"
      rows={4}
      value={String(value ?? '')}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

function BooleanInput({ id, value, onChange, disabled }: InputProps) {
  return (
    <label className="gb-check gb-appfield-check">
      <input
        id={id}
        type="checkbox"
        checked={value === true}
        disabled={disabled}
        onChange={(e) => onChange(e.target.checked)}
      />
      {value === true ? 'yes' : 'no'}
    </label>
  );
}

function ChoiceInput({ id, prop, value, onChange, disabled }: InputProps) {
  const choices = prop.enum ?? [];
  const index = choices.findIndex((c) => JSON.stringify(c) === JSON.stringify(value));
  return (
    <select
      id={id}
      className="gb-input"
      value={String(index)}
      disabled={disabled}
      onChange={(e) => onChange(choices[Number(e.target.value)] as Json)}
    >
      {choices.map((choice, i) => (
        <option key={i} value={String(i)}>
          {typeof choice === 'string' ? choice : JSON.stringify(choice)}
        </option>
      ))}
    </select>
  );
}

function NumberInput({ id, prop, value, onChange, disabled }: InputProps) {
  const text = String(value ?? '');
  const slider = prop.minimum !== undefined && prop.maximum !== undefined;
  const step =
    fieldKind(prop) === 'integer' ? 1 : slider ? ((prop.maximum as number) - (prop.minimum as number)) / 100 : 'any';
  return (
    <div className="gb-appfield-number">
      <input
        id={id}
        className="gb-input gb-number"
        inputMode={fieldKind(prop) === 'integer' ? 'numeric' : 'decimal'}
        value={text}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
      />
      {slider ? (
        <input
          type="range"
          aria-label={`${labelOf(id.replace('gb-input-', ''))} slider`}
          min={prop.minimum}
          max={prop.maximum}
          step={step}
          value={Number.isFinite(Number(text)) && text !== '' ? Number(text) : (prop.minimum as number)}
          disabled={disabled}
          onChange={(e) => onChange(e.target.value)}
        />
      ) : null}
    </div>
  );
}

function ListInput(props: InputProps) {
  const { name, prop, value, onChange, disabled } = props;
  const items = Array.isArray(value) ? value : [];
  const [fresh, setFresh] = useState(0);
  const itemProp = prop.items ?? { type: 'string' };
  const set = (index: number, item: FieldValue): void => onChange(items.map((old, i) => (i === index ? item : old)));
  return (
    <div className="gb-appfield-list" id={props.id}>
      {items.map((item, i) => (
        <div className="gb-appfield-item" key={`${fresh}-${i}`}>
          <FieldInput
            {...props}
            id={`${props.id}-${i}`}
            name={`${name}[${i}]`}
            prop={itemProp}
            value={item}
            onChange={(v) => set(i, v)}
          />
          <button
            className="gb-icon"
            aria-label={`remove item ${i + 1} of ${name}`}
            disabled={disabled}
            onClick={() => onChange(items.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      <button
        className="gb-button gb-quiet"
        disabled={disabled}
        onClick={() => {
          setFresh(fresh + 1);
          onChange([...items, fieldKind(itemProp) === 'boolean' ? false : '']);
        }}
      >
        + Add
      </button>
    </div>
  );
}
