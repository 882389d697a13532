import { describe, expect, it, vi } from 'vitest'

vi.mock('../utils/feedback', () => ({ toastError: vi.fn() }))

import { http } from './client'
import { changePassword, login, register } from './user'

/** Records what each call put in the URL and in the body. */
function capture() {
  const sent: { url: string; params: unknown; data: unknown }[] = []
  http.defaults.adapter = async (config) => {
    sent.push({ url: http.getUri(config), params: config.params, data: config.data })
    return { status: 200, data: { result: true }, headers: {}, config, statusText: 'OK' }
  }
  return sent
}

describe('credentials travel in the body only', () => {
  it('login, register and password change keep passwords out of the URL', async () => {
    const sent = capture()
    await login('student01', 'secret-pass-1')
    await register('student02', 'secret-pass-2')
    await changePassword('secret-pass-2', 'secret-pass-3')
    expect(sent).toHaveLength(3)
    for (const { url, params, data } of sent) {
      expect(url).not.toContain('secret-pass')
      expect(params).toBeUndefined()
      expect(String(data)).toContain('secret-pass')
    }
    expect(JSON.parse(String(sent[0].data))).toEqual({ username: 'student01', password: 'secret-pass-1' })
  })
})
