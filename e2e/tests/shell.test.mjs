import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { launch, DESKTOP } from '../lib.mjs'
import { startServer, registerViaApi } from '../server.mjs'

let server, browser, token
before(async () => {
  server = await startServer()
  browser = await launch()
  token = await registerViaApi(server.base, 'shell_user', 'shell-password-1')
})
after(async () => {
  await browser?.close()
  await server?.stop()
})

async function signedInPage() {
  const context = await browser.newContext(DESKTOP)
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), token)
  const page = await context.newPage()
  await page.goto(`${server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()
  return page
}

const tagTitles = (page) => page.locator('.tags-view-item').allInnerTexts()

test('tags view: Close Others and Close All keep the affix tag', async () => {
  const page = await signedInPage()
  // Spec §3: the tags view is off by default; the settings panel turns it on and it stays on.
  assert.equal(await page.getByTestId('tags-view').count(), 0)
  await page.getByLabel('页面设置').click()
  await page.getByRole('switch', { name: '显示标签栏' }).click()
  await page.keyboard.press('Escape')
  await page.getByTestId('tags-view').waitFor()

  const menu = page.getByTestId('header-menu')
  await menu.getByText('AIGC检测').click()
  await page.waitForURL(/\/aigccheck\/check$/)
  await menu.getByText('段落改写').click()
  await page.waitForURL(/\/cnki\/cnki$/)
  await menu.getByText('答辩PPT').click()
  await page.waitForURL(/\/aippt\/ppt$/)
  assert.deepEqual(await tagTitles(page), ['论文查重', 'AIGC检测', '段落改写', '答辩PPT'])

  await page.locator('.tags-view-item', { hasText: '段落改写' }).click({ button: 'right' })
  await page.getByRole('menuitem', { name: '关闭其他' }).click()
  await page.waitForURL(/\/cnki\/cnki$/)
  assert.deepEqual(await tagTitles(page), ['论文查重', '段落改写'])

  await page.locator('.tags-view-item', { hasText: '段落改写' }).click({ button: 'right' })
  await page.getByRole('menuitem', { name: '关闭所有' }).click()
  await page.waitForURL(/\/papercheck\/check$/)
  assert.deepEqual(await tagTitles(page), ['论文查重'])

  await page.reload()
  await page.getByTestId('tags-view').waitFor()
})

test('header search finds a page by a Chinese title fragment and by a path', async () => {
  const page = await signedInPage()
  const search = async (text) => {
    await page.getByLabel('搜索页面').click()
    await page.locator('.header-search-select input').fill(text)
  }
  await search('降重记录')
  await page.locator('.ant-select-item-option', { hasText: '论文降重 > 降重记录' }).first().click()
  await page.waitForURL(/\/papermachine\/list$/)

  await search('aippt/list')
  await page.locator('.ant-select-item-option', { hasText: 'PPT记录' }).first().click()
  await page.waitForURL(/\/aippt\/list$/)
})

test('account centre shows the real account and an empty ledger', async () => {
  const page = await signedInPage()
  await page.goto(`${server.base}/order/account`)
  await page.locator('.ant-statistic', { hasText: '账户余额' }).getByText('¥0.00').waitFor()
  await page.getByText('暂无账户流水').waitFor()
})
