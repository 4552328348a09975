// Images from the node's latest outputs, small, inside the node; a click shows one large.

import { imageLabel, imageSrc, imagesIn } from '../preview';
import type { NodeRun } from '../store/runState';
import { useUi } from '../store/ui';

export function NodeMedia({ id, run }: { id: string; run: NodeRun | undefined }) {
  const inspect = useUi((s) => s.inspect);
  const view = useUi((s) => s.view);
  if (!run) return null;
  const images = imagesIn(
    Object.values(run.outputs).map((o) => o.preview),
    6,
  );
  if (!images.length) return null;
  const outside = images.find((image) => image.outside)?.outside;
  return (
    <div className="gb-media nodrag" title={outside ?? 'show it large (its outputs are in the inspector)'}>
      {images.map((image, i) => (
        <img
          key={`${imageSrc(image)}-${i}`}
          src={imageSrc(image)}
          alt={imageLabel(image) ?? 'output image'}
          loading="lazy"
          onClick={() => {
            inspect(id, 'output');
            view(images, i);
          }}
        />
      ))}
      {outside ? (
        <span className="gb-media-outside">thumbnails only: the full images lie outside the server's folders</span>
      ) : null}
    </div>
  );
}
