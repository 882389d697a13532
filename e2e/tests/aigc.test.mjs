import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { execFileSync } from 'node:child_process'
import { DESKTOP, PHONE, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'

// The detection model fetched by `wenjian models fetch` (scripts/test.sh fetches it).
const MODELS = process.env.WENJIAN_MODELS_DIR || resolve(import.meta.dirname, '../../data/models')
const missing = existsSync(join(MODELS, 'qwen2.5-0.5b', 'model.gguf')) ? false : `detection model not in ${MODELS}: run wenjian models fetch qwen2.5-0.5b`

// Paragraphs written for this test: a personal account, and stock, assistant-style prose.
const PARAGRAPHS = [
  '去年冬天我在县档案馆抄了三个星期的旧账本，手指冻得握不住笔。账本里记着一九六二年供销社收购山货的价格，榛子比核桃贵，这让我很意外，后来问了村里的老会计才知道那年核桃大丰收。',
  '随着信息技术的快速发展，数字化转型已成为各行各业发展的重要趋势。首先，数字化能够有效提升工作效率；其次，它有助于优化资源配置；此外，数字化还能够促进创新发展。综上所述，推进数字化转型具有重要意义。',
  '访谈安排在收工以后，老人们坐在晒谷场边上，一边剥玉米一边讲。有人记得价格，有人只记得那年冬天特别冷，两种说法对不上的时候，我就把两种都记下来，回去再和账本对。',
]

const env = useServerAndBrowser(
  async (e) => {
    if (missing) return
    e.token = await registerViaApi(e.server.base, 'aigc_user', 'aigc-password-1')
    e.server.cli(['account', 'credit', 'aigc_user', '--yuan', '10'])
  },
  { WENJIAN_MODELS_DIR: MODELS, WENJIAN_AIGC_OBSERVER: 'false' },
)

test('AIGC detection: paste paragraphs → pay → report with bands and AI rate → PDF', { skip: missing }, async () => {
  const context = await env.browser.newContext({ ...DESKTOP, acceptDownloads: true })
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/aigccheck/check`)
  await page.getByTestId('user-area').waitFor()
  await page.getByPlaceholder('不填则使用文件名').fill('县域供销社研究')
  await page.locator('.ant-segmented-item', { hasText: '粘贴文本' }).click()
  // Too short for a reliable figure: said at once, and nothing to pay for.
  await page.getByTestId('paper-text').fill('太短的文本，不足以判断。')
  await page.getByTestId('aigc-too-short').waitFor()
  assert.equal(await page.getByTestId('aigc-next').isDisabled(), true)
  const text = PARAGRAPHS.join('\n')
  await page.getByTestId('paper-text').fill(text)
  const chars = Array.from(text.replace(/\s/g, '')).length
  await eventually(async () => assert.match(await page.getByTestId('paper-count').innerText(), new RegExp(`检测字数：${chars} 字`)))
  await page.screenshot({ path: 'artifacts/aigc-check.png' }).catch(() => {})
  await page.getByTestId('aigc-next').click()
  // ¥2.00 per started 1,000 characters.
  await eventually(async () => assert.equal(await page.getByTestId('aigc-price').innerText(), '¥2.00'))
  await page.waitForTimeout(400)
  await page.screenshot({ path: 'artifacts/aigc-pay.png' }).catch(() => {})
  await page.getByTestId('aigc-pay').click()
  await page.waitForURL(/\/aigccheck\/list$/)

  const listed = await eventually(async () => {
    const t = await page.getByTestId('aigc-rate').first().innerText()
    return Number(t.replace('%', ''))
  }, 180000)
  assert.ok(listed >= 0 && listed <= 100)
  await page.screenshot({ path: 'artifacts/aigc-list.png' }).catch(() => {})

  await page.getByRole('button', { name: '查看报告' }).first().click()
  await page.waitForURL(/\/aigccheck\/content\/\d+$/)
  await page.getByTestId('aigc-report').waitFor()
  const gauge = await page.getByTestId('aigc-report-rate').innerText()
  assert.equal(Number(gauge.replace('%', '')), listed)
  await page.getByTestId('aigc-legend').getByText(/高度疑似 ≥ \d+%/).waitFor()
  // 占比 is explained where it stands, and the distribution's bars fill the chart, each as wide
  // as its paragraph is long.
  await page.getByTestId('aigc-rate-explained').waitFor()
  const strip = await page.getByTestId('aigc-distribution').boundingBox()
  const bars = await page.locator('.aigc-bar').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().width))
  const barsWidth = bars.reduce((a, b) => a + b, 0)
  assert.ok(barsWidth > strip.width * 0.9, `bars ${barsWidth}px of ${strip.width}px`)
  const lengths = PARAGRAPHS.map((t) => t.replace(/\s/g, '').length)
  const longest = lengths.indexOf(Math.max(...lengths))
  assert.equal(bars.indexOf(Math.max(...bars)), longest)
  await page.waitForTimeout(400)
  await page.screenshot({ path: 'artifacts/aigc-report.png' }).catch(() => {})

  // The three paragraphs are shaded by their band, and the AI rate is the share of characters
  // in high-band paragraphs, as the report says.
  const paras = page.getByTestId('aigc-para')
  assert.equal(await paras.count(), 3)
  let highChars = 0
  for (let i = 0; i < 3; i++) {
    const p = paras.nth(i)
    assert.equal(await p.innerText(), PARAGRAPHS[i])
    const band = await p.getAttribute('data-band')
    assert.ok(['high', 'medium', 'low'].includes(band))
    assert.equal(await p.evaluate((el, b) => el.classList.contains(`aigc-${b}`), band), true)
    if (band === 'high') highChars += Array.from(PARAGRAPHS[i]).length
  }
  assert.ok(Math.abs(listed - (highChars * 100) / chars) < 0.06, `rate ${listed} vs ${(highChars * 100) / chars}`)

  // Hovering a paragraph shows its probability.
  await paras.nth(1).hover()
  await page.locator('.ant-tooltip').getByText(/AI 生成概率 \d+\.\d% · (高度疑似|中度疑似|低风险)/).waitFor()
  // Engine names sit behind the 技术说明 fold.
  await page.getByTestId('aigc-tech').getByText('技术说明').click()
  await page.getByTestId('aigc-tech').getByText('qwen2.5-0.5b', { exact: false }).waitFor()
  await page.mouse.move(0, 0)
  await page.waitForTimeout(400)
  await page.getByTestId('aigc-method').scrollIntoViewIfNeeded()
  await page.screenshot({ path: 'artifacts/aigc-report-text.png' }).catch(() => {})

  // One paragraph on its own.
  await paras.nth(0).click()
  await page.getByTestId('aigc-paragraph-detail').getByText(PARAGRAPHS[0]).waitFor()
  await page.keyboard.press('Escape')

  // The PDF, read back with pdftotext.
  const number = await page.getByTestId('aigc-report-number').innerText()
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('aigc-download-pdf').click()])
  const pdfPath = join(env.server.dataDir, 'aigc.pdf')
  await download.saveAs(pdfPath)
  const pdfText = execFileSync('pdftotext', [pdfPath, '-']).toString()
  for (const needle of [gauge, number, 'AIGC 检测报告', '县域供销社研究', '高度疑似']) {
    assert.ok(pdfText.includes(needle), `${needle} missing from the PDF:\n${pdfText}`)
  }
  await context.close()

  const phone = await env.browser.newContext(PHONE)
  await phone.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const phonePage = await phone.newPage()
  await phonePage.goto(`${env.server.base}/aigccheck/list`)
  await phonePage.getByRole('button', { name: '查看报告' }).first().click()
  await phonePage.getByTestId('aigc-report').waitFor()
  await phonePage.waitForTimeout(600)
  await phonePage.screenshot({ path: 'artifacts/aigc-report-phone.png', fullPage: true }).catch(() => {})
  await phone.close()
})
