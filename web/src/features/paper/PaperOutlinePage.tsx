import { useEffect, useRef, useState } from 'react'
import { Alert, App, Button, Card, Empty, Input, InputNumber, Result, Space, Spin, Tag, Tooltip } from 'antd'
import { ArrowDownOutlined, ArrowUpOutlined, DeleteOutlined, FileTextOutlined, PlusOutlined } from '@ant-design/icons'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { paperCommit, paperLoad, paperReplan, paperSaveOutline, paperCommission } from './api'
import { STATE_LABEL, type Outline, type OutlineNode } from './types'
import { DISCLAIMER, WriterNotice } from './PaperStartPage'
import { useSubmit } from '../../utils/useSubmit'
import { formatFen } from '../../utils/format'
import { PackageNotice, confirmedPayment, payAsShown, paysWithText, type PaysWith } from '../order/paysWith'
import ScanToPay from '../order/ScanToPay'

const sum = (nodes: OutlineNode[]): number => nodes.reduce((n, c) => n + (c.children.length ? sum(c.children) : c.budget), 0)

/** Budgets of parents are the sums of their children, as the server expects. */
function normalise(outline: Outline): Outline {
  const fix = (n: OutlineNode): OutlineNode => {
    const children = n.children.map(fix)
    return { ...n, children, budget: children.length ? sum(children) : n.budget }
  }
  return { chapters: outline.chapters.map(fix) }
}

type Path = number[]

/** How many siblings the node at `path` has. */
function siblingCount(outline: Outline, path: Path): number {
  let siblings = outline.chapters
  for (const i of path.slice(0, -1)) siblings = siblings[i].children
  return siblings.length
}

function update(outline: Outline, path: Path, change: (siblings: OutlineNode[], i: number) => void): Outline {
  const copy: Outline = JSON.parse(JSON.stringify(outline))
  let siblings = copy.chapters
  for (const i of path.slice(0, -1)) siblings = siblings[i].children
  change(siblings, path[path.length - 1])
  return normalise(copy)
}

/** /aipaper/outline/:id — the planned outline, edited (rename, budgets, add, remove, reorder), then committed and paid. */
export default function PaperOutlinePage() {
  const id = Number(useParams().id)
  const navigate = useNavigate()
  const { modal } = App.useApp()
  const [outline, setOutline] = useState<Outline | null>(null)
  const detail = useQuery({
    queryKey: ['paper', id],
    queryFn: () => paperLoad(id),
    refetchInterval: (q) => (q.state.data?.record.state === 'outline_generating' ? 1500 : false),
  })
  const data = detail.data
  useEffect(() => {
    if (data?.record.state === 'outline_ready' && data.outline && outline === null) setOutline(normalise(data.outline))
  }, [data, outline])
  // Edits are kept on the server as they are made (a moment after the last change), so leaving
  // the page or coming back on another device loses nothing.
  const [saving, setSaving] = useState<{ state: 'idle' | 'saving' | 'saved' | 'error'; error?: string }>({ state: 'idle' })
  const lastSaved = useRef<string | null>(null)
  const editable = data?.record.state === 'outline_ready'
  useEffect(() => {
    if (!outline || !editable) {
      lastSaved.current = null
      return
    }
    const json = JSON.stringify(outline)
    if (lastSaved.current === null) {
      lastSaved.current = json
      return
    }
    if (json === lastSaved.current) return
    const timer = setTimeout(() => {
      setSaving({ state: 'saving' })
      paperSaveOutline(id, outline).then(
        () => {
          lastSaved.current = json
          setSaving({ state: 'saved' })
        },
        (e: Error) => setSaving({ state: 'error', error: e.message }),
      )
    }, 800)
    return () => clearTimeout(timer)
  }, [outline, editable, id])
  // `shown` is the price the user confirmed; after a scan-to-pay top-up the balance pays.
  // and the price it showed: a price the operator changed meanwhile charges nothing (412).
  const [committing, commit] = useSubmit(async (shown: { paysWith: PaysWith; priceFen: number }) => {
    if (!outline || !data) return
    await payAsShown(() => paperCommit(id, outline, confirmedPayment(shown)), () => detail.refetch())
    navigate(`/aipaper/content/${id}`)
  })
  // The price dialog reads the balance afresh (it may have been topped up meanwhile).
  const confirmCommit = async () => {
    const price = (await detail.refetch()).data?.price ?? data?.price
    if (!price || !data) return
    const short = price.paysWith === 'insufficient'
    modal.confirm({
      title: '确认大纲并开始写作',
      content: (
        <div>
          {price.paysWith === 'package' ? (
            <p data-testid="pays-with">{paysWithText(price)}（{data.record.words.toLocaleString('zh-CN')} 字档，原价 {formatFen(price.priceFen)}）。</p>
          ) : (
            <p>将从余额扣除 <b>{formatFen(price.priceFen)}</b>（{data.record.words.toLocaleString('zh-CN')} 字档），当前余额 {formatFen(price.balanceFen)}。</p>
          )}
          <PackageNotice cost={price} />
          {price.paidFen > 0 && <p>上次写作中止时已为写出的部分支付 {formatFen(price.paidFen)}，本次从中断处继续写，只需补齐差额。</p>}
          {short && <p className="text-danger">余额不足：请先充值或购买论文生成套餐；本站开通在线支付时，也可在大纲下方扫码补足差额，付款后立即开始写作。</p>}
          <p className="muted">写作失败全额退款（套餐支付的退回套餐），已写出的内容保留，重新提交时从中断处继续写；写作中删除论文，退还尚未写出部分的费用。</p>
        </div>
      ),
      okText: short ? '知道了' : '确认支付',
      okCancel: !short,
      onOk: () => (short ? undefined : commit({ paysWith: price.paysWith, priceFen: price.priceFen })),
    })
  }
  const [replanning, replan] = useSubmit(async () => {
    await paperReplan(id)
    setOutline(null)
    await detail.refetch()
  })

  if (detail.isLoading) return <div className="page-card"><Card><Spin /></Card></div>
  if (detail.error || !data)
    return (
      <div className="page-card">
        <Card>
          <Result status="warning" title="找不到这篇论文" subTitle={detail.error?.message} extra={<Button onClick={() => navigate('/aipaper/list')}>返回我的论文</Button>} />
        </Card>
      </div>
    )
  const { record } = data
  if (record.state === 'writing' || record.state === 'done') {
    return (
      <div className="page-card">
        <Card>
          <Result status="info" title="大纲已确认" subTitle="这篇论文已开始写作或已完成。" extra={<Button type="primary" onClick={() => navigate(`/aipaper/content/${id}`)}>查看正文</Button>} />
        </Card>
      </div>
    )
  }
  const total = outline ? sum(outline.chapters) : 0
  const off = Math.abs(total - record.words) > record.words * 0.1
  const references = new Map(data.offered.map((r) => [r.libraryId, r.own ? `${r.formatted}（您提供的）` : r.formatted]))

  const row = (node: OutlineNode, path: Path, number: string) => {
    const siblings = path.length === 1 ? outline!.chapters : null
    const count = siblings?.length
    return (
      <div key={path.join('.')} className="outline-row" style={{ marginLeft: (path.length - 1) * 28 }} data-testid="outline-row">
        <Space wrap size={6} align="center">
          <span className="outline-number">{number}</span>
          <Input
            value={node.title}
            maxLength={40}
            style={{ width: path.length === 1 ? 320 : 300 }}
            status={node.title.trim() ? undefined : 'error'}
            onChange={(e) => setOutline(update(outline!, path, (s, i) => (s[i].title = e.target.value)))}
          />
          {node.children.length === 0 ? (
            <InputNumber
              min={50}
              max={20000}
              step={100}
              value={node.budget}
              addonAfter="字"
              style={{ width: 130 }}
              onChange={(v) => setOutline(update(outline!, path, (s, i) => (s[i].budget = Number(v) || 0)))}
            />
          ) : (
            <Tag>{node.budget} 字</Tag>
          )}
          <Tooltip title="上移"><Button size="small" icon={<ArrowUpOutlined />} disabled={path[path.length - 1] === 0} onClick={() => setOutline(update(outline!, path, (s, i) => s.splice(i - 1, 0, s.splice(i, 1)[0])))} /></Tooltip>
          <Tooltip title="下移"><Button size="small" icon={<ArrowDownOutlined />} disabled={path[path.length - 1] === (path.length === 1 ? outline!.chapters.length : siblingCount(outline!, path)) - 1} onClick={() => setOutline(update(outline!, path, (s, i) => { if (i + 1 < s.length) s.splice(i + 1, 0, s.splice(i, 1)[0]) }))} /></Tooltip>
          {path.length < 3 && (
            <Tooltip title={path.length === 1 ? '添加一节' : '添加一小节'}>
              <Button size="small" icon={<PlusOutlined />} onClick={() => setOutline(update(outline!, path, (s, i) => s[i].children.push({ title: '新的一节', budget: 300, children: [] })))} />
            </Tooltip>
          )}
          <Tooltip title="删除">
            <Button size="small" danger icon={<DeleteOutlined />} disabled={count === 1} onClick={() => setOutline(update(outline!, path, (s, i) => s.splice(i, 1)))} />
          </Tooltip>
        </Space>
        {node.children.length === 0 && (node.references?.length ?? 0) > 0 && (
          <div className="muted outline-refs">
            {node.references!.map((r) => references.get(r)).filter(Boolean).map((f) => <div key={f}><FileTextOutlined /> {f}</div>)}
          </div>
        )}
        {node.children.map((c, i) => row(c, [...path, i], `${number.replace(/^第(\d+)章$/, '$1')}.${i + 1}`))}
      </div>
    )
  }

  return (
    <div className="page-card">
      <Card
        title={<span>论文大纲 · {record.title}</span>}
        extra={<Tag color={STATE_LABEL[record.state].color}>{STATE_LABEL[record.state].label}</Tag>}
      >
        <WriterNotice />
        {data.notices.map((n) => <Alert key={n} className="mb" type="warning" showIcon title={n} />)}
        {record.state === 'outline_generating' && (
          <div style={{ textAlign: 'center', padding: 48 }} data-testid="outline-generating">
            <Spin size="large" />
            <div className="mt">{record.phase || '排队中'}……大纲通常在一两分钟内生成，可以离开本页，稍后在「我的论文」中继续。</div>
          </div>
        )}
        {(record.state === 'outline_failed' || record.state === 'failed' || record.state === 'cancelled') && (
          <Alert className="mb" type="error" showIcon title={STATE_LABEL[record.state].label} description={record.error ?? undefined} />
        )}
        {outline && (
          <>
            <Alert
              className="mb"
              type="info"
              showIcon
              title="修改章节标题、字数与顺序后确认；确认后按此大纲逐节写作"
              description="每一节下列出为它检索到的文献，正文只会引用这些文献。改名或新增的节会在写作开始时重新检索。"
            />
            {outline.chapters.map((c, i) => row(c, [i], `第${i + 1}章`))}
            <Space className="mt" wrap>
              <Button icon={<PlusOutlined />} onClick={() => setOutline(normalise({ chapters: [...outline.chapters.slice(0, -1), { title: '新的一章', budget: 800, children: [] }, ...outline.chapters.slice(-1)] }))}>
                添加一章
              </Button>
              <span className={off ? 'text-danger' : 'muted'} data-testid="outline-total">
                合计 {total.toLocaleString('zh-CN')} 字（目标 {record.words.toLocaleString('zh-CN')} 字）{off ? '：相差超过 10%，确认时将按比例调整各节字数' : ''}
              </span>
              {saving.state === 'saving' && <span className="muted">保存中…</span>}
              {saving.state === 'saved' && <span className="muted" data-testid="outline-saved">修改已自动保存</span>}
              {saving.state === 'error' && <span className="text-danger">修改未能保存：{saving.error}</span>}
            </Space>
          </>
        )}
        {(outline || record.state === 'outline_failed') && (
          <div className="mt">
            <Space wrap align="center">
              {outline && (
                <Button
                  type="primary"
                  size="large"
                  loading={committing}
                  data-testid="outline-commit"
                  onClick={() => void confirmCommit()}
                >
                  确认大纲，开始写作（{formatFen(data.price.priceFen)}）
                </Button>
              )}
              <Button loading={replanning} onClick={() => void replan(undefined)} data-testid="outline-replan">重新生成大纲</Button>
            </Space>
            {/* On the page, not in the confirmation: antd renders those outside the query and router providers. */}
            {outline && data.price.paysWith === 'insufficient' && (
              <ScanToPay
                taskId={id}
                shortFen={data.price.priceFen - data.price.balanceFen}
                onPaid={() => void commit({ paysWith: 'balance', priceFen: data.price.priceFen })}
                submit={outline ? paperCommission(id, outline) : undefined}
                priceFen={data.price.priceFen}
              />
            )}
          </div>
        )}
        {!outline && record.state === 'outline_ready' && <Empty description="大纲为空" />}
        <Alert className="mt" type="warning" showIcon title={DISCLAIMER} />
      </Card>
    </div>
  )
}
