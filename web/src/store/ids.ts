// Readable node ids for new nodes: `DumpJSONL` -> `dump_jsonl`, then `dump_jsonl_2`, ...

export function snakeCase(name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return snake || 'node';
}

export function freshId(base: string, taken: ReadonlySet<string>): string {
  const stem = snakeCase(base);
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) {
    const id = `${stem}_${n}`;
    if (!taken.has(id)) return id;
  }
}
