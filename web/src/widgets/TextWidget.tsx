// A one-line text field. As in every field, emptying it removes the value, so the node's default
// applies, and the field says so ("default: …"); a value saved as "" reads "empty".

import type { WidgetProps } from './types';

export function TextWidget({ value, fallback, onChange, label }: WidgetProps) {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  return (
    <input
      className="nodrag gb-input"
      aria-label={label}
      value={text}
      placeholder={placeholder(value, fallback)}
      spellCheck={false}
      onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
    />
  );
}

/** What an empty field says: the default that applies, or that the value is "" (from a file). */
export function placeholder(value: WidgetProps['value'], fallback: WidgetProps['fallback']): string {
  if (value === '') return 'empty';
  if (fallback === null || fallback === undefined || fallback === '') return '';
  return `default: ${typeof fallback === 'string' ? fallback : JSON.stringify(fallback)}`;
}
