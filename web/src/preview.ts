// Reading previews the server sends (the typed union of graphbook.previews, generated into
// protocol.ts): images to show, tensor summaries, short text.

import type { ImagePreview, Preview, TensorPreview } from './protocol';

export type { ImagePreview, Preview, TensorPreview };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An image there is something to show of: its full image, or a thumbnail of its file. */
export function isImage(value: unknown): value is ImagePreview {
  return (
    isRecord(value) && value.type === 'image' && (typeof value.url === 'string' || typeof value.thumb === 'string')
  );
}

/** What to show of an image: the full image if the server serves it, else its thumbnail. */
export const imageSrc = (image: ImagePreview): string => image.url ?? image.thumb ?? '';

/** An image's fields to list beside it: its file, its size and mode, its record's other fields
 * (not its URLs). */
export function imageFields(image: ImagePreview): [string, Preview][] {
  const own: [string, Preview][] = [];
  if (image.value != null) own.push(['value', image.value]);
  if (image.size != null) own.push(['size', image.size]);
  if (image.mode != null) own.push(['mode', image.mode]);
  return [...own, ...Object.entries(image.fields ?? {})];
}

/** The image's label (its record's `label`), for alternative text. */
export function imageLabel(image: ImagePreview): string | undefined {
  const label = image.fields?.label;
  return typeof label === 'string' ? label : undefined;
}

/** An image preview of what the server sends elsewhere (a gallery row), its fields beside it. */
export function imageOf(
  url: string | null,
  thumb: string | null,
  fields: Record<string, Preview>,
  more: Partial<ImagePreview> = {},
): ImagePreview {
  return { type: 'image', url, thumb, outside: null, size: null, mode: null, value: null, fields, ...more };
}

export function isTensor(value: unknown): value is TensorPreview {
  return isRecord(value) && (value.type === 'tensor' || value.type === 'array') && Array.isArray(value.shape);
}

/** Every image in a preview, depth first, at most `limit`. */
export function imagesIn(value: unknown, limit = 8, found: ImagePreview[] = []): ImagePreview[] {
  if (found.length >= limit) return found;
  if (isImage(value)) {
    found.push(value);
    return found;
  }
  const children = Array.isArray(value) ? value : isRecord(value) ? Object.values(value) : [];
  for (const child of children) imagesIn(child, limit, found);
  return found;
}

export function tensorText(t: TensorPreview): string {
  const stats = (['min', 'max', 'mean'] as const).flatMap((k) => {
    const value = t[k];
    return value == null ? [] : [`${k} ${formatNumber(value)}`];
  });
  return [`${t.type} ${t.dtype}[${t.shape.join('×')}]`, t.device, ...stats].filter(Boolean).join(' · ');
}

export function formatNumber(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

export function formatRate(rate: number): string {
  if (rate <= 0) return '';
  if (rate >= 1e6) return `${Math.round(rate / 1e6)}M/s`;
  if (rate >= 1e4) return `${Math.round(rate / 1e3)}k/s`;
  return rate >= 100 ? `${Math.round(rate)}/s` : `${rate.toFixed(1)}/s`;
}

export function formatSeconds(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)}m ${Math.round(seconds % 60)}s`;
}

/** `value` as one line of at most `max` characters (JSON for what is not a string). */
export function shortText(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
