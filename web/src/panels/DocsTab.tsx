// The node kind's help page: its docstring and its parameters.

import type { NodeInfo } from '../catalog';
import { originText } from '../origins';
import { Markdown } from './Markdown';

export function DocsTab({ spec, type }: { spec: NodeInfo | undefined; type: string }) {
  if (!spec)
    return (
      <p className="gb-empty">
        No node kind named “{type}” is loaded. Add a node file that defines it, or replace this node.
      </p>
    );
  return (
    <div className="gb-docs">
      <p className="gb-muted">
        {spec.kind}
        {spec.category ? ` · ${spec.category}` : ''} · outputs {spec.outputs.join(', ') || 'none'}
      </p>
      <p className="gb-muted gb-docs-origin" data-origin={spec.pack_kind}>
        from <span className={`gb-origin gb-origin-${spec.pack_kind}`}>{originText(spec)}</span>
      </p>
      {spec.doc ? <Markdown text={spec.doc} /> : <p className="gb-empty">This node has no docstring.</p>}
      {spec.params.length ? (
        <table className="gb-param-table">
          <thead>
            <tr>
              <th>parameter</th>
              <th>type</th>
              <th>default</th>
            </tr>
          </thead>
          <tbody>
            {spec.params.map((p) => (
              <tr key={p.name}>
                <td>
                  <code>{p.name}</code>
                  {p.required ? <span className="gb-required">*</span> : null}
                  {p.description ? <div className="gb-muted">{p.description}</div> : null}
                </td>
                <td>{p.type}</td>
                <td>
                  <code>{p.default === null ? '—' : JSON.stringify(p.default)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
