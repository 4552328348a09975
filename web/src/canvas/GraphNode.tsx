// A workflow node on the canvas: header, ports, parameter widgets, live status, prompt, errors.

import { memo, useMemo, useState } from 'react';
import { Handle, NodeResizeControl, Position, type NodeProps } from '@xyflow/react';
import { OFFLINE, run } from '../actions/run';
import type { NodeInfo } from '../catalog';
import { useExposedPorts } from '../hooks/useExposedPorts';
import { useNodeProblems } from '../hooks/useNodeProblems';
import { useNodePrompt } from '../hooks/useNodePrompt';
import { useNodeRun } from '../hooks/useNodeRun';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { isOffline, useRun } from '../store/run';
import { isActive } from '../store/runState';
import { changedSinceRun, useRanWith } from '../store/ranWith';
import { useUi } from '../store/ui';
import { specOf } from '../workflow/components';
import { Icon } from '../panels/Icon';
import { LibraryEditBar } from './LibraryEditBar';
import { NodeMedia } from './NodeMedia';
import { NodeProblems } from './NodeProblems';
import { NodeStatus } from './NodeStatus';
import { ParamRow, UnknownParamRow } from './ParamRow';
import { outputToggles } from './OutputToggle';
import { Ports } from './Ports';
import { PromptForm } from './PromptForm';
import { type GraphFlowNode, titleOf } from '../workflow/flow';

/** `"in|A"`-style keys keep the selectors' results primitive, so nodes re-render only on change. */
function useWires(id: string): { into: Map<string, string>; handlesIn: string[]; handlesOut: string[] } {
  const key = useEditor((s) =>
    s.edges
      .filter((e) => e.target === id || e.source === id)
      .map((e) => (e.target === id ? `i\t${e.targetHandle ?? 'in'}\t${e.source}` : `o\t${e.sourceHandle ?? 'out'}\t`))
      .join('\n'),
  );
  return useMemo(() => {
    const into = new Map<string, string>();
    const handlesIn: string[] = [];
    const handlesOut: string[] = [];
    for (const line of key ? key.split('\n') : []) {
      const [side, handle = '', source = ''] = line.split('\t');
      if (side === 'i') {
        into.set(handle, source);
        handlesIn.push(handle);
      } else handlesOut.push(handle);
    }
    return { into, handlesIn, handlesOut };
  }, [key]);
}

/** The node kind's ports, plus any that wires in the file use but the kind lacks (shown red). */
function portsOf(spec: NodeInfo | undefined, handlesIn: string[], handlesOut: string[], params: string[]) {
  const inputs = spec ? [...spec.inputs] : [];
  const outputs = spec ? [...spec.outputs] : [];
  const declared = new Set(spec ? spec.params.map((p) => p.name) : params);
  const strayIn = [...new Set(handlesIn.filter((h) => !inputs.includes(h) && !declared.has(h)))];
  const strayOut = [...new Set(handlesOut.filter((h) => !outputs.includes(h)))];
  return {
    inputs: [...inputs, ...strayIn],
    outputs: [...outputs, ...strayOut],
    unknown: { in: new Set(strayIn), out: new Set(strayOut) },
  };
}

const MODE_TITLES = {
  bypass:
    'Bypassed: it does not run, and what flows into it passes through unchanged (Ctrl+B again, or its menu, to run it)',
  mute: 'Muted: it does not run, and nothing flows from it (Ctrl+M again, or its menu, to run it)',
};

/**
 * Node-RED's inject button: this source runs again (not from the cache), and so does what it
 * feeds. It sits left of the output, where a step has its input, so the title keeps a step's room.
 */
function TriggerButton({ id }: { id: string }) {
  const offline = useRun(isOffline);
  const running = useRun((s) => isActive(s.run));
  const title = offline
    ? OFFLINE
    : running
      ? 'a run is going: wait for it to end, or stop it'
      : 'run this source again (not from the cache) and everything it feeds';
  return (
    <button
      className="gb-trigger nodrag"
      disabled={offline || running}
      title={title}
      aria-label={`run ${id} again`}
      onClick={() => void run('trigger', id)}
    >
      <Icon name="inject" size={12} />
      <span>run again</span>
    </button>
  );
}

type Mode = GraphFlowNode['data']['mode'];
type NodeRunOf = ReturnType<typeof useNodeRun>;

interface Flags {
  collapsed: boolean;
  selected: boolean;
  problems: boolean;
  failed: boolean;
  asking: boolean;
  stale: boolean;
}

function nodeClasses(data: GraphFlowNode['data'], kind: string, nodeRun: NodeRunOf, flags: Flags): string {
  return [
    'gb-node',
    flags.collapsed ? 'gb-collapsed' : '',
    data.mode ? `gb-mode-${data.mode}` : '',
    data.color ? `gb-color-${data.color}` : '',
    `gb-kind-${kind}`,
    `gb-state-${nodeRun?.state ?? 'idle'}`,
    flags.selected ? 'gb-selected' : '',
    flags.problems ? 'gb-has-problems' : '',
    flags.failed ? 'gb-failed' : '',
    flags.asking ? 'gb-asking' : '',
    flags.stale ? 'gb-stale' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function FoldButton({ id, collapsed }: { id: string; collapsed: boolean }) {
  const setCollapsed = useEditor((s) => s.setCollapsed);
  return (
    <button
      className="gb-icon gb-fold nodrag"
      title={collapsed ? 'unfold' : 'fold to its title and ports'}
      aria-label={`${collapsed ? 'unfold' : 'fold'} ${id}`}
      aria-expanded={!collapsed}
      onClick={() => setCollapsed(id, !collapsed)}
    >
      {collapsed ? '▸' : '▾'}
    </button>
  );
}

function RunToButton({ id }: { id: string }) {
  const offline = useRun(isOffline);
  return (
    <button
      className="gb-icon nodrag"
      disabled={offline}
      title={offline ? OFFLINE : 'run up to this node'}
      aria-label={`run up to ${id}`}
      onClick={() => void run('until', id)}
    >
      <Icon name="runTo" size={12} />
    </button>
  );
}

interface HeaderProps {
  id: string;
  data: GraphFlowNode['data'];
  spec: NodeInfo | undefined;
  collapsed: boolean;
}

/** Marks a node changed (or added) since the last run of this workflow: it runs again next time. */
function ChangedBadge({ id, data }: { id: string; data: GraphFlowNode['data'] }) {
  const path = useEditor((s) => (s.inside.length ? undefined : s.file?.path));
  const changed = useRanWith((s) => changedSinceRun(s, path, id, data));
  return changed ? (
    <span className="gb-changed-badge" title="changed since the last run: it runs again next time">
      changed
    </span>
  ) : null;
}

/** The node's title: a double-click renames it in place (a component's opens it instead). */
function NodeTitle({ id, data, spec }: { id: string; data: GraphFlowNode['data']; spec: NodeInfo | undefined }) {
  const [editing, setEditing] = useState(false);
  const title = titleOf(data);
  if (editing) return <TitleInput id={id} data={data} done={() => setEditing(false)} />;
  return (
    <span
      className="gb-title"
      title={`${title === data.type ? '' : `${title}: `}${data.type}${spec ? `, a ${spec.kind}` : ''} (id ${id}); double-click to rename`}
      onDoubleClick={(event) => {
        if (data.component) return; // it opens the component (canvasEvents.onNodeDoubleClick)
        event.stopPropagation();
        setEditing(true);
      }}
    >
      {title}
    </span>
  );
}

/** The title being renamed: Enter or leaving the field keeps it, Escape goes back; empty: the type's name. */
function TitleInput({ id, data, done }: { id: string; data: GraphFlowNode['data']; done(): void }) {
  const [text, setText] = useState(data.label || titleOf(data));
  const keep = (): void => {
    const label = text.trim() === data.type ? '' : text.trim();
    if (label !== data.label) useEditor.getState().setLabel(id, label);
    done();
  };
  return (
    <input
      className="gb-input gb-title-edit nodrag"
      aria-label={`rename ${id}`}
      autoFocus
      value={text}
      onFocus={(event) => event.target.select()}
      onChange={(event) => setText(event.target.value)}
      onBlur={keep}
      onKeyDown={(event) => {
        event.stopPropagation();
        if (event.key === 'Enter') keep();
        if (event.key === 'Escape') done();
      }}
    />
  );
}

function NodeHeader({ id, data, spec, collapsed }: HeaderProps) {
  const loaded = useCatalog((s) => s.loaded);
  const inspect = useUi((s) => s.inspect);
  const mode = data.mode;
  return (
    <header className="gb-node-header">
      <FoldButton id={id} collapsed={collapsed} />
      <span className="gb-dot" />
      <NodeTitle id={id} data={data} spec={spec} />
      <ChangedBadge id={id} data={data} />
      <span className="gb-kind">{spec ? spec.kind : loaded ? 'unknown type' : ''}</span>
      {mode ? (
        <span className={`gb-mode-badge gb-mode-badge-${mode}`} title={MODE_TITLES[mode]}>
          {mode === 'bypass' ? 'bypassed' : 'muted'}
        </span>
      ) : null}
      {spec && spec.kind !== 'resource' && !mode ? <RunToButton id={id} /> : null}
      <button
        className="gb-icon nodrag"
        title="docs, outputs and logs"
        aria-label={`about ${id}`}
        onClick={() => inspect(id, 'docs')}
      >
        <Icon name="help" size={13} />
      </button>
    </header>
  );
}

/** A folded node keeps its wired parameter handles and a count of its problems. */
function FoldedHandles({ into, problems }: { into: Map<string, string>; problems: { message: string }[] }) {
  return (
    <div className="gb-folded-handles">
      {[...into.keys()]
        .filter((h) => h !== 'in')
        .map((h) => (
          <Handle key={h} type="target" id={h} position={Position.Left} className="gb-handle gb-handle-param" />
        ))}
      {problems.length ? (
        <span className="gb-folded-problems" title={problems.map((p) => p.message).join('\n')}>
          ⚠ {problems.length} problem{problems.length === 1 ? '' : 's'}
        </span>
      ) : null}
    </div>
  );
}

interface ParamsProps {
  id: string;
  data: GraphFlowNode['data'];
  spec: NodeInfo | undefined;
  extra: string[];
  into: Map<string, string>;
}

function Params({ id, data, spec, extra, into }: ParamsProps) {
  if (!spec?.params.length && !extra.length) return null;
  return (
    <div className="gb-params">
      {spec?.params.map((p) => (
        <ParamRow
          key={p.name}
          nodeId={id}
          param={p}
          value={data.params[p.name]}
          wiredFrom={into.get(p.name)}
          input={data.inputs?.[p.name]}
        />
      ))}
      {extra.map((name) => (
        <UnknownParamRow key={name} nodeId={id} name={name} value={data.params[name]} undeclared={!!spec} />
      ))}
    </div>
  );
}

function ModeStatus({ mode }: { mode: NonNullable<Mode> }) {
  return (
    <div className="gb-status gb-status-off" title={MODE_TITLES[mode]}>
      <span className="gb-status-word">
        {mode === 'bypass' ? 'bypassed: its input passes through' : 'muted: nothing flows on'}
      </span>
    </div>
  );
}

/** Drag the right edge to make the node wider or narrower. */
function WidthHandle() {
  return (
    <NodeResizeControl
      className="gb-resize nodrag"
      position="right"
      resizeDirection="horizontal"
      minWidth={200}
      maxWidth={900}
    />
  );
}

function GraphNodeView({ id, data, selected }: NodeProps<GraphFlowNode>) {
  const spec = useCatalog((s) => specOf(data, s.catalog));
  const problems = useNodeProblems(id);
  const nodeRun = useNodeRun(id);
  const prompt = useNodePrompt(id);
  const stale = useRun(isOffline) && !!nodeRun;
  const { into, handlesIn, handlesOut } = useWires(id);
  const exposed = useExposedPorts(id);
  const names = Object.keys(data.params);
  const ports = portsOf(spec, handlesIn, handlesOut, names);
  const extra = spec ? names.filter((n) => !spec.params.some((p) => p.name === n)) : names;
  const kind = spec?.kind ?? 'unknown';
  const failed = (nodeRun?.errors.length ?? 0) > 0 || nodeRun?.state === 'failed';
  const collapsed = !!data.collapsed;
  const mode = data.mode;
  const flags = { collapsed, selected: !!selected, problems: !!problems.length, failed, asking: !!prompt, stale };
  return (
    <div className={nodeClasses(data, kind, nodeRun, flags)} data-node={id} data-type={data.type}>
      <WidthHandle />
      <NodeHeader id={id} data={data} spec={spec} collapsed={collapsed} />
      {data.libraryEdit ? <LibraryEditBar id={id} edit={data.libraryEdit} /> : null}
      {collapsed ? null : <NodeProblems problems={problems} />}
      <Ports
        {...ports}
        counts={nodeRun?.counts ?? {}}
        resource={kind === 'resource'}
        exposed={exposed}
        action={spec?.kind === 'source' && !mode ? <TriggerButton id={id} /> : undefined}
        toggle={kind === 'resource' ? undefined : outputToggles(id, data.shown, spec?.category ?? '')}
      />
      {collapsed ? (
        <FoldedHandles into={into} problems={problems} />
      ) : (
        <Params id={id} data={data} spec={spec} extra={extra} into={into} />
      )}
      {prompt ? <PromptForm prompt={prompt} /> : null}
      {collapsed ? null : <NodeMedia id={id} run={nodeRun} />}
      {mode ? (
        <ModeStatus mode={mode} />
      ) : (
        <NodeStatus id={id} run={nodeRun} resource={kind === 'resource'} stale={stale} />
      )}
    </div>
  );
}

export const GraphNode = memo(GraphNodeView);
