import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DESKTOP, PHONE, decodeQr as decodeImage } from '../lib.mjs'
import { useServerAndBrowser } from '../server.mjs'

const env = useServerAndBrowser()

/** The login QR's text, checked to be 300 px wide (spec §9). */
async function decodeQr(page) {
  const { text, width } = await decodeImage(page, 'login-qr')
  assert.equal(width, 300)
  return text
}

test('QR login: phone registers and confirms, desktop signs in within 4 s with one free check', async () => {
  const desktop = await (await env.browser.newContext(DESKTOP)).newPage()
  await desktop.goto(`${env.server.base}/papercheck/check`)
  const url = await decodeQr(desktop)
  assert.match(url, new RegExp(`^${env.server.base}/m/qr/[0-9a-f]{32}$`))

  const phone = await (await env.browser.newContext(PHONE)).newPage()
  await phone.goto(url)
  await phone.getByText('您正在登录文鉴网页版').waitFor()
  await phone.getByText('立即注册').click()
  await phone.getByPlaceholder('用户名（4–32 个字符）').fill('扫码同学01')
  await phone.getByPlaceholder('密码（至少 8 位，含字母和数字）').fill('qr-password-1')
  await phone.getByPlaceholder('确认密码').fill('qr-password-1')
  await phone.getByRole('button', { name: '注册' }).click()
  await phone.getByText('当前账号：').waitFor()
  await phone.screenshot({ path: 'artifacts/phone-qr-confirm.png' }).catch(() => {})
  const confirmedAt = Date.now()
  await phone.getByRole('button', { name: '确认登录' }).click()
  await phone.getByText('已确认登录').waitFor()

  await desktop.getByTestId('user-area').waitFor({ timeout: 4000 })
  await desktop.getByTestId('login-qr').waitFor({ state: 'detached', timeout: 4000 })
  assert.ok(Date.now() - confirmedAt <= 4000, 'signed in and dialog closed within 4 s')
  assert.match(await desktop.getByTestId('user-area').innerText(), /ID：\d+/)

  await desktop.goto(`${env.server.base}/order/account`)
  const free = desktop.locator('.ant-statistic', { hasText: '免费查重次数' })
  await free.getByText('1', { exact: true }).waitFor()
  await desktop.getByText('首次扫码登录赠送免费查重 1 次').waitFor()

  // The same QR cannot be used twice.
  await phone.goto(url)
  await phone.getByText('该二维码已使用').waitFor()
})

test('QR login: confirming in the same browser that asked is refused', async () => {
  const context = await env.browser.newContext(DESKTOP)
  const desktop = await context.newPage()
  await desktop.goto(`${env.server.base}/papercheck/check`)
  const url = await decodeQr(desktop)

  // The same browser (same address, same User-Agent) opens the link and tries to confirm.
  const same = await context.newPage()
  await same.goto(url)
  await same.getByText('您正在登录文鉴网页版').waitFor()
  await same.getByText('立即注册').click()
  await same.getByPlaceholder('用户名（4–32 个字符）').fill('同机扫码02')
  await same.getByPlaceholder('密码（至少 8 位，含字母和数字）').fill('qr-password-2')
  await same.getByPlaceholder('确认密码').fill('qr-password-2')
  await same.getByRole('button', { name: '注册' }).click()
  await same.getByText('当前账号：').waitFor()
  await same.getByRole('button', { name: '确认登录' }).click()
  await same.getByText('请使用另一台设备（手机）扫码确认').first().waitFor()
  assert.equal(await same.getByText('已确认登录').count(), 0)
})
