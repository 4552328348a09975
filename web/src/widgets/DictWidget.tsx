// A dict as key/value rows; values are read as JSON when they parse, else kept as text.

import { useEffect, useState } from 'react';
import { type Json, isObject } from '../workflow/format';
import type { WidgetProps } from './types';

type Row = [key: string, text: string];

const toRows = (value: Json | undefined): Row[] =>
  isObject(value) ? Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]) : [];

function parseValue(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

export function DictWidget({ value, fallback, onChange, label }: WidgetProps) {
  const source = value === undefined ? fallback : value;
  const [rows, setRows] = useState<Row[]>(toRows(source));
  const serial = JSON.stringify(source ?? null);
  useEffect(() => setRows(toRows(JSON.parse(serial) as Json)), [serial]);
  const commit = (next: Row[]): void => {
    setRows(next);
    onChange(Object.fromEntries(next.filter(([k]) => k !== '').map(([k, t]) => [k, parseValue(t)])));
  };
  return (
    <div
      className={`gb-list nodrag${value === undefined ? ' gb-defaulted' : ''}`}
      title={value === undefined ? 'the default; edit to change it' : undefined}
    >
      {rows.map(([key, text], i) => (
        <div className="gb-list-row" key={i}>
          <input
            className="gb-input gb-key"
            aria-label={`${label} key ${i}`}
            value={key}
            placeholder="key"
            onChange={(e) => commit(rows.map((r, j) => (j === i ? [e.target.value, r[1]] : r)))}
          />
          <input
            className="gb-input gb-mono"
            aria-label={`${label} value ${i}`}
            value={text}
            placeholder="value"
            onChange={(e) => commit(rows.map((r, j) => (j === i ? [r[0], e.target.value] : r)))}
          />
          <button className="gb-icon" title="remove" onClick={() => commit(rows.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button className="gb-add" aria-label={`add to ${label}`} onClick={() => commit([...rows, ['', '']])}>
        + key
      </button>
    </div>
  );
}
