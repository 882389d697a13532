import { Alert, Button, Card, Col, Empty, Progress, Row, Space, Statistic } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { rewriteContent, rewriteDownload, rewriteLoad, rewriteSubmitCheck } from './api'
import type { RewriteContent } from './types'
import { percent, probability } from './figures'
import LineCard from './LineCard'
import TechNote from '../../components/TechNote'
import ManualList from './ManualList'
import { useLineRerun } from './RewritePayModal'
import { isUnderway } from '../../components/TaskStatus'
import { toastError, toastSuccess } from '../../utils/feedback'
import { useSubmit } from '../../utils/useSubmit'

function Summary({ content }: { content: RewriteContent }) {
  const rec = content.record
  return (
    <Row gutter={[16, 16]}>
      <Col xs={12} md={6}>
        <Statistic title="改写段落复制比（前）" value={percent(rec.similarityBefore)} />
      </Col>
      <Col xs={12} md={6}>
        <Statistic title="改写段落复制比（现）" value={percent(rec.similarityAfter)} valueStyle={{ color: rec.similarityAfter != null && rec.similarityBefore != null && rec.similarityAfter < rec.similarityBefore ? '#389e0d' : undefined }} data-testid="summary-similarity-after" />
      </Col>
      <Col xs={12} md={6}>
        <Statistic title="AI 概率（前 → 现）" value={`${probability(rec.aiBefore)} → ${probability(rec.aiAfter)}`} />
      </Col>
      <Col xs={12} md={6}>
        <Statistic title="采用改写" value={`${rec.accepted ?? 0} / ${rec.paragraphs} 段`} />
      </Col>
      {content.paper && (
        <Col xs={24}>
          <div className="muted" data-testid="paper-estimate">
            以上复制比只统计被改写的段落。全文总文字复制比：查重时 {percent(content.paper.ratioBefore)}，按当前采用的改写估计约{' '}
            <b>{percent(content.paper.ratioEstimated)}</b>（估计值，以重新查重的结果为准）。
          </div>
        </Col>
      )}
    </Row>
  )
}

/** /papermachine/content/{id}, /proaigcsubmit/content/{id}: before and after, side by side, every figure measured. */
export default function ComparisonPage({ newCheckPath = '/paper/submit' }: { newCheckPath?: string }) {
  const id = Number(useParams().id)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['rewrite-content', id] }).then(() => queryClient.invalidateQueries({ queryKey: ['rewrite-record', id] }))
  const [rerunLine, rerunModal] = useLineRerun(id, refresh)
  const record = useQuery({
    queryKey: ['rewrite-record', id],
    queryFn: () => rewriteLoad(id),
    refetchInterval: (q) => (q.state.data && isUnderway(q.state.data.status) ? 2000 : false),
  })
  const done = record.data?.status === 'done'
  const content = useQuery({ queryKey: ['rewrite-content', id], queryFn: () => rewriteContent(id), enabled: done })
  const [checking, checkAgain] = useSubmit(async () => {
    const check = await rewriteSubmitCheck(id)
    toastSuccess('已生成改写稿的查重任务')
    navigate(`${newCheckPath}/${check.id}`)
  })
  const rec = record.data
  if (record.error) return <div className="page-card"><Alert type="error" showIcon title={record.error.message} /></div>
  if (!rec) return <div className="page-card"><Card loading /></div>
  if (!done) {
    return (
      <div className="page-card">
        <Card title={rec.title}>
          {rec.status === 'failed' || rec.status === 'cancelled' ? (
            <Alert type="error" showIcon title={rec.error ?? '改写未完成'} />
          ) : (
            <>
              <Progress percent={rec.progress} status="active" />
              <div className="muted">{rec.phase || '排队中'}</div>
            </>
          )}
        </Card>
      </div>
    )
  }
  const c = content.data
  return (
    <div className="page-card">
      {c && <ManualList lines={c.lines} keeps="下载的 Word 文件中这些段落" />}
      <Card
        title={`改写对比：${rec.title}`}
        extra={
          <Space wrap>
            <Button onClick={() => rewriteDownload(id, rec.title).catch((e: Error) => toastError(e.message))} data-testid="rewrite-download">下载改写稿（Word）</Button>
            <Button type="primary" loading={checking} onClick={() => void checkAgain(undefined)} data-testid="rewrite-check-again">改写稿重新查重</Button>
          </Space>
        }
      >
        {c ? (
          <>
            <Summary content={c} />
            <Alert
              className="mt"
              type="info"
              showIcon
              title={`改写完成，用时 ${(c.elapsedMs / 1000).toFixed(0)} 秒`}
              description={`每段改写后都重新测量：复制比由本站查重引擎比对文献库得出，AI 概率由 AIGC 检测模型估计，语义相似度须不低于 ${c.meaningMin.toFixed(2)}，且数字、引用、公式与保留术语一个不少；再核对关键术语是否保留、语句是否通顺、原文每句是否都有对应、意思有无反转、是否与原文雷同。未达标或未通过核对的段落默认保留原文并退还费用，您可以逐段改变选择；下载与重新查重都使用当前的选择。`}
            />
            <TechNote testId="rewrite-tech">
              <span className="muted">改写模型：{rec.model ?? '—'}；提示词版本：{c.promptVersion}</span>
            </TechNote>
            <div className="mt">
              {c.lines.some((l) => l.rewrite) ? (
                c.lines.map((line) => (
                  <LineCard key={line.index} id={id} line={line} onChanged={refresh} onRerun={rerunLine} />
                ))
              ) : (
                <Empty description="没有改写的段落" />
              )}
            </div>
          </>
        ) : content.error ? (
          <Alert type="error" showIcon title={content.error.message} />
        ) : (
          <Card loading />
        )}
      </Card>
      {rerunModal}
    </div>
  )
}
