// A number field that keeps what is typed until it is a number (`1.`, `-`), int or float.

import { useEffect, useState } from 'react';
import type { WidgetProps } from './types';

export function parseNumber(text: string, integer: boolean): number | null {
  if (text.trim() === '') return null;
  const value = Number(text);
  if (!Number.isFinite(value)) return null;
  return integer && !Number.isInteger(value) ? null : value;
}

export function NumberWidget({ type, value, fallback, onChange, label }: WidgetProps) {
  const shown = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  const [text, setText] = useState(shown);
  useEffect(() => setText(shown), [shown]);
  const integer = type === 'int';
  const valid = text === '' || parseNumber(text, integer) !== null;
  return (
    <input
      className={`nodrag gb-input gb-number${valid ? '' : ' gb-invalid'}`}
      aria-label={label}
      inputMode={integer ? 'numeric' : 'decimal'}
      value={text}
      placeholder={fallback === null ? '' : String(fallback)}
      title={valid ? undefined : integer ? 'a whole number' : 'a number'}
      onChange={(e) => {
        setText(e.target.value);
        if (e.target.value === '') onChange(undefined);
        const number = parseNumber(e.target.value, integer);
        if (number !== null) onChange(number);
      }}
      onBlur={() => setText(shown)}
    />
  );
}
