import type { Doubt, DoubtKind, ParagraphRewrite } from './types'

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

/** Red for a changed meaning or lost content, orange for wording. */
export const DOUBT_COLOR: Record<DoubtKind, string> = { terms: 'red', reversed: 'red', dropped: 'red', fluency: 'orange', copied: 'orange' }

/** The review's doubts of a rewrite (old stored results have none). */
export const doubtsOf = (r: ParagraphRewrite | null | undefined): Doubt[] => r?.doubts ?? []
