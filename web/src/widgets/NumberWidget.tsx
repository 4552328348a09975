// A number field, int or float. What is typed goes into the document as it is: a number once
// it is one, else the text itself (`2.5` in an int field, `abc`), which validation then shows as
// a problem on the node and which no run accepts (never the last valid value, silently).

import { useEffect, useState } from 'react';
import { placeholder } from './TextWidget';
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
      placeholder={placeholder(value, fallback)}
      title={valid ? undefined : integer ? 'a whole number' : 'a number'}
      onChange={(e) => {
        const typed = e.target.value;
        setText(typed);
        if (typed.trim() === '') return onChange(undefined);
        onChange(parseNumber(typed, integer) ?? typed);
      }}
      onBlur={() => setText(shown)}
    />
  );
}
