// What every parameter widget receives.

import type { Json } from '../workflow/format';

export interface WidgetProps {
  /** The parameter's declared type: number, int, string, list[int], ... */
  type: string;
  value: Json | undefined;
  fallback: Json;
  /** `undefined` removes the value, so the node's default applies. */
  onChange(value: Json | undefined): void;
  label: string;
}
