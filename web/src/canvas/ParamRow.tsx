// One parameter inside a node: its handle (a resource may be wired to any parameter), its name,
// and its widget; a wired parameter shows where its value comes from instead.

import { Handle, Position } from '@xyflow/react';
import type { ParamSpec } from '../catalog';
import { useEditor } from '../store/editor';
import type { NodeInput } from '../workflow/flow';
import { canvasInputs } from '../workflow/canvas';
import { INPUT_NAME, type Json } from '../workflow/format';
import { Widget } from '../widgets/Widget';

interface Props {
  nodeId: string;
  param: ParamSpec;
  value: Json | undefined;
  wiredFrom: string | undefined;
  /** Set when the parameter is a workflow input. */
  input?: NodeInput | undefined;
}

function tipOf(param: ParamSpec): string {
  return [
    param.description,
    `${param.type}${param.required ? ', required' : ''}`,
    param.default !== null ? `default: ${JSON.stringify(param.default)}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

function ParamValue({ nodeId, param, value, wiredFrom }: Props) {
  const setParam = useEditor((s) => s.setParam);
  if (wiredFrom) return <span className="gb-wired">← {wiredFrom}</span>;
  if (param.type === 'resource') return <span className="gb-hint">wire a resource</span>;
  return (
    <Widget
      type={param.type}
      label={param.name}
      value={value}
      fallback={param.default as Json}
      onChange={(v) => setParam(nodeId, param.name, v)}
    />
  );
}

function ResetButton({ nodeId, param }: { nodeId: string; param: ParamSpec }) {
  const setParam = useEditor((s) => s.setParam);
  return (
    <button
      className="gb-icon gb-reset nodrag"
      title={`reset to the default (${JSON.stringify(param.default)})`}
      aria-label={`reset ${param.name}`}
      onClick={() => setParam(nodeId, param.name, undefined)}
    >
      ↺
    </button>
  );
}

export function ParamRow(props: Props) {
  const { nodeId, param, value, wiredFrom, input } = props;
  const resource = param.type === 'resource';
  const wide = !wiredFrom && (param.type === 'function' || param.type === 'dict' || param.type.startsWith('list['));
  const isSet = value !== undefined;
  const tip = tipOf(param);
  return (
    <div
      className={`gb-param${resource ? ' gb-param-resource' : ''}${wide ? ' gb-param-wide' : ''}`}
      data-param={param.name}
    >
      <Handle
        type="target"
        id={param.name}
        position={Position.Left}
        className={`gb-handle gb-handle-param${resource ? ' gb-handle-resource' : ''}`}
      />
      <div className="gb-param-name" title={`${param.name}${input ? ` (workflow input '${input.name}')` : ''}\n${tip}`}>
        {resource || wiredFrom ? null : <InputToggle nodeId={nodeId} param={param.name} input={input} />}
        <Breakable name={param.name} />
        {param.required && !isSet && !wiredFrom && param.default === null ? (
          <span className="gb-required">*</span>
        ) : null}
      </div>
      <div className="gb-param-value">
        <ParamValue {...props} />
      </div>
      {isSet && !wiredFrom && !resource ? (
        <ResetButton nodeId={nodeId} param={param} />
      ) : (
        <span className="gb-reset-space" />
      )}
    </div>
  );
}

/** A name that may break after its underscores (`labels_from_` / `folders`), so a long one shows whole. */
function Breakable({ name }: { name: string }) {
  const parts = name.split(/(?<=_)/);
  return parts.map((part, i) => (
    <span key={i}>
      {part}
      {i < parts.length - 1 ? <wbr /> : null}
    </span>
  ));
}

/** Marks the parameter as a workflow input (named after it, made unique) or unmarks it. */
function InputToggle({ nodeId, param, input }: { nodeId: string; param: string; input: NodeInput | undefined }) {
  const setInput = useEditor((s) => s.setInput);
  const toggle = () => {
    if (input) return setInput(nodeId, param, null);
    const taken = new Set(Object.keys(canvasInputs(useEditor.getState().nodes)));
    setInput(nodeId, param, { name: freshInputName(param, taken) });
  };
  const label = input ? `stop using ${param} as workflow input '${input.name}'` : `use ${param} as a workflow input`;
  return (
    <button
      className={`gb-input-toggle nodrag${input ? ' gb-input-on' : ''}`}
      title={label}
      aria-label={label}
      aria-pressed={!!input}
      onClick={toggle}
    >
      ⇥
    </button>
  );
}

/** `name`, else `name_2`, `name_3`, ...: an input name no other input has. */
export function freshInputName(name: string, taken: ReadonlySet<string>): string {
  const stem = INPUT_NAME.test(name) ? name : `input_${name.replace(/[^A-Za-z0-9_-]+/g, '_')}`;
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) if (!taken.has(`${stem}_${n}`)) return `${stem}_${n}`;
}

/** A parameter the node kind does not declare: kept as it is, shown so it can be removed. */
export function UnknownParamRow({
  nodeId,
  name,
  value,
  undeclared,
}: {
  nodeId: string;
  name: string;
  value: Json | undefined;
  undeclared: boolean;
}) {
  const setParam = useEditor((s) => s.setParam);
  return (
    <div className={`gb-param${undeclared ? ' gb-param-unknown' : ''}`} data-param={name}>
      <Handle type="target" id={name} position={Position.Left} className="gb-handle gb-handle-param" />
      <div className="gb-param-name" title={undeclared ? `${name}: not a parameter of this node kind` : name}>
        {name}
      </div>
      <div className="gb-param-value gb-mono gb-ellipsis">{JSON.stringify(value)}</div>
      <button
        className="gb-icon nodrag"
        title="remove this value"
        aria-label={`remove ${name}`}
        onClick={() => setParam(nodeId, name, undefined)}
      >
        ×
      </button>
    </div>
  );
}
