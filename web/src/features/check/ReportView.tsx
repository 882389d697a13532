import { useMemo, useState } from 'react'
import { Alert, Button, Card, Checkbox, Col, Empty, List, Modal, Progress, Row, Select, Space, Spin, Statistic, Tag, Typography } from 'antd'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useLocation, useNavigate, useSearchParams } from 'react-router'
import { diffChars } from 'diff'
import { downloadReport, isCustomView, reportParagraphs, type ReportOptions } from './api'
import type { PartRatio, Report, ReportDetail, ReportSource, ReportSpan, SpanClass } from './types'
import { formatDateTime } from '../../utils/format'
import { useSiteStore } from '../../stores/site'
import { toastError } from '../../utils/feedback'
import { rewriteFromCheck } from '../rewrite/api'
import RewriteFromReport from '../rewrite/RewriteFromReport'

export const SPAN_LABELS: Record<SpanClass, string> = {
  copy: '复制',
  light_edit: '轻度改写',
  quoted: '引用',
  paraphrase: '疑似意译',
  translated: '疑似翻译',
  common: '常用表述',
}

const SCOPE_LABELS: Record<string, string> = { public: '公开文献库', private: '本人私有库', own_published: '本人已发表' }

/** Which class a character under several spans shows. A common phrase that is not counted ranks
 * last (a character under a copy and a common phrase is a copy); counted, it counts like a copy
 * that is not a quotation, so it ranks above quoted and the classes that never count. */
const RANK: Record<SpanClass, number> = { copy: 6, light_edit: 5, quoted: 4, translated: 3, paraphrase: 2, common: 1 }
const RANK_COMMON_COUNTED: Record<SpanClass, number> = { ...RANK, common: 4.5 }

export interface Run {
  text: string
  cls: SpanClass | null
  /** Index into the report's spans of the span shown for this run. */
  span: number | null
}

/** The text cut into runs, each with the strongest span covering it. */
export function highlight(text: string, spans: ReportSpan[], commonCounted = false): Run[] {
  const rank = commonCounted ? RANK_COMMON_COUNTED : RANK
  const chars = Array.from(text)
  const marks: (number | null)[] = new Array(chars.length).fill(null)
  spans.forEach((s, idx) => {
    for (let i = s.start; i < Math.min(s.end, chars.length); i++) {
      const old = marks[i]
      if (old === null || rank[s.class] > rank[spans[old].class]) marks[i] = idx
    }
  })
  const runs: Run[] = []
  chars.forEach((c, i) => {
    const last = runs[runs.length - 1]
    if (last && last.span === marks[i]) last.text += c
    else runs.push({ text: c, span: marks[i], cls: marks[i] === null ? null : spans[marks[i]].class })
  })
  return runs
}

const pct = (v: number) => `${v.toFixed(1)}%`

/** CNKI's colours: green below 10 %, orange below 30 %, red from there. */
export const ratioColor = (v: number) => (v < 10 ? '#389e0d' : v < 30 ? '#d48806' : '#cf1322')

/** Characters in common phrases: the report's figure (those no counted span covers); counted,
 * the phrases are part of the copied characters and the report gives 0, so their own size. */
export const commonCharsOf = (r: Report) =>
  r.common_counted ? r.spans.reduce((sum, s) => sum + (s.class === 'common' ? s.chars : 0), 0) : r.common_chars

function Figures({ detail }: { detail: ReportDetail }) {
  const r = detail.report
  const maxSource = r.sources.find((s) => s.id === r.max_single_source)
  return (
    <Row gutter={[16, 12]} align="middle" className="report-figures">
      <Col xs={24} md={8} className="report-gauge">
        <Progress
          type="dashboard"
          percent={Math.min(100, r.ratio_total)}
          strokeColor={ratioColor(r.ratio_total)}
          size={170}
          format={() => (
            <span data-testid="report-ratio-total" style={{ color: ratioColor(r.ratio_total) }}>
              {pct(r.ratio_total)}
            </span>
          )}
        />
        <div className="report-gauge-label">总文字复制比</div>
      </Col>
      <Col xs={24} md={16}>
        <Row gutter={[12, 12]}>
          <Col xs={12} lg={6}><Statistic title="去除引用文献复制比" value={pct(r.ratio_excluding_quotes)} /></Col>
          <Col xs={12} lg={6}><Statistic title="去除本人已发表文献复制比" value={pct(r.ratio_excluding_own)} /></Col>
          <Col xs={12} lg={6}><Statistic title="单篇最大文字复制比" value={pct(r.ratio_max_single_source)} /></Col>
          <Col xs={12} lg={6}><Statistic title="重复字数" value={r.copied_chars} suffix="字" /></Col>
          <Col xs={12} lg={6}><Statistic title="检测字数" value={r.total_chars} suffix="字" /></Col>
          <Col xs={12} lg={6}><Statistic title="疑似意译（不计入）" value={r.paraphrase_chars} suffix="字" /></Col>
          <Col xs={12} lg={6} data-testid="stat-translated">
            <Statistic title="疑似翻译（不计入）" value={r.translated_chars} suffix="字" />
          </Col>
          <Col xs={12} lg={6} data-testid="stat-common">
            <Statistic title={`常用表述${r.common_counted ? '（已计入）' : '（不计入）'}`} value={commonCharsOf(r)} suffix="字" />
          </Col>
        </Row>
        {maxSource && <div className="muted mt-s">单篇最大来源：《{maxSource.title}》</div>}
        {detail.settings.length > 0 && (
          <Typography.Paragraph type="secondary" className="mt-s report-settings" data-testid="report-settings">
            检测设置：{detail.settings.join('；')}
          </Typography.Paragraph>
        )}
        {detail.officialTitle && detail.officialTitle !== detail.record.title && (
          <div className="muted">正式报告题目（检测完成时）：{detail.officialTitle}</div>
        )}
      </Col>
    </Row>
  )
}

function ChapterChart({ chapters }: { chapters: PartRatio[] }) {
  const parts = chapters.filter((c) => c.total_chars > 0)
  if (parts.length === 0) return <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="未识别到章节" />
  return (
    <div className="chapter-chart" data-testid="chapter-chart">
      {parts.map((c, i) => (
        <div className="chapter-row" key={i}>
          <span className="chapter-title" title={c.title}>{c.title || '（正文）'}</span>
          <span className="chapter-bar">
            <span style={{ width: `${Math.min(100, c.ratio)}%`, background: ratioColor(c.ratio) }} />
          </span>
          <span className="chapter-value">{pct(c.ratio)}<span className="muted">（{c.copied_chars}/{c.total_chars} 字）</span></span>
        </div>
      ))}
    </div>
  )
}

const NEVER_COUNTED: SpanClass[] = ['paraphrase', 'translated']

const classesOf = (r: Report, s: ReportSource) => s.spans.flatMap((i) => (r.spans[i] ? [r.spans[i].class] : []))

/** The sources worth listing: one whose spans are all uncounted common phrases contributes
 * nothing (the phrase is listed under 常用表述). */
export function listedSources(r: Report): ReportSource[] {
  if (r.common_counted) return r.sources
  return r.sources.filter((s) => s.copied_chars > 0 || classesOf(r, s).some((c) => c !== 'common'))
}

/** A source with no share whose matches (common phrases aside) are all suspected paraphrases or
 * translations. */
const onlyParaphrased = (r: Report, s: ReportSource) => {
  const classes = classesOf(r, s).filter((c) => c !== 'common')
  return s.copied_chars === 0 && classes.length > 0 && classes.every((c) => NEVER_COUNTED.includes(c))
}

/** A source listed only for counted common phrases. */
const onlyCommon = (r: Report, s: ReportSource) => {
  const classes = classesOf(r, s)
  return r.common_counted && classes.length > 0 && classes.every((c) => c === 'common')
}

function Sources({ report, onOpen }: { report: Report; onOpen: (id: number) => void }) {
  return (
    <List
      size="small"
      locale={{ emptyText: '未发现相似来源' }}
      dataSource={listedSources(report)}
      renderItem={(s, i) => (
        <List.Item
          extra={<span className="source-share">{pct(s.ratio)}（{s.copied_chars} 字）</span>}
          actions={s.spans.length > 0 ? [<a key="open" onClick={() => onOpen(s.id)} data-testid="source-compare">对照</a>] : []}
        >
          <div>
            {i + 1}.{' '}
            {s.spans.length > 0 ? (
              <a className="source-title" onClick={() => onOpen(s.id)}>《{s.title}》</a>
            ) : (
              <>《{s.title}》</>
            )}
            <div className="muted">
              {[s.author, s.year].filter(Boolean).join('，')} <Tag>{SCOPE_LABELS[s.scope] ?? s.scope}</Tag>
              {onlyParaphrased(report, s) && (
                <Tag className={s.spans.every((i) => report.spans[i]?.class === 'translated') ? 'span-translated' : 'span-paraphrase'}>仅疑似意译/翻译</Tag>
              )}
              {onlyCommon(report, s) && <Tag className="span-common">仅常用表述</Tag>}
            </div>
          </div>
        </List.Item>
      )}
    />
  )
}

const ellipsis = (text: string, max = 40) => {
  const chars = Array.from(text)
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text
}

const COMMON_NOTE = '这些表述在比对库中被大量文献共同使用（如方法、统计学表述），默认不计入复制比；可在报告选项中选择计入。'
const COMMON_NOTE_COUNTED = '这些表述在比对库中被大量文献共同使用（如方法、统计学表述）；本视图按所选选项将其计入复制比。'

/** Every common phrase (one span each, with one example source), opening its 全文对照. */
function CommonPhrases({ detail, onOpen }: { detail: ReportDetail; onOpen: (span: number) => void }) {
  const items = detail.report.spans.flatMap((s, i) => (s.class === 'common' ? [{ s, i }] : []))
  return (
    <div data-testid="common-phrases">
      <div className="muted mb-s">{detail.report.common_counted ? COMMON_NOTE_COUNTED : COMMON_NOTE}</div>
      <List
        size="small"
        locale={{ emptyText: '未发现常用表述' }}
        dataSource={items}
        rowKey={(x) => x.i}
        pagination={items.length > 10 ? { pageSize: 10, size: 'small', showSizeChanger: false } : false}
        renderItem={({ s, i }) => (
          <List.Item
            data-testid="common-phrase"
            extra={<span className="muted source-share">{s.docs ? `${s.docs} 篇文献使用` : `${s.chars} 字`}</span>}
          >
            <a onClick={() => onOpen(i)}>{ellipsis(passageOf(detail, s))}</a>
          </List.Item>
        )}
      />
    </div>
  )
}

/** Classes whose wording is the source's: the characters that differ are marked. */
const MARKS_CHANGES: SpanClass[] = ['copy', 'light_edit']

/** One matched passage beside its source, with the characters that differ marked on both sides
 * (for copies and light edits: a light edit shows exactly what was changed). */
function PassagePair({ paper, source, cls }: { paper: string; source: string; cls: SpanClass }) {
  const parts = source && MARKS_CHANGES.includes(cls) ? diffChars(source, paper) : null
  const side = (which: 'paper' | 'source') => {
    const whole = which === 'paper' ? paper : source
    if (!parts) return <mark className={`span-${cls}`}>{whole}</mark>
    return parts.map((p, i) => {
      if (which === 'paper' ? p.removed : p.added) return null
      const changed = which === 'paper' ? p.added : p.removed
      return (
        <mark key={i} className={changed ? `span-${cls} char-changed` : `span-${cls}`} data-changed={changed || undefined}>
          {p.value}
        </mark>
      )
    })
  }
  return (
    <Row gutter={16}>
      <Col xs={24} md={12}>
        <div className="compare-label">本文</div>
        <div className="compare-text" data-testid="compare-paper">{side('paper')}</div>
      </Col>
      <Col xs={24} md={12}>
        <div className="compare-label">相似来源</div>
        <div className="compare-text" data-testid="compare-source">
          {source ? side('source') : <span className="muted">来源原文不可用</span>}
        </div>
      </Col>
    </Row>
  )
}

const passageOf = (detail: ReportDetail, s: ReportSpan) => Array.from(detail.text).slice(s.start, s.end).join('')

const CHANGED_NOTE = '红色波浪线标出本文与来源不同的字。'

/** 全文对照 of one span: the paper's passage beside the source's. */
function Comparison({ detail, span, onClose }: { detail: ReportDetail; span: number | null; onClose: () => void }) {
  const s = span === null ? undefined : detail.report.spans[span]
  const source = s ? detail.report.sources.find((x) => x.id === s.source_id) : undefined
  return (
    <Modal open={s !== undefined} onCancel={onClose} footer={null} title="全文对照" width={900}>
      {s && (
        <div data-testid="comparison">
          <Space wrap className="mb-s">
            <Tag className={`span-${s.class}`}>{SPAN_LABELS[s.class]}</Tag>
            <span>{s.chars} 字</span>
            {s.class === 'common' && s.docs ? <span>{s.docs} 篇文献使用</span> : null}
            {source && (
              <span className="muted">
                {s.class === 'common' ? '示例来源' : '来源'}：《{source.title}》{source.author && ` ${source.author}`}
              </span>
            )}
          </Space>
          {MARKS_CHANGES.includes(s.class) && <div className="muted mb-s">{CHANGED_NOTE}</div>}
          <PassagePair paper={passageOf(detail, s)} source={s.source_text} cls={s.class} />
        </div>
      )}
    </Modal>
  )
}

/** Every passage matched in one source, in the paper's order, each beside the source's wording. */
function SourceComparison({ detail, sourceId, onClose }: { detail: ReportDetail; sourceId: number | null; onClose: () => void }) {
  const source = sourceId === null ? undefined : detail.report.sources.find((x) => x.id === sourceId)
  const spans = source ? source.spans.map((i) => detail.report.spans[i]).filter(Boolean).sort((a, b) => a.start - b.start) : []
  return (
    <Modal open={source !== undefined} onCancel={onClose} footer={null} title="与来源逐段对照" width={960}>
      {source && (
        <div data-testid="source-comparison">
          <div className="mb-s">
            <b>《{source.title}》</b>
            <span className="muted">
              {' '}
              {[[source.author, source.year].filter(Boolean).join('，'), `相似 ${source.copied_chars} 字，占全文 ${pct(source.ratio)}`].filter(Boolean).join('；')}
            </span>
          </div>
          <div className="muted mb-s">共 {spans.length} 处相似片段。{CHANGED_NOTE}</div>
          {spans.map((s, i) => (
            <div key={i} className="source-pair" data-testid="source-pair">
              <Space wrap className="mb-s">
                <span>片段 {i + 1}</span>
                <Tag className={`span-${s.class}`}>{SPAN_LABELS[s.class]}</Tag>
                <span className="muted">{s.chars} 字</span>
              </Space>
              <PassagePair paper={passageOf(detail, s)} source={s.source_text} cls={s.class} />
            </div>
          ))}
        </div>
      )}
    </Modal>
  )
}

/** The open comparison (a span's, or a whole source's) lives in the address (`?span=3`,
 * `?source=12`): refresh keeps it, Back closes it. */
function useReportOverlays() {
  const [params, setParams] = useSearchParams()
  const location = useLocation()
  const navigate = useNavigate()
  const read = (key: string) => {
    const v = params.get(key)
    return v !== null && /^\d+$/.test(v) ? Number(v) : null
  }
  return {
    span: read('span'),
    source: read('source'),
    open: (key: 'span' | 'source', value: number) =>
      setParams(
        (p) => {
          p.delete('span')
          p.delete('source')
          p.set(key, String(value))
          return p
        },
        { state: { overlay: true }, replace: read('span') !== null || read('source') !== null },
      ),
    close: () => {
      if ((location.state as { overlay?: boolean } | null)?.overlay) navigate(-1)
      else
        setParams(
          (p) => {
            p.delete('span')
            p.delete('source')
            return p
          },
          { replace: true },
        )
    },
  }
}

const MIN_CHARS = [
  { value: 0, label: '显示全部匹配' },
  { value: 20, label: '忽略少于 20 字的匹配' },
  { value: 50, label: '忽略少于 50 字的匹配' },
  { value: 100, label: '忽略少于 100 字的匹配' },
]

/** A finished check's report: the figures with a gauge, chapters, sources, the marked-up full
 * text with side-by-side comparison, and CNKI's report options, which recompute the figures. */

export default function ReportView({ id }: { id: number }) {
  const zoneLabel = useSiteStore((s) => s.timeZoneLabel)
  const [options, setOptions] = useState<ReportOptions>({ excludeQuoted: false, excludeOwn: false, minChars: 0, countCommon: false })
  const overlays = useReportOverlays()
  const { data, isLoading, isFetching, error } = useQuery({
    queryKey: ['check-report', id, options],
    queryFn: () => reportParagraphs(id, options),
    placeholderData: keepPreviousData,
  })
  const runs = useMemo(() => (data ? highlight(data.text, data.report.spans, data.report.common_counted) : []), [data])
  if (isLoading) return <Spin className="page-spin" />
  if (error || !data) return <Empty description={error?.message ?? '报告加载失败'} />
  const custom = isCustomView(options)
  const download = (format: 'pdf' | 'html', view?: ReportOptions) =>
    downloadReport(id, data.officialTitle || data.record.title, format, view).catch((e: Error) =>
      toastError(e.message || '报告下载失败，请稍后重试'),
    )
  return (
    <div className="report-view" data-testid="report-view">
      <div className="report-head">
        <div>
          <div>报告编号：<b data-testid="report-number">{data.reportNumber}</b></div>
          <div className="muted">
            验证码：<span data-testid="verify-code">{data.verifyCode}</span>
            {data.record.finishedAt && <>{'　'}检测时间：{formatDateTime(data.record.finishedAt)}（{zoneLabel}）</>}
          </div>
        </div>
        <Space wrap>
          <Button type="primary" onClick={() => download('pdf')} data-testid="download-pdf">下载正式报告（PDF）</Button>
          <Button onClick={() => download('html')}>下载网页版</Button>
          {custom && (
            <Button onClick={() => download('pdf', options)} data-testid="download-custom">下载自定义视图</Button>
          )}
          <RewriteFromReport
            what="一键降重"
            disabledReason={data.record.copiedChars ? null : '本报告没有复制段落，无需降重'}
            start={() => rewriteFromCheck(id)}
            to="/papermachinesubmit/papermachine"
          />
        </Space>
      </div>
      {data.privateLibrary && (
        <Alert
          className="mt-s"
          type="info"
          showIcon
          data-testid="private-library-note"
          message="本文已按您的选择加入您的私有比对库"
          description="之后提交的稿件会与它比对（只对您本人生效），它不会进入公共文献库。"
        />
      )}
      <Card size="small" className="mt report-options">
        <Space wrap>
          <span className="muted">报告选项：</span>
          <Checkbox checked={options.excludeQuoted} onChange={(e) => setOptions({ ...options, excludeQuoted: e.target.checked })}>
            排除引用
          </Checkbox>
          <Checkbox checked={options.excludeOwn} onChange={(e) => setOptions({ ...options, excludeOwn: e.target.checked })}>
            排除本人已发表文献
          </Checkbox>
          <Checkbox
            checked={options.countCommon}
            onChange={(e) => setOptions({ ...options, countCommon: e.target.checked })}
            data-testid="count-common"
          >
            常用表述计入复制比
          </Checkbox>
          <Select
            size="small"
            value={options.minChars}
            options={MIN_CHARS}
            style={{ width: 190 }}
            onChange={(minChars) => setOptions({ ...options, minChars })}
            data-testid="min-chars"
          />
          {isFetching && <Spin size="small" />}
          {data.refigured && (
            <Tag color="orange" data-testid="custom-view-tag">
              自定义视图：下方数字按所选选项重新计算，不是正式报告；正式报告与核验结果不变
            </Tag>
          )}
        </Space>
      </Card>
      <Card size="small" className="mt">
        <Figures detail={data} />
      </Card>
      <Row gutter={12}>
        <Col xs={24} lg={12}>
          <Card size="small" title="各章节复制比" className="mt"><ChapterChart chapters={data.report.chapters} /></Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card size="small" title="相似来源" className="mt"><Sources report={data.report} onOpen={(sourceId) => overlays.open('source', sourceId)} /></Card>
        </Col>
      </Row>
      <Card size="small" title="常用表述" className="mt">
        <CommonPhrases detail={data} onOpen={(span) => overlays.open('span', span)} />
      </Card>
      <Card
        size="small"
        title="全文标注"
        className="mt"
      >
        <div className="legend mb-s">
          {(Object.keys(SPAN_LABELS) as SpanClass[]).map((c) => (
            <Tag key={c} className={`span-${c}`}>{SPAN_LABELS[c]}</Tag>
          ))}
        </div>
        <div className="muted mb-s">点击标色的片段，查看与来源的全文对照。</div>
        <div className="report-text">
          {runs.map((run, i) =>
            run.cls && run.span !== null ? (
              <mark key={i} className={`span-${run.cls}`} title={SPAN_LABELS[run.cls]} onClick={() => overlays.open('span', run.span ?? 0)}>
                {run.text}
              </mark>
            ) : (
              <span key={i}>{run.text}</span>
            ),
          )}
        </div>
      </Card>
      <Comparison detail={data} span={overlays.span} onClose={overlays.close} />
      <SourceComparison detail={data} sourceId={overlays.source} onClose={overlays.close} />
    </div>
  )
}
