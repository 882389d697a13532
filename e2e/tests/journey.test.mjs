// Issue 20: a student journey without dead ends — search, the login dialog with a reason and a
// destination, registration rules, the phone layout of the record lists and the ledger.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP, PHONE, eventually } from '../lib.mjs'
import { useServerAndBrowser, registerViaApi } from '../server.mjs'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'

const MODELS = process.env.WENJIAN_MODELS_DIR || resolve(import.meta.dirname, '../../data/models')
/** Rewriting needs the local model installed (scripts/test.sh fetches it). */
const noModel = existsSync(join(MODELS, 'qwen2.5-0.5b', 'model.gguf')) ? false : `model not in ${MODELS}`

const env = useServerAndBrowser(
  async (e) => {
    e.token = await registerViaApi(e.server.base, 'journey_user', 'journey-password-1')
    e.server.cli(['account', 'credit', 'journey_user', '--yuan', '10'])
  },
  // Several accounts are registered from 127.0.0.1 in this file; a marketing site is configured.
  // The local model makes rewrite drafts possible (none runs: the drafts wait for payment).
  {
    WENJIAN_REGISTER_MAX_PER_IP_PER_HOUR: '50',
    WENJIAN_MARKETING_URL: 'https://wenjian.example.com/',
    WENJIAN_MODELS_DIR: MODELS,
  },
)

async function api(path, body) {
  const res = await fetch(`${env.server.base}/api/base/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${env.token}` },
    body: JSON.stringify(body),
  })
  const json = await res.json()
  if (!res.ok) throw new Error(`${path}: ${json.message}`)
  return json.result
}

async function signedIn(options = DESKTOP) {
  const context = await env.browser.newContext(options)
  await context.addInitScript((t) => localStorage.setItem('Admin-Token', t), env.token)
  return context
}

const LONG_TITLE = '基于深度学习的城市轨道交通短时客流预测方法研究与应用'
// Long enough for AIGC检测 (200 characters or more) and for rewriting.
const PAPER_TEXT = Array.from(
  { length: 4 },
  (_, i) => `第${i + 1}段：本文是作者独立完成的研究，讨论城市轨道交通短时客流预测在运营组织中的作用，并用真实的进出站数据检验手机上的记录卡片是否完整显示标题、状态与操作按钮。`,
).join('\n')

/** Real drafts in the AIGC and rewrite lists, made through the API (waiting for payment, so no
 * model runs): the lists show the server's own records. */
async function realDrafts() {
  await api('paper_aigc_api/machine_init', { title: LONG_TITLE, text: PAPER_TEXT })
  await api('paper_machine_api/machine_init', { title: LONG_TITLE, text: PAPER_TEXT })
}

test('with a marketing URL configured, 首页 still opens it in a new tab', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.route('https://wenjian.example.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>官网</title>' }))
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByText('残忍拒绝，继续浏览').click()
  const [popup] = await Promise.all([context.waitForEvent('page'), page.getByTestId('header-menu').getByText('首页').click()])
  await popup.waitForURL('https://wenjian.example.com/')
  assert.equal(new URL(page.url()).pathname, '/papercheck/check')
  await context.close()
})

test('header search is case-insensitive over paths and every menu title', async () => {
  const context = await signedIn()
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.getByTestId('user-area').waitFor()
  const search = async (text, expect) => {
    await page.getByLabel('搜索页面').click()
    await page.locator('.header-search-select input').fill(text)
    await page.locator('.ant-select-item-option', { hasText: expect.title }).first().click()
    await page.waitForURL((url) => url.pathname === expect.path)
  }
  await search('查重记录', { title: '论文查重 > 查重记录', path: '/paper/report' })
  await search('aigc', { title: 'AIGC检测 > AIGC检测', path: '/aigccheck/check' })
  await search('ppt', { title: '答辩PPT > 答辩PPT', path: '/aippt/ppt' })
  await search('/ORDER', { title: '套餐与账户 > 账户中心', path: '/order/account' })
  await context.close()
})

test('a visitor clicking a guarded entry gets the login dialog with the reason, then lands on that page', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/papercheck/check`)
  const dialog = page.locator('.ant-modal')
  await page.getByText('残忍拒绝，继续浏览').click()
  await dialog.waitFor({ state: 'hidden' })

  // 降AIGC: the dialog says why; dismissing it keeps the visitor where they were.
  await page.getByTestId('header-menu').getByText('降AIGC').click()
  await dialog.getByText('请先登录后使用 降AIGC').waitFor()
  assert.equal(new URL(page.url()).pathname, '/papercheck/check')
  await dialog.getByText('残忍拒绝，继续浏览').click()
  await dialog.waitFor({ state: 'hidden' })
  assert.equal(new URL(page.url()).pathname, '/papercheck/check')

  // AIGC检测: log in in the dialog and continue to the page.
  await page.getByTestId('header-menu').getByText('AIGC检测').click()
  await dialog.getByText('请先登录后使用 AIGC检测').waitFor()
  await page.waitForTimeout(300)
  await page.screenshot({ path: 'artifacts/journey-login-reason.png' }).catch(() => {})
  await dialog.getByPlaceholder('用户名', { exact: true }).fill('journey_user')
  await dialog.getByPlaceholder('密码', { exact: true }).fill('journey-password-1')
  await dialog.getByRole('button', { name: '登录', exact: true }).click()
  await page.waitForURL(`${env.server.base}/aigccheck/check`)
  await page.getByTestId('user-area').waitFor()
  await page.getByText('登录成功').waitFor()
  await page.close()
})

test('a typed-in guarded address still goes to /login, which names the page and returns to it', async () => {
  const page = await env.browser.newPage(DESKTOP)
  await page.goto(`${env.server.base}/aigccheck/list`)
  await page.waitForURL(`${env.server.base}/login?redirect=/aigccheck/list`)
  await page.getByText('请先登录后使用 检测记录').waitFor()
  await page.getByPlaceholder('用户名', { exact: true }).fill('journey_user')
  await page.getByPlaceholder('密码', { exact: true }).fill('journey-password-1')
  await page.getByRole('button', { name: '登录', exact: true }).click()
  await page.waitForURL(`${env.server.base}/aigccheck/list`)
  await page.close()
})

test('registration refuses a weak password before submitting, and says when it succeeded', async () => {
  const page = await env.browser.newPage(DESKTOP)
  const registerCalls = []
  page.on('request', (r) => r.url().includes('/login_api/f/register') && registerCalls.push(r.url()))
  await page.goto(`${env.server.base}/papercheck/check`)
  const dialog = page.locator('.ant-modal')
  await dialog.getByText('立即注册').click()
  await dialog.getByPlaceholder('用户名（4–32 个字符）').fill('weak_pw_user')
  const password = dialog.getByPlaceholder('密码（至少 8 位，含字母和数字）')
  await password.fill('abcdefgh')
  await dialog.getByPlaceholder('确认密码').fill('abcdefgh')
  await dialog.getByRole('button', { name: '注册并登录' }).click()
  await dialog.getByText('密码需同时包含字母和数字').waitFor()
  await password.fill('short1')
  await password.blur()
  await dialog.getByText('密码至少需要 8 个字符').waitFor()
  await password.fill('weak_pw_user1')
  await password.blur()
  await dialog.getByText('密码不能包含用户名').waitFor()
  await page.screenshot({ path: 'artifacts/journey-weak-password.png' }).catch(() => {})
  assert.deepEqual(registerCalls, [], 'nothing was sent to the server')

  await password.fill('strong-pass-42')
  await dialog.getByPlaceholder('确认密码').fill('strong-pass-42')
  await dialog.getByRole('button', { name: '注册并登录' }).click()
  await page.getByText('注册成功，已为您登录').waitFor()
  await page.getByTestId('user-area').waitFor()
  assert.equal(registerCalls.length, 1)
  await page.close()
})

test('on a phone the login dialog opens on password login, the QR code one tap away', async () => {
  const context = await env.browser.newContext(PHONE)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papercheck/check`)
  const dialog = page.locator('.ant-modal')
  await dialog.getByPlaceholder('用户名', { exact: true }).waitFor()
  assert.equal(await dialog.getByTestId('login-qr').isVisible().catch(() => false), false, 'the QR code is not shown first')
  await page.waitForTimeout(300)
  await page.screenshot({ path: 'artifacts/journey-phone-login.png' }).catch(() => {})
  await dialog.getByRole('tab', { name: '扫码登录' }).click()
  await dialog.getByTestId('login-qr').waitFor()
  await dialog.getByRole('tab', { name: '账号登录' }).click()
  await dialog.getByText('立即注册').click()
  await dialog.getByPlaceholder('确认密码').waitFor()
  await context.close()
})

test('the registration form on the phone (QR sign-in page) asks for the password twice and checks it first', async () => {
  const desktop = await env.browser.newPage(DESKTOP)
  await desktop.goto(`${env.server.base}/papercheck/check`)
  const qr = await desktop.evaluate(async () => (await (await fetch('/api/base/login_api/f/login_qr_code', { method: 'POST' })).json()).result)
  const context = await env.browser.newContext(PHONE)
  const phone = await context.newPage()
  await phone.goto(qr.qrCode)
  await phone.getByText('立即注册').click()
  await phone.getByPlaceholder('用户名（4–32 个字符）').fill('phone_reg_01')
  await phone.getByPlaceholder('密码（至少 8 位，含字母和数字）').fill('abcdefgh')
  await phone.getByPlaceholder('确认密码').fill('abcdefgx')
  await phone.getByRole('button', { name: '注册' }).click()
  await phone.getByText('密码需同时包含字母和数字').waitFor()
  await phone.getByText('两次输入的密码不一致').waitFor()
  await phone.screenshot({ path: 'artifacts/journey-phone-qr-register.png' }).catch(() => {})
  await phone.getByPlaceholder('密码（至少 8 位，含字母和数字）').fill('phone-pass-77')
  await phone.getByPlaceholder('确认密码').fill('phone-pass-77')
  await phone.getByRole('button', { name: '注册' }).click()
  await phone.getByText('注册成功，已为您登录').waitFor()
  await phone.getByText('当前账号：').waitFor()
  await context.close()
  await desktop.close()
})

test('on a phone the record lists and the ledger are cards with the key figure and the actions', { skip: noModel }, async () => {
  // A real, finished check.
  const draft = await api('check_api/check_init', {
    text: '第一章 引言\n本文是作者独立完成的研究，用于检验手机上的查重记录卡片是否完整显示复制比与操作按钮。',
    title: LONG_TITLE,
    author: '',
  })
  await api('check_api/check_submit', { id: draft.id, exclude_bibliography: true, min_span: 13, add_to_private_library: false })
  await eventually(async () => assert.equal((await api('check_api/load_by_id', { id: draft.id })).status, 'done'), 30000)

  await realDrafts()
  const context = await signedIn(PHONE)
  const page = await context.newPage()

  await page.goto(`${env.server.base}/paper/report`)
  const checkCard = page.getByTestId('record-card').first()
  await checkCard.getByTestId('ratio-total').waitFor()
  assert.match(await checkCard.innerText(), /复制比/)
  await checkCard.getByRole('button', { name: '查看报告' }).waitFor()
  await checkCard.getByRole('button', { name: '删除' }).waitFor()
  assert.equal(await page.locator('.ant-table').count(), 0, 'no squeezed table on a phone')
  await page.screenshot({ path: 'artifacts/journey-phone-checks.png', fullPage: true }).catch(() => {})

  await page.goto(`${env.server.base}/aigccheck/list`)
  const aigcCard = page.getByTestId('record-card').first()
  await aigcCard.getByText(LONG_TITLE.slice(0, 8)).waitFor()
  assert.match(await aigcCard.innerText(), /待支付/)
  await aigcCard.getByRole('button', { name: '去支付' }).waitFor()
  await aigcCard.getByRole('button', { name: '删除' }).waitFor()
  assert.equal(await page.locator('.ant-table').count(), 0)

  await page.goto(`${env.server.base}/papermachine/list`)
  const rewriteCard = page.getByTestId('record-card').first()
  await rewriteCard.getByText(LONG_TITLE.slice(0, 8)).waitFor()
  assert.match(await rewriteCard.innerText(), /待支付/)
  await rewriteCard.getByRole('button', { name: '去支付' }).waitFor()
  assert.equal(await page.locator('.ant-table').count(), 0)
  await page.screenshot({ path: 'artifacts/journey-phone-rewrites.png', fullPage: true }).catch(() => {})

  await page.goto(`${env.server.base}/order/account`)
  await page.getByTestId('ledger-card').first().waitFor()
  const ledger = (await page.getByTestId('ledger-card').allInnerTexts()).join('\n')
  assert.match(ledger, /人工调整[\s\S]*\+¥10\.00/)
  assert.match(ledger, /任务扣费[\s\S]*-¥\d+\.\d\d/)
  await page.screenshot({ path: 'artifacts/journey-phone-ledger.png', fullPage: true }).catch(() => {})
  assert.equal(await page.locator('.ant-table').count(), 0)
  await context.close()
})

test('at 1366 px the rewrite list keeps its title column readable', { skip: noModel }, async () => {
  await api('paper_machine_api/machine_init', { title: LONG_TITLE, text: PAPER_TEXT })
  const context = await signedIn(DESKTOP)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/papermachine/list`)
  const cell = page.locator('.ant-table-tbody tr.ant-table-row td').first()
  await cell.getByText(LONG_TITLE.slice(0, 6)).waitFor()
  const width = (await cell.boundingBox()).width
  assert.ok(width >= 160, `title column is ${width}px wide`)
  await context.close()
})
