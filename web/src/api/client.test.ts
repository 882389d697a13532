import { afterEach, describe, expect, it, vi } from 'vitest'

vi.mock('../utils/feedback', () => ({ toastError: vi.fn() }))

import { apiUrl, ApiError, DEFAULT_TIMEOUT_MS, request, send, setNotLoggedInHandler } from './client'
import { toastError } from '../utils/feedback'

/** Answers every fetch with `status` and `data` as JSON, and records the calls. */
function reply(status: number, data: unknown) {
  const fetchMock = vi.fn<typeof fetch>(async () => new Response(JSON.stringify(data), { status, headers: { 'content-type': 'application/json' } }))
  vi.stubGlobal('fetch', fetchMock)
  return fetchMock
}

describe('http client', () => {
  afterEach(() => {
    vi.mocked(toastError).mockReset()
    vi.unstubAllGlobals()
    vi.useRealTimers()
    localStorage.clear()
  })

  it('sends the bearer token', async () => {
    localStorage.setItem('Admin-Token', 'tok')
    const fetchMock = reply(200, { result: 1 })
    await request({ url: 'x' })
    expect(new Headers(fetchMock.mock.calls[0][1]?.headers).get('Authorization')).toBe('Bearer tok')
  })

  it('sends extra headers, which cannot replace the token', async () => {
    localStorage.setItem('Admin-Token', 'tok')
    const fetchMock = reply(200, { result: 1 })
    await request({ url: 'x', method: 'post', data: {}, headers: { 'X-Confirmed-Payment': 'package', Authorization: 'Bearer other' } })
    const sent = new Headers(fetchMock.mock.calls[0][1]?.headers)
    expect(sent.get('X-Confirmed-Payment')).toBe('package')
    expect(sent.get('Authorization')).toBe('Bearer tok')
  })

  it('gives up after 15 s with the timeout message', async () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(15000)
    vi.useFakeTimers()
    vi.stubGlobal(
      'fetch',
      vi.fn(
        (_url: string, init?: RequestInit) =>
          new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))),
      ),
    )
    const outcome = request({ url: 'x' }).catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(DEFAULT_TIMEOUT_MS - 1)
    expect(toastError).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1)
    expect(await outcome).toMatchObject({ status: 0, code: 'timeout' })
    expect(toastError).toHaveBeenCalledWith('请求超时，请稍后重试')
  })

  it('a network failure rejects with network_error', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))))
    await expect(request({ url: 'x', silent: true })).rejects.toMatchObject({ status: 0, code: 'network_error' })
  })

  it('unwraps result', async () => {
    reply(200, { code: 200, success: true, message: '', result: { a: 1 } })
    expect(await request({ url: 'x' })).toEqual({ a: 1 })
    reply(200, { code: 200, success: true, message: '', result: false })
    expect(await request({ url: 'x' })).toBe(false)
  })

  it('a 401 shows the not-logged-in toast and opens login', async () => {
    const handler = vi.fn()
    setNotLoggedInHandler(handler)
    reply(401, { code: 401, success: false, message: '未登录、请登录后使用!', error: 'not_logged_in' })
    await expect(request({ url: 'x' })).rejects.toBeInstanceOf(ApiError)
    expect(toastError).toHaveBeenCalledWith('未登录、请登录后使用!')
    expect(handler).toHaveBeenCalled()
  })

  it("other failures show the server's own message, unless silent", async () => {
    reply(409, { code: 409, success: false, message: '该用户名已被注册', error: 'username_taken' })
    await expect(request({ url: 'x' })).rejects.toMatchObject({ status: 409, code: 'username_taken' })
    expect(toastError).toHaveBeenCalledWith('该用户名已被注册')
    vi.mocked(toastError).mockReset()
    await expect(request({ url: 'x', silent: true })).rejects.toMatchObject({ code: 'username_taken' })
    expect(toastError).not.toHaveBeenCalled()
  })

  it('a failure without a JSON body names the status', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('Bad Gateway', { status: 502 })))
    await expect(request({ url: 'x', silent: true })).rejects.toMatchObject({ status: 502, code: 'http_error', message: '请求失败（502）' })
  })

  it('sends objects as JSON, FormData as it is, and params in the query string', async () => {
    const fetchMock = reply(200, { result: true })
    await request({ method: 'post', url: 'api/a', data: { n: 1 }, params: { id: 'q 1', flag: false, none: undefined } })
    const [url, init] = fetchMock.mock.calls[0]
    expect(url).toBe('/api/a?id=q+1&flag=false')
    expect(init?.method).toBe('POST')
    expect(init?.body).toBe('{"n":1}')
    expect(new Headers(init?.headers).get('Content-Type')).toBe('application/json')

    const form = new FormData()
    form.append('title', 't')
    await request({ method: 'post', url: '/api/b', data: form })
    const [, formInit] = fetchMock.mock.calls[1]
    expect(formInit?.body).toBe(form)
    expect(new Headers(formInit?.headers).has('Content-Type')).toBe(false)
  })

  it('paths are from the site root', () => {
    expect(apiUrl('api/x')).toBe('/api/x')
    expect(apiUrl('/api/x')).toBe('/api/x')
    expect(apiUrl('/api/x', { a: 1, b: null })).toBe('/api/x?a=1')
  })

  it('send reads a blob reply and its headers', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('PDF', { status: 200, headers: { 'content-disposition': "attachment; filename*=UTF-8''a.pdf" } })))
    const got = await send({ url: 'api/file', responseType: 'blob' })
    expect(got.data).toBeInstanceOf(Blob)
    expect(await (got.data as Blob).text()).toBe('PDF')
    expect(got.headers.get('content-disposition')).toContain('a.pdf')
  })
})
