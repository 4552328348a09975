// The data input on the left and the outputs on the right, each output with its count; a
// source's run-again button sits where a step's input would be. Inside an opened component, the
// ports that are the component's own inputs and outputs say so.

import type { ReactNode } from 'react';
import { Handle, Position } from '@xyflow/react';
import type { Exposed } from '../hooks/useExposedPorts';

interface Props {
  inputs: string[];
  outputs: string[];
  counts: Record<string, number>;
  resource: boolean;
  unknown: { in: Set<string>; out: Set<string> };
  /** Shown at the left of the first row (a source has no input there). */
  action?: ReactNode;
  exposed?: Exposed;
  /** Shown beside each output (the toggle that makes it a result of the workflow's app). */
  toggle?: (output: string) => ReactNode;
}

/** A port that is the opened component's own input or output, by the component's name for it. */
function ExposedTag({ side, name }: { side: 'in' | 'out'; name: string | undefined }) {
  if (name === undefined) return null;
  const what = side === 'in' ? `the component's input '${name}' comes in here` : `the component's output '${name}'`;
  return (
    <span className={`gb-exposed gb-exposed-${side}`} data-exposed={name} title={what}>
      {side === 'in' ? `⇥ ${name}` : `${name} ⇥`}
    </span>
  );
}

export function Ports({ inputs, outputs, counts, resource, unknown, action, exposed, toggle }: Props) {
  const rows = Math.max(inputs.length, outputs.length, action ? 1 : 0);
  return (
    <div className="gb-ports">
      {Array.from({ length: rows }, (_, i) => {
        const input = inputs[i];
        const output = outputs[i];
        return (
          <div className="gb-port-row" key={i}>
            <div className="gb-port gb-port-in">
              {input !== undefined ? (
                <>
                  <Handle
                    type="target"
                    id={input}
                    position={Position.Left}
                    className={`gb-handle gb-handle-data${unknown.in.has(input) ? ' gb-handle-unknown' : ''}`}
                  />
                  <ExposedTag side="in" name={exposed?.in[input]} />
                  <span>{input}</span>
                </>
              ) : null}
              {i === 0 ? action : null}
            </div>
            <div className="gb-port gb-port-out">
              {output !== undefined ? (
                <>
                  {counts[output] !== undefined ? (
                    <span className="gb-count" data-output={output}>
                      {counts[output]}
                    </span>
                  ) : null}
                  {toggle?.(output)}
                  <span>{output}</span>
                  <ExposedTag side="out" name={exposed?.out[output]} />
                  <Handle
                    type="source"
                    id={output}
                    position={Position.Right}
                    className={`gb-handle ${resource ? 'gb-handle-resource' : 'gb-handle-data'}${unknown.out.has(output) ? ' gb-handle-unknown' : ''}`}
                  />
                </>
              ) : null}
            </div>
          </div>
        );
      })}
    </div>
  );
}
