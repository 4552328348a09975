// A workflow file dragged from the desktop and dropped anywhere on the page (the canvas, a past
// run over it, a panel) is imported and opened (actions/files.ts `importFile`); a drop is never
// left to the browser, which would leave the editor to show the file.

import { useEffect } from 'react';
import { importFile } from '../actions/files';
import { useUi } from '../store/ui';

const carriesFiles = (event: DragEvent): boolean => !!event.dataTransfer?.types.includes('Files');

function onDragOver(event: DragEvent): void {
  if (!carriesFiles(event) || !event.dataTransfer) return;
  event.preventDefault();
  event.dataTransfer.dropEffect = 'copy';
}

function onDrop(event: DragEvent): void {
  if (event.defaultPrevented || !carriesFiles(event) || !event.dataTransfer) return;
  event.preventDefault();
  const files = [...event.dataTransfer.files];
  const file = files.find((f) => f.name.toLowerCase().endsWith('.json'));
  if (file) void file.text().then((text) => importFile(file.name, text));
  else if (files.length)
    useUi.getState().notify(`${files[0]?.name ?? 'That'} is not a workflow: drop a workflow's .json file`, 'error');
}

export function useFileDrop(): void {
  useEffect(() => {
    window.addEventListener('dragover', onDragOver);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragover', onDragOver);
      window.removeEventListener('drop', onDrop);
    };
  }, []);
}
