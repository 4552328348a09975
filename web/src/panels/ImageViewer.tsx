// The large image viewer: one image at full size with its item's fields beside it, and the
// others of the same output a key press away (← →; Esc closes).

import { useEffect } from 'react';
import { useUi } from '../store/ui';
import { imageFields, imageLabel, imageSrc } from '../preview';
import { Backdrop } from '../widgets/Backdrop';
import { JsonTree } from './JsonTree';

type Viewer = NonNullable<ReturnType<typeof useUi.getState>['viewer']>;
type Image = Viewer['images'][number];

/** ← and → step through the images and Esc closes, before any other key handler sees them. */
function useViewerKeys(viewer: Viewer | null): void {
  const { view, closeViewer } = useUi.getState();
  useEffect(() => {
    if (!viewer) return;
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') closeViewer();
      else if (e.key === 'ArrowLeft') view(viewer.images, viewer.index - 1);
      else if (e.key === 'ArrowRight') view(viewer.images, viewer.index + 1);
      else return;
      e.preventDefault();
      e.stopPropagation();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [viewer, view, closeViewer]);
}

function ViewerHead({ images, index }: Viewer) {
  const { view, closeViewer } = useUi.getState();
  return (
    <header>
      <span className="gb-viewer-count">
        {index + 1} / {images.length}
      </span>
      <button
        className="gb-icon"
        aria-label="previous image"
        disabled={index === 0}
        onClick={() => view(images, index - 1)}
      >
        ‹
      </button>
      <button
        className="gb-icon"
        aria-label="next image"
        disabled={index === images.length - 1}
        onClick={() => view(images, index + 1)}
      >
        ›
      </button>
      <button className="gb-icon" aria-label="close the viewer" onClick={closeViewer}>
        ×
      </button>
    </header>
  );
}

function ViewerFields({ image }: { image: Image }) {
  return (
    <>
      <div className="gb-viewer-fields">
        {imageFields(image).map(([k, v]) => (
          <JsonTree key={k} name={k} value={v} depth={1} />
        ))}
      </div>
      {image.outside ? (
        <p className="gb-image-outside" role="note">
          {image.outside}
        </p>
      ) : null}
      {image.url ? (
        <a className="gb-link" href={image.url} target="_blank" rel="noreferrer">
          open the file
        </a>
      ) : null}
    </>
  );
}

export function ImageViewer() {
  const viewer = useUi((s) => s.viewer);
  useViewerKeys(viewer);
  const image = viewer?.images[viewer.index];
  if (!viewer || !image) return null;
  return (
    <Backdrop className="gb-viewer-backdrop" onClose={useUi.getState().closeViewer}>
      <div className="gb-viewer" role="dialog" aria-label="image viewer">
        <figure className="gb-viewer-image">
          <img src={imageSrc(image)} alt={imageLabel(image) ?? 'image'} />
        </figure>
        <aside className="gb-viewer-side">
          <ViewerHead images={viewer.images} index={viewer.index} />
          <ViewerFields image={image} />
        </aside>
      </div>
    </Backdrop>
  );
}
