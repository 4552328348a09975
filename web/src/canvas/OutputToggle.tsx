// The toggle beside an output port: shows the output as a result of the workflow (its app's
// gallery, table, files or text), as ⇥ on a parameter makes it an input.

import type { ReactNode } from 'react';
import { useEditor } from '../store/editor';
import { canvasOutputs } from '../workflow/canvas';
import type { NodeOutput } from '../workflow/flow';
import { INPUT_NAME, type OutputKind } from '../workflow/format';
import '../styles/appmarks.css';

interface Props {
  nodeId: string;
  output: string;
  shown: NodeOutput | undefined;
  /** How the output is shown when marked: images for an image node, else a table. */
  kind: OutputKind;
}

export function OutputToggle({ nodeId, output, shown, kind }: Props) {
  const setOutput = useEditor((s) => s.setOutput);
  const toggle = (): void => {
    if (shown) return setOutput(nodeId, output, null);
    const taken = new Set(Object.keys(canvasOutputs(useEditor.getState().nodes)));
    setOutput(nodeId, output, {
      name: freshOutputName(output === 'out' ? nodeId : `${nodeId}_${output}`, taken),
      kind,
    });
  };
  const label = shown
    ? `stop showing ${output} as result '${shown.name}' of the app`
    : `show ${output} as a result of the workflow's app`;
  return (
    <button
      className={`gb-output-toggle nodrag${shown ? ' gb-output-on' : ''}`}
      title={label}
      aria-label={label}
      aria-pressed={!!shown}
      data-output-toggle={output}
      onClick={toggle}
    >
      ◉
    </button>
  );
}

/** The toggles of a node's outputs (a node of the Images category shows its results as images). */
export function outputToggles(
  nodeId: string,
  shown: Record<string, NodeOutput> | undefined,
  category: string,
): (output: string) => ReactNode {
  const kind: OutputKind = category.startsWith('Images') ? 'images' : 'table';
  const toggle = (output: string): ReactNode => (
    <OutputToggle nodeId={nodeId} output={output} shown={shown?.[output]} kind={kind} />
  );
  return toggle;
}

/** `name` made a word, else `name_2`, `name_3`, ...: an output name no other output has. */
export function freshOutputName(name: string, taken: ReadonlySet<string>): string {
  const word = name.replace(/[^A-Za-z0-9_-]+/g, '_');
  const stem = INPUT_NAME.test(word) ? word : `output_${word}`;
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) if (!taken.has(`${stem}_${n}`)) return `${stem}_${n}`;
}
