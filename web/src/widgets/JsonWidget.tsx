// Any JSON value as text, for parameters whose items have no narrower type.

import { useEffect, useState } from 'react';
import type { Json } from '../workflow/format';
import type { WidgetProps } from './types';

export function JsonWidget({ value, fallback, onChange, label }: WidgetProps) {
  const shown = value === undefined ? '' : JSON.stringify(value);
  const [text, setText] = useState(shown);
  useEffect(() => setText(shown), [shown]);
  let valid = true;
  try {
    if (text) JSON.parse(text);
  } catch {
    valid = false;
  }
  return (
    <input
      className={`nodrag gb-input gb-mono${valid ? '' : ' gb-invalid'}`}
      aria-label={label}
      value={text}
      spellCheck={false}
      placeholder={fallback === null ? 'JSON' : JSON.stringify(fallback)}
      title={valid ? undefined : 'not valid JSON'}
      onChange={(e) => {
        setText(e.target.value);
        if (e.target.value === '') return onChange(undefined);
        try {
          onChange(JSON.parse(e.target.value) as Json);
        } catch {
          /* keep typing */
        }
      }}
    />
  );
}
