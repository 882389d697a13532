/** A percent figure, or a dash when it was not measured. */
export const percent = (value: number | null | undefined, digits = 1) => (value == null ? '—' : `${value.toFixed(digits)}%`)

/** A 0–1 probability as a percent. */
export const probability = (value: number | null | undefined) => (value == null ? '—' : `${(value * 100).toFixed(0)}%`)

/** Words for a diff: Intl.Segmenter's Chinese word boundaries (characters where it is missing). */
export function words(text: string): string[] {
  if (typeof Intl !== 'undefined' && 'Segmenter' in Intl) {
    const segmenter = new Intl.Segmenter('zh', { granularity: 'word' })
    return Array.from(segmenter.segment(text), (s) => s.segment)
  }
  return Array.from(text)
}
