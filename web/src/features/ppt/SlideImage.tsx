/** A slide drawn by the server (SVG), shown as an image: nothing in it runs. */
export default function SlideImage({ svg, alt, width = '100%' }: { svg: string; alt: string; width?: number | string }) {
  return (
    <img
      src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`}
      alt={alt}
      style={{ width, aspectRatio: '16 / 9', display: 'block', border: '1px solid #e5e6eb', borderRadius: 4, background: '#fff' }}
    />
  )
}
