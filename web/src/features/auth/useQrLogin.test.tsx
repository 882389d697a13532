import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { act, renderHook } from '@testing-library/react'

vi.mock('../../api/user', () => ({ getLoginQrCode: vi.fn(), valLoginQrCode: vi.fn() }))
vi.mock('qrcode', () => ({ default: { toDataURL: vi.fn(async () => 'data:image/png;base64,') } }))

import * as api from '../../api/user'
import QRCode from 'qrcode'
import { useQrLogin, QR_POLL_MS } from './useQrLogin'

const flush = () => act(async () => { await Promise.resolve(); await Promise.resolve() })

describe('QR login polling', () => {
  beforeEach(() => {
    vi.useFakeTimers()
    vi.mocked(api.getLoginQrCode).mockResolvedValue({ id: 'q1', qrCode: 'http://h/m/qr/q1', expiresAt: 0, expiresInSeconds: 300 })
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.mocked(api.valLoginQrCode).mockReset()
  })

  it('renders the QR at 300 px, margin 2, low error correction', async () => {
    renderHook(() => useQrLogin(true, () => {}))
    await flush()
    expect(QRCode.toDataURL).toHaveBeenCalledWith('http://h/m/qr/q1', { width: 300, margin: 2, errorCorrectionLevel: 'L' })
  })

  it('polls every 3 s, one request at a time, and stops on success', async () => {
    let resolveFirst: (v: false) => void = () => {}
    vi.mocked(api.valLoginQrCode)
      .mockImplementationOnce(() => new Promise((r) => (resolveFirst = r)))
      .mockResolvedValueOnce({ access_token: 'tok', token_type: 'Bearer', expires_at: 0 })
    const onLoggedIn = vi.fn()
    renderHook(() => useQrLogin(true, onLoggedIn))
    await flush()
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(1)
    // Still in flight: the next tick sends nothing.
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(1)
    await act(async () => { resolveFirst(false) })
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    await flush()
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(2)
    expect(onLoggedIn).toHaveBeenCalledWith('tok')
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS * 3) })
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(2)
  })

  it('a failed poll re-enables polling', async () => {
    vi.mocked(api.valLoginQrCode).mockRejectedValueOnce(new Error('network')).mockResolvedValue(false)
    renderHook(() => useQrLogin(true, () => {}))
    await flush()
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    await flush()
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(2)
  })

  it('does not poll while hidden, and swallows a failed QR fetch', async () => {
    vi.mocked(api.getLoginQrCode).mockRejectedValueOnce(new Error('down'))
    const { result } = renderHook(() => useQrLogin(false, () => {}))
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS * 2) })
    expect(api.valLoginQrCode).not.toHaveBeenCalled()
    await act(async () => { await result.current.refresh() })
    expect(result.current.qr).toBeNull()
  })

  it('marks an expired QR stale and stops polling', async () => {
    vi.mocked(api.valLoginQrCode).mockRejectedValue(Object.assign(new Error('过期'), { code: 'qr_expired' }))
    const { result } = renderHook(() => useQrLogin(true, () => {}))
    await flush()
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS) })
    await flush()
    expect(result.current.qr?.stale).toBe(true)
    await act(async () => { vi.advanceTimersByTime(QR_POLL_MS * 3) })
    expect(api.valLoginQrCode).toHaveBeenCalledTimes(1)
  })
})
