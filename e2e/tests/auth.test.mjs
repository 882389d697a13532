import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP } from '../lib.mjs'
import { useServerAndBrowser } from '../server.mjs'

const env = useServerAndBrowser()

test('register → logout → password login → protected page → logout lands on /login?redirect=…', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/papercheck/check`)
  const dialog = page.locator('.ant-modal')
  await dialog.getByText('立即注册').click()
  await dialog.getByPlaceholder('用户名（4–32 个字符）').fill('e2e_student')
  await dialog.getByPlaceholder('密码（至少 8 位，含字母和数字）').fill('e2e-password-1')
  await dialog.getByPlaceholder('确认密码').fill('e2e-password-1')
  await dialog.getByRole('button', { name: '注册并登录' }).click()
  await page.getByTestId('user-area').waitFor()
  assert.match(await page.getByTestId('user-area').innerText(), /ID：\d+/)
  assert.ok(await page.evaluate(() => localStorage.getItem('Admin-Token')))

  await page.getByTestId('user-area').click()
  await page.getByText('退出登录').click()
  await page.waitForURL(`${env.server.base}/login?redirect=/papercheck/check`)
  assert.equal(await page.evaluate(() => localStorage.getItem('Admin-Token')), null)

  // A wrong password shows the server's message and stores no token.
  await page.getByPlaceholder('用户名', { exact: true }).fill('  e2e_student ')
  await page.getByPlaceholder('密码', { exact: true }).fill('wrong-password')
  await page.getByRole('button', { name: '登录', exact: true }).click()
  await page.getByText('用户名或密码错误').waitFor()
  assert.equal(await page.evaluate(() => localStorage.getItem('Admin-Token')), null)

  await page.getByPlaceholder('密码', { exact: true }).fill('e2e-password-1')
  await page.getByRole('button', { name: '登录', exact: true }).click()
  await page.waitForURL(`${env.server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()

  // A page outside the whitelist opens for a signed-in user.
  await page.getByTestId('header-menu').getByText('论文生成').click()
  await page.waitForURL(`${env.server.base}/aipaper/gc`)
  await page.goto(`${env.server.base}/aipaper/list`)
  await page.getByText('还没有生成过论文').waitFor()
  assert.equal(await page.title(), '文鉴 - AI论文列表')

  await page.getByTestId('user-area').click()
  await page.getByText('退出登录').click()
  await page.waitForURL(`${env.server.base}/login?redirect=/aipaper/list`)
})

test('guard: anonymous protected page goes to login, whitelisted page stays', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/aipaper/list`)
  await page.waitForURL(`${env.server.base}/login?redirect=/aipaper/list`)
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByText('残忍拒绝，继续浏览').click()
  await page.getByText('点击或拖拽论文到此处').waitFor()
  assert.equal(new URL(page.url()).pathname, '/papercheck/check')
  await page.goto(`${env.server.base}/no/such/page`)
  await page.waitForURL(`${env.server.base}/papercheck/check`)
})

test('a stale token is cleared and the user sent to login with the message', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(() => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem('Admin-Token', 'revoked-or-forged')
      sessionStorage.setItem('seeded', '1')
    }
  })
  const page = await context.newPage()
  await page.goto(`${env.server.base}/order/account`)
  await page.waitForURL(`${env.server.base}/login?redirect=/order/account`)
  await page.getByText('未登录、请登录后使用!').waitFor()
  assert.equal(await page.evaluate(() => localStorage.getItem('Admin-Token')), null)
  await context.close()
})
