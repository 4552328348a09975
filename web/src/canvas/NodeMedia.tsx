// Images from the node's latest outputs, small, inside the node.

import { imagesIn } from '../preview';
import type { NodeRun } from '../store/runState';
import { useUi } from '../store/ui';

export function NodeMedia({ id, run }: { id: string; run: NodeRun | undefined }) {
  const inspect = useUi((s) => s.inspect);
  if (!run) return null;
  const images = imagesIn(Object.values(run.outputs).map((o) => o.preview), 6);
  if (!images.length) return null;
  return (
    <div className="gb-media nodrag" onClick={() => inspect(id, 'output')} title="show the outputs">
      {images.map((image, i) => (
        <img key={`${image.url}-${i}`} src={image.url} alt={image.label ?? 'output image'} loading="lazy" />
      ))}
    </div>
  );
}
