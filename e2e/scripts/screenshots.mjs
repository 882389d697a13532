// Screenshots of the main screens at desktop and phone widths, for a person to look at:
//   node scripts/screenshots.mjs [OUT_DIR]   (starts its own server)
import { mkdirSync } from 'node:fs'
import { launch, DESKTOP, PHONE } from '../lib.mjs'
import { startServer, registerViaApi } from '../server.mjs'

const out = process.argv[2] || 'artifacts/screens'
mkdirSync(out, { recursive: true })
const server = await startServer()
const base = server.base
const browser = await launch()
const shot = async (page, name) => {
  await page.waitForTimeout(500)
  await page.screenshot({ path: `${out}/${name}.png` })
}

try {
  // Visitor: the login dialog on load.
  const visitor = await browser.newPage(DESKTOP)
  await visitor.goto(`${base}/papercheck/check`)
  await visitor.getByTestId('login-qr').waitFor()
  await shot(visitor, '01-desktop-login-dialog')
  await visitor.getByText('立即注册').click()
  await shot(visitor, '02-desktop-register')

  // QR login from a phone, so the account has a ledger row.
  const phoneCtx = await browser.newContext(PHONE)
  const phone = await phoneCtx.newPage()
  const qrText = await visitor.evaluate(async () => {
    const res = await fetch('/api/base/login_api/f/login_qr_code', { method: 'POST' })
    return (await res.json()).result
  })
  await phone.goto(qrText.qrCode)
  await phone.getByText('您正在登录文鉴网页版').waitFor()
  await shot(phone, '03-phone-qr-signin')
  await registerViaApi(base, 'screen_user', 'screen-password-1')
  await phone.getByPlaceholder('用户名').fill('screen_user')
  await phone.getByPlaceholder('密码').fill('screen-password-1')
  await phone.getByRole('button', { name: '登录' }).click()
  await phone.getByRole('button', { name: '确认登录' }).waitFor()
  await shot(phone, '04-phone-qr-confirm')
  await phone.getByRole('button', { name: '确认登录' }).click()
  await phone.getByText('已确认登录').waitFor()
  await shot(phone, '05-phone-qr-done')
  const claim = await visitor.evaluate(async (id) => {
    const res = await fetch(`/api/base/login_api/f/val_login_qr_code?id=${id}`, { method: 'POST' })
    return (await res.json()).result
  }, qrText.id)

  // Signed in, with the tags view on.
  const ctx = await browser.newContext(DESKTOP)
  await ctx.addInitScript((t) => {
    localStorage.setItem('Admin-Token', t)
    localStorage.setItem('wenjian-settings', JSON.stringify({ tagsView: true }))
  }, claim.access_token)
  const page = await ctx.newPage()
  await page.goto(`${base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()
  await page.getByTestId('header-menu').getByText('AIGC检测').click()
  await page.getByTestId('user-area').click()
  await page.getByRole('menuitem', { name: '账户中心' }).click()
  await page.getByText('首次扫码登录赠送免费查重 1 次').waitFor()
  await shot(page, '06-desktop-account')
  await page.locator('.tags-view-item', { hasText: 'AIGC检测' }).click({ button: 'right' })
  await shot(page, '07-desktop-tags-menu')
  await page.keyboard.press('Escape')
  await page.getByLabel('搜索页面').click()
  await page.locator('.header-search-select input').fill('降重')
  await shot(page, '08-desktop-search')
  await page.keyboard.press('Escape')
  await page.getByLabel('页面设置').click()
  await shot(page, '09-desktop-settings')
  await page.goto(`${base}/forgot-password`)
  await shot(page, '10-desktop-forgot-password')

  // Phone width: the shell in mobile mode.
  const mctx = await browser.newContext(PHONE)
  await mctx.addInitScript((t) => localStorage.setItem('Admin-Token', t), claim.access_token)
  const mobile = await mctx.newPage()
  await mobile.goto(`${base}/order/account`)
  await mobile.waitForTimeout(1500)
  await shot(mobile, '11-phone-account')
  await mobile.getByText('菜单').click()
  await shot(mobile, '12-phone-menu')
} finally {
  await browser.close()
  await server.stop()
}
