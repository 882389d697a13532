// Shared helpers for browser tests: Debian's Chromium driven by playwright-core.
import { chromium } from 'playwright-core'
import jsQR from 'jsqr'

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

// Browsers in tests ask for reduced motion: the app then opens menus and dialogs without animation,
// so a click never lands on an element that is still moving.
export const DESKTOP = { viewport: { width: 1366, height: 800 }, locale: 'zh-CN', reducedMotion: 'reduce' }
export const PHONE = {
  reducedMotion: 'reduce',
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  locale: 'zh-CN',
  userAgent:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
}

/** Retries `check` (which throws while not yet true) until it passes or `timeoutMs` runs out. */
export async function eventually(check, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (e) {
      if (Date.now() > deadline) throw e
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/**
 * Reads the QR image with test id `testId` the way a phone camera would: from its pixels.
 * Returns the decoded text and the image's width.
 */
export async function decodeQr(page, testId) {
  const img = page.getByTestId(testId)
  await img.waitFor()
  const pixels = await img.evaluate((el) => {
    const canvas = document.createElement('canvas')
    canvas.width = el.naturalWidth
    canvas.height = el.naturalHeight
    const ctx = canvas.getContext('2d')
    ctx.drawImage(el, 0, 0)
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height)
    return { data: Array.from(data.data), width: data.width, height: data.height }
  })
  const code = jsQR(Uint8ClampedArray.from(pixels.data), pixels.width, pixels.height)
  if (!code) throw new Error(`the QR image ${testId} does not decode`)
  return { text: code.data, width: pixels.width }
}
