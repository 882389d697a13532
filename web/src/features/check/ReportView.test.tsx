import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { MemoryRouter, useLocation } from 'react-router'
import type { Report, ReportDetail, ReportSpan, SpanClass } from './types'

vi.mock('./api', async (importOriginal) => ({
  ...(await importOriginal<typeof import('./api')>()),
  reportParagraphs: vi.fn(),
}))
vi.mock('../rewrite/RewriteFromReport', () => ({ default: () => null }))

import * as api from './api'
import ReportView, { commonCharsOf, highlight, listedSources } from './ReportView'

const span = (start: number, end: number, cls: SpanClass, source_id = 1, docs?: number): ReportSpan => ({
  start,
  end,
  source_id,
  source_start: 0,
  source_end: end - start,
  class: cls,
  chars: end - start,
  source_text: '',
  ...(docs === undefined ? {} : { docs }),
})

describe('highlight', () => {
  it('shows a character under a copy and a common phrase as the copy', () => {
    const runs = highlight('abcdef', [span(0, 6, 'common'), span(2, 4, 'copy')])
    expect(runs.map((r) => [r.text, r.cls, r.span])).toEqual([
      ['ab', 'common', 0],
      ['cd', 'copy', 1],
      ['ef', 'common', 0],
    ])
  })

  it('ranks copy > light_edit > quoted > translated > paraphrase > common', () => {
    const order: SpanClass[] = ['copy', 'light_edit', 'quoted', 'translated', 'paraphrase', 'common']
    order.forEach((strong, i) =>
      order.slice(i + 1).forEach((weak) => {
        // Either order of the spans in the report: the stronger class wins.
        expect(highlight('ab', [span(0, 2, weak), span(0, 2, strong)])[0].cls).toBe(strong)
        expect(highlight('ab', [span(0, 2, strong), span(0, 2, weak)])[0].cls).toBe(strong)
      }),
    )
  })

  it('ranks counted common phrases above quoted and the uncounted classes, below copies', () => {
    for (const weak of ['quoted', 'translated', 'paraphrase'] as SpanClass[])
      expect(highlight('ab', [span(0, 2, weak), span(0, 2, 'common')], true)[0].cls).toBe('common')
    for (const strong of ['copy', 'light_edit'] as SpanClass[])
      expect(highlight('ab', [span(0, 2, 'common'), span(0, 2, strong)], true)[0].cls).toBe(strong)
  })

  it('leaves uncovered text unmarked', () => {
    expect(highlight('abc', [span(1, 2, 'translated')]).map((r) => r.cls)).toEqual([null, 'translated', null])
  })
})

describe('isCustomView', () => {
  const official = { excludeQuoted: false, excludeOwn: false, minChars: 0, countCommon: false }

  it('is the official report with no option set', () => {
    expect(api.isCustomView(official)).toBe(false)
  })

  it('is a custom view when common phrases are counted', () => {
    expect(api.isCustomView({ ...official, countCommon: true })).toBe(true)
  })

  it('is a custom view for each of the other options', () => {
    expect(api.isCustomView({ ...official, excludeQuoted: true })).toBe(true)
    expect(api.isCustomView({ ...official, excludeOwn: true })).toBe(true)
    expect(api.isCustomView({ ...official, minChars: 20 })).toBe(true)
  })
})

const TEXT = '本研究采用高效液相色谱法测定样品中的含量，结果显示差异有统计学意义。我们还翻译了一句话。'

function report(commonCounted: boolean): Report {
  const spans = [
    span(3, 14, 'common', 1, 57), // 采用高效液相色谱法测定
    span(0, 10, 'copy', 2),
    span(30, 40, 'translated', 3),
    span(24, 33, 'common', 4, 12),
  ]
  return {
    total_chars: 44,
    excluded_chars: 0,
    copied_chars: commonCounted ? 22 : 10,
    ratio_total: commonCounted ? 50 : 22.7,
    ratio_excluding_quotes: 22.7,
    ratio_excluding_own: 22.7,
    ratio_max_single_source: 22.7,
    max_single_source: 2,
    paraphrase_chars: 0,
    translated_chars: 7,
    common_chars: commonCounted ? 0 : 12,
    common_counted: commonCounted,
    sources: [
      { id: 2, title: '复制来源', author: '', year: 2020, scope: 'public', copied_chars: 10, ratio: 22.7, spans: [1] },
      { id: 1, title: '常用表述来源', author: '', year: null, scope: 'public', copied_chars: commonCounted ? 10 : 0, ratio: commonCounted ? 22.7 : 0, spans: [0] },
      { id: 3, title: '英文来源', author: '', year: null, scope: 'public', copied_chars: 0, ratio: 0, spans: [2] },
      { id: 4, title: '另一常用表述来源', author: '', year: null, scope: 'public', copied_chars: commonCounted ? 9 : 0, ratio: 0, spans: [3] },
    ],
    spans,
    chapters: [],
    paragraphs: [],
  }
}

const detail = (commonCounted: boolean): ReportDetail => ({
  record: {
    id: 7,
    title: '测试论文',
    author: '',
    fileName: '',
    chars: 44,
    status: 'done',
    progress: 100,
    phase: '',
    ratioTotal: 22.7,
    ratioExcludingQuotes: 22.7,
    ratioExcludingOwn: 22.7,
    ratioMaxSingleSource: 22.7,
    copiedChars: 10,
    error: null,
    chargedFen: 0,
    chargedFreeChecks: 1,
    createdAt: 0,
    finishedAt: null,
  },
  text: TEXT,
  report: report(commonCounted),
  reportNumber: 'WJ1',
  verifyCode: 'ABCD',
  privateLibrary: false,
  refigured: commonCounted,
  settings: [],
  officialTitle: '测试论文',
})

describe('sources and figures', () => {
  it('leaves out sources whose spans are all uncounted common phrases', () => {
    expect(listedSources(report(false)).map((s) => s.id)).toEqual([2, 3])
    expect(listedSources(report(true)).map((s) => s.id)).toEqual([2, 1, 3, 4])
  })

  it('gives the common phrases their own size once they are counted', () => {
    expect(commonCharsOf(report(false))).toBe(12)
    expect(commonCharsOf(report(true))).toBe(20)
  })
})

function Location() {
  const l = useLocation()
  return <div data-testid="location">{l.search}</div>
}

function renderView() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } })
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <ReportView id={7} />
        <Location />
      </MemoryRouter>
    </QueryClientProvider>,
  )
}

describe('ReportView', () => {
  afterEach(() => {
    cleanup()
    vi.mocked(api.reportParagraphs).mockReset()
  })

  it('lists the common phrases, opens one, and counts them on request', async () => {
    vi.mocked(api.reportParagraphs).mockImplementation(async (_id, o) => detail(Boolean(o?.countCommon)))
    renderView()
    const list = await screen.findByTestId('common-phrases')
    expect(list.textContent).toContain('默认不计入复制比')
    const items = within(list).getAllByTestId('common-phrase')
    expect(items).toHaveLength(2)
    expect(items[0].textContent).toContain('采用高效液相色谱法测定')
    expect(items[0].textContent).toContain('57 篇文献使用')
    expect(screen.getByTestId('stat-common').textContent).toContain('常用表述（不计入）')
    expect(screen.getByTestId('stat-translated').textContent).toContain('疑似翻译（不计入）')
    // Only the copy's source and the translation's are listed; the latter is tagged.
    expect(screen.queryByText('《常用表述来源》')).toBeNull()
    expect(screen.getByText('仅疑似意译/翻译')).toBeTruthy()

    fireEvent.click(within(items[0]).getByText(/采用高效液相色谱法测定/))
    await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('?span=0'))
    expect((await screen.findByTestId('comparison')).textContent).toContain('示例来源')

    fireEvent.click(screen.getByTestId('count-common'))
    await waitFor(() =>
      expect(vi.mocked(api.reportParagraphs)).toHaveBeenLastCalledWith(7, expect.objectContaining({ countCommon: true })),
    )
    await waitFor(() => expect(screen.getByTestId('stat-common').textContent).toContain('常用表述（已计入）'))
    expect(screen.getByText('《常用表述来源》')).toBeTruthy()
  })

  it('says so when there are no common phrases', async () => {
    const d = detail(false)
    d.report.spans = d.report.spans.filter((s) => s.class !== 'common')
    vi.mocked(api.reportParagraphs).mockResolvedValue(d)
    renderView()
    expect(within(await screen.findByTestId('common-phrases')).getByText('未发现常用表述')).toBeTruthy()
  })
})
