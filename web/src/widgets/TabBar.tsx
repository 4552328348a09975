// A row of tabs: the current one pressed, each a button; what follows a tab's name (a count) is the caller's.

import type { ReactNode } from 'react';

interface TabBarProps<T extends string> {
  tabs: readonly (readonly [T, string])[];
  current: T;
  onPick: (tab: T) => void;
  /** Drawn after the tab's name: a count, a badge. */
  after?: (tab: T) => ReactNode;
}

export function TabBar<T extends string>({ tabs, current, onPick, after }: TabBarProps<T>) {
  return (
    <nav className="gb-tabs" role="tablist">
      {tabs.map(([tab, label]) => (
        <button
          key={tab}
          role="tab"
          aria-selected={current === tab}
          className={current === tab ? 'gb-active' : ''}
          onClick={() => onPick(tab)}
        >
          {label}
          {after?.(tab)}
        </button>
      ))}
    </nav>
  );
}
