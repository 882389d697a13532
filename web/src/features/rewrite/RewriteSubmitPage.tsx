import { useEffect, useState } from 'react'
import { Alert, Button, Card, Descriptions, Form, Input, Radio, Space } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useSearchParams } from 'react-router'
import { rewriteInit, rewriteLoad, rewriteWordCount } from './api'
import { GOALS, STRENGTHS, type Goal, type Strength } from './types'
import RewritePayModal from './RewritePayModal'
import EngineNotice from './EngineNotice'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { usePaperInput } from '../../components/PaperInput'

/**
 * /papermachinesubmit/papermachine (降重) and /proaigcsubmit/promachine (降AIGC): a paper to rewrite — uploaded,
 * pasted, or the flagged paragraphs of a check or detection (`?draft=ID`) — with goal, strength and frozen terms;
 * then the price and payment. Every rewrite is measured again by our own engines.
 */
export default function RewriteSubmitPage({ defaultGoal, listPath }: { defaultGoal: Goal; listPath: string }) {
  const navigate = useNavigate()
  const [params] = useSearchParams()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const fromDraft = Number(params.get('draft')) || null
  const draftRecord = useQuery({ queryKey: ['rewrite-draft', fromDraft], queryFn: () => rewriteLoad(fromDraft ?? 0), enabled: fromDraft !== null && Boolean(token) })
  const paper = usePaperInput(rewriteWordCount, '将需要改写的正文粘贴到这里，每段一行')
  const [goal, setGoal] = useState<Goal>(draftRecord.data?.goal ?? defaultGoal)
  const draftGoal = draftRecord.data?.goal
  useEffect(() => {
    if (draftGoal) setGoal(draftGoal)
  }, [draftGoal])
  const [strength, setStrength] = useState<Strength>('medium')
  const [frozen, setFrozen] = useState('')
  const [draft, setDraft] = useState<number | null>(null)
  const [creating, create] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    setDraft(fromDraft ?? (await rewriteInit(paper.source)).id)
  })
  const d = draftRecord.data
  return (
    <div className="page-card">
      <Card title={defaultGoal === 'aigc' ? '降AIGC' : '论文降重'} extra={<Button type="link" onClick={() => navigate(listPath)}>改写记录</Button>}>
        <Alert
          type="info"
          showIcon
          className="mb"
          title="改写后逐段复测，只采用实测有效的改写"
          description="每段改写后，用同一查重引擎重新比对文献库、用 AIGC 检测模型重新估计 AI 概率、用句向量核对意思是否保持；数字、引用标注、公式、英文术语与您填写的保留术语必须原样保留。未达标的段落保留原文、写明原因，并按字数退款。"
        />
        <EngineNotice />
        <Form layout="vertical">
          {fromDraft ? (
            d ? (
              <Descriptions className="mb" bordered size="small" column={1} data-testid="rewrite-draft">
                <Descriptions.Item label="论文">{d.title}</Descriptions.Item>
                <Descriptions.Item label="待改写段落">{d.paragraphs} 段，共 {d.chars.toLocaleString('zh-CN')} 字（依据{d.sourceTask ? `第 ${d.sourceTask} 号报告标出的段落` : '全文'}）</Descriptions.Item>
              </Descriptions>
            ) : draftRecord.error ? (
              <Alert className="mb" type="error" showIcon title={draftRecord.error.message} />
            ) : null
          ) : (
            paper.fields
          )}
          <Form.Item label="改写目标">
            <Radio.Group value={goal} onChange={(e) => setGoal(e.target.value as Goal)} optionType="button" options={GOALS} data-testid="rewrite-goal" />
          </Form.Item>
          <Form.Item label="改写强度" extra={STRENGTHS.find((s) => s.value === strength)?.hint}>
            <Radio.Group value={strength} onChange={(e) => setStrength(e.target.value as Strength)} optionType="button" options={STRENGTHS.map(({ value, label }) => ({ value, label }))} />
          </Form.Item>
          <Form.Item label="保留术语" extra="这些词语将原样保留，不被改写；用逗号、顿号或换行分隔，最多 50 个。">
            <Input.TextArea value={frozen} onChange={(e) => setFrozen(e.target.value)} rows={2} placeholder="例如：卷积神经网络、注意力机制" data-testid="rewrite-frozen" />
          </Form.Item>
          <Space>
            <Button type="primary" size="large" disabled={fromDraft ? !d : !paper.ready || Boolean(paper.countError)} loading={creating} onClick={() => void create(undefined)} data-testid="rewrite-next">
              {token ? '下一步：确认并支付' : '登录后提交改写'}
            </Button>
          </Space>
        </Form>
      </Card>
      <RewritePayModal id={draft} choice={{ goal, strength, frozen }} onClose={() => setDraft(null)} onPaid={() => navigate(listPath)} />
    </div>
  )
}
