// The right-hand panel: the inspected node's outputs, logs, errors and docs, or, with no node
// inspected, the workflow's description, problems and the shortcuts.

import { clear } from '../actions/run';
import { useNodeProblems } from '../hooks/useNodeProblems';
import { useNodeRun } from '../hooks/useNodeRun';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { runOf, useRun } from '../store/run';
import { type InspectorTab, useUi } from '../store/ui';
import { specOf } from '../workflow/components';
import { DocsTab } from './DocsTab';
import { ErrorsTab } from './ErrorsTab';
import { LogsTab } from './LogsTab';
import { OutputsTab } from './OutputsTab';
import { WorkflowOverview } from './WorkflowOverview';

const TABS: [InspectorTab, string][] = [
  ['output', 'Output'],
  ['logs', 'Logs'],
  ['errors', 'Errors'],
  ['docs', 'Docs'],
];

function NodeInspector({ id }: { id: string }) {
  const node = useEditor((s) => s.nodes.find((n) => n.id === id));
  const setLabel = useEditor((s) => s.setLabel);
  const tab = useUi((s) => s.inspector);
  const { setInspector, inspect } = useUi.getState();
  const run = useNodeRun(id);
  const path = useEditor((s) => s.file?.path);
  const runId = useRun((s) => runOf(s, path)?.run_id ?? '');
  const problems = useNodeProblems(id);
  const type = node?.type === 'graph' ? node.data.type : '';
  const spec = useCatalog((s) => (node?.type === 'graph' ? specOf(node.data, s.catalog) : s.catalog.nodes[type]));
  if (!node || node.type !== 'graph') return <WorkflowOverview />;
  const counts: Record<InspectorTab, number> = {
    output: 0,
    logs: run?.logs.length ?? 0,
    errors: (run?.errors.length ?? 0) + problems.length,
    docs: 0,
  };
  return (
    <div className="gb-inspector-body" data-inspecting={id}>
      <header className="gb-inspector-head">
        <input
          className="gb-input gb-title-input"
          aria-label="node title"
          value={node.data.label}
          placeholder={node.data.type}
          onChange={(e) => setLabel(id, e.target.value)}
        />
        <button className="gb-icon" title="close" aria-label="close inspector" onClick={() => inspect(null)}>
          ×
        </button>
      </header>
      <div className="gb-muted gb-inspector-sub">
        {node.data.type} · id <code>{id}</code>
        <button
          className="gb-link"
          onClick={() => void clear(id)}
          title="forget its cached outputs and those downstream"
        >
          clear cache
        </button>
      </div>
      <nav className="gb-tabs" role="tablist">
        {TABS.map(([key, label]) => (
          <button
            key={key}
            role="tab"
            aria-selected={tab === key}
            className={tab === key ? 'gb-active' : ''}
            onClick={() => setInspector(key)}
          >
            {label}
            {counts[key] ? (
              <span className={`gb-badge${key === 'errors' ? ' gb-badge-error' : ''}`}>{counts[key]}</span>
            ) : null}
          </button>
        ))}
      </nav>
      <div className="gb-scroll gb-tab-body">
        {tab === 'output' ? <OutputsTab id={id} run={run} runId={runId} outputs={spec?.outputs ?? []} /> : null}
        {tab === 'logs' ? <LogsTab run={run} /> : null}
        {tab === 'errors' ? <ErrorsTab run={run} problems={problems} /> : null}
        {tab === 'docs' ? <DocsTab spec={spec} type={node.data.type} /> : null}
      </div>
    </div>
  );
}

export function Inspector() {
  const inspected = useUi((s) => s.inspected);
  return <aside className="gb-inspector">{inspected ? <NodeInspector id={inspected} /> : <WorkflowOverview />}</aside>;
}
