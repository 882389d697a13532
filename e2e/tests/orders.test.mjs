import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP, PHONE, decodeQr as decodeImage } from '../lib.mjs'
import { registerViaApi, useServerAndBrowser, startServer } from '../server.mjs'

// The payment sandbox plays WeChat Pay and Alipay over their protocols against the real server.
const env = useServerAndBrowser(async (e) => {
  e.token = await registerViaApi(e.server.base, 'buyer_e2e', 'buyer-pass-1')
}, { WENJIAN_PAYMENT: 'sandbox' })

const signIn = (token) => {
  if (location.protocol.startsWith('http')) localStorage.setItem('Admin-Token', token)
}

/** The order's QR code, read from its pixels as a phone camera would. */
const decodeQr = async (page) => (await decodeImage(page, 'order-qr')).text

async function payOnPhone(url) {
  const phone = await (await env.browser.newContext(PHONE)).newPage()
  await phone.goto(url)
  await phone.getByText('支付沙箱').first().waitFor()
  await phone.screenshot({ path: 'artifacts/order-phone.png' }).catch(() => {})
  await phone.getByRole('button', { name: '确认支付' }).click()
  await phone.getByText('支付成功').waitFor()
  await phone.close()
}

test('a package bought by scanning: the desktop shows the QR, the phone pays, the desktop flips and the account shows the grant', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/order/taocan`)
  await page.getByText('支付沙箱已开启').waitFor()
  assert.ok((await page.getByTestId('package-card').count()) >= 3, 'the seeded packages are on sale')
  await page.screenshot({ path: 'artifacts/order-packages.png' })
  await page.getByTestId('package-card').first().getByTestId('package-buy').click()
  await page.getByTestId('sandbox-banner').waitFor()
  assert.equal(await page.getByTestId('order-amount').innerText(), '¥99.00')
  const url = await decodeQr(page)
  assert.match(url, new RegExp(`^${env.server.base}/sandbox/pay/WJ\\d+$`))
  await page.screenshot({ path: 'artifacts/order-qr.png' })

  await payOnPhone(url)
  await page.getByText('支付成功').waitFor({ timeout: 10_000 })
  await page.screenshot({ path: 'artifacts/order-paid.png' })
  await page.getByTestId('order-go-account').click()
  await page.getByTestId('grants').getByText('剩余 3 / 3 次').waitFor()
  await page.locator('.ant-card', { hasText: '我的订单' }).getByText('已支付').waitFor()
  await page.screenshot({ path: 'artifacts/order-account.png', fullPage: true })
  await context.close()
})

test('a top-up with its bonus, paid by Alipay, credits the balance once', async () => {
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/order/recharge`)
  await page.getByTestId('top-up-tier').filter({ hasText: '送 ¥20.00' }).click()
  await page.getByTestId('channel-picker').getByText('支付宝').click()
  await page.getByText('到账 ¥120.00').first().waitFor()
  await page.screenshot({ path: 'artifacts/order-recharge.png' })
  await page.getByTestId('top-up-pay').click()
  const url = await decodeQr(page)
  await payOnPhone(url)
  await page.getByText('已到账：余额 ¥120.00（含赠送 ¥20.00）').waitFor({ timeout: 10_000 })
  await page.goto(`${env.server.base}/order/account`)
  await page.locator('.ant-statistic', { hasText: '账户余额' }).getByText('¥120.00').waitFor()
  await context.close()
})

test('on a phone a top-up opens the provider\'s payment page, which comes back to the account page', async () => {
  const token = await registerViaApi(env.server.base, 'phone_buyer_e2e', 'phone-pass-1')
  const context = await env.browser.newContext(PHONE)
  await context.addInitScript(signIn, token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/order/recharge`)
  await page.getByTestId('top-up-tier').filter({ hasText: '送 ¥5.00' }).click()
  await page.getByTestId('channel-picker').getByText('支付宝').click()
  await page.getByTestId('top-up-pay').click()
  // No QR code to scan on the phone itself: a button to Alipay's wap.pay page.
  const open = page.getByTestId('order-open-provider')
  await open.waitFor()
  assert.equal(await page.getByTestId('order-qr').count(), 0)
  await page.screenshot({ path: 'artifacts/order-phone-dialog.png' })
  await open.click()
  await page.waitForURL('**/sandbox/pay/WJ*')
  await page.getByRole('button', { name: '确认支付' }).click()
  await page.getByText('支付成功').waitFor()
  await page.screenshot({ path: 'artifacts/order-phone-paid.png' })
  await page.getByTestId('sandbox-return').click()
  await page.waitForURL('**/order/account')
  await page.locator('.ant-statistic', { hasText: '账户余额' }).getByText('¥55.00').waitFor({ timeout: 10_000 })
  await page.screenshot({ path: 'artifacts/order-phone-back.png', fullPage: true })
  await context.close()
})

test('对话改写 on a server without its model says so before anyone pays', async () => {
  const token = await registerViaApi(env.server.base, 'chat_nomodel_e2e', 'chat-pass-1')
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/nlp/machine?tab=chat`)
  await page.getByTestId('chat-no-model').getByText('对话改写暂不可用').waitFor()
  await page.getByTestId('chat-input').fill('本文讨论县域医共体绩效考核的指标体系与实施效果。')
  assert.ok(await page.getByTestId('chat-send').isDisabled(), 'nothing to pay for')
  await page.screenshot({ path: 'artifacts/chat-no-model.png' })
  await context.close()
})

test('on a computer without a phone at hand, Alipay\'s web cashier pays and the dialog flips', async () => {
  const token = await registerViaApi(env.server.base, 'web_cashier_e2e', 'cashier-pass-1')
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/order/recharge`)
  await page.getByTestId('top-up-tier').first().click()
  await page.getByTestId('channel-picker').getByText('支付宝').click()
  await page.getByTestId('top-up-pay').click()
  await page.getByTestId('order-qr').waitFor()
  const [cashier] = await Promise.all([context.waitForEvent('page'), page.getByTestId('order-alipay-web').click()])
  await cashier.waitForURL('**/sandbox/pay/WJ*')
  await cashier.getByRole('button', { name: '确认支付' }).click()
  await cashier.getByText('支付成功').waitFor()
  await page.getByText('支付成功').waitFor({ timeout: 10_000 })
  await page.screenshot({ path: 'artifacts/order-web-cashier-paid.png' })
  await context.close()
})

test('without online payment the order pages say so and offer nothing to scan', async () => {
  const plain = await startServer()
  try {
    const token = await registerViaApi(plain.base, 'buyer_plain', 'buyer-pass-1')
    const context = await env.browser.newContext(DESKTOP)
    await context.addInitScript(signIn, token)
    const page = await context.newPage()
    await page.goto(`${plain.base}/order/recharge`)
    await page.getByTestId('payment-unavailable').getByText('尚未配置在线支付').waitFor()
    assert.ok(await page.getByTestId('top-up-pay').isDisabled(), 'nothing can be paid')
    await page.screenshot({ path: 'artifacts/order-unavailable.png' })
    await context.close()
  } finally {
    await plain.stop()
  }
})

test('a check the balance cannot pay: its shortfall is paid by scanning and the check starts at once', async () => {
  const token = await registerViaApi(env.server.base, 'scanner_e2e', 'scanner-pass-1')
  const init = await fetch(`${env.server.base}/api/base/check_api/check_init`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: '县域医共体绩效考核研究', text: '第一章 引言\n本文讨论县域医共体绩效考核的指标体系与实施效果，数据来自三个县的调查。\n' }),
  }).then((r) => r.json())
  assert.equal(init.code, 200, JSON.stringify(init))
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/paper/submit/${init.result.id}`)
  await page.getByTestId('pays-with').getByText('余额不足').waitFor()
  const scan = page.getByTestId('scan-to-pay')
  await scan.getByText('余额还差 ¥3.00').waitFor()
  await page.screenshot({ path: 'artifacts/order-task-short.png', fullPage: true })
  await scan.getByTestId('scan-to-pay-button').click()
  assert.equal(await page.getByTestId('order-amount').innerText(), '¥3.00')
  await payOnPhone(await decodeQr(page))
  // Paid: the page submits the check from the balance and goes to the records.
  await page.waitForURL('**/paper/report', { timeout: 15_000 })
  await page.getByText('县域医共体绩效考核研究').first().waitFor()
  await page.screenshot({ path: 'artifacts/order-task-started.png' })
  const account = await fetch(`${env.server.base}/api/base/account_info_api/account`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())
  assert.equal(account.result.balanceFen, 0, 'the scan paid exactly the shortfall, and the check took it')
  await context.close()
})

test('a bought 查重 package pays for the next check before the balance', async () => {
  // buyer_e2e bought 查重 3 次 in the first test of this file.
  const init = await fetch(`${env.server.base}/api/base/check_api/check_init`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: '套餐抵扣的论文', text: '第一章 引言\n本文讨论高校图书馆数字化服务的用户满意度。\n' }),
  }).then((r) => r.json())
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/paper/submit/${init.result.id}`)
  await page.getByTestId('pays-with').getByText('套餐抵扣 1 次').waitFor()
  await page.getByTestId('package-expiry').waitFor()
  await page.screenshot({ path: 'artifacts/order-package-pays.png', fullPage: true })
  await page.getByRole('button', { name: '确认并提交检测' }).click()
  await page.waitForURL('**/paper/report')
  await page.goto(`${env.server.base}/order/account`)
  await page.getByTestId('grants').getByText('剩余 2 / 3 次').waitFor()
  await page.getByTestId('grant-uses').getByText('套餐抵扣 1 次').first().waitFor()
  await page.screenshot({ path: 'artifacts/order-package-used.png', fullPage: true })
  await context.close()
})

test('a package used up in another tab: 提交 charges nothing, says what changed and shows the new price', async () => {
  // buyer_e2e holds 2 of its 3 uses (the test above took one) and a balance of ¥120.
  const api = (path, body, headers = {}) =>
    fetch(`${env.server.base}/api/base/check_api/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }).then((r) => r.json())
  const text = '第一章 引言\n本文讨论社区居家养老服务的供给与需求匹配。\n'
  const init = await api('check_init', { title: '确认后支付方式变化的论文', text })
  const context = await env.browser.newContext(DESKTOP)
  await context.addInitScript(signIn, env.token)
  const page = await context.newPage()
  await page.goto(`${env.server.base}/paper/submit/${init.result.id}`)
  await page.getByTestId('pays-with').getByText('套餐抵扣 1 次').waitFor()
  // Meanwhile two other checks, submitted elsewhere, take the last uses.
  for (const n of [1, 2]) {
    const other = await api('check_init', { title: `另一篇${n}`, text })
    const done = await api('check_submit', { id: other.result.id }, { 'X-Confirmed-Payment': 'package' })
    assert.equal(done.code, 200, JSON.stringify(done))
  }
  const before = (await fetch(`${env.server.base}/api/base/account_info_api/account`, { headers: { authorization: `Bearer ${env.token}` } }).then((r) => r.json())).result.balanceFen
  await page.getByRole('button', { name: '确认并提交检测' }).click()
  await page.getByText('支付方式已变化').first().waitFor()
  await page.getByTestId('pays-with').getByText('账户余额').waitFor()
  assert.ok(page.url().includes('/paper/submit/'), 'still on the dialog, nothing submitted')
  await page.screenshot({ path: 'artifacts/order-payment-changed.png', fullPage: true })
  const after = (await fetch(`${env.server.base}/api/base/account_info_api/account`, { headers: { authorization: `Bearer ${env.token}` } }).then((r) => r.json())).result.balanceFen
  assert.equal(after, before, 'nothing was charged')
  // Confirmed again with the new price, it goes through.
  await page.getByRole('button', { name: '确认并提交检测' }).click()
  await page.waitForURL('**/paper/report')
  await context.close()
})
