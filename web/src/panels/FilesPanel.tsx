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

export function FilesPanel() {
  const files = useFiles((s) => s.files);
  const error = useFiles((s) => s.error);
  const open = useEditor((s) => s.file?.path);
  const dirty = useDirty();
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  return (
    <div className="gb-files">
      <div className="gb-files-actions">
        <button className="gb-button" onClick={() => setCreating(true)}>
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
      {creating ? (
        <NameField
          initial="untitled.json"
          onDone={(name) => {
            setCreating(false);
            if (name) void createFile(name);
          }}
        />
      ) : null}
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <ul className="gb-scroll gb-file-list">
        {files.map((f) => (
          <li key={f.path} className={`gb-file${f.path === open ? ' gb-active' : ''}`} data-file={f.path}>
            {renaming === f.path ? (
              <NameField
                initial={f.path}
                onDone={(name) => {
                  setRenaming(null);
                  if (name) void renameFile(f.path, name);
                }}
              />
            ) : (
              <>
                <button className="gb-file-name" onClick={() => void switchFile(f.path)} title={f.path}>
                  {f.path}
                  {f.path === open && dirty ? (
                    <span className="gb-unsaved" title="unsaved changes">
                      ●
                    </span>
                  ) : null}
                </button>
                <button
                  className="gb-icon"
                  title="rename"
                  aria-label={`rename ${f.path}`}
                  onClick={() => setRenaming(f.path)}
                >
                  <Icon name="pencil" />
                </button>
                <button
                  className="gb-icon"
                  title="delete"
                  aria-label={`delete ${f.path}`}
                  onClick={() => confirm(`Delete ${f.path}?`) && void deleteFile(f.path)}
                >
                  <Icon name="trash" />
                </button>
              </>
            )}
          </li>
        ))}
        {!files.length && !error ? <li className="gb-empty">No workflows yet.</li> : null}
      </ul>
    </div>
  );
}
