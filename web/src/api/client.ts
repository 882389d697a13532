import axios, { AxiosError, type AxiosRequestConfig } from 'axios'
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

export interface RequestOptions extends AxiosRequestConfig {
  /** Do not toast failures (e.g. background polling). */
  silent?: boolean
}

/** Called when the server says the user is not logged in (set by the login-dialog store). */
let onNotLoggedIn: () => void = () => {}
export function setNotLoggedInHandler(handler: () => void) {
  onNotLoggedIn = handler
}

export const http = axios.create({ baseURL: '/', timeout: 15000 })

http.interceptors.request.use((config) => {
  const token = getToken()
  if (token) config.headers.set('Authorization', `Bearer ${token}`)
  return config
})

function toApiError(error: AxiosError<{ message?: string; error?: string }>): ApiError {
  if (error.response) {
    const body = error.response.data
    return new ApiError(
      error.response.status,
      body?.error ?? 'http_error',
      body?.message ?? `请求失败（${error.response.status}）`,
    )
  }
  if (error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT') {
    return new ApiError(0, 'timeout', zhCN.timeout)
  }
  return new ApiError(0, 'network_error', zhCN.networkError)
}

/** Sends a request and unwraps the envelope's `result`. */
export async function request<T>(options: RequestOptions): Promise<T> {
  const { silent, ...config } = options
  try {
    const response = await http.request(config)
    const data = response.data
    return (data && typeof data === 'object' && 'result' in data ? data.result : data) as T
  } catch (e) {
    const err = toApiError(e as AxiosError<{ message?: string; error?: string }>)
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
