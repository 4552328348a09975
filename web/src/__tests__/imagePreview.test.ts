// Image previews as the server sends them: full images from its folders, thumbnails of the rest.

import { describe, expect, it } from 'vitest';
import { imageFields, imageSrc, imagesIn, isImage } from '../preview';

describe('image previews', () => {
  const outside = {
    type: 'image',
    value: '/elsewhere/a.png',
    url: null,
    thumb: '/api/media/thumb?path=a&sig=s',
    outside: 'the full image lies outside',
  };

  it('shows an image outside the roots by its thumbnail, with the reason kept apart from its fields', () => {
    expect(isImage(outside)).toBe(true);
    const [found] = imagesIn({ image: outside, other: { type: 'image', url: null } });
    expect(found && imageSrc(found)).toBe('/api/media/thumb?path=a&sig=s');
    expect(found && imageFields(found)).toEqual([['value', '/elsewhere/a.png']]);
  });

  it('prefers the full image when the server serves it', () => {
    const served = { type: 'image' as const, url: '/api/media/file/media/a.png', thumb: '/api/media/thumb?x' };
    expect(imageSrc(served)).toBe('/api/media/file/media/a.png');
    expect(isImage({ type: 'image', url: null, thumb: null })).toBe(false);
  });
});
