// The bar across the top: the file and its save state, undo/redo, run controls, theme.

import { saveFile } from '../actions/files';
import { useDirty } from '../hooks/useDirty';
import { useEditor } from '../store/editor';
import { canRedo, canUndo } from '../store/history';
import { type Panel, useUi } from '../store/ui';
import { Icon } from './Icon';
import { RunControls } from './RunControls';

function FileState() {
  const file = useEditor((s) => s.file);
  const dirty = useDirty();
  const autosave = useUi((s) => s.autosave);
  const setAutosave = useUi((s) => s.setAutosave);
  if (!file) return <span className="gb-muted">no workflow open</span>;
  return (
    <span className="gb-file-state">
      <span className="gb-file-title" data-dirty={dirty} title={file.path}>
        {file.path}
        <span
          className={`gb-unsaved${dirty ? '' : ' gb-hidden'}`}
          title="unsaved changes"
          aria-label={dirty ? 'unsaved changes' : undefined}
        >
          ●
        </span>
      </span>
      <button className="gb-button gb-quiet" disabled={!dirty} onClick={() => void saveFile()} title="Save (Ctrl+S)">
        {dirty ? 'Save' : 'Saved'}
      </button>
      <label className="gb-check gb-quiet" title="save a moment after each change">
        <input type="checkbox" checked={autosave} onChange={(e) => setAutosave(e.target.checked)} />
        <span>autosave</span>
      </label>
    </span>
  );
}

const TOGGLES: [panel: Panel, icon: 'panelLeft' | 'panelBottom' | 'panelRight', name: string, key: string][] = [
  ['side', 'panelLeft', 'side panel', '['],
  ['console', 'panelBottom', 'console', '`'],
  ['inspector', 'panelRight', 'inspector', ']'],
];

/** Fold or unfold the panels around the canvas. */
function PanelToggles() {
  const panels = useUi((s) => s.panels);
  const toggle = useUi((s) => s.togglePanel);
  return (
    <span className="gb-panel-toggles">
      {TOGGLES.map(([panel, icon, name, key]) => (
        <button
          key={panel}
          className={`gb-icon${panels[panel] ? ' gb-on' : ''}`}
          aria-pressed={panels[panel]}
          aria-label={`${panels[panel] ? 'hide' : 'show'} the ${name}`}
          title={`${panels[panel] ? 'Hide' : 'Show'} the ${name} (${key})`}
          onClick={() => toggle(panel)}
        >
          <Icon name={icon} size={16} />
        </button>
      ))}
    </span>
  );
}

export function TopBar() {
  const history = useEditor((s) => s.history);
  const { undo, redo } = useEditor.getState();
  const theme = useUi((s) => s.theme);
  const setTheme = useUi((s) => s.setTheme);
  return (
    <header className="gb-topbar">
      <span className="gb-logo" title="Graphbook">
        <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true">
          <rect width="16" height="16" rx="4" fill="var(--gb-accent)" />
          <circle cx="5" cy="8" r="2" fill="white" />
          <circle cx="11" cy="5" r="2" fill="white" />
          <circle cx="11" cy="11" r="2" fill="white" />
        </svg>
        <span className="gb-logo-name">Graphbook</span>
      </span>
      <FileState />
      <span className="gb-undo">
        <button className="gb-icon" disabled={!canUndo(history)} onClick={undo} title="Undo (Ctrl+Z)" aria-label="undo">
          <Icon name="undo" />
        </button>
        <button
          className="gb-icon"
          disabled={!canRedo(history)}
          onClick={redo}
          title="Redo (Ctrl+Shift+Z)"
          aria-label="redo"
        >
          <Icon name="redo" />
        </button>
      </span>
      <span className="gb-spacer" />
      <RunControls />
      <PanelToggles />
      <button
        className="gb-icon gb-theme"
        onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
        title="switch between light and dark"
        aria-label="switch theme"
      >
        <Icon name={theme === 'dark' ? 'sun' : 'moon'} size={16} />
      </button>
    </header>
  );
}
