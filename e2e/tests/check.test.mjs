import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx'
import { DESKTOP, PHONE, eventually } from '../lib.mjs'
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

/** A Word document made here with the `docx` library: a heading and one paragraph per line. */
async function makeDocx(heading, lines) {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
          ...lines.map((line) => new Paragraph({ children: [new TextRun(line)] })),
        ],
      },
    ],
  })
  return Packer.toBuffer(doc)
}

test('check journey: upload .docx → price → submit → report with the copied spans → PDF → verify', async () => {
  const context = await env.browser.newContext({ ...DESKTOP, acceptDownloads: true })
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()

  const copyA = SOURCE_A.slice(0, 30)
  const copyB = SOURCE_B.slice(10, 40)
  const docx = await makeDocx('第一章 引言', [
    '本文是作者独立完成的研究，以下内容用于检验查重功能是否准确。',
    `${copyA}。`,
    '这一段同样是原创的叙述，用来拉开两段引用之间的距离。',
    `${copyB}。`,
  ])
  await page.getByPlaceholder('不填则使用文件名').fill('我的毕业论文')
  await page.locator('input[type=file]').setInputFiles({
    name: '毕业论文.docx',
    mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    buffer: docx,
  })
  const countText = await eventually(async () => {
    const t = await page.getByTestId('paper-count').innerText()
    assert.match(t, /检测字数：\d+ 字/)
    return t
  })
  const chars = Number(countText.match(/检测字数：(\d+)/)[1])
  await page.screenshot({ path: 'artifacts/check-page.png' }).catch(() => {})
  await page.getByRole('button', { name: '下一步：确认并支付' }).click()
  await page.waitForURL(/\/paper\/submit\/\d+/)
  await page.getByText(`${chars} 字`).first().waitFor()
  assert.match(await page.getByTestId('pays-with').innerText(), /账户余额/)
  // The free-check size cap is stated before payment.
  assert.match(await page.getByTestId('free-check-cap').innerText(), /免费查重次数仅适用于 30,000 字以内的论文/)
  await page.screenshot({ path: 'artifacts/check-submit.png' }).catch(() => {})
  await page.getByRole('button', { name: '确认并提交检测' }).click()
  await page.waitForURL(/\/paper\/report$/)

  const listed = await eventually(async () => {
    const t = await page.getByTestId('ratio-total').first().innerText()
    return Number(t.replace('%', ''))
  }, 20000)
  const expected = (60 * 100) / chars
  assert.ok(Math.abs(listed - expected) <= 1, `ratio ${listed} vs expected ${expected}`)

  await page.getByRole('button', { name: '查看报告' }).first().click()
  await page.waitForURL(/\/paper\/report\/\d+$/)
  await page.getByTestId('report-view').waitFor()
  const gauge = await page.getByTestId('report-ratio-total').innerText()
  assert.ok(Math.abs(Number(gauge.replace('%', '')) - expected) <= 1, `gauge ${gauge}`)
  await page.getByText('客流预测研究').first().waitFor()
  await page.getByText('课外阅读调查').first().waitFor()
  await page.getByTestId('chapter-chart').getByText('第一章 引言').waitFor()
  const marked = await page.locator('.report-text mark').allInnerTexts()
  assert.deepEqual(marked, [copyA, copyB])

  // 全文对照: the source's passage beside the paper's.
  await page.locator('.report-text mark').first().click()
  assert.equal(await page.getByTestId('compare-paper').innerText(), copyA)
  assert.equal(await page.getByTestId('compare-source').innerText(), SOURCE_A.slice(0, 30))
  await page.waitForTimeout(400)
  await page.screenshot({ path: 'artifacts/check-compare.png' }).catch(() => {})
  await page.keyboard.press('Escape')
  await page.getByTestId('comparison').waitFor({ state: 'hidden' })
  await page.waitForTimeout(400)
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: 'artifacts/check-report.png' }).catch(() => {})

  // The PDF, read back with pdftotext, carries the figures and the verification code.
  const code = await page.getByTestId('verify-code').innerText()
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-pdf').click()])
  const pdfPath = join(env.server.dataDir, 'downloaded.pdf')
  await download.saveAs(pdfPath)
  const pdfText = execFileSync('pdftotext', [pdfPath, '-']).toString()
  for (const needle of [gauge, code, '总文字复制比', '客流预测研究', '课外阅读调查']) {
    assert.ok(pdfText.includes(needle), `${needle} missing from the PDF:\n${pdfText}`)
  }

  // Report options recompute the figures: both matches are shorter than 50 characters.
  await page.getByTestId('min-chars').click()
  await page.getByText('忽略少于 50 字的匹配').click()
  await eventually(async () => assert.equal(await page.getByTestId('report-ratio-total').innerText(), '0.0%'))
  assert.deepEqual(await page.locator('.report-text mark').allInnerTexts(), [])
  // That is a custom view: labelled on the page, and its download says so and has no code.
  await page.getByTestId('custom-view-tag').waitFor()
  const [customDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-custom').click()])
  const customPath = join(env.server.dataDir, 'custom.pdf')
  await customDownload.saveAs(customPath)
  const customText = execFileSync('pdftotext', [customPath, '-']).toString().replace(/\s+/g, '')
  assert.ok(customText.includes('自定义视图') && customText.includes('忽略少于50字的匹配'), customText)
  assert.ok(!customText.includes(code), 'a custom view carries no verification code')
  // The official report printed its settings.
  assert.ok(pdfText.replace(/\s+/g, '').includes('最小匹配字数：13字'), pdfText)
  await context.close()

  // Renaming the record later does not change the report a teacher verifies.
  const api = async (path, data) => {
    const res = await fetch(`${env.server.base}/api/base/check_api/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.token}` },
      body: JSON.stringify(data),
    })
    return (await res.json()).result
  }
  const { records } = await api('query_list', { page: 1, size: 50 })
  const checked = records.find((r) => r.status === 'done')
  const officialTitle = checked.title
  await api('update_title', { id: checked.id, title: '改过的题目' })

  // Anyone with the code confirms the report on /verify, without logging in and without its text.
  const stranger = await env.browser.newPage(DESKTOP)
  await stranger.goto(`${env.server.base}/verify?code=${encodeURIComponent(code.toLowerCase())}`)
  await stranger.getByTestId('verify-result').waitFor()
  assert.equal(await stranger.getByTestId('verify-ratio').innerText(), gauge)
  assert.ok(!(await stranger.content()).includes(copyA))
  assert.ok((await stranger.getByTestId('verify-result').innerText()).includes(officialTitle))
  await stranger.screenshot({ path: 'artifacts/verify.png' }).catch(() => {})
  await stranger.getByTestId('verify-input').fill('AAAA-BBBB-CCCC-DDDD')
  await stranger.getByRole('button', { name: '核验' }).click()
  await stranger.getByText('核验未通过').waitFor()
  await stranger.close()

  // The report on a phone.
  const phone = await env.browser.newContext(PHONE)
  await phone.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const phonePage = await phone.newPage()
  await phonePage.goto(`${env.server.base}/paper/report`)
  await phonePage.getByRole('button', { name: '查看报告' }).first().click()
  await phonePage.getByTestId('report-view').waitFor()
  await phonePage.waitForTimeout(600)
  await phonePage.screenshot({ path: 'artifacts/check-report-phone.png', fullPage: true }).catch(() => {})
  await phone.close()

  // Deleting the record keeps the report verifiable, and the page says the owner deleted it.
  await api('delete', { id: checked.id })
  const teacher = await env.browser.newPage(DESKTOP)
  await teacher.goto(`${env.server.base}/verify?code=${encodeURIComponent(code)}`)
  await teacher.getByTestId('verify-deleted').waitFor()
  assert.equal(await teacher.getByTestId('verify-ratio').innerText(), gauge)
  await teacher.screenshot({ path: 'artifacts/verify-deleted.png', fullPage: true }).catch(() => {})
  await teacher.close()
})

test('visitors can prepare a check; submitting asks them to log in', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByText('残忍拒绝，继续浏览').click()
  await page.locator('.ant-segmented-item', { hasText: '粘贴文本' }).click()
  await page.getByTestId('paper-text').fill('访客也可以先粘贴论文文本，查看字数。')
  await eventually(async () => assert.match(await page.getByTestId('paper-count').innerText(), /检测字数：\d+ 字/))
  await page.getByRole('button', { name: '登录后提交检测' }).click()
  await page.getByTestId('login-qr').waitFor()
})
