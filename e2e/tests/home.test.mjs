// 首页: our own service overview (/dashboard) when the server names no marketing site.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP } from '../lib.mjs'
import { useServerAndBrowser } from '../server.mjs'

const env = useServerAndBrowser(null, { WENJIAN_MARKETING_URL: '' })

test('with no marketing URL, 首页 opens the service overview, whose cards lead to each service', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByText('残忍拒绝，继续浏览').click()
  await page.getByTestId('header-menu').getByText('首页').click()
  await page.waitForURL(`${env.server.base}/dashboard`)
  const cards = page.getByTestId('service-card')
  for (const title of ['论文查重', 'AIGC检测', '论文降重', '降AIGC', '段落改写', '对话改写', '答辩PPT', '我的记录', '账户中心']) {
    await cards.filter({ hasText: title }).first().waitFor()
  }
  // Every service is open: no card says otherwise.
  assert.doesNotMatch(await page.getByTestId('service-card').allInnerTexts().then((t) => t.join('\n')), /尚未开放/)
  assert.equal(await page.title(), '文鉴 - 首页')
  await page.screenshot({ path: 'artifacts/home-dashboard.png', fullPage: true }).catch(() => {})

  // A visitor may open a whitelisted service from its card.
  await cards.filter({ hasText: '论文查重' }).first().getByRole('link').first().click()
  await page.waitForURL(`${env.server.base}/papercheck/check`)
  await page.close()
})
