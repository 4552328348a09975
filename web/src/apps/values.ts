// An app's form as data: each input's field from its JSON Schema property (graphbook.inputs
// writes them), the values it starts with, and the values a run is asked with. Pure functions.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One input's JSON Schema property, as the server writes it. */
export interface Property {
  type?: string;
  description?: string;
  default?: Json;
  minimum?: number;
  maximum?: number;
  enum?: Json[];
  format?: string;
  'x-accept'?: string[];
  items?: Property;
  contentMediaType?: string;
}

export interface Schema {
  properties?: Record<string, Property>;
  required?: string[];
}

export type FieldKind = 'boolean' | 'choice' | 'number' | 'integer' | 'path' | 'list' | 'json' | 'code' | 'text';

/** How the form asks for a property's value. */
export function fieldKind(prop: Property): FieldKind {
  if (prop.enum?.length) return 'choice';
  if (prop.type === 'boolean') return 'boolean';
  if (prop.type === 'integer') return 'integer';
  if (prop.type === 'number') return 'number';
  if (prop.type === 'array') return 'list';
  if (prop.type === 'object') return 'json';
  if (prop.format === 'file' || prop.format === 'folder' || prop.format === 'image') return 'path';
  if (prop.contentMediaType === 'text/x-python') return 'code';
  return prop.type === 'string' ? 'text' : 'json';
}

/** What a field shows: text for text boxes (numbers too, so that a half-typed one stays as it
 * is), a list of item texts for lists, the value itself for choices and booleans. */
export type FieldValue = string | boolean | Json | FieldValue[];

/** What a form field is given: its input, its value, and where its changes and refusals go. */
export interface FieldProps {
  name: string;
  prop: Property;
  value: FieldValue;
  onChange(value: FieldValue): void;
  /** The workflow, for uploads; none in a preview. */
  workflow: string | null;
  maxUpload: number;
  /** A refusal to show beside the field (the server's, or an upload's). */
  error?: string | undefined;
  onError(message: string | null): void;
  disabled?: boolean;
}

/** The value a field starts with: the input's default (its workflow's own value). */
export function initialValue(prop: Property): FieldValue {
  const value = prop.default;
  switch (fieldKind(prop)) {
    case 'boolean':
      return value === true;
    case 'choice':
      return value ?? prop.enum?.[0] ?? null;
    case 'list':
      return Array.isArray(value) ? value.map((item) => shownText(item, prop.items ?? {})) : [];
    case 'json':
      return value === undefined ? '' : JSON.stringify(value, null, 2);
    default:
      return value === undefined || value === null ? '' : String(value);
  }
}

function shownText(value: Json, prop: Property): string {
  return fieldKind(prop) === 'json' ? JSON.stringify(value) : value === null ? '' : String(value);
}

export function initialValues(schema: Schema): Record<string, FieldValue> {
  return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, prop]) => [name, initialValue(prop)]));
}

/** Values given for a past run (its inputs), over the defaults: reopening the run. */
export function valuesOf(schema: Schema, inputs: Record<string, unknown>): Record<string, FieldValue> {
  const values = initialValues(schema);
  for (const [name, prop] of Object.entries(schema.properties ?? {}))
    if (name in inputs) values[name] = initialValue({ ...prop, default: inputs[name] as Json });
  return values;
}

/** A field's text as the value a run takes: a number once it reads as one (else the text, which
 * the server refuses beside the field), JSON read, list items each read as their type. */
export function inputValue(prop: Property, value: FieldValue): Json {
  const kind = fieldKind(prop);
  if (kind === 'list') return (Array.isArray(value) ? value : []).map((item) => inputValue(prop.items ?? {}, item));
  if (typeof value !== 'string') return value as Json;
  if (kind === 'number' || kind === 'integer') {
    const number = Number(value);
    return value.trim() !== '' && Number.isFinite(number) ? number : value;
  }
  if (kind === 'json') return readJson(value);
  return value;
}

function readJson(text: string): Json {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** Every field's value, for a run. */
export function inputValues(schema: Schema, values: Record<string, FieldValue>): Record<string, Json> {
  const props = schema.properties ?? {};
  return Object.fromEntries(
    Object.keys(props).map((name) => [name, inputValue(props[name] as Property, values[name] ?? '')]),
  );
}

/** An input's name as a label: `max_distance` -> Max distance. */
export function labelOf(name: string): string {
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
