import { useState } from 'react'

/**
 * A slide shown as an image: the picture LibreOffice drew from the .pptx when there is one
 * (`picture`, a URL), else the server's SVG drawing of the same layout. Nothing in either runs.
 */
export default function SlideImage({
  svg,
  picture,
  alt,
  width = '100%',
}: {
  svg: string
  picture?: string
  alt: string
  width?: number | string
}) {
  // A picture that fails to load (a store moved, a node without it) falls back to the drawing;
  // another picture given later is tried afresh.
  const [failed, setFailed] = useState<string>()
  const usePicture = picture !== undefined && picture !== failed
  return (
    <img
      src={usePicture ? picture : `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`}
      alt={alt}
      data-rendered={usePicture ? 'libreoffice' : 'svg'}
      onError={usePicture ? () => setFailed(picture) : undefined}
      style={{ width, aspectRatio: '16 / 9', display: 'block', border: '1px solid #e5e6eb', borderRadius: 4, background: '#fff' }}
    />
  )
}
