import { Card, Col, Empty, List, Row, Spin, Statistic, Tag } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { reportParagraphs } from './api'
import type { ReportSpan, SpanClass } from './types'

export const SPAN_LABELS: Record<SpanClass, string> = {
  copy: '复制',
  light_edit: '轻度改写',
  quoted: '引用',
  paraphrase: '疑似意译',
}

const RANK: Record<SpanClass, number> = { copy: 4, light_edit: 3, quoted: 2, paraphrase: 1 }

/** The text cut into runs, each with the strongest span class covering it. */
export function highlight(text: string, spans: ReportSpan[]): { text: string; cls: SpanClass | null }[] {
  const chars = Array.from(text)
  const marks: (SpanClass | null)[] = new Array(chars.length).fill(null)
  for (const s of spans) {
    for (let i = s.start; i < Math.min(s.end, chars.length); i++) {
      const old = marks[i]
      if (!old || RANK[s.class] > RANK[old]) marks[i] = s.class
    }
  }
  const runs: { text: string; cls: SpanClass | null }[] = []
  chars.forEach((c, i) => {
    const last = runs[runs.length - 1]
    if (last && last.cls === marks[i]) last.text += c
    else runs.push({ text: c, cls: marks[i] })
  })
  return runs
}

const pct = (v: number) => `${v.toFixed(1)}%`

/** A finished check's report: headline figures, sources ranked by share, the marked-up full text. */
export default function ReportView({ id }: { id: number }) {
  const { data, isLoading, error } = useQuery({ queryKey: ['check-report', id], queryFn: () => reportParagraphs(id) })
  if (isLoading) return <Spin />
  if (error || !data) return <Empty description={error?.message ?? '报告加载失败'} />
  const r = data.report
  const maxSource = r.sources.find((s) => s.id === r.max_single_source)
  return (
    <div className="report-view" data-testid="report-view">
      <Row gutter={[12, 12]}>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="总文字复制比" value={pct(r.ratio_total)} valueStyle={{ color: r.ratio_total > 30 ? '#cf1322' : '#389e0d' }} /></Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="去除引用文献复制比" value={pct(r.ratio_excluding_quotes)} /></Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="去除本人已发表文献复制比" value={pct(r.ratio_excluding_own)} /></Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="单篇最大文字复制比" value={pct(r.ratio_max_single_source)} /></Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="重复字数" value={r.copied_chars} suffix="字" /></Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small"><Statistic title="检测字数" value={r.total_chars} suffix="字" /></Card>
        </Col>
      </Row>
      {maxSource && <div className="muted">单篇最大来源：《{maxSource.title}》</div>}
      <Card size="small" title="相似来源" className="mt">
        <List
          size="small"
          locale={{ emptyText: '未发现相似来源' }}
          dataSource={r.sources}
          renderItem={(s, i) => (
            <List.Item extra={<span>{pct(s.ratio)}（{s.copied_chars} 字）</span>}>
              {i + 1}. 《{s.title}》{s.author && ` ${s.author}`}
            </List.Item>
          )}
        />
      </Card>
      <Card
        size="small"
        title="全文标注"
        className="mt"
        extra={
          <span className="legend">
            {(Object.keys(SPAN_LABELS) as SpanClass[]).map((c) => (
              <Tag key={c} className={`span-${c}`}>{SPAN_LABELS[c]}</Tag>
            ))}
          </span>
        }
      >
        <div className="report-text">
          {highlight(data.text, r.spans).map((run, i) =>
            run.cls ? (
              <mark key={i} className={`span-${run.cls}`} title={SPAN_LABELS[run.cls]}>{run.text}</mark>
            ) : (
              <span key={i}>{run.text}</span>
            ),
          )}
        </div>
      </Card>
    </div>
  )
}
