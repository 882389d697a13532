import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DESKTOP, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'

// Two library documents written for this test, imported with the CLI as an operator would.
const SOURCE_A = '城市轨道交通的客流预测是线网规划与运营组织的基础工作本文提出一种融合时空特征的组合预测模型并在多个站点进行了验证'
const SOURCE_B = '本研究采用问卷调查与深度访谈相结合的方法考察了高校学生的课外阅读习惯及其影响因素结果表明阅读时间与学业成绩存在显著的正相关关系'

const env = useServerAndBrowser(async (e) => {
  const jsonl = join(e.server.dataDir, 'library.jsonl')
  writeFileSync(
    jsonl,
    [
      JSON.stringify({ title: '客流预测研究', text: SOURCE_A }),
      JSON.stringify({ title: '课外阅读调查', text: SOURCE_B }),
    ].join('\n'),
  )
  e.server.cli(['corpus', 'import', jsonl])
  e.token = await registerViaApi(e.server.base, 'check_user', 'check-password-1')
  e.server.cli(['account', 'credit', 'check_user', '--yuan', '10'])
})

test('check journey: paste → count → price → submit → progress → report with exactly the copied spans', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()

  const copyA = SOURCE_A.slice(0, 30)
  const copyB = SOURCE_B.slice(10, 40)
  const own = '本文是作者独立完成的研究，以下内容用于检验查重功能是否准确。'
  const paper = `第一章 引言\n${own}\n${copyA}。\n这一段同样是原创的叙述，用来拉开两段引用之间的距离。\n${copyB}。\n`
  await page.getByPlaceholder('不填则使用文件名').fill('我的毕业论文')
  await page.locator('.ant-segmented-item', { hasText: '粘贴文本' }).click()
  await page.getByTestId('check-text').fill(paper)
  const countText = await eventually(async () => {
    const t = await page.getByTestId('check-count').innerText()
    assert.match(t, /检测字数：\d+ 字/)
    return t
  })
  const chars = Number(countText.match(/检测字数：(\d+)/)[1])
  await page.screenshot({ path: 'artifacts/check-page.png' }).catch(() => {})
  await page.getByRole('button', { name: '下一步：确认并支付' }).click()
  await page.waitForURL(/\/paper\/submit\/\d+/)
  await page.getByText(`${chars} 字`).first().waitFor()
  assert.match(await page.getByTestId('pays-with').innerText(), /账户余额/)
  await page.screenshot({ path: 'artifacts/check-submit.png' }).catch(() => {})
  await page.getByRole('button', { name: '确认并提交检测' }).click()
  await page.waitForURL(/\/paper\/report$/)

  const ratio = await eventually(async () => {
    const t = await page.getByTestId('ratio-total').first().innerText()
    return Number(t.replace('%', ''))
  }, 20000)
  const expected = (60 * 100) / chars
  assert.ok(Math.abs(ratio - expected) <= 1, `ratio ${ratio} vs expected ${expected}`)

  await page.getByRole('button', { name: '查看报告' }).first().click()
  await page.getByTestId('report-view').waitFor()
  await page.getByText('客流预测研究').first().waitFor()
  await page.getByText('课外阅读调查').first().waitFor()
  const marked = await page.locator('.report-text mark').allInnerTexts()
  assert.deepEqual(marked, [copyA, copyB])
  await page.waitForTimeout(600)
  await page.screenshot({ path: 'artifacts/check-report.png' }).catch(() => {})
  await context.close()
})

test('visitors can prepare a check; submitting asks them to log in', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByText('残忍拒绝，继续浏览').click()
  await page.locator('.ant-segmented-item', { hasText: '粘贴文本' }).click()
  await page.getByTestId('check-text').fill('访客也可以先粘贴论文文本，查看字数。')
  await eventually(async () => assert.match(await page.getByTestId('check-count').innerText(), /检测字数：\d+ 字/))
  await page.getByRole('button', { name: '登录后提交检测' }).click()
  await page.getByTestId('login-qr').waitFor()
})
