import { useEffect, useState } from 'react'
import { Alert, Button, Card, Form, Input, Progress, Radio, Space, Tag, Typography } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate, useSearchParams } from 'react-router'
import { machineInit, machineLoad, machineReport, machineSubmit, machineWordCount, type PasteKind } from './api'
import { GOALS, SMART_GOALS, STRENGTHS, type Goal, type MachineDetail, type Strength } from './types'
import RewritePayModal, { useLineRerun } from './RewritePayModal'
import LineCard from './LineCard'
import ManualList from './ManualList'
import EngineNotice from './EngineNotice'
import { isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { toastError, toastSuccess } from '../../utils/feedback'

/** Most characters one paste may hold (machine_api's limit); a whole paper goes to 论文降重. */
const MAX_CHARS = 5000

const COPY = {
  cnki: {
    title: '段落改写',
    listPath: '/papermachine/cnki',
    placeholder: '粘贴需要降重或降 AIGC 的段落，每段一行（每段至少 20 字，一次最多 5000 字）',
    intro: '改写在您眼前逐字生成；完成后每段都用本站查重引擎与 AIGC 检测模型重新测量，只采用实测有效的改写，未达标的段落保留原文并按字数退款。',
  },
  smart: {
    title: '智能改写',
    listPath: '/machine/list',
    placeholder: '粘贴需要润色、扩写、缩写或学术化的段落，每段一行（每段至少 20 字，一次最多 5000 字）',
    intro: '改写在您眼前逐字生成；完成后核对意思是否保持、数字与术语是否保留，并给出改写前后的复制比与 AI 概率实测值。',
  },
} as const

/** The paragraphs as they stream in, then as judged. */
function Outcome({ detail, onChanged, onRerun }: { detail: MachineDetail; onChanged: () => void; onRerun: (index: number) => void }) {
  const rec = detail.record
  if (rec.status === 'failed' || rec.status === 'cancelled') return <Alert type="error" showIcon title={rec.error ?? (rec.status === 'cancelled' ? '改写已取消，尚未生成部分的费用已退回' : '改写未完成，费用已退回')} />
  if (rec.status === 'done') {
    return (
      <div data-testid="paste-result">
        <ManualList lines={detail.lines} keeps="「复制结果」与改写报告中这些段落" />
        {detail.lines.map((line) => (line.rewrite ? <LineCard key={line.index} id={rec.id} line={line} onChanged={onChanged} onRerun={onRerun} /> : null))}
      </div>
    )
  }
  const live = new Map(rec.live.map((l) => [l.index, l.text]))
  return (
    <div data-testid="paste-live">
      <Progress percent={rec.progress} status="active" />
      <div className="muted mb">{rec.phase || '排队中，马上开始'}</div>
      {/* Once the task has written its draft, only the paragraphs being rewritten (one, when one runs again). */}
      {detail.lines.filter((line) => live.size === 0 || live.has(line.index)).map((line) => {
        const text = live.get(line.index)
        return (
          <Card key={line.index} size="small" className="rewrite-line mb" title={`第 ${line.index + 1} 段`}>
            <div className="muted">原文</div>
            <div className="rewrite-text">{line.text}</div>
            <div className="muted mt">改写中</div>
            <div className="rewrite-text live-text" data-testid="live-text">
              {text || <span className="muted">等待模型开始书写…</span>}
              {text && <span className="live-caret" />}
            </div>
          </Card>
        )
      })}
    </div>
  )
}

/**
 * /cnki/cnki (段落改写: lower similarity or AI traces) and /nlp/machine (智能改写: polish, expand, shorten,
 * academic tone): paste paragraphs, pay, watch the rewrite being written, then see each paragraph measured.
 */
export default function PasteRewritePage({ kind }: { kind: PasteKind }) {
  const copy = COPY[kind]
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const goals = kind === 'cnki' ? GOALS : SMART_GOALS
  const [text, setText] = useState('')
  const [goal, setGoal] = useState<Goal>(goals[0].value)
  const [strength, setStrength] = useState<Strength>('medium')
  const [frozen, setFrozen] = useState('')
  const [chars, setChars] = useState<number | null>(null)
  const [draft, setDraft] = useState<number | null>(null)
  // The task being watched lives in the address (?id=), so a refresh or a shared link comes back to it.
  const [params, setParams] = useSearchParams()
  const running = Number(params.get('id')) || null
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['machine', running] })
  const [rerunLine, rerunModal] = useLineRerun(running, refresh)
  const setRunning = (id: number | null) => setParams(id === null ? {} : { id: String(id) })

  useEffect(() => {
    if (!text.trim()) {
      setChars(null)
      return
    }
    let stale = false
    const timer = setTimeout(() => {
      machineWordCount(text)
        .then((c) => !stale && setChars(c.chars))
        .catch(() => !stale && setChars(null))
    }, 400)
    return () => {
      stale = true
      clearTimeout(timer)
    }
  }, [text])

  const detail = useQuery({
    queryKey: ['machine', running],
    queryFn: () => machineLoad(running ?? 0),
    enabled: running !== null,
    refetchInterval: (q) => (q.state.data && !isUnderway(q.state.data.record.status) ? false : 700),
  })

  const [creating, create] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    setDraft((await machineInit(kind, text, goal, strength, frozen)).id)
  })

  const tooLong = chars !== null && chars > MAX_CHARS
  const rec = detail.data?.record
  const done = rec?.status === 'done'
  const finalText = detail.data?.lines.map((l) => (l.usesRewrite && l.rewrite?.rewritten ? l.rewrite.rewritten : l.text)).join('\n') ?? ''

  return (
    <div className="page-card">
      <Card title={copy.title} extra={<Button type="link" onClick={() => navigate(copy.listPath)}>改写记录</Button>}>
        <Alert type="info" showIcon className="mb" title="边写边看，写完实测" description={copy.intro} />
        {running === null ? (
          <Form layout="vertical">
            <EngineNotice />
            <Form.Item
              label="原文"
              validateStatus={tooLong ? 'error' : undefined}
              help={tooLong ? `一次最多 ${MAX_CHARS} 字，整篇论文请使用「论文降重」上传文件` : chars !== null ? `计费字数 ${chars.toLocaleString('zh-CN')} 字（标题与不足 20 字的短行不改写、不计费）` : undefined}
            >
              <Input.TextArea value={text} onChange={(e) => setText(e.target.value)} rows={8} placeholder={copy.placeholder} data-testid="paste-text" />
            </Form.Item>
            <Form.Item label={kind === 'cnki' ? '改写目标' : '改写方式'} extra={kind === 'smart' ? SMART_GOALS.find((g) => g.value === goal)?.hint : undefined}>
              <Radio.Group value={goal} onChange={(e) => setGoal(e.target.value as Goal)} optionType="button" options={goals.map(({ value, label }) => ({ value, label }))} data-testid="paste-goal" />
            </Form.Item>
            {kind === 'cnki' && (
              <Form.Item label="改写强度" extra={STRENGTHS.find((s) => s.value === strength)?.hint}>
                <Radio.Group value={strength} onChange={(e) => setStrength(e.target.value as Strength)} optionType="button" options={STRENGTHS.map(({ value, label }) => ({ value, label }))} />
              </Form.Item>
            )}
            <Form.Item label="保留术语" extra="这些词语将原样保留；用逗号、顿号或换行分隔，最多 50 个。">
              <Input value={frozen} onChange={(e) => setFrozen(e.target.value)} placeholder="例如：卷积神经网络、注意力机制" />
            </Form.Item>
            <Button type="primary" size="large" disabled={!chars || tooLong} loading={creating} onClick={() => void create(undefined)} data-testid="paste-next">
              {token ? '下一步：确认并支付' : '登录后开始改写'}
            </Button>
          </Form>
        ) : detail.error ? (
          <Alert type="error" showIcon title={detail.error.message} />
        ) : !detail.data ? (
          <Card loading />
        ) : (
          <>
            <Space className="mb" wrap>
              <Tag color={done ? 'green' : 'processing'}>{rec?.goalLabel}</Tag>
              {rec?.model && <Typography.Text type="secondary">模型 {rec.model}</Typography.Text>}
            </Space>
            <Outcome detail={detail.data} onChanged={refresh} onRerun={rerunLine} />
            <Space className="mt" wrap>
              {done && (
                <Button
                  type="primary"
                  onClick={() =>
                    navigator.clipboard
                      .writeText(finalText)
                      .then(() => toastSuccess('已复制当前采用的文字'))
                      .catch(() => toastError('浏览器不允许复制，请手动选择文字'))
                  }
                  data-testid="paste-copy"
                >
                  复制结果
                </Button>
              )}
              {done && rec && (
                <Button onClick={() => machineReport(rec.id, rec.title).catch((e: Error) => toastError(e.message))} data-testid="paste-report">
                  下载改写报告
                </Button>
              )}
              {rec && !isUnderway(rec.status) && (
                <Button
                  onClick={() => {
                    setRunning(null)
                    setText('')
                  }}
                >
                  再改写一段
                </Button>
              )}
            </Space>
          </>
        )}
      </Card>
      <RewritePayModal
        id={draft}
        submit={(id, headers) => machineSubmit(kind, id, headers)}
        onClose={() => setDraft(null)}
        onPaid={() => {
          setRunning(draft)
          setDraft(null)
        }}
      />
      {rerunModal}
    </div>
  )
}
