// The value a new parameter or list item of a type starts from.

import type { Json } from '../workflow/format';

export function blankOf(type: string): Json {
  if (type === 'number' || type === 'int' || type === 'float') return 0;
  if (type === 'boolean') return false;
  if (type === 'dict') return {};
  if (type.startsWith('list')) return [];
  if (type === 'json') return null;
  return '';
}
