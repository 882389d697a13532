import { useEffect, useRef, useState } from 'react'
import { Alert, App, Button, Empty, Input, Select, Space, Tag, Typography } from 'antd'
import { useSearchParams } from 'react-router'
import { useQuery } from '@tanstack/react-query'
import { getAccount } from '../../api/user'
import { chatComplete, chatEngine, chatLoad, MODES, modeLabel, type ChatTurn } from './api'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatFen } from '../../utils/format'
import { formatCharge } from '../order/paysWith'
import { useSiteStore } from '../../stores/site'
import TextDiff from '../../components/TextDiff'
import { ScanTopUp } from '../order/ScanToPay'

/** What one message costs: every started 1,000 counted characters (whitespace not counted). */
/** Characters as the server counts them for the price: everything but whitespace. */
// Rust's char::is_whitespace (the Unicode White_Space set), which the server counts with.
const WHITE_SPACE = /[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/
const countedChars = (text: string) => Array.from(text).filter((c) => !WHITE_SPACE.test(c)).length

export function messagePriceFen(text: string, fenPerThousand: number): number {
  return Math.ceil(countedChars(text) / 1000) * fenPerThousand
}

interface Bubble extends ChatTurn {
  /** Still being written. */
  streaming?: boolean
  /** What the answer cost and who wrote it, once done. */
  note?: string
}

/** 对话改写: send a paragraph, watch the answer being written, then ask for changes ("再简洁一些"). */
export default function ChatPanel() {
  const token = useUserStore((s) => s.token)
  const account = useQuery({ queryKey: ['account'], queryFn: getAccount, enabled: !!token })
  // Said before anyone pays for a message nothing here can answer.
  const engine = useQuery({ queryKey: ['chat-engine'], queryFn: chatEngine, retry: false })
  const noModel = engine.data?.source === 'none' ? (engine.data.unavailable ?? '本站尚未配置对话改写所需的模型') : null
  const openLogin = useLoginDialogStore((s) => s.open)
  const [params] = useSearchParams()
  const resume = Number(params.get('chat')) || null
  const [mode, setMode] = useState('polish')
  const [bubbles, setBubbles] = useState<Bubble[]>([])
  const [parent, setParent] = useState<number | null>(null)
  const [message, setMessage] = useState('')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const abort = useRef<AbortController | null>(null)
  /** The price the confirmation showed, sent with the message (none when a package pays). */
  const shownPrice = useRef<number | undefined>(undefined)
  const fenPerThousand = useSiteStore((s) => s.chatPriceFenPerThousand)
  const { modal } = App.useApp()
  const [showChanges, setShowChanges] = useState<number | null>(null)
  /** What the balance lacks for the message about to be sent (then 扫码充值 is offered). */
  const [shortFen, setShortFen] = useState(0)
  const bottom = useRef<HTMLDivElement | null>(null)

  // ?chat=ID continues a conversation from the records.
  useEffect(() => {
    if (!resume || !token) return
    chatLoad(resume)
      .then((r) => {
        setMode(r.mode)
        setBubbles([...r.history, { role: 'user', content: r.message }, ...(r.reply ? [{ role: 'assistant' as const, content: r.reply }] : [])])
        setParent(r.reply ? r.id : null)
      })
      .catch((e: Error) => setError(e.message))
  }, [resume, token])

  useEffect(() => () => abort.current?.abort(), [])
  // Braces matter: newer browsers return a promise from scrollIntoView, which React would take for a cleanup.
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: 'nearest' })
  }, [bubbles])

  const updateLast = (change: (b: Bubble) => Bubble) => setBubbles((all) => [...all.slice(0, -1), change(all[all.length - 1])])

  /** Asks before charging: the message's price, then sends. */
  const confirmAndSend = async () => {
    if (!token) {
      openLogin()
      return
    }
    const text = message.trim()
    if (!text) return
    // Prices may have changed since the page loaded (console → 价格设置): ask again first.
    await useSiteStore.getState().load()
    const fenPerThousand = useSiteStore.getState().chatPriceFenPerThousand
    // A 降重 package pays before the balance, when it covers the message.
    const fresh = (await account.refetch()).data ?? account.data
    const packageChars = (fresh?.grants ?? []).filter((g) => g.kind === 'rewrite_chars').reduce((sum, g) => sum + g.remaining, 0)
    const chars = countedChars(text)
    const price = messagePriceFen(text, fenPerThousand)
    if (packageChars < chars && fresh && fresh.balanceFen < price) {
      shownPrice.current = price
      setShortFen(price - fresh.balanceFen)
      return
    }
    setShortFen(0)
    modal.confirm({
      title: '确认发送并扣费？',
      content:
        packageChars >= chars
          ? `本条消息 ${chars.toLocaleString('zh-CN')} 字，从降重套餐抵扣（剩余 ${packageChars.toLocaleString('zh-CN')} 字），不扣余额；模型未能回答时退回套餐。`
          : `本条消息按字数计费 ${formatFen(messagePriceFen(text, fenPerThousand))}（每条不足千字按千字计）；模型未能回答时全额退回。`,
      okText: '发送',
      cancelText: '取消',
      onOk: () => {
        shownPrice.current = packageChars >= chars ? undefined : messagePriceFen(text, fenPerThousand)
        void send()
      },
    })
  }

  const send = async () => {
    const text = message.trim()
    if (!text) return
    setError(null)
    setSending(true)
    setMessage('')
    setBubbles((all) => [...all, { role: 'user', content: text }, { role: 'assistant', content: '', streaming: true }])
    abort.current = new AbortController()
    try {
      await chatComplete({ message: text, mode, parent: parent ?? undefined }, (e) => {
        if (e.type === 'delta') updateLast((b) => ({ ...b, content: b.content + e.text }))
        if (e.type === 'done') {
          setParent(e.record.id)
          updateLast(() => ({ role: 'assistant', content: e.record.reply ?? '', note: `${e.record.model ?? ''} · 扣费 ${formatCharge(e.record.chargedFen, e.record.chargedUnits, '字')}` }))
        }
        if (e.type === 'error') {
          setError(e.message)
          setBubbles((all) => all.slice(0, -1))
        }
      }, abort.current.signal, shownPrice.current)
    } catch (e) {
      if ((e as Error).name !== 'AbortError') setError((e as Error).message)
      setBubbles((all) => (all[all.length - 1]?.streaming ? all.slice(0, -2) : all))
      setMessage(text)
    } finally {
      setSending(false)
      setBubbles((all) => all.map((b) => ({ ...b, streaming: false })))
    }
  }

  return (
    <div className="chat-panel">
      <Space className="mb" wrap>
        <span>改写方式</span>
        <Select value={mode} onChange={setMode} options={MODES} style={{ width: 140 }} disabled={bubbles.length > 0} data-testid="chat-mode" />
        {bubbles.length > 0 && (
          <Button
            onClick={() => {
              abort.current?.abort()
              setBubbles([])
              setParent(null)
              setError(null)
            }}
          >
            新对话
          </Button>
        )}
        <Typography.Text type="secondary">每条消息按字数计费，模型未能回答时全额退回，中途删除只退回尚未生成部分的费用；回答由模型生成，请核对后使用。</Typography.Text>
      </Space>
      <div className="chat-log" data-testid="chat-log">
        {bubbles.length === 0 ? (
          <Empty description={`粘贴一段文字，模型将按「${modeLabel(mode)}」改写；之后可以继续提出修改要求，例如“再简洁一些”。`} />
        ) : (
          bubbles.map((b, i) => (
            <div key={i} className={`chat-bubble chat-${b.role}`} data-testid={`chat-${b.role}`}>
              <div className="rewrite-text">
                {b.content || (b.streaming ? <span className="muted">模型书写中…</span> : null)}
                {b.streaming && <span className="live-caret" />}
              </div>
              {b.role === 'assistant' && !b.streaming && b.content && bubbles[i - 1]?.role === 'user' && (
                <div>
                  <Button size="small" type="link" onClick={() => setShowChanges(showChanges === i ? null : i)} data-testid="chat-show-changes">
                    {showChanges === i ? '收起修改' : '查看修改'}
                  </Button>
                  {showChanges === i && (
                    <div className="rewrite-text chat-diff" data-testid="chat-diff">
                      <TextDiff before={bubbles[i - 1].content} after={b.content} side="both" />
                    </div>
                  )}
                </div>
              )}
              {b.note && <Tag className="chat-note">{b.note}</Tag>}
            </div>
          ))
        )}
        <div ref={bottom} />
      </div>
      {noModel && <Alert className="mt" type="warning" showIcon title="对话改写暂不可用" description={noModel} data-testid="chat-no-model" />}
      {error && <Alert className="mt" type="error" showIcon title={error} />}
      {shortFen > 0 && (
        <Alert
          className="mt"
          type="warning"
          showIcon
          closable
          onClose={() => setShortFen(0)}
          title={`余额不足：本条消息 ${formatFen(shownPrice.current ?? 0)}`}
          description={
            <ScanTopUp
              shortFen={shortFen}
              onPaid={() => {
                setShortFen(0)
                void send()
              }}
            />
          }
          data-testid="chat-short"
        />
      )}
      <div className="chat-input mt">
        <Input.TextArea
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          autoSize={{ minRows: 3, maxRows: 8 }}
          placeholder={parent ? '继续提出修改要求，例如：再口语化一点 / 保留“卷积神经网络”' : '粘贴需要改写的段落（一条最多 5000 字）'}
          onPressEnter={(e) => {
            if (e.ctrlKey || e.metaKey) void confirmAndSend()
          }}
          data-testid="chat-input"
        />
        {token && message.trim() && (
          <Typography.Text type="secondary" data-testid="chat-price">
            本条约 {formatFen(messagePriceFen(message, fenPerThousand))}
          </Typography.Text>
        )}
        <Button type="primary" loading={sending} disabled={!message.trim() || !!noModel} onClick={confirmAndSend} data-testid="chat-send">
          {token ? '发送（Ctrl+Enter）' : '登录后发送'}
        </Button>
      </div>
    </div>
  )
}
