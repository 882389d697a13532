import { useState } from 'react'
import { Alert, Button, Card, Checkbox, Descriptions, Result, Spin } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useParams, useSearchParams } from 'react-router'
import { checkCost, checkSubmit, loadById, checkSubmission } from './api'
import { formatFen } from '../../utils/format'
import { PackageNotice, confirmedPayment, payAsShown, paysWithText } from '../order/paysWith'
import ScanToPay from '../order/ScanToPay'
import { useSubmit } from '../../utils/useSubmit'

/** /paper/submit/:id — confirm title, author, characters, price and what pays; then submit. */
export default function SubmitPage() {
  const { id = '' } = useParams()
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const taskId = Number(id)
  const excludeBibliography = params.get('excludeBibliography') !== '0'
  const record = useQuery({ queryKey: ['check', taskId], queryFn: () => loadById(taskId), enabled: taskId > 0 })
  // Priced as the submission will count it (with or without the reference list).
  const cost = useQuery({ queryKey: ['check-cost', taskId, excludeBibliography], queryFn: () => checkCost(taskId, excludeBibliography), enabled: taskId > 0 })
  const [keepDraft, setKeepDraft] = useState(false)
  const [submitting, submit] = useSubmit(async () => {
    if (!cost.data) return
    const headers = confirmedPayment(cost.data)
    await payAsShown(() => checkSubmit(taskId, excludeBibliography, keepDraft, headers), () => cost.refetch())
    navigate('/paper/report')
  })

  if (record.isLoading || cost.isLoading) return <Spin className="page-spin" />
  if (record.error || cost.error || !record.data || !cost.data) {
    return (
      <div className="page-card">
        <Result status="warning" title="无法加载该查重" subTitle={(record.error ?? cost.error)?.message} extra={<Button onClick={() => navigate('/papercheck/check')}>返回</Button>} />
      </div>
    )
  }
  const r = record.data
  const c = cost.data
  if (r.status !== 'pending') {
    return (
      <div className="page-card">
        <Result status="info" title="该论文已提交检测" extra={<Button type="primary" onClick={() => navigate('/paper/report')}>查看查重记录</Button>} />
      </div>
    )
  }
  const pays = paysWithText(c)
  return (
    <div className="page-card narrow">
      <Card title="确认提交">
        <Descriptions column={1} bordered size="middle">
          <Descriptions.Item label="论文标题">{r.title}</Descriptions.Item>
          <Descriptions.Item label="作者">{r.author || '—'}</Descriptions.Item>
          <Descriptions.Item label="文件">{r.fileName || '粘贴文本'}</Descriptions.Item>
          <Descriptions.Item label="检测字数">{c.chars.toLocaleString('zh-CN')} 字</Descriptions.Item>
          <Descriptions.Item label="价格">
            {formatFen(c.priceFen)}（每千字 {formatFen(c.pricePerThousandFen)}，不足千字按千字计）
          </Descriptions.Item>
          <Descriptions.Item label="支付方式">
            <span data-testid="pays-with">{pays}</span>
          </Descriptions.Item>
          <Descriptions.Item label="账户余额">{formatFen(c.balanceFen)}</Descriptions.Item>
        </Descriptions>
        <div className="muted">{c.rule}</div>
        <PackageNotice cost={c} />
        {c.freeCheckMaxChars != null && (
          <div className="muted" data-testid="free-check-cap">
            免费查重次数仅适用于 {c.freeCheckMaxChars.toLocaleString('zh-CN')} 字以内的论文
            {c.freeChecks > 0 && c.chars > c.freeCheckMaxChars ? '；本文超出该字数，将从账户余额支付。' : '。'}
          </div>
        )}
        {c.paysWith === 'insufficient' && (
          <Alert
            className="mt"
            type="warning"
            showIcon
            title="余额不足，无法提交"
            action={<Button size="small" onClick={() => navigate('/order/recharge')}>去充值</Button>}
          />
        )}
        {c.paysWith === 'insufficient' && taskId > 0 && (
          <ScanToPay
            taskId={taskId}
            shortFen={c.priceFen - c.balanceFen}
            onPaid={() => void submit(undefined)}
            submit={checkSubmission(taskId, excludeBibliography, keepDraft)}
            priceFen={c.priceFen}
          />
        )}
        <Checkbox className="mt" checked={keepDraft} onChange={(e) => setKeepDraft(e.target.checked)}>
          检测完成后将本文加入我的个人比对库（仅用于比对我以后的稿件，不会进入公共库）
        </Checkbox>
        <div className="actions">
          <Button type="primary" size="large" loading={submitting} disabled={c.paysWith === 'insufficient'} onClick={() => void submit(undefined)}>
            确认并提交检测
          </Button>
        </div>
      </Card>
    </div>
  )
}
