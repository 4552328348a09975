// A list edited item by item with the widget of its item type; add and remove rows. The widget
// that edits an item is handed in (`Item`: Widget, which picks by type and holds this one).

import type { ComponentType } from 'react';
import type { Json } from '../workflow/format';
import { blankOf } from './blank';
import type { WidgetProps } from './types';

export function itemType(type: string): string {
  return type.startsWith('list[') && type.endsWith(']') ? type.slice(5, -1) : 'json';
}

export function ListWidget({
  type,
  value,
  fallback,
  onChange,
  label,
  Item,
}: WidgetProps & { Item: ComponentType<WidgetProps> }) {
  const items: Json[] = Array.isArray(value) ? value : Array.isArray(fallback) ? fallback : [];
  const inner = itemType(type);
  const set = (next: Json[]): void => onChange(next);
  return (
    <div
      className={`gb-list nodrag${value === undefined ? ' gb-defaulted' : ''}`}
      title={value === undefined ? 'the default; edit to change it' : undefined}
    >
      {items.map((item, i) => (
        <div className="gb-list-row" key={i}>
          <Item
            type={inner}
            label={`${label}[${i}]`}
            value={item}
            fallback={null}
            onChange={(v) => set(items.map((old, j) => (j === i ? (v ?? blankOf(inner)) : old)))}
          />
          <button
            className="gb-icon"
            title="remove"
            aria-label={`remove ${label}[${i}]`}
            onClick={() => set(items.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      <button className="gb-add" aria-label={`add to ${label}`} onClick={() => set([...items, blankOf(inner)])}>
        + item
      </button>
    </div>
  );
}
