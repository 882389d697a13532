import { afterEach, describe, expect, it, vi } from 'vitest'

vi.mock('../utils/feedback', () => ({ toastError: vi.fn() }))

import { changePassword, login, register } from './user'

/** Records what each call put in the URL and in the body. */
function capture() {
  const sent: { url: string; data: unknown }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      sent.push({ url, data: init?.body })
      return new Response(JSON.stringify({ result: true }), { status: 200 })
    }),
  )
  return sent
}

describe('credentials travel in the body only', () => {
  afterEach(() => vi.unstubAllGlobals())

  it('login, register and password change keep passwords out of the URL', async () => {
    const sent = capture()
    await login('student01', 'secret-pass-1')
    await register('student02', 'secret-pass-2')
    await changePassword('secret-pass-2', 'secret-pass-3')
    expect(sent).toHaveLength(3)
    for (const { url, data } of sent) {
      expect(url).not.toContain('secret-pass')
      expect(url).not.toContain('?')
      expect(String(data)).toContain('secret-pass')
    }
    expect(JSON.parse(String(sent[0].data))).toEqual({ username: 'student01', password: 'secret-pass-1' })
  })
})
