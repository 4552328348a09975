// The templates gallery: a card per template (a picture of its graph, its title and one line).
// A card picked asks for the new file's name and creates it. Shown along the bottom of an empty
// canvas (`inline`: dropping nodes and wiring go on around it; × hides it for that file), and
// over the page when asked for from "New" (`dialog`).

import { useEffect, useMemo, useRef, useState } from 'react';
import { freeName } from '../actions/files';
import { createFromTemplate } from '../actions/templates';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { NO_FILE, useTemplates } from '../store/templates';
import type { TemplateInfo } from '../protocol';
import { graphPicture } from '../templatePicture';
import { Backdrop } from '../widgets/Backdrop';
import { Icon } from './Icon';

const PICTURE = { width: 232, height: 96 };

function GraphPicture({ workflow }: { workflow: TemplateInfo['workflow'] }) {
  const catalog = useCatalog((s) => s.catalog);
  const picture = useMemo(() => graphPicture(workflow, PICTURE.width, PICTURE.height), [workflow]);
  const { width, height } = picture.box;
  return (
    <svg
      className="gb-template-picture"
      viewBox={picture.viewBox}
      width={PICTURE.width}
      height={PICTURE.height}
      aria-hidden="true"
    >
      {picture.edges.map((e) => (
        <path
          key={e.key}
          d={e.d}
          className={`gb-template-wire gb-kind-${catalog.nodes[picture.nodes.find((n) => n.id === e.source)?.type ?? '']?.kind ?? 'step'}`}
        />
      ))}
      {picture.nodes.map((n) => (
        <g key={n.id} className={`gb-template-node gb-kind-${catalog.nodes[n.type]?.kind ?? 'step'}`}>
          <title>{n.full}</title>
          <rect x={n.x} y={n.y} width={width} height={height} rx={10} />
          <text
            x={n.x + width / 2}
            y={n.y + height / 2}
            fontSize={picture.fontSize}
            dominantBaseline="central"
            textAnchor="middle"
          >
            {n.label}
          </text>
        </g>
      ))}
    </svg>
  );
}

/** `fillable`: the open file, empty and named, that the template may fill (its name is offered first). */
function NameForm({ template, fillable, onDone }: { template: TemplateInfo; fillable: string | null; onDone(): void }) {
  const [name, setName] = useState(() => fillable ?? freeName(template.name));
  const [busy, setBusy] = useState(false);
  const fill = fillable !== null && name.trim() === fillable;
  const create = async (): Promise<void> => {
    if (!name.trim() || busy) return;
    setBusy(true);
    const done = await createFromTemplate(template.name, name.trim(), fill);
    setBusy(false);
    if (done) onDone();
  };
  return (
    <form
      className="gb-template-form"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <input
        autoFocus
        className="gb-input"
        aria-label="new file name"
        value={name}
        onFocus={(e) => e.target.setSelectionRange(0, name.endsWith('.json') ? name.length - 5 : name.length)}
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') onDone();
        }}
      />
      <button
        className="gb-button gb-primary"
        type="submit"
        disabled={busy || !name.trim()}
        title={fill ? `Fill ${fillable} (it has no nodes) with this template` : 'Create a new file from this template'}
      >
        {fill ? 'Fill this file' : 'Create'}
      </button>
      <button className="gb-button gb-quiet" type="button" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}

function TemplateCard({
  template,
  picked,
  fillable,
  onPick,
  onDone,
}: {
  template: TemplateInfo;
  picked: boolean;
  fillable: string | null;
  onPick(): void;
  onDone(): void;
}) {
  return (
    <li className={`gb-template${picked ? ' gb-picked' : ''}`} data-template={template.name}>
      <button
        className="gb-template-card"
        onClick={onPick}
        title={`${template.title}\n${template.description}\n\nCreate a workflow from it`}
        aria-label={`template ${template.title}`}
      >
        <GraphPicture workflow={template.workflow} />
        <strong className="gb-template-title">{template.title}</strong>
        {picked ? null : <span className="gb-template-line">{template.description}</span>}
      </button>
      {picked ? <NameForm template={template} fillable={fillable} onDone={onDone} /> : null}
    </li>
  );
}

type Mode = 'inline' | 'dialog';

function TemplatesHead({ mode, close }: { mode: Mode; close: () => void }) {
  return (
    <header className="gb-templates-head">
      <strong>Start from a template</strong>
      <span className="gb-muted">
        {mode === 'inline'
          ? 'or drag nodes from the palette, or double-click the canvas to add one'
          : 'a new workflow file, with the sample data it reads'}
      </span>
      <button
        className="gb-icon"
        onClick={close}
        title={
          mode === 'inline'
            ? 'Hide the templates for this file (Workflows → Templates… shows them again)'
            : 'Close (Esc)'
        }
        aria-label="close the templates"
      >
        <Icon name="close" />
      </button>
    </header>
  );
}

interface ListProps {
  picked: string | null;
  setPicked: (name: string | null) => void;
  fillable: string | null;
}

function TemplateList({ picked, setPicked, fillable }: ListProps) {
  const templates = useTemplates((s) => s.templates);
  return (
    <ul className="gb-template-list">
      {templates.map((t) => (
        <TemplateCard
          key={t.name}
          template={t}
          picked={picked === t.name}
          fillable={fillable}
          onPick={() => setPicked(t.name)}
          onDone={() => setPicked(null)}
        />
      ))}
    </ul>
  );
}

/** Loads the templates once, and focuses the dialog so Esc reaches it. */
function useOpened(mode: Mode) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!useTemplates.getState().loaded) void useTemplates.getState().load();
    if (mode === 'dialog') box.current?.focus();
  }, [mode]);
  return box;
}

export function TemplateGallery({ mode }: { mode: Mode }) {
  const empty = useTemplates((s) => s.loaded && !s.templates.length);
  const error = useTemplates((s) => s.error);
  const file = useEditor((s) => s.file?.path ?? NO_FILE);
  const [picked, setPicked] = useState<string | null>(null);
  const box = useOpened(mode);
  const close = (): void =>
    mode === 'dialog' ? useTemplates.getState().show(false) : useTemplates.getState().dismiss(file);
  if (mode === 'inline' && empty) return null;
  const gallery = (
    <section
      ref={box}
      tabIndex={-1}
      className={`gb-templates gb-templates-${mode}`}
      aria-label="templates"
      role={mode === 'dialog' ? 'dialog' : 'region'}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !picked) close();
      }}
    >
      <TemplatesHead mode={mode} close={close} />
      {error ? <div className="gb-banner gb-banner-error">The templates could not be read: {error}</div> : null}
      <TemplateList
        picked={picked}
        setPicked={setPicked}
        fillable={mode === 'inline' && file !== NO_FILE ? file : null}
      />
    </section>
  );
  return mode === 'inline' ? gallery : <Backdrop onClose={close}>{gallery}</Backdrop>;
}

/** The gallery on the canvas: while it has no node (a new file, or none open), unless hidden for this file. */
export function EmptyCanvasTemplates() {
  const empty = useEditor((s) => s.nodes.length === 0);
  const file = useEditor((s) => s.file?.path ?? NO_FILE);
  const dismissed = useTemplates((s) => s.dismissed.includes(file));
  const open = useTemplates((s) => s.open);
  return empty && !dismissed && !open ? <TemplateGallery mode="inline" /> : null;
}

/** The gallery asked for from "New", over the page. */
export function TemplatesDialog() {
  const open = useTemplates((s) => s.open);
  return open ? <TemplateGallery mode="dialog" /> : null;
}
