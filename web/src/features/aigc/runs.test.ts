import { describe, expect, it } from 'vitest'
import { paragraphRuns } from './runs'
import type { AigcParagraph } from './types'

const para = (start: number, end: number, band: AigcParagraph['band']): AigcParagraph => ({
  index: 0,
  start,
  end,
  chars: end - start,
  probability: 0.5,
  band,
  bandLabel: '',
  text: '',
})

describe('paragraphRuns', () => {
  it('keeps every character once, in order, with headings between paragraphs unjudged', () => {
    const text = '标题\n第一段𠀀文字\n第二段\n尾'
    const runs = paragraphRuns(text, [para(3, 9, 'high'), para(10, 13, 'low')])
    expect(runs.map((r) => r.text).join('')).toBe(text)
    expect(runs.map((r) => [r.text, r.paragraph?.band ?? null])).toEqual([
      ['标题\n', null],
      ['第一段𠀀文字', 'high'],
      ['\n', null],
      ['第二段', 'low'],
      ['\n尾', null],
    ])
  })

  it('gives the whole text as one unjudged run when there are no paragraphs', () => {
    expect(paragraphRuns('短文本', [])).toEqual([{ text: '短文本', paragraph: null }])
  })
})
