import { useCallback, useEffect, useRef, useState } from 'react'
import { getLoginQrCode, valLoginQrCode } from '../../api/user'
import type { ApiError } from '../../api/client'

/** Spec §9: poll every 3 s; QR image 300 px wide, margin 2, low error correction. */
export const QR_POLL_MS = 3000
export const QR_IMAGE = { width: 300, margin: 2, errorCorrectionLevel: 'L' as const }

export interface QrState {
  id: string
  text: string
  dataUrl: string
  /** Expired, already used or unknown: the user must refresh. */
  stale: boolean
}

/**
 * The desktop half of QR login. While `active` and an id exists, the status is polled every
 * 3 s, one request at a time; a failed poll re-enables polling; a failed QR fetch is swallowed.
 */
export function useQrLogin(active: boolean, onLoggedIn: (token: string) => void) {
  const [qr, setQr] = useState<QrState | null>(null)
  const inFlight = useRef(false)
  const onLoggedInRef = useRef(onLoggedIn)
  useEffect(() => {
    onLoggedInRef.current = onLoggedIn
  }, [onLoggedIn])

  const refresh = useCallback(async () => {
    try {
      // The QR encoder loads with the first code (phones, which start on password login, may never need it).
      const [result, { default: QRCode }] = await Promise.all([getLoginQrCode(), import('qrcode')])
      const dataUrl = await QRCode.toDataURL(result.qrCode, QR_IMAGE)
      setQr({ id: result.id, text: result.qrCode, dataUrl, stale: false })
    } catch {
      // Swallowed (spec §4): the refresh link stays available.
    }
  }, [])

  useEffect(() => {
    if (active) void refresh()
  }, [active, refresh])

  const id = qr?.id
  const stale = qr?.stale
  useEffect(() => {
    if (!active || !id || stale) return
    let stopped = false
    const timer = setInterval(async () => {
      if (inFlight.current || stopped) return
      inFlight.current = true
      try {
        const result = await valLoginQrCode(id)
        if (result && !stopped) {
          stopped = true
          clearInterval(timer)
          onLoggedInRef.current(result.access_token)
        }
      } catch (e) {
        const code = (e as ApiError).code
        if (code === 'qr_expired' || code === 'qr_used' || code === 'qr_not_found') {
          setQr((q) => (q && q.id === id ? { ...q, stale: true } : q))
        }
      } finally {
        inFlight.current = false
      }
    }, QR_POLL_MS)
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [active, id, stale])

  return { qr, refresh }
}
