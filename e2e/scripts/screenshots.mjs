// Takes screenshots of the main screens for a person to look at: node scripts/screenshots.mjs BASE_URL OUT_DIR
import { mkdirSync } from 'node:fs'
import { launch, DESKTOP, PHONE } from '../lib.mjs'

const base = process.argv[2] || 'http://127.0.0.1:8080'
const out = process.argv[3] || 'artifacts/screens'
mkdirSync(out, { recursive: true })
const browser = await launch()
const shot = async (page, name) => page.screenshot({ path: `${out}/${name}.png` })

const desktop = await browser.newPage(DESKTOP)
await desktop.goto(`${base}/papercheck/check`)
await desktop.waitForSelector('[data-testid=login-qr]')
await shot(desktop, 'desktop-login-dialog')
await desktop.getByText('残忍拒绝，继续浏览').click()
await desktop.waitForTimeout(400)
await shot(desktop, 'desktop-anonymous')

const phone = await browser.newPage(PHONE)
await phone.goto(`${base}/papercheck/check`)
await phone.waitForSelector('[data-testid=login-qr]')
await shot(phone, 'phone-login-dialog')
await browser.close()
