import { ApiError, get, post } from '../../api/client'
import type { RewriteEngine } from '../rewrite/types'
import { getToken } from '../../utils/auth'

// Shapes of chat_gpt_api (see /api/docs/openapi.json).
export interface ChatTurn {
  role: 'user' | 'assistant'
  content: string
}

export interface ChatRecord {
  id: number
  title: string
  mode: string
  message: string
  history: ChatTurn[]
  parent: number | null
  reply: string | null
  live: string | null
  status: 'pending' | 'queued' | 'running' | 'done' | 'failed' | 'cancelled'
  error: string | null
  chargedFen: number
  chargedUnits?: number
  model: string | null
  promptTokens: number | null
  completionTokens: number | null
  createdAt: number
  finishedAt: number | null
}

export interface ChatPage {
  records: ChatRecord[]
  total: number
  page: number
  size: number
}

export type StreamEvent =
  | { type: 'created'; record: ChatRecord }
  | { type: 'delta'; text: string }
  | { type: 'done'; record: ChatRecord }
  | { type: 'error'; code: string; message: string }

const BASE = 'api/base/chat_gpt_api'

/** Which model answers 对话改写 here, or why none can. */
export const chatEngine = () => get<RewriteEngine>(`${BASE}/engine`, { silent: true })

export const MODES: { value: string; label: string }[] = [
  { value: 'free', label: '自由对话' },
  { value: 'polish', label: '润色' },
  { value: 'academic', label: '学术化' },
  { value: 'similarity', label: '降重' },
  { value: 'aigc', label: '降 AIGC' },
  { value: 'expand', label: '扩写' },
  { value: 'shorten', label: '缩写' },
]

export const modeLabel = (mode: string) => MODES.find((m) => m.value === mode)?.label ?? mode

export const chatList = (page: number, size: number) => post<ChatPage>(`${BASE}/query_list`, { data: { page, size }, silent: true })
export const chatLoad = (id: number) => post<ChatRecord>(`${BASE}/load_by_id`, { data: { id }, silent: true })
export const chatDelete = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

/** Splits a server-sent-event buffer into complete `data:` payloads and what is left over. */
export function splitEvents(buffer: string): { events: string[]; rest: string } {
  const parts = buffer.replace(/\r\n/g, '\n').split('\n\n')
  const rest = parts.pop() ?? ''
  const events = parts
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter(Boolean)
  return { events, rest }
}

/**
 * Sends one message and reports the answer as it streams in (fetch, since axios cannot read a stream in the
 * browser). Errors before the stream starts reject with the server's code and Chinese message.
 */
export async function chatComplete(
  body: { message: string; mode?: string; parent?: number },
  onEvent: (e: StreamEvent) => void,
  signal?: AbortSignal,
  /** The price the page showed (fen): a price changed meanwhile charges nothing (412). */
  shownPriceFen?: number,
) {
  const token = getToken()
  const response = await fetch(`/${BASE}/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(shownPriceFen === undefined ? {} : { 'X-Confirmed-Price': String(shownPriceFen) }),
    },
    body: JSON.stringify(body),
    signal,
  })
  if (!response.ok || !response.body) {
    const parsed = (await response.json().catch(() => null)) as { error?: string; message?: string } | null
    throw new ApiError(response.status, parsed?.error ?? 'chat_failed', parsed?.message ?? '对话服务暂不可用，请稍后重试')
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    const split = splitEvents(buffer + value)
    buffer = split.rest
    for (const data of split.events) onEvent(JSON.parse(data) as StreamEvent)
  }
}
