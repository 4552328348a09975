// Image previews as the server sends them (graphbook/previews.py's ImagePreview): full images
// from its folders, thumbnails of the rest, a record's other fields beside the picture.

import { describe, expect, it } from 'vitest';
import { imageFields, imageLabel, imageOf, imageSrc, imagesIn, isImage } from '../preview';

describe('image previews', () => {
  const outside = imageOf(
    null,
    '/api/media/thumb?path=a&sig=s',
    { label: 'cat' },
    {
      value: '/elsewhere/a.png',
      outside: 'the full image lies outside',
    },
  );

  it('shows an image outside the roots by its thumbnail, with the reason kept apart from its fields', () => {
    expect(isImage(outside)).toBe(true);
    const [found] = imagesIn({ image: outside, other: imageOf(null, null, {}) });
    expect(found && imageSrc(found)).toBe('/api/media/thumb?path=a&sig=s');
    expect(found && imageFields(found)).toEqual([
      ['value', '/elsewhere/a.png'],
      ['label', 'cat'],
    ]);
    expect(found && imageLabel(found)).toBe('cat');
  });

  it('prefers the full image when the server serves it', () => {
    const served = imageOf('/api/media/file/media/a.png', '/api/media/thumb?x', {});
    expect(imageSrc(served)).toBe('/api/media/file/media/a.png');
    expect(isImage(imageOf(null, null, {}))).toBe(false);
  });

  it('lists the size and mode of an image a node made', () => {
    const made = imageOf('/api/media/mem/ab12', null, {}, { size: [224, 224], mode: 'RGB' });
    expect(imageFields(made)).toEqual([
      ['size', [224, 224]],
      ['mode', 'RGB'],
    ]);
  });
});
