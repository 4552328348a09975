// The workflows folder: open, create, rename and delete files; the open one marked unsaved.

import { useState } from 'react';
import { createFile, deleteFile, renameFile, switchFile } from '../actions/files';
import { useDirty } from '../hooks/useDirty';
import { useEditor } from '../store/editor';
import { useFiles } from '../store/files';
import { useTemplates } from '../store/templates';
import { Icon } from './Icon';

const stemLength = (name: string): number => (name.endsWith('.json') ? name.length - 5 : name.length);

function NameField({ initial, onDone }: { initial: string; onDone(name: string | null): void }) {
  const [name, setName] = useState(initial);
  return (
    <input
      autoFocus
      className="gb-input"
      aria-label="file name"
      value={name}
      // The name without `.json` is selected, so typing replaces it: "mine" + Enter is mine.json.
      onFocus={(e) => e.target.setSelectionRange(0, stemLength(name))}
      onChange={(e) => setName(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && name.trim()) onDone(name.trim());
        if (e.key === 'Escape') onDone(null);
      }}
      onBlur={() => onDone(null)}
    />
  );
}

type File = ReturnType<typeof useFiles.getState>['files'][number];

function FileActions({ create }: { create: () => void }) {
  return (
    <div className="gb-files-actions">
      <button className="gb-button" onClick={create}>
        <Icon name="plus" /> New workflow
      </button>
      <button
        className="gb-button"
        onClick={() => useTemplates.getState().show(true)}
        title="A new workflow from a template: a small pipeline that runs as made"
      >
        Templates…
      </button>
    </div>
  );
}

/** A file's name (opens it, marked when unsaved), rename and delete. */
function FileButtons({ path, unsaved, rename }: { path: string; unsaved: boolean; rename: () => void }) {
  return (
    <>
      <button className="gb-file-name" onClick={() => void switchFile(path)} title={path}>
        {path}
        {unsaved ? (
          <span className="gb-unsaved" title="unsaved changes">
            ●
          </span>
        ) : null}
      </button>
      <button className="gb-icon" title="rename" aria-label={`rename ${path}`} onClick={rename}>
        <Icon name="pencil" />
      </button>
      <button
        className="gb-icon"
        title="delete"
        aria-label={`delete ${path}`}
        onClick={() => confirm(`Delete ${path}?`) && void deleteFile(path)}
      >
        <Icon name="trash" />
      </button>
    </>
  );
}

interface RowProps {
  file: File;
  open: string | undefined;
  dirty: boolean;
  renaming: string | null;
  setRenaming: (path: string | null) => void;
}

function FileRow({ file, open, dirty, renaming, setRenaming }: RowProps) {
  const onRenamed = (name: string | null): void => {
    setRenaming(null);
    if (name) void renameFile(file.path, name);
  };
  return (
    <li className={`gb-file${file.path === open ? ' gb-active' : ''}`} data-file={file.path}>
      {renaming === file.path ? (
        <NameField initial={file.path} onDone={onRenamed} />
      ) : (
        <FileButtons path={file.path} unsaved={file.path === open && dirty} rename={() => setRenaming(file.path)} />
      )}
    </li>
  );
}

export function FilesPanel() {
  const files = useFiles((s) => s.files);
  const error = useFiles((s) => s.error);
  const open = useEditor((s) => s.file?.path);
  const dirty = useDirty();
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  const onCreated = (name: string | null): void => {
    setCreating(false);
    if (name) void createFile(name);
  };
  return (
    <div className="gb-files">
      <FileActions create={() => setCreating(true)} />
      {creating ? <NameField initial="untitled.json" onDone={onCreated} /> : null}
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <ul className="gb-scroll gb-file-list">
        {files.map((f) => (
          <FileRow key={f.path} file={f} open={open} dirty={dirty} renaming={renaming} setRenaming={setRenaming} />
        ))}
        {!files.length && !error ? <li className="gb-empty">No workflows yet.</li> : null}
      </ul>
    </div>
  );
}
