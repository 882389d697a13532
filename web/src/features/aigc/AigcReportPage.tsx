import { useMemo, useState } from 'react'
import { Alert, Button, Card, Col, Descriptions, Empty, Modal, Progress, Result, Row, Space, Spin, Statistic, Tag, Tooltip } from 'antd'
import { QuestionCircleOutlined } from '@ant-design/icons'
import TechNote from '../../components/TechNote'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { aigcDownload, aigcLoad, aigcParagraph, aigcReport } from './api'
import type { AigcParagraph, AigcReport, Band } from './types'
import PayModal from './PayModal'
import { paragraphRuns } from './runs'
import { TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { formatDateTime } from '../../utils/format'
import { useSiteStore } from '../../stores/site'
import { toastError } from '../../utils/feedback'
import { rewriteFromDetection } from '../rewrite/api'
import RewriteFromReport from '../rewrite/RewriteFromReport'

/** Green below 10 %, orange below 30 %, red from there (schools' usual AIGC limits). */
export const aiRateColor = (v: number) => (v < 10 ? '#389e0d' : v < 30 ? '#d48806' : '#cf1322')

const BAND_COLOR: Record<Band, string> = { high: '#ff7875', medium: '#ffc069', low: '#95de64' }

const pct = (v: number) => `${v.toFixed(1)}%`

function bandTotals(paragraphs: AigcParagraph[], band: Band) {
  const ps = paragraphs.filter((p) => p.band === band)
  return { count: ps.length, chars: ps.reduce((n, p) => n + p.chars, 0) }
}

function Figures({ report }: { report: AigcReport }) {
  const r = report.record
  const shown = r.aiRate != null && !r.notice
  const [high, medium, low] = (['high', 'medium', 'low'] as Band[]).map((b) => bandTotals(report.paragraphs, b))
  return (
    <Row gutter={[16, 12]} align="middle" className="report-figures">
      <Col xs={24} md={8} className="report-gauge">
        <Progress
          type="dashboard"
          percent={shown ? Math.min(100, r.aiRate ?? 0) : 0}
          strokeColor={shown ? aiRateColor(r.aiRate ?? 0) : '#d9d9d9'}
          size={170}
          format={() => (
            <span data-testid="aigc-report-rate" style={{ color: shown ? aiRateColor(r.aiRate ?? 0) : '#8c8c8c' }}>
              {shown ? pct(r.aiRate ?? 0) : '—'}
            </span>
          )}
        />
        <div className="report-gauge-label">AIGC 占比</div>
        <div className="muted report-gauge-note" data-testid="aigc-rate-explained">
          高度疑似段落的字数占检测字数的比例
        </div>
      </Col>
      <Col xs={24} md={16}>
        {r.notice && <Alert className="mb" type="warning" showIcon title={r.notice} data-testid="aigc-notice" />}
        <Row gutter={[12, 12]}>
          <Col xs={12} lg={8}>
            <Statistic
              title={
                <Tooltip title="把全文当作一个整体判断为 AI 生成的概率。它与 AIGC 占比不同：占比只数高度疑似段落的字数，全文概率看的是整篇的整体特征。">
                  <span>全文 AI 生成概率 <QuestionCircleOutlined /></span>
                </Tooltip>
              }
              value={r.probability == null ? '—' : pct(r.probability * 100)}
            />
          </Col>
          <Col xs={12} lg={8}><Statistic title="检测字数" value={r.chars} suffix="字" /></Col>
          <Col xs={12} lg={8}><Statistic title="判断段落" value={report.paragraphs.length} suffix="段" /></Col>
          <Col xs={12} lg={8}><Statistic title="高度疑似" value={`${high.count} 段 / ${high.chars} 字`} valueStyle={{ color: '#cf1322' }} /></Col>
          <Col xs={12} lg={8}><Statistic title="中度疑似" value={`${medium.count} 段 / ${medium.chars} 字`} valueStyle={{ color: '#d48806' }} /></Col>
          <Col xs={12} lg={8}><Statistic title="低风险" value={`${low.count} 段 / ${low.chars} 字`} valueStyle={{ color: '#389e0d' }} /></Col>
        </Row>
      </Col>
    </Row>
  )
}

/** Every paragraph as a bar of its probability, in reading order, with the band thresholds drawn across. */
function Distribution({ report, onPick }: { report: AigcReport; onPick: (index: number) => void }) {
  if (report.paragraphs.length === 0) return <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="没有可单独判断的段落" />
  return (
    <div className="aigc-chart">
      <div className="aigc-axis" aria-hidden>
        <span style={{ bottom: '100%' }}>100%</span>
        <span style={{ bottom: '50%' }}>50%</span>
        <span style={{ bottom: '0%' }}>0</span>
      </div>
      <div className="aigc-strip" data-testid="aigc-distribution">
        <span className="aigc-threshold" style={{ bottom: `${report.highThreshold * 100}%` }} title="高度疑似阈值">
          <em>高度疑似 {Math.round(report.highThreshold * 100)}%</em>
        </span>
        <span className="aigc-threshold medium" style={{ bottom: `${report.mediumThreshold * 100}%` }} title="中度疑似阈值">
          <em>中度疑似 {Math.round(report.mediumThreshold * 100)}%</em>
        </span>
        {report.paragraphs.map((p) => (
          <Tooltip key={p.index} title={`第 ${p.index + 1} 段 · ${p.chars} 字 · AI 生成概率 ${pct(p.probability * 100)} · ${p.bandLabel}`}>
            <button
              type="button"
              className="aigc-bar"
              style={{ flexGrow: Math.max(1, p.chars) }}
              onClick={() => onPick(p.index)}
              aria-label={`第 ${p.index + 1} 段`}
            >
              <span style={{ height: `${Math.max(2, p.probability * 100)}%`, background: BAND_COLOR[p.band] }} />
            </button>
          </Tooltip>
        ))}
      </div>
    </div>
  )
}

/** One paragraph's result, fetched on its own (load_content_by_id). */
function ParagraphDetail({ id, index, onClose }: { id: number; index: number | null; onClose: () => void }) {
  const detail = useQuery({ queryKey: ['aigc-paragraph', id, index], queryFn: () => aigcParagraph(id, index ?? 0), enabled: index !== null })
  const p = detail.data
  return (
    <Modal open={index !== null} onCancel={onClose} footer={null} title={index === null ? '' : `第 ${index + 1} 段`} width={760}>
      {!p ? (
        <Spin />
      ) : (
        <div data-testid="aigc-paragraph-detail">
          <Descriptions column={{ xs: 1, sm: 3 }} size="small" bordered>
            <Descriptions.Item label="AI 生成概率">{pct(p.probability * 100)}</Descriptions.Item>
            <Descriptions.Item label="分级"><Tag className={`aigc-${p.band}`}>{p.bandLabel}</Tag></Descriptions.Item>
            <Descriptions.Item label="字数">{p.chars} 字</Descriptions.Item>
          </Descriptions>
          <div className={`compare-text mt aigc-text-${p.band}`}>{p.text}</div>
        </div>
      )}
    </Modal>
  )
}

/** /aigccheck/content/:id — a detection's progress, then its report. */
export default function AigcReportPage() {
  const zoneLabel = useSiteStore((s) => s.timeZoneLabel)
  const { id = '' } = useParams()
  const taskId = Number(id)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [picked, setPicked] = useState<number | null>(null)
  const [rerun, setRerun] = useState(false)
  const record = useQuery({
    queryKey: ['aigc-record', taskId],
    queryFn: () => aigcLoad(taskId),
    enabled: taskId > 0,
    refetchInterval: (q) => (q.state.data && isUnderway(q.state.data.status) ? 2000 : false),
  })
  const done = record.data?.status === 'done'
  const report = useQuery({ queryKey: ['aigc-report', taskId, record.data?.finishedAt], queryFn: () => aigcReport(taskId), enabled: done })
  const runs = useMemo(() => (report.data ? paragraphRuns(report.data.text, report.data.paragraphs) : []), [report.data])

  if (record.isLoading) return <Spin className="page-spin" />
  if (record.error || !record.data) {
    return (
      <div className="page-card">
        <Result status="warning" title="无法加载该检测" subTitle={record.error?.message} extra={<Button onClick={() => navigate('/aigccheck/list')}>返回检测记录</Button>} />
      </div>
    )
  }
  const r = record.data
  const rerunModal = (
    <PayModal
      id={rerun ? taskId : null}
      rerun
      onClose={() => setRerun(false)}
      onPaid={() => {
        setRerun(false)
        void queryClient.invalidateQueries({ queryKey: ['aigc-record', taskId] })
      }}
    />
  )
  if (!done) {
    return (
      <div className="page-card narrow">
        <Card title={r.title}>
          <TaskStatusCell {...r} />
          <Space className="mt">
            <Button onClick={() => navigate('/aigccheck/list')}>返回检测记录</Button>
            {(r.status === 'failed' || r.status === 'cancelled') && <Button type="primary" onClick={() => setRerun(true)}>重新检测</Button>}
          </Space>
        </Card>
        {rerunModal}
      </div>
    )
  }
  if (report.isLoading || !report.data) {
    return report.error ? <Empty description={report.error.message} /> : <Spin className="page-spin" />
  }
  const data = report.data
  const download = (format: 'pdf' | 'html') => aigcDownload(taskId, r.title, format).catch((e: Error) => toastError(e.message || '报告下载失败，请稍后重试'))
  return (
    <div className="page-card report-view" data-testid="aigc-report">
      <Card
        title={`AIGC检测报告：${r.title}`}
        extra={<Button type="link" onClick={() => navigate('/aigccheck/list')}>检测记录</Button>}
      >
        <div className="report-head">
          <div>
            <div>报告编号：<b data-testid="aigc-report-number">{data.reportNumber}</b></div>
            <div className="muted">
              验证码：<span data-testid="aigc-verify-code">{data.verifyCode}</span>
              {'　'}检测时间：{formatDateTime(r.finishedAt ?? r.createdAt)}（{zoneLabel}）
              {r.author && <>{'　'}作者：{r.author}</>}
            </div>
          </div>
          <Space wrap>
            <Button type="primary" onClick={() => download('pdf')} data-testid="aigc-download-pdf">下载 PDF 报告</Button>
            <Button onClick={() => download('html')}>下载网页版</Button>
            <Button onClick={() => setRerun(true)}>重新检测</Button>
            <RewriteFromReport
              what="降AIGC"
              disabledReason={data.paragraphs.some((p) => p.band !== 'low') ? null : '没有高度或中度疑似的段落，无需降 AIGC'}
              start={() => rewriteFromDetection(taskId)}
              to="/proaigcsubmit/promachine"
            />
          </Space>
        </div>
        <Card size="small" className="mt">
          <Figures report={data} />
        </Card>
        <Card size="small" title="段落分布" className="mt">
          <div className="muted mb-s">每根柱为一段：高度为该段的 AI 生成概率，宽度与该段字数成比例，虚线为分级阈值；点击查看该段。</div>
          <Distribution report={data} onPick={setPicked} />
        </Card>
        <Card size="small" title="全文标注" className="mt">
          <Space wrap className="mb-s" data-testid="aigc-legend">
            <Tag className="aigc-high">高度疑似 ≥ {Math.round(data.highThreshold * 100)}%</Tag>
            <Tag className="aigc-medium">中度疑似 ≥ {Math.round(data.mediumThreshold * 100)}%</Tag>
            <Tag>低风险</Tag>
            <span className="muted">鼠标移到段落上可查看该段的 AI 生成概率；点击查看详情。</span>
          </Space>
          <div className="report-text aigc-text">
            {runs.map((run, i) =>
              run.paragraph ? (
                <Tooltip key={i} title={`AI 生成概率 ${pct(run.paragraph.probability * 100)} · ${run.paragraph.bandLabel}`}>
                  <span
                    className={`aigc-para aigc-${run.paragraph.band}`}
                    data-testid="aigc-para"
                    data-band={run.paragraph.band}
                    onClick={() => run.paragraph && setPicked(run.paragraph.index)}
                  >
                    {run.text}
                  </span>
                </Tooltip>
              ) : (
                <span key={i}>{run.text}</span>
              ),
            )}
          </div>
        </Card>
        <Card size="small" title="检测说明" className="mt" data-testid="aigc-method">
          <p>{data.bandRule}</p>
          <Alert type="warning" showIcon title="关于检测结果的局限" description={data.note} />
          <TechNote testId="aigc-tech">
            <p className="muted">检测模型：{data.model}；判别方法：{data.criterion}；校准版本：{data.calibration}</p>
          </TechNote>
        </Card>
      </Card>
      <ParagraphDetail id={taskId} index={picked} onClose={() => setPicked(null)} />
      {rerunModal}
    </div>
  )
}
