import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'

vi.mock('./api', () => ({ rewriteChoose: vi.fn(async () => ({})) }))

import * as api from './api'
import LineCard from './LineCard'
import ManualList from './ManualList'
import type { ComparedLine, ParagraphRewrite } from './types'

const base: ParagraphRewrite = {
  original: '决策树模型在内资企业的信用评估中表现稳定。',
  rewritten: '决策森林在企业信用评价里表现平稳。',
  accepted: false,
  reason: '保留原文：复制比未明显下降；术语被改：原文的“决策树”“内资”在改写中不见了或被改动',
  similarity_before: 98.3,
  similarity_after: 20.1,
  ai_before: 0.1,
  ai_after: 0.2,
  meaning: 0.81,
  attempts: 3,
  strength: 'medium',
  model: 'qwen2.5-0.5b',
  usage: { prompt_tokens: 1, completion_tokens: 1 },
  doubts: [{ kind: 'terms', label: '术语被改', detail: '原文的“决策树”“内资”在改写中不见了或被改动' }],
  reading: {
    key_terms: 5,
    key_terms_kept: 3,
    hard_items: 0,
    hard_items_kept: 0,
    non_words: [],
    new_english: [],
    surprisal_before: 3.1,
    surprisal_after: 3.9,
    sentences: 1,
    sentences_covered: 1,
    weakest_sentence: 0.7,
    copied: 0.12,
  },
}

afterEach(cleanup)

const line = (rewrite: ParagraphRewrite, usesRewrite = false, index = 2): ComparedLine => ({ index, text: rewrite.original, heading: null, rewrite, choice: null, usesRewrite })

describe('LineCard', () => {
  it('shows each doubt, the review figures and that the paragraph was refunded', () => {
    render(<LineCard id={1} line={line(base)} onChanged={() => {}} />)
    expect(screen.getByText('术语被改')).toBeTruthy()
    expect(screen.getByText('原文的“决策树”“内资”在改写中不见了或被改动')).toBeTruthy()
    expect(screen.getByText(/本段费用已退还/)).toBeTruthy()
    // The goal fault is listed once, apart from the doubt.
    expect(screen.getByText('另外：复制比未明显下降')).toBeTruthy()
    expect(screen.getByTestId('line-terms').textContent).toBe('术语保留 3/5')
    expect(screen.getByTestId('line-sentences').textContent).toBe('句子对应 1/1')
    expect(screen.getByTestId('line-copied').textContent).toBe('与原文连续相同 12%')
    expect(screen.getByTestId('line-fluency').textContent).toBe('通顺度 3.10 → 3.90')
    expect(document.getElementById('line-2')).toBeTruthy()
  })

  it('asks before adopting a doubted rewrite', async () => {
    const onChanged = vi.fn()
    render(<LineCard id={1} line={line(base)} onChanged={onChanged} />)
    fireEvent.click(screen.getByTestId('rewrite-adopt'))
    expect(api.rewriteChoose).not.toHaveBeenCalled()
    expect(await screen.findByText('改写被判定为“术语被改”，确定仍要采用？')).toBeTruthy()
    fireEvent.click(screen.getByText('仍要采用'))
    await waitFor(() => expect(api.rewriteChoose).toHaveBeenCalledWith(1, 2, true))
    expect(onChanged).toHaveBeenCalled()
  })

  it('reads old results without doubts or reading', () => {
    const old = { ...base, doubts: undefined, reading: null, reason: '保留原文：复制比未明显下降' } as unknown as ParagraphRewrite
    render(<LineCard id={1} line={line(old)} onChanged={() => {}} />)
    expect(screen.getByText('保留原文：复制比未明显下降')).toBeTruthy()
    expect(screen.queryByTestId('line-doubts')).toBeNull()
    expect(screen.queryByTestId('line-terms')).toBeNull()
  })
})

describe('ManualList', () => {
  it('lists the paragraphs the paper keeps as they were, and nothing when there are none', () => {
    const adopted = line({ ...base, accepted: true, reason: null, doubts: [] }, true, 4)
    const { container, rerender } = render(<ManualList lines={[line(base), adopted]} keeps="下载的 Word 文件中这些段落" />)
    expect(screen.getByText('需要您手动修改的段落（1 段）')).toBeTruthy()
    expect(screen.getAllByTestId('manual-item')).toHaveLength(1)
    expect(screen.getByTestId('manual-link').textContent).toBe('第 3 段')
    expect(screen.getByText('已退费')).toBeTruthy()
    rerender(<ManualList lines={[adopted]} keeps="下载的 Word 文件中这些段落" />)
    expect(container.textContent).toBe('')
  })
})
