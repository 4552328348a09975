// Python source for function parameters: monospace, Tab indents, grows with its lines.

import type { KeyboardEvent } from 'react';
import type { WidgetProps } from './types';

function indent(event: KeyboardEvent<HTMLTextAreaElement>, onChange: (text: string) => void): void {
  if (event.key !== 'Tab') return;
  event.preventDefault();
  const el = event.currentTarget;
  const { selectionStart: start, selectionEnd: end, value } = el;
  const next = `${value.slice(0, start)}    ${value.slice(end)}`;
  onChange(next);
  requestAnimationFrame(() => el.setSelectionRange(start + 4, start + 4));
}

export function CodeWidget({ value, fallback, onChange, label }: WidgetProps) {
  const text = typeof value === 'string' ? value : '';
  const rows = Math.min(12, Math.max(1, text.split('\n').length));
  return (
    <textarea
      className="nodrag nowheel gb-input gb-code"
      aria-label={label}
      value={text}
      rows={rows}
      spellCheck={false}
      placeholder={typeof fallback === 'string' ? fallback : 'lambda data: ...'}
      onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      onKeyDown={(e) => indent(e, (t) => onChange(t))}
    />
  );
}
