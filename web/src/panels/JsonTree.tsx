// A preview as a collapsible tree; images show as images and tensors as their summaries.

import { createContext, useContext, useMemo, useState } from 'react';
import {
  type ImagePreview,
  imageFields,
  imageLabel,
  imageSrc,
  imagesIn,
  isImage,
  isTensor,
  tensorText,
} from '../preview';
import { useUi } from '../store/ui';

function Leaf({ value }: { value: unknown }) {
  if (value === null) return <span className="gb-json-null">null</span>;
  if (typeof value === 'string') return <span className="gb-json-string">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className="gb-json-number">{value}</span>;
  if (typeof value === 'boolean') return <span className="gb-json-bool">{String(value)}</span>;
  return <span>{String(value)}</span>;
}

/** The images of the tree a click opens the viewer on (the root's), so ← → go through them. */
const Gallery = createContext<ImagePreview[]>([]);

export function JsonTree(props: { value: unknown; name?: string; depth?: number }) {
  const outer = useContext(Gallery);
  const images = useMemo(() => (outer.length ? outer : imagesIn(props.value, 500)), [outer, props.value]);
  return outer.length ? (
    <Tree {...props} />
  ) : (
    <Gallery.Provider value={images}>
      <Tree {...props} />
    </Gallery.Provider>
  );
}

type Label = React.ReactNode;

/** Opens the viewer on the tree's images, at this one. */
function useShowLarge(): (image: ImagePreview) => void {
  const gallery = useContext(Gallery);
  return (image) =>
    useUi.getState().view(
      gallery.length ? gallery : [image],
      Math.max(
        0,
        gallery.findIndex((i) => imageSrc(i) === imageSrc(image)),
      ),
    );
}

/** The picture with every other field of its item beside it (label, prediction, path...). */
function ImageItem({ value, label, depth }: { value: ImagePreview; label: Label; depth: number }) {
  const showLarge = useShowLarge();
  return (
    <div className="gb-json-row gb-json-item">
      {label}
      <button className="gb-json-image-button" title="show it large" onClick={() => showLarge(value)}>
        <img className="gb-json-image" src={imageSrc(value)} alt={imageLabel(value) ?? 'image'} />
      </button>
      {value.outside ? <p className="gb-image-outside">{value.outside}</p> : null}
      <div className="gb-json-fields">
        {imageFields(value).map(([k, v]) => (
          <Tree key={k} name={k} value={v} depth={depth + 1} />
        ))}
      </div>
    </div>
  );
}

function Branch({ value, label, depth }: { value: object; label: Label; depth: number }) {
  const [open, setOpen] = useState(depth < 2);
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  const summary = Array.isArray(value) ? `[${value.length}]` : `{${entries.length}}`;
  return (
    <div className="gb-json-node">
      <button className="gb-json-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span className="gb-caret">{open ? '▾' : '▸'}</span>
        {label}
        <span className="gb-json-meta">{summary}</span>
      </button>
      {open ? (
        <div className="gb-json-children">
          {entries.map(([k, v]) => (
            <Tree key={k} name={k} value={v} depth={depth + 1} />
          ))}
        </div>
      ) : null}
    </div>
  );
}

function Tree({ value, name, depth = 0 }: { value: unknown; name?: string; depth?: number }) {
  const label = name !== undefined ? <span className="gb-json-key">{name}: </span> : null;
  if (isImage(value)) return <ImageItem value={value} label={label} depth={depth} />;
  if (typeof value === 'object' && value !== null && !isTensor(value))
    return <Branch value={value} label={label} depth={depth} />;
  return (
    <div className="gb-json-row">
      {label}
      {isTensor(value) ? <span className="gb-json-tensor">{tensorText(value)}</span> : <Leaf value={value} />}
    </div>
  );
}
