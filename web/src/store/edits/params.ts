// The editor's edits to a node's parameters: their values, and which are workflow inputs.

import type { EditorState, GetEditor, SetEditor } from '../editorState';
import type { Commits } from './commits';
import { updateGraphNode } from './nodes';

export function paramActions(
  set: SetEditor,
  get: GetEditor,
  commits: Commits,
): Pick<EditorState, 'setParam' | 'setInput' | 'setOutput'> {
  return {
    setParam(id, name, value) {
      updateGraphNode(set, get, id, (n) => {
        const params = { ...n.data.params };
        if (value === undefined) delete params[name];
        else params[name] = value;
        return { ...n, data: { ...n.data, params } };
      });
      commits.soon();
    },
    setInput(id, param, input) {
      updateGraphNode(set, get, id, (n) => {
        const { inputs: was, ...data } = n.data;
        const inputs = { ...was };
        if (input) inputs[param] = input;
        else delete inputs[param];
        return { ...n, data: Object.keys(inputs).length ? { ...data, inputs } : data };
      });
      commits.soon();
    },
    setOutput(id, output, shown) {
      updateGraphNode(set, get, id, (n) => {
        const { shown: was, ...data } = n.data;
        const outputs = { ...was };
        if (shown) outputs[output] = shown;
        else delete outputs[output];
        return { ...n, data: Object.keys(outputs).length ? { ...data, shown: outputs } : data };
      });
      commits.soon();
    },
  };
}
