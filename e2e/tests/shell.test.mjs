import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'

const env = useServerAndBrowser(async (e) => {
  e.token = await registerViaApi(e.server.base, 'shell_user', 'shell-password-1')
})

async function signedInPage() {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()
  return page
}

const tagTitles = (page) => page.locator('.tags-view-item').allInnerTexts()
const expectTags = (page, titles) => eventually(async () => assert.deepEqual(await tagTitles(page), titles))

/** Right-clicks a tag and picks an entry of its context menu, once the menu has finished opening. */
async function tagMenu(page, tag, item) {
  // Under load a re-render can close the menu before the click lands; open it again then.
  await eventually(async () => {
    await page.locator('.tags-view-item', { hasText: tag }).click({ button: 'right' })
    await page.getByRole('menuitem', { name: item }).click({ timeout: 3000 })
  }, 20000)
}

test('tags view: Close Others and Close All keep the affix tag', async () => {
  const page = await signedInPage()
  // Spec §3: the tags view is off by default; the settings panel turns it on and it stays on.
  assert.equal(await page.getByTestId('tags-view').count(), 0)
  await page.getByLabel('页面设置').click()
  await page.getByRole('switch', { name: '显示标签栏' }).click()
  await page.keyboard.press('Escape')
  await page.getByTestId('tags-view').waitFor()

  const menu = page.getByTestId('header-menu')
  // A page gets its tag once it has rendered; a click before that supersedes the navigation
  // (the URL has changed, the page never showed), so each tag is awaited before the next click.
  for (const [title, path] of [['AIGC检测', /\/aigccheck\/check$/], ['段落改写', /\/cnki\/cnki$/], ['答辩PPT', /\/aippt\/ppt$/]]) {
    await menu.getByText(title).click()
    await page.waitForURL(path)
    await page.locator('.tags-view-item', { hasText: title }).waitFor()
  }
  await expectTags(page, ['论文查重', 'AIGC检测', '段落改写', '答辩PPT'])

  await tagMenu(page, '段落改写', '关闭其他')
  await page.waitForURL(/\/cnki\/cnki$/)
  await expectTags(page, ['论文查重', '段落改写'])

  await tagMenu(page, '段落改写', '关闭所有')
  await page.waitForURL(/\/papercheck\/check$/)
  await expectTags(page, ['论文查重'])

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
  await page.goto(`${env.server.base}/order/account`)
  await page.locator('.ant-statistic', { hasText: '账户余额' }).getByText('¥0.00').waitFor()
  await page.getByText('暂无账户流水').waitFor()
})

test('cached tabs keep their state; Refresh remounts the page', async () => {
  const page = await signedInPage()
  await page.getByLabel('页面设置').click()
  await page.getByRole('switch', { name: '显示标签栏' }).click()
  await page.keyboard.press('Escape')
  await page.getByTestId('user-area').click()
  await page.getByRole('menuitem', { name: '账户中心' }).click()
  await page.waitForURL(/\/order\/account$/)
  await page.getByPlaceholder('原密码').fill('half typed')
  await page.getByTestId('header-menu').getByText('AIGC检测').click()
  await page.waitForURL(/\/aigccheck\/check$/)
  await page.locator('.tags-view-item', { hasText: '账户中心' }).click()
  await page.waitForURL(/\/order\/account$/)
  assert.equal(await page.getByPlaceholder('原密码').inputValue(), 'half typed')

  await tagMenu(page, '账户中心', '刷新')
  await eventually(async () => assert.equal(await page.getByPlaceholder('原密码').inputValue(), ''))
  assert.equal(new URL(page.url()).pathname, '/order/account')
})

test('sidebar state is kept in a cookie; below 992 px the shell is in mobile mode', async () => {
  const page = await signedInPage()
  assert.equal(await page.locator('.app-wrapper.collapsed').count(), 0)
  await page.getByLabel('切换侧边栏').click()
  await page.locator('.app-wrapper.collapsed').waitFor()
  const cookies = await page.context().cookies()
  assert.equal(cookies.find((c) => c.name === 'sidebarStatus')?.value, '0')
  await page.reload()
  await page.locator('.app-wrapper.collapsed').waitFor()

  await page.setViewportSize({ width: 900, height: 800 })
  await page.locator('.app-wrapper.mobile').waitFor()
  assert.equal(await page.locator('.sidebar-container').count(), 0)
})

test('index.html is never cached, hashed assets are cached for good, unknown API paths answer JSON', async () => {
  const index = await fetch(`${env.server.base}/some/spa/path`)
  assert.equal(index.status, 200)
  assert.equal(index.headers.get('cache-control'), 'no-cache')
  const html = await index.text()
  const asset = html.match(/\/assets\/[^"]+\.js/)[0]
  const js = await fetch(`${env.server.base}${asset}`)
  assert.equal(js.status, 200)
  assert.match(js.headers.get('cache-control'), /immutable/)
  assert.match(js.headers.get('content-type'), /javascript/)
  const api = await fetch(`${env.server.base}/api/base/nothing_here`, { method: 'POST' })
  assert.equal(api.status, 404)
  assert.equal((await api.json()).error, 'api_not_found')
})
