// Reading a workflow file's text in either format; the one entry point the app uses.

import { type Workflow, WorkflowFormatError, parseCanonical } from './format';
import { fromGraphbook013, isGraphbook013 } from './graphbook013';

export type FileFormat = 'canonical' | 'graphbook013';

export interface LoadedWorkflow {
  workflow: Workflow;
  format: FileFormat;
}

export function readWorkflow(text: string, name: string): LoadedWorkflow {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new WorkflowFormatError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
  return readWorkflowData(data, name);
}

export function readWorkflowData(data: unknown, name: string): LoadedWorkflow {
  if (isGraphbook013(data)) {
    return { workflow: fromGraphbook013(data as Record<string, unknown>, name), format: 'graphbook013' };
  }
  return { workflow: parseCanonical(data, name), format: 'canonical' };
}
