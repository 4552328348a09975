// A set of keys that a click adds or takes away: the legend's hidden curves, the palette's closed categories.

import { useState } from 'react';

/** The set with `key` taken away if it was there, else added; a new set, the old one untouched. */
export function toggled<T>(set: ReadonlySet<T>, key: T): ReadonlySet<T> {
  return set.has(key) ? new Set([...set].filter((x) => x !== key)) : new Set([...set, key]);
}

export function useToggleSet<T>(): [ReadonlySet<T>, (key: T) => void] {
  const [set, setSet] = useState<ReadonlySet<T>>(new Set());
  return [set, (key) => setSet((s) => toggled(s, key))];
}
