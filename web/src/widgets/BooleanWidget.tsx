// A checkbox; unset shows the default.

import type { WidgetProps } from './types';

export function BooleanWidget({ value, fallback, onChange, label }: WidgetProps) {
  const checked =
    typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : fallback === true;
  return (
    <label className="nodrag gb-check">
      <input type="checkbox" aria-label={label} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span>{checked ? 'true' : 'false'}</span>
    </label>
  );
}
