import { getToken } from '../utils/auth'
import { toastError } from '../utils/feedback'
import { zhCN } from '../locales/zh-CN'

/** What every failed call rejects with: the server's status, stable code and Chinese message. */
export class ApiError extends Error {
  status: number
  code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

export interface RequestOptions {
  /** 'api/…' or '/api/…': both are paths from the site's root. */
  url?: string
  method?: 'get' | 'post'
  /** Sent in the query string (null and undefined values are left out). */
  params?: Record<string, unknown>
  /** The body: FormData as multipart, anything else as JSON. */
  data?: unknown
  /** Milliseconds until the request is given up (15 s by default). */
  timeout?: number
  /** Do not toast failures (e.g. background polling). */
  silent?: boolean
  /** Extra request headers (e.g. X-Confirmed-Payment on a paid submission). */
  headers?: Record<string, string>
  /** Told how much of the body has been sent (a large upload's progress bar). */
  onUploadProgress?: (sent: number, total: number) => void
}

export const DEFAULT_TIMEOUT_MS = 15000

/** Called when the server says the user is not logged in (set by the login-dialog store). */
let onNotLoggedIn: () => void = () => {}
export function setNotLoggedInHandler(handler: () => void) {
  onNotLoggedIn = handler
}

/** The request URL: the path from the site's root, then the query string. */
export function apiUrl(url: string, params?: Record<string, unknown>): string {
  const path = `/${url.replace(/^\/+/, '')}`
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null) query.append(key, String(value))
  }
  const qs = query.toString()
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path
}

/** A reply with a 2xx status: `data` is the parsed JSON (or the text, when it is not JSON), or a Blob. */
export interface Reply {
  status: number
  headers: Headers
  data: unknown
}

/** Thrown by `send`: a reply with an error status (`reply` set), a timeout or a network failure. */
export class SendError extends Error {
  kind: 'http' | 'timeout' | 'network'
  reply?: Reply
  constructor(kind: 'http' | 'timeout' | 'network', reply?: Reply) {
    super(kind)
    this.kind = kind
    this.reply = reply
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * One exchange with the API over fetch, with the session token and a timeout that covers the
 * whole reply. Error replies are read as JSON (the server's `{ error, message }`) whatever
 * `responseType` asks for.
 */
export async function send(options: Omit<RequestOptions, 'silent'> & { responseType?: 'json' | 'blob' }): Promise<Reply> {
  const { url = '', method = 'get', params, data, timeout = DEFAULT_TIMEOUT_MS, responseType = 'json' } = options
  const headers: Record<string, string> = { ...options.headers, Accept: 'application/json, text/plain, */*' }
  const token = getToken()
  if (token) headers.Authorization = `Bearer ${token}`
  let body: BodyInit | undefined
  if (data instanceof FormData) {
    body = data
  } else if (data !== undefined) {
    body = JSON.stringify(data)
    headers['Content-Type'] = 'application/json'
  }
  if (options.onUploadProgress) return sendWithProgress(method, apiUrl(url, params), headers, body, timeout, options.onUploadProgress)
  const controller = new AbortController()
  const timer = timeout > 0 ? setTimeout(() => controller.abort(), timeout) : undefined
  const failed = () => new SendError(controller.signal.aborted ? 'timeout' : 'network')
  try {
    let response: Response
    let payload: unknown
    try {
      response = await fetch(apiUrl(url, params), { method: method.toUpperCase(), headers, body, signal: controller.signal })
      payload = responseType === 'blob' && response.ok ? await response.blob() : parseBody(await response.text())
    } catch {
      throw failed()
    }
    const reply = { status: response.status, headers: response.headers, data: payload }
    if (!response.ok) throw new SendError('http', reply)
    return reply
  } finally {
    clearTimeout(timer)
  }
}

/** `send` over XMLHttpRequest, the one browser API that reports an upload's progress. */
function sendWithProgress(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: BodyInit | undefined,
  timeout: number,
  onProgress: (sent: number, total: number) => void,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method.toUpperCase(), url)
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    xhr.timeout = timeout
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0)
    xhr.onload = () => {
      const replyHeaders = new Headers()
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const at = line.indexOf(':')
        if (at > 0) replyHeaders.append(line.slice(0, at).trim(), line.slice(at + 1).trim())
      }
      const reply = { status: xhr.status, headers: replyHeaders, data: parseBody(xhr.responseText) }
      if (xhr.status >= 200 && xhr.status < 300) resolve(reply)
      else reject(new SendError('http', reply))
    }
    xhr.ontimeout = () => reject(new SendError('timeout'))
    xhr.onerror = () => reject(new SendError('network'))
    xhr.send((body as XMLHttpRequestBodyInit | undefined) ?? null)
  })
}

function toApiError(error: unknown): ApiError {
  if (error instanceof SendError && error.reply) {
    const body = error.reply.data as { message?: string; error?: string } | null
    return new ApiError(
      error.reply.status,
      body?.error ?? 'http_error',
      body?.message ?? `请求失败（${error.reply.status}）`,
    )
  }
  if (error instanceof SendError && error.kind === 'timeout') {
    return new ApiError(0, 'timeout', zhCN.timeout)
  }
  return new ApiError(0, 'network_error', zhCN.networkError)
}

/** Sends a request and unwraps the envelope's `result`. */
export async function request<T>(options: RequestOptions): Promise<T> {
  const { silent, ...config } = options
  try {
    const { data } = await send(config)
    return (data && typeof data === 'object' && 'result' in data ? data.result : data) as T
  } catch (e) {
    const err = toApiError(e)
    if (err.code === 'not_logged_in') {
      if (!silent) toastError(zhCN.notLoggedIn)
      onNotLoggedIn()
    } else if (!silent) {
      toastError(err.message)
    }
    throw err
  }
}

export const post = <T>(url: string, options: RequestOptions = {}) =>
  request<T>({ method: 'post', url, ...options })

export const get = <T>(url: string, options: RequestOptions = {}) =>
  request<T>({ method: 'get', url, ...options })
