import type { AigcParagraph } from './types'

export interface Run {
  text: string
  paragraph: AigcParagraph | null
}

/** The text cut into judged paragraphs and the unjudged stretches between them (offsets are characters). */
export function paragraphRuns(text: string, paragraphs: AigcParagraph[]): Run[] {
  const chars = Array.from(text)
  const runs: Run[] = []
  let at = 0
  for (const p of paragraphs) {
    if (p.start > at) runs.push({ text: chars.slice(at, p.start).join(''), paragraph: null })
    runs.push({ text: chars.slice(p.start, p.end).join(''), paragraph: p })
    at = Math.max(at, p.end)
  }
  if (at < chars.length) runs.push({ text: chars.slice(at).join(''), paragraph: null })
  return runs
}
