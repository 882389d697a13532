import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP, PHONE } from '../lib.mjs'
import { registerViaApi, useServerAndBrowser } from '../server.mjs'

const OPS_PASSWORD = 'ops-Console-77'

/**
 * An OpenAI-compatible endpoint (a third party the tests cannot reach), answering
 * `POST /v1/chat/completions` as the documented protocol does, naming the model it was asked for.
 */
async function fakeEndpoint() {
  const { createServer } = await import('node:http')
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const model = JSON.parse(body || '{}').model ?? ''
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify({
          id: 'chatcmpl-e2e',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: `我是${model}。` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      )
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${server.address().port}/v1` }
}

// The operator is made as the README says, with the command line; the student registers.
const env = useServerAndBrowser(async (e) => {
  e.server.cli(['user', 'create', 'ops_e2e', '--admin', '--password', OPS_PASSWORD])
  e.opsToken = await login(e.server.base, 'ops_e2e', OPS_PASSWORD)
  e.studentToken = await registerViaApi(e.server.base, 'student_console', 'student-pass-1')
}, { WENJIAN_PAYMENT: 'sandbox' })

async function login(base, username, password) {
  const res = await fetch(`${base}/api/base/login_api/f/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
  const body = await res.json()
  if (!res.ok) throw new Error(body.message)
  return body.result.access_token
}

const signIn = (token) => {
  if (location.protocol.startsWith('http')) localStorage.setItem('Admin-Token', token)
}

async function pageAs(token, device = DESKTOP) {
  const context = await env.browser.newContext(device)
  await context.addInitScript(signIn, token)
  return { context, page: await context.newPage() }
}

test('a student sees no console: not in the menu, and the address says 无权访问', async () => {
  const { context, page } = await pageAs(env.studentToken)
  await page.goto(`${env.server.base}/papercheck/check`)
  await page.locator('.sidebar-container').getByText('论文查重').first().waitFor()
  assert.equal(await page.locator('.sidebar-container').getByText('运营后台').count(), 0)
  await page.goto(`${env.server.base}/admin/users`)
  await page.getByText('无权访问').waitFor()
  await context.close()
})

test('the operator reads the dashboard, credits a student with a reason and disables them', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/dashboard`)
  await page.locator('.sidebar-container').getByText('运营后台').waitFor()
  await page.getByTestId('stat-users').getByText('2').waitFor()
  await page.getByTestId('revenue-chart').waitFor()
  await page.getByText('在线工作进程').waitFor()
  await page.screenshot({ path: 'artifacts/console-dashboard.png', fullPage: true })

  await page.goto(`${env.server.base}/admin/users`)
  await page.getByTestId('user-search').locator('input').fill('student')
  await page.getByTestId('user-search').locator('input').press('Enter')
  await page.locator('.ant-table-row', { hasText: 'student_console' }).getByText('student_console').click()
  await page.getByTestId('adjust-balance').click()
  await page.locator('input[data-testid=balance-amount], [data-testid=balance-amount] input').fill('5')
  await page.getByRole('button', { name: '确认调整' }).click()
  await page.getByText('请填写原因').waitFor()
  await page.getByTestId('balance-reason').fill('系统故障补偿')
  await page.getByRole('button', { name: '确认调整' }).click()
  const drawer = page.locator('.ant-drawer')
  await drawer.locator('.ant-descriptions').getByText('¥5.00').waitFor()
  await drawer.getByText('账户流水').click()
  await drawer.getByText('系统故障补偿（运营调整）').waitFor()
  await page.screenshot({ path: 'artifacts/console-user.png' })

  // The student's open page loses its session the moment they are disabled.
  const student = await pageAs(env.studentToken)
  await student.page.goto(`${env.server.base}/order/account`)
  await student.page.locator('.ant-statistic', { hasText: '账户余额' }).getByText('¥5.00').waitFor()
  await drawer.getByTestId('toggle-disabled').click()
  await page.locator('.ant-popconfirm').getByRole('button', { name: '停用' }).click()
  await drawer.getByText('已停用').waitFor()
  await student.page.reload()
  await student.page.getByText('密码登录').first().waitFor()
  const refused = await fetch(`${env.server.base}/api/base/login_api/f/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'student_console', password: 'student-pass-1' }),
  })
  assert.equal(refused.status, 403)
  assert.match((await refused.json()).message, /已被停用/)
  await drawer.getByTestId('toggle-disabled').click()
  await page.locator('.ant-popconfirm').getByRole('button', { name: '启用' }).click()
  await drawer.getByText('正常').waitFor()
  env.studentToken = await login(env.server.base, 'student_console', 'student-pass-1')
  await student.context.close()
  await context.close()
})

test('a notice written in the console shows on its page for students at once', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/site`)
  await page.getByTestId('new-notice').click()
  await page.getByTestId('notice-title').fill('系统维护通知')
  await page.getByTestId('notice-content').fill('今晚 23:00–23:30 暂停查重服务，已提交的论文不受影响。')
  await page.locator('.ant-modal').getByText('提醒').click()
  await page.getByTestId('notice-pages').click()
  await page.keyboard.type('论文查重')
  await page.locator('.ant-select-item-option', { hasText: '/papercheck/check' }).click()
  await page.keyboard.press('Escape')
  await page.locator('.ant-modal').getByRole('button', { name: '保存' }).click()
  await page.locator('.ant-table-row', { hasText: '系统维护通知' }).getByText('显示中').waitFor()
  await page.screenshot({ path: 'artifacts/console-site.png', fullPage: true })
  await context.close()

  const student = await pageAs(env.studentToken)
  await student.page.goto(`${env.server.base}/papercheck/check`)
  await student.page.getByTestId('notice-bar').getByText('系统维护通知').waitFor()
  await student.page.screenshot({ path: 'artifacts/console-notice.png' })
  await student.page.goto(`${env.server.base}/order/account`)
  await student.page.locator('.ant-statistic', { hasText: '账户余额' }).waitFor()
  assert.equal(await student.page.getByTestId('notice-bar').count(), 0, 'only on the pages chosen')
  await student.context.close()
})

test('the operator cancels a student task with a reason, a draft is not offered a free retry, and the audit log has it all', async () => {
  const init = await fetch(`${env.server.base}/api/base/check_api/check_init`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.studentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: '运营取消测试论文', text: '第一章 引言\n本文讨论社区居家养老服务的供给与需求匹配。\n' }),
  }).then((r) => r.json())
  const id = init.result.id
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/tasks`)
  await page.getByTestId(`cancel-${id}`).click()
  await page.getByTestId('cancel-reason').fill('用户来电要求取消')
  await page.locator('.ant-modal').getByRole('button', { name: '取消任务' }).click()
  await page.getByText('运营取消：用户来电要求取消').waitFor()
  // Never submitted, never paid: nothing to run again for free.
  assert.equal(await page.getByTestId(`retry-${id}`).count(), 0)
  await page.screenshot({ path: 'artifacts/console-tasks.png' })

  // A top-up paid on the phone whose notification never arrives: 立即对账 credits it once.
  const order = await fetch(`${env.server.base}/api/order/order_info_api/create_order`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.studentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'top_up', amountFen: 1000, channel: 'wechat' }),
  }).then((r) => r.json())
  const paid = await fetch(order.result.payUrl, { method: 'POST', body: new URLSearchParams({ copies: '0' }) }).then((r) => r.text())
  assert.match(paid, /支付通知未发送/)
  await page.goto(`${env.server.base}/admin/orders`)
  const row = page.locator('.ant-table-row', { hasText: order.result.outTradeNo })
  await row.getByText('待支付').waitFor()
  await page.getByTestId('reconcile').click()
  await page.getByText('对账完成：1 笔补记为已支付').waitFor()
  await row.getByText('已支付').waitFor()
  await page.screenshot({ path: 'artifacts/console-orders.png' })

  // Refunded through the provider: the dialog asks why, the money goes back, the row says so.
  await row.getByTestId('order-refund').click()
  await page.getByTestId('refund-reason').fill('用户重复充值')
  await page.getByRole('button', { name: '确认退款' }).click()
  await page.getByText('已原路退款 ¥10.00').waitFor()
  await row.getByText('已退款').waitFor()
  await row.getByTestId('refund-cell').getByText('已退').waitFor()
  assert.equal(await row.getByTestId('order-refund').count(), 0)
  await page.screenshot({ path: 'artifacts/console-orders-refund.png' })

  // Part of another order: the student's order list says how much came back.
  const second = await fetch(`${env.server.base}/api/order/order_info_api/create_order`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.studentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'top_up', amountFen: 1000, channel: 'alipay' }),
  }).then((r) => r.json())
  await fetch(second.result.payUrl, { method: 'POST', body: new URLSearchParams({ copies: '1' }) })
  await page.getByTestId('reconcile').click()
  const secondRow = page.locator('.ant-table-row', { hasText: second.result.outTradeNo })
  await secondRow.getByTestId('order-refund').click()
  await page.locator('input[data-testid=refund-amount], [data-testid=refund-amount] input').fill('4')
  await page.getByTestId('refund-reason').fill('部分服务未完成')
  await page.getByRole('button', { name: '确认退款' }).click()
  await page.getByText('已原路退款 ¥4.00').waitFor()
  const student = await pageAs(env.studentToken)
  await student.page.goto(`${env.server.base}/order/account`)
  await student.page.getByTestId('order-part-refunded').getByText('已退 ¥4.00').waitFor()
  await student.page.screenshot({ path: 'artifacts/account-orders-part-refunded.png', fullPage: true })
  await student.context.close()

  await page.goto(`${env.server.base}/admin/audit`)
  for (const action of ['订单退款', '立即对账', '取消任务', '保存配置', '启用账号', '停用账号', '增加余额']) {
    await page.locator('.ant-table-row', { hasText: action }).first().waitFor()
  }
  await page.screenshot({ path: 'artifacts/console-audit.png', fullPage: true })
  await context.close()

  const phone = await pageAs(env.opsToken, PHONE)
  await phone.page.goto(`${env.server.base}/admin/users`)
  await phone.page.getByTestId('user-card').first().waitFor()
  await phone.page.screenshot({ path: 'artifacts/console-users-phone.png', fullPage: true })
  // The drawer's ledger reads as cards on a phone: the change and the balance after, no sideways scroll.
  await phone.page.getByTestId('user-card').filter({ hasText: 'student_console' }).getByRole('button', { name: '查看' }).click()
  await phone.page.locator('.ant-drawer').getByText('账户流水').click()
  await phone.page.locator('.ant-drawer').getByText('系统故障补偿（运营调整）').waitFor()
  await phone.page.screenshot({ path: 'artifacts/console-user-phone.png' })
  await phone.context.close()
})

test('a package made in the console is on sale at once, and a price changed there is the next quote', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/packages`)
  await page.getByTestId('new-package').click()
  await page.getByTestId('package-name').fill('毕业季查重 5 次')
  await page.locator('input[data-testid=package-amount], [data-testid=package-amount] input').fill('5')
  await page.locator('input[data-testid=package-price], [data-testid=package-price] input').fill('129')
  await page.locator('.ant-modal').getByRole('button', { name: '保存' }).click()
  await page.locator('.ant-table-row', { hasText: '毕业季查重 5 次' }).getByText('在售').waitFor()
  await page.screenshot({ path: 'artifacts/console-packages.png' })

  await page.goto(`${env.server.base}/admin/prices`)
  const check = page.locator('input[data-testid=price-check], [data-testid=price-check] input')
  // A slip is refused with its reason, never quietly turned into a price.
  await check.fill('-1')
  await page.getByTestId('save-prices').click()
  await page.getByText('须在 0.01–1000 元之间').waitFor()
  await check.fill('5')
  await page.getByTestId('save-prices').click()
  await page.getByText('当前使用后台设置的价格').waitFor()
  await page.screenshot({ path: 'artifacts/console-prices.png' })
  await context.close()

  const student = await pageAs(env.studentToken)
  await student.page.goto(`${env.server.base}/order/taocan`)
  await student.page.getByTestId('package-card').filter({ hasText: '毕业季查重 5 次' }).getByText('¥129.00').waitFor()
  await student.context.close()
  const init = await fetch(`${env.server.base}/api/base/check_api/check_init`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.studentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: '新价格', text: '第一章 引言\n本文讨论社区居家养老服务。\n' }),
  }).then((r) => r.json())
  const cost = await fetch(`${env.server.base}/api/base/check_api/check_cost`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.studentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: init.result.id }),
  }).then((r) => r.json())
  assert.equal(cost.result.pricePerThousandFen, 500)
})

test('the models page says what serves each feature and that no endpoint is set; the site page says payments run in the sandbox', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/models`)
  await page.getByText('未配置外部模型服务').waitFor()
  assert.ok(await page.getByTestId('test-endpoint').isDisabled(), 'nothing to test')
  await page.locator('.ant-table-row', { hasText: 'usem3' }).waitFor()
  await page.screenshot({ path: 'artifacts/console-models.png', fullPage: true })

  // An endpoint set here is in force at once, tested with a real call, and removed again.
  const fake = await fakeEndpoint()
  try {
    await page.getByTestId('edit-endpoint').click()
    await page.getByTestId('endpoint-url').fill('ftp://nowhere')
    await page.getByTestId('endpoint-model').fill('fake-chat-e2e')
    await page.getByRole('button', { name: '保存' }).click()
    await page.getByText('接口地址应为 http:// 或 https://').waitFor()
    await page.getByTestId('endpoint-url').fill(fake.url)
    await page.getByTestId('endpoint-key').fill('sk-e2e-secret')
    await page.getByRole('button', { name: '保存' }).click()
    await page.getByText('已保存').waitFor()
    await page.locator('.ant-descriptions').getByText('fake-chat-e2e').waitFor()
    await page.getByTestId('test-endpoint').click()
    await page.getByTestId('endpoint-ok').getByText('我是fake-chat-e2e。').waitFor()
    assert.equal(await page.getByText('sk-e2e-secret').count(), 0)
    await page.screenshot({ path: 'artifacts/console-models-endpoint.png', fullPage: true })
    await page.getByTestId('reset-endpoint').click()
    await page.locator('.ant-popconfirm').getByRole('button', { name: '恢复' }).click()
    await page.getByText('未配置外部模型服务').waitFor()
  } finally {
    fake.server.close()
  }

  // A model installed from the browser, through a worker, with its progress.
  await page.getByTestId('install-cilin').click()
  await page.getByTestId('model-fetch').filter({ hasText: '安装 cilin' }).getByText('已完成', { exact: true }).first().waitFor({ timeout: 120_000 })
  await page.locator('.ant-table-row', { hasText: 'cilin' }).getByText('已安装').waitFor()
  await page.screenshot({ path: 'artifacts/console-models-install.png', fullPage: true })
  await page.goto(`${env.server.base}/admin/site`)
  await page.getByTestId('payment-mode').getByText('支付沙箱模式').waitFor()
  // A template switched off is not offered to students.
  await page.getByTestId('template-dark').getByRole('switch').click()
  await page.getByText('模板已停用').waitFor()
  await page.screenshot({ path: 'artifacts/console-site-templates.png', fullPage: true })
  const templates = await fetch(`${env.server.base}/api/base/ai_ppt_info_api/get_template_list`, { method: 'POST' }).then((r) => r.json())
  assert.ok(!templates.result.some((t) => t.id === 'dark'), 'dark is no longer offered')
  assert.equal(templates.result.length, 5)
  await context.close()

  const phone = await pageAs(env.opsToken, PHONE)
  await phone.page.goto(`${env.server.base}/admin/packages`)
  await phone.page.getByTestId('package-row-card').first().waitFor()
  await phone.page.screenshot({ path: 'artifacts/console-packages-phone.png', fullPage: true })
  await phone.context.close()
})

/** Prose long enough to be a library document, different for each subject. */
const prose = (subject) =>
  `${subject}的研究表明，在相同的实验条件下，样品含量随提取温度升高而增加，在八十摄氏度时达到最大值，此后略有下降。本文据此提出改进的工艺路线，并讨论${subject}在实际生产中的适用范围与局限。`

test('the operator imports a batch into the library with a result per item, finds a document and removes it', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/library`)
  await page.getByText('公共比对库还是空的').waitFor()
  const lines = [
    { title: '黄芩苷提取工艺研究', author: '李明', year: 2021, source: '中草药', text: prose('黄芩苷') },
    { title: '葛根素含量测定', author: '王芳', year: 2019, text: prose('葛根素') },
    { title: '丹参酮稳定性考察', author: '赵强', year: 2023, text: prose('丹参酮') },
    { title: '过短的一条', text: '只有几个字' },
    { title: '缺正文' },
  ].map((r) => JSON.stringify(r))
  await page
    .getByTestId('library-upload')
    .locator('xpath=ancestor-or-self::span[contains(@class,"ant-upload-wrapper")]')
    .locator('input[type=file]')
    .setInputFiles({ name: '第一批文献.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.join('\n')) })
  const task = page.getByTestId('library-task').filter({ hasText: '第一批文献.jsonl' })
  await task.getByTestId('import-result').waitFor({ timeout: 60_000 })
  assert.match(await task.getByTestId('import-result').innerText(), /导入 3 篇.*跳过 1 项，失败 1 项/)
  await task.getByText('查看跳过与失败的 2 项').click()
  await task.getByText('正文过短').waitFor()
  await task.getByText('第 5 行').waitFor()
  await page.locator('.ant-table-row', { hasText: '丹参酮稳定性考察' }).waitFor()
  await page.locator('.ant-statistic', { hasText: '公共比对库' }).getByText('3').waitFor()
  await page.screenshot({ path: 'artifacts/console-library.png', fullPage: true })

  // Search by author, then by year; remove the one found.
  await page.getByTestId('library-search').locator('input').fill('李明')
  await page.getByTestId('library-search').locator('input').press('Enter')
  await page.getByText('共 1 篇').waitFor()
  await page.getByTestId('library-search').locator('input').fill('')
  await page.getByTestId('library-search').locator('input').press('Enter')
  await page.locator('input[data-testid=library-year], [data-testid=library-year] input').fill('2019')
  await page.getByText('共 1 篇').waitFor()
  const row = page.locator('.ant-table-row', { hasText: '葛根素含量测定' })
  await row.getByTestId('library-remove').click()
  await page.locator('.ant-popconfirm').getByRole('button', { name: '移除' }).click()
  await page.getByText('没有符合条件的文献').waitFor({ timeout: 30_000 })
  await page.locator('.ant-statistic', { hasText: '公共比对库' }).getByText('2').waitFor({ timeout: 30_000 })

  // An archive that cannot be read is refused at once, with nothing queued.
  await page
    .getByTestId('library-upload')
    .locator('xpath=ancestor-or-self::span[contains(@class,"ant-upload-wrapper")]')
    .locator('input[type=file]')
    .setInputFiles({ name: '坏的.zip', mimeType: 'application/zip', buffer: Buffer.from('PK\x03\x04 cut off') })
  await page.getByText('压缩包无法读取').waitFor()
  assert.equal(await page.getByTestId('library-task').filter({ hasText: '坏的.zip' }).count(), 0)
  await context.close()

  const phone = await pageAs(env.opsToken, PHONE)
  await phone.page.goto(`${env.server.base}/admin/library`)
  await phone.page.getByTestId('library-card').first().waitFor()
  await phone.page.screenshot({ path: 'artifacts/console-library-phone.png', fullPage: true })
  await phone.context.close()
})

test('the operator edits a prompt, sees its versions and goes back to the built-in text', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/prompts`)
  await page.locator('.prompt-item', { hasText: '润色' }).click()
  const editor = page.getByTestId('prompt-text')
  const builtin = await editor.inputValue()
  assert.ok(builtin.includes('只输出'), builtin)
  await editor.fill('请润色下面的段落，保持原意与术语不变。只输出润色后的段落。')
  await page.getByTestId('prompt-save').click()
  await page.getByText('已保存为新版本').waitFor()
  await page.locator('.prompt-item.active').getByText('已修改').waitFor()
  await page.getByText('第 1 版').waitFor()

  // A paper prompt that loses its placeholder is refused with the reason.
  await page.locator('.prompt-item', { hasText: '正文小节' }).click()
  await page.getByText('必须保留的占位符').waitFor()
  const section = await page.getByTestId('prompt-text').inputValue()
  await page.getByTestId('prompt-text').fill(section.replaceAll('{budget}', '八百'))
  await page.getByTestId('prompt-save').click()
  await page.getByText('缺少占位符 {budget}').waitFor()
  await page.screenshot({ path: 'artifacts/console-prompts.png', fullPage: true })

  await page.locator('.prompt-item', { hasText: '润色' }).click()
  await page.getByTestId('prompt-reset').click()
  await page.locator('.ant-popconfirm').getByRole('button', { name: '恢复' }).click()
  await page.getByText('已恢复为内置版本').waitFor()
  assert.equal(await page.getByTestId('prompt-text').inputValue(), builtin)
  await page.getByText('第 2 版').waitFor()
  await context.close()

  const phone = await pageAs(env.opsToken, PHONE)
  await phone.page.goto(`${env.server.base}/admin/prompts`)
  await phone.page.getByTestId('prompt-picker').waitFor()
  await phone.page.screenshot({ path: 'artifacts/console-prompts-phone.png', fullPage: true })
  await phone.context.close()
})

test('a degree level switched off in the console is no longer offered on the paper form', async () => {
  const { context, page } = await pageAs(env.opsToken)
  await page.goto(`${env.server.base}/admin/site`)
  await page.getByTestId('paper-option-master').getByRole('switch').click()
  await page.getByText('已停用，学生不会再看到这个选项').waitFor()
  await page.screenshot({ path: 'artifacts/console-paper-options.png', fullPage: true })
  const student = await pageAs(env.studentToken)
  await student.page.goto(`${env.server.base}/aipaper/gc`)
  await student.page.getByTestId('paper-degrees').getByText('本科').waitFor()
  assert.equal(await student.page.getByTestId('paper-degrees').getByText('硕士').count(), 0)
  await student.context.close()
  // Switched on again for the other tests of this server.
  await page.getByTestId('paper-option-master').getByRole('switch').click()
  await page.getByText('已启用').waitFor()
  await context.close()
})
