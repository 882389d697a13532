// Issue 20: the first route loads at most 350 kB (gzip) of JavaScript.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'
import { BUDGET_BYTES, gzipSize, staticEntrySize } from '../../web/scripts/bundle-size.mjs'

const env = useServerAndBrowser(async (e) => {
  e.token = await registerViaApi(e.server.base, 'bundle_user', 'bundle-password-1')
})
const kb = (n) => `${(n / 1000).toFixed(1)} kB`

// What the browser really downloads on the first route is more than the entry and its preloads:
// the route's own chunk (the check page: form, upload) and, for a visitor, the login dialog with its
// QR encoder. Those stay under this ceiling, the 350 kB (measured: about 311 kB signed in,
// 327 kB as a visitor; 376 kB and 398 kB before the bundle work, one file of 520 kB before the
// split). Most of it is React DOM, React Router and antd's core, which every screen needs.
const LOADED_CEILING = 350 * 1000

/** Opens `/` (→ /papercheck/check) and sums the gzip sizes of every script the browser fetched. */
async function firstRouteScripts(context, ready) {
  const page = await context.newPage()
  const scripts = new Map()
  page.on('response', (res) => {
    if (/\.m?js$/.test(new URL(res.url()).pathname)) scripts.set(new URL(res.url()).pathname, res.body())
  })
  await page.goto(`${env.server.base}/`)
  await page.waitForURL(`${env.server.base}/papercheck/check`)
  await page.getByText('点击或拖拽论文到此处').waitFor()
  await ready(page)
  await page.waitForLoadState('networkidle')
  let total = 0
  for (const body of scripts.values()) total += gzipSize(await body)
  await page.close()
  return { total, count: scripts.size }
}

test('index.html entry script and its modulepreloads stay within the budget', () => {
  const { total, files } = staticEntrySize()
  console.log(`entry + modulepreload: ${kb(total)} gzip in ${files.length} files`)
  assert.ok(total <= BUDGET_BYTES, `first-route JS is ${kb(total)} gzip, over ${kb(BUDGET_BYTES)}`)
})

test('a signed-in student opening the first route stays under the loaded-JavaScript ceiling', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const { total, count } = await firstRouteScripts(context, (page) => page.getByTestId('user-area').waitFor())
  console.log(`signed-in first route: ${count} scripts, ${kb(total)} gzip`)
  assert.ok(total <= LOADED_CEILING, `first route loaded ${kb(total)} gzip of JavaScript, over ${kb(LOADED_CEILING)}`)
  await context.close()
})

test('a visitor opening the first route, login dialog and QR code included, stays under the ceiling', async () => {
  const context = await env.browser.newContext(DESKTOP)
  const { total, count } = await firstRouteScripts(context, (page) => page.getByTestId('login-qr').waitFor())
  console.log(`visitor first route with the login dialog: ${count} scripts, ${kb(total)} gzip`)
  assert.ok(total <= LOADED_CEILING, `first route loaded ${kb(total)} gzip of JavaScript, over ${kb(LOADED_CEILING)}`)
  await context.close()
})
