// The run state of one node in the open workflow's current run, or its last one seen here; a
// component node's is the sum of the nodes inside it (the run names them `component/inner`):
// `cached` only when every node inside was, and its outputs those of the nodes that hand them on.

import { useEffect, useMemo } from 'react';
import { useEditor } from '../store/editor';
import { pathPrefix } from '../store/inside';
import { useLibrary } from '../store/library';
import { runOf, useRun } from '../store/run';
import { type NodeRun, emptyNode } from '../store/runState';
import { bodyOf, libraryOf } from '../workflow/components';
import type { Json } from '../workflow/format';

/** A node's run; a component's also says which inner node (its run path) and output hands on each of its outputs. */
export type NodeRunView = NodeRun & { sources?: Record<string, { node: string; output: string }> };

const ORDER = ['failed', 'running', 'stopped', 'waiting', 'done', 'cached'] as const;

function handedOn(prefix: string, body: ReturnType<typeof bodyOf> | null, runs: Record<string, NodeRun>) {
  const counts: NodeRun['counts'] = {};
  const outputs: NodeRun['outputs'] = {};
  const sources: NonNullable<NodeRunView['sources']> = {};
  for (const [name, where] of Object.entries(body?.outputs ?? {})) {
    const inner = runs[prefix + where.node];
    counts[name] = inner?.counts[where.port] ?? 0;
    const latest = inner?.outputs[where.port];
    if (latest) outputs[name] = latest;
    sources[name] = { node: prefix + where.node, output: where.port };
  }
  return { counts, outputs, sources };
}

function summed(id: string, component: Record<string, Json>, runs: Record<string, NodeRun>): NodeRunView | undefined {
  const prefix = `${id}/`;
  const inner = Object.values(runs).filter((r) => r.node_id.startsWith(prefix));
  if (!inner.length) return undefined;
  const body = bodyOrNull(component);
  const state = ORDER.find((s) => inner.some((r) => r.state === s)) ?? 'waiting';
  return {
    ...emptyNode(id),
    state,
    ...handedOn(prefix, body, runs),
    received: Object.values(body?.inputs ?? {}).reduce((n, where) => n + (runs[prefix + where.node]?.received ?? 0), 0),
    seconds: Math.max(...inner.map((r) => r.seconds)),
    errors: inner.flatMap((r) => r.errors),
    logs: inner.flatMap((r) => r.logs),
  };
}

function bodyOrNull(component: Record<string, Json>): ReturnType<typeof bodyOf> | null {
  try {
    return bodyOf(component);
  } catch {
    return null; // a body the page cannot read: no sums
  }
}

export function useNodeRun(id: string): NodeRunView | undefined {
  const path = useEditor((s) => s.file?.path);
  const prefix = useEditor((s) => pathPrefix(s.inside));
  const component = useEditor((s) => {
    const node = s.nodes.find((n) => n.id === id);
    return node?.type === 'graph' ? node.data.component : undefined;
  });
  const library = libraryOf(component)?.library;
  const read = useLibrary((s) => (library ? s.bodies[library] : undefined));
  const inside = library ? read : component;
  const own = useRun((s) => runOf(s, path)?.nodes[prefix + id]);
  const runs = useRun((s) => (component ? runOf(s, path)?.nodes : undefined));
  useEffect(() => {
    if (library && !read && runs) void useLibrary.getState().load(library);
  }, [library, read, runs]);
  return useMemo(
    () => (inside && !own && runs ? summed(prefix + id, inside, runs) : own),
    [own, runs, inside, id, prefix],
  );
}
