// The right-hand panel: the inspected node's outputs, logs, errors and docs, or, with no node
// inspected, the workflow's description, problems and the shortcuts.

import { clear } from '../actions/run';
import { useDropBeside } from '../hooks/useDropBeside';
import { useNodeProblems } from '../hooks/useNodeProblems';
import { useNodeRun } from '../hooks/useNodeRun';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { runOf, useRun } from '../store/run';
import { type InspectorTab, useUi } from '../store/ui';
import { specOf } from '../workflow/components';
import { titleOf } from '../workflow/flow';
import { TabBar } from '../widgets/TabBar';
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

type NodeRunOf = ReturnType<typeof useNodeRun>;

/** `unnamed`: what the node is called while its label is empty (its type, or a library component's name). */
function InspectorHead({ id, label, type, unnamed }: { id: string; label: string; type: string; unnamed: string }) {
  const setLabel = useEditor((s) => s.setLabel);
  return (
    <>
      <header className="gb-inspector-head">
        <input
          className="gb-input gb-title-input"
          aria-label="node title"
          value={label}
          placeholder={unnamed}
          onChange={(e) => setLabel(id, e.target.value)}
        />
        <button
          className="gb-icon"
          title="close"
          aria-label="close inspector"
          onClick={() => useUi.getState().inspect(null)}
        >
          ×
        </button>
      </header>
      <div className="gb-muted gb-inspector-sub">
        {type} · id <code>{id}</code>
        <button
          className="gb-link"
          onClick={() => void clear(id)}
          title="forget its cached outputs and those downstream"
        >
          clear cache
        </button>
      </div>
    </>
  );
}

function TabBadge({ tab, counts }: { tab: InspectorTab; counts: Record<InspectorTab, number> }) {
  return counts[tab] ? (
    <span className={`gb-badge${tab === 'errors' ? ' gb-badge-error' : ''}`}>{counts[tab]}</span>
  ) : null;
}

function NodeInspector({ id }: { id: string }) {
  const node = useEditor((s) => s.nodes.find((n) => n.id === id));
  const tab = useUi((s) => s.inspector);
  const run = useNodeRun(id);
  const path = useEditor((s) => s.file?.path);
  const runId = useRun((s) => runOf(s, path)?.run_id ?? '');
  const problems = useNodeProblems(id);
  const type = node?.type === 'graph' ? node.data.type : '';
  const spec = useCatalog((s) => (node?.type === 'graph' ? specOf(node.data, s.catalog) : s.catalog.nodes[type]));
  if (!node || node.type !== 'graph') return <WorkflowOverview />;
  const counts = tabCounts(run, problems.length);
  return (
    <div className="gb-inspector-body" data-inspecting={id}>
      <InspectorHead
        id={id}
        label={node.data.label}
        type={node.data.type}
        unnamed={titleOf({ ...node.data, label: '' })}
      />
      <TabBar
        tabs={TABS}
        current={tab}
        onPick={useUi.getState().setInspector}
        after={(key) => <TabBadge tab={key} counts={counts} />}
      />
      <div className="gb-scroll gb-tab-body">
        {tab === 'output' ? <OutputsTab id={id} run={run} runId={runId} outputs={spec?.outputs ?? []} /> : null}
        {tab === 'logs' ? <LogsTab run={run} /> : null}
        {tab === 'errors' ? <ErrorsTab run={run} problems={problems} /> : null}
        {tab === 'docs' ? <DocsTab spec={spec} type={node.data.type} /> : null}
      </div>
    </div>
  );
}

function tabCounts(run: NodeRunOf, problems: number): Record<InspectorTab, number> {
  return { output: 0, logs: run?.logs.length ?? 0, errors: (run?.errors.length ?? 0) + problems, docs: 0 };
}

export function Inspector() {
  const inspected = useUi((s) => s.inspected);
  const drops = useDropBeside();
  return (
    <aside className="gb-inspector" {...drops}>
      {inspected ? <NodeInspector id={inspected} /> : <WorkflowOverview />}
    </aside>
  );
}
