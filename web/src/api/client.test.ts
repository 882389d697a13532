import { afterEach, describe, expect, it, vi } from 'vitest'

vi.mock('../utils/feedback', () => ({ toastError: vi.fn() }))

import { http, request, setNotLoggedInHandler, ApiError } from './client'
import { toastError } from '../utils/feedback'

function reply(status: number, data: unknown) {
  http.defaults.adapter = async (config) => {
    if (status >= 400) {
      const err = Object.assign(new Error('fail'), {
        isAxiosError: true,
        response: { status, data, headers: {}, config, statusText: '' },
        config,
      })
      throw err
    }
    return { status, data, headers: {}, config, statusText: 'OK' }
  }
}

describe('http client', () => {
  afterEach(() => {
    vi.mocked(toastError).mockReset()
    localStorage.clear()
  })

  it('has a 15 s timeout and sends the bearer token', async () => {
    expect(http.defaults.timeout).toBe(15000)
    localStorage.setItem('Admin-Token', 'tok')
    let auth: unknown
    http.defaults.adapter = async (config) => {
      auth = config.headers.Authorization
      return { status: 200, data: { result: 1 }, headers: {}, config, statusText: 'OK' }
    }
    await request({ url: 'x' })
    expect(auth).toBe('Bearer tok')
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
})
