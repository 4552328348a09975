// A one-line text field; the default shows as its placeholder.

import type { WidgetProps } from './types';

export function TextWidget({ value, fallback, onChange, label }: WidgetProps) {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  return (
    <input
      className="nodrag gb-input"
      aria-label={label}
      value={text}
      placeholder={fallback === null || fallback === undefined ? '' : String(fallback)}
      spellCheck={false}
      onChange={(e) => onChange(e.target.value === '' && value === undefined ? undefined : e.target.value)}
    />
  );
}
