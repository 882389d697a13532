// Issue 20: the check report on its own address (bookmark, refresh, Back), sources opening their
// side-by-side view with the changed characters of a light edit marked, chapters from the
// document's heading styles, and every time in the configured zone with the zone named.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { Document, HeadingLevel, Packer, Paragraph } from 'docx'
import { DESKTOP, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'

const SOURCE = '湿地生态系统的碳汇功能受到水文条件植被类型与土壤微生物群落的共同调控长期监测数据显示退化湿地的固碳速率明显低于自然湿地恢复工程应优先重建水文连通性'
// The paper's light edit of the source's first 44 characters: 共同 → 协同.
const EDITED = SOURCE.slice(0, 44).replace('共同调控', '协同调控')

const env = useServerAndBrowser(
  async (e) => {
    const jsonl = join(e.server.dataDir, 'library.jsonl')
    writeFileSync(jsonl, JSON.stringify({ title: '湿地碳汇研究', author: '周敏', text: SOURCE }))
    e.server.cli(['corpus', 'import', jsonl])
    e.token = await registerViaApi(e.server.base, 'report_page_user', 'report-page-1')
    e.server.cli(['account', 'credit', 'report_page_user', '--yuan', '10'])
  },
  // The operator's zone: every time on the site, the PDF and /verify follows it.
  { WENJIAN_TIME_ZONE: 'UTC' },
)

async function api(path, data) {
  const res = await fetch(`${env.server.base}/api/base/check_api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${env.token}` },
    body: JSON.stringify(data),
  })
  const body = await res.json()
  assert.equal(body.code, 200, JSON.stringify(body))
  return body.result
}

/** A thesis as Word writes it: the title in the Title style, chapters in Heading 1, and an
 * abstract whose first paragraph starts with 摘要：. */
async function thesisDocx() {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: '湿地恢复工程对区域碳收支的影响', heading: HeadingLevel.TITLE }),
          new Paragraph({ text: '摘要：本文以三处湿地为对象，讨论恢复工程对碳收支的作用。' }),
          new Paragraph({ text: '研究背景与问题', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ text: `${EDITED}。` }),
          new Paragraph({ text: '作者在两年间完成了野外采样，并整理了各样点的水位记录。' }),
          new Paragraph({ text: '研究方法', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ text: '采用涡度相关法与静态箱法相互校验，计算生长季的净交换量。' }),
        ],
      },
    ],
  })
  return Packer.toBuffer(doc)
}

test('the check report lives at its own address; a source opens side by side with the changed characters marked; times in the configured zone', async () => {
  const form = new FormData()
  form.append('file', new Blob([await thesisDocx()]), '湿地论文.docx')
  const init = await fetch(`${env.server.base}/api/base/check_api/check_init`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.token}` },
    body: form,
  }).then((r) => r.json())
  assert.equal(init.code, 200, JSON.stringify(init))
  // The Title paragraph names the paper, not the file name.
  assert.equal(init.result.title, '湿地恢复工程对区域碳收支的影响')
  const id = init.result.id
  await api('check_submit', { id })
  const done = await eventually(async () => {
    const { records } = await api('query_list', { page: 1, size: 10 })
    const r = records.find((x) => x.id === id)
    assert.equal(r.status, 'done')
    return r
  }, 30000)

  const context = await env.browser.newContext({ ...DESKTOP, acceptDownloads: true })
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()

  // From the records list, 查看报告 opens the report's own page; Back returns to the list.
  await page.goto(`${env.server.base}/paper/report`)
  await page.getByRole('button', { name: '查看报告' }).first().click()
  await page.waitForURL(new RegExp(`/paper/report/${id}$`))
  await page.getByTestId('report-view').waitFor()
  await page.goBack()
  await page.waitForURL(/\/paper\/report$/)

  // A bookmark (a fresh load of the address) opens the same report.
  await page.goto(`${env.server.base}/paper/report/${id}`)
  await page.getByTestId('report-view').waitFor()
  assert.match(await page.getByTestId('report-title').innerText(), /湿地恢复工程对区域碳收支的影响/)

  // Chapters are the document's own headings; the title line names the front part.
  const chapters = await page.getByTestId('chapter-chart').locator('.chapter-title').allInnerTexts()
  assert.deepEqual(chapters, ['题名', '摘要', '研究背景与问题', '研究方法'])

  // The time is in the configured zone, and says which.
  const utc = new Date(done.finishedAt).toISOString().replace('T', ' ').slice(0, 16)
  await page.getByText(`检测时间：${utc}（UTC）`).waitFor()

  // The source opens its side-by-side view; the address keeps it.
  await page.getByTestId('source-compare').first().click()
  await page.waitForURL(/\?source=\d+/)
  const pair = page.getByTestId('source-pair').first()
  await pair.waitFor()
  assert.ok((await pair.innerText()).includes('轻度改写'), await pair.innerText())
  assert.deepEqual(await pair.getByTestId('compare-paper').locator('[data-changed]').allInnerTexts(), ['协'])
  assert.deepEqual(await pair.getByTestId('compare-source').locator('[data-changed]').allInnerTexts(), ['共'])
  await page.waitForTimeout(400)
  await page.screenshot({ path: 'artifacts/report-source-compare.png' }).catch(() => {})
  await page.reload()
  await page.getByTestId('source-comparison').waitFor()
  // Back closes the view and stays on the report.
  await page.goBack()
  await page.getByTestId('source-comparison').waitFor({ state: 'hidden' })
  assert.match(page.url(), new RegExp(`/paper/report/${id}$`))

  // A marked span opens the same comparison for itself.
  await page.locator('.report-text mark').first().click()
  await page.getByTestId('comparison').waitFor()
  assert.deepEqual(await page.getByTestId('comparison').locator('[data-changed]').allInnerTexts(), ['协', '共'])
  await page.keyboard.press('Escape')
  await page.getByTestId('comparison').waitFor({ state: 'hidden' })
  assert.match(page.url(), new RegExp(`/paper/report/${id}$`))
  await page.screenshot({ path: 'artifacts/report-page.png' }).catch(() => {})

  // The PDF and /verify name the same zone.
  const code = await page.getByTestId('verify-code').innerText()
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-pdf').click()])
  const pdfPath = join(env.server.dataDir, 'zone.pdf')
  await download.saveAs(pdfPath)
  const pdfText = execFileSync('pdftotext', [pdfPath, '-']).toString().replace(/\s+/g, '')
  assert.ok(pdfText.includes(`${utc.replace(' ', '')}（UTC）`), pdfText.slice(0, 600))
  await page.goto(`${env.server.base}/verify?code=${encodeURIComponent(code)}`)
  await page.getByText('检测时间（UTC）').waitFor()
  assert.ok((await page.getByTestId('verify-result').innerText()).includes(utc))

  // An address for a report that is not the user's says so, with a way back.
  await page.goto(`${env.server.base}/paper/report/999999`)
  await page.getByText('无法打开该报告').waitFor()
  await page.getByRole('button', { name: '返回查重记录' }).waitFor()
  await context.close()
})
