import { describe, expect, it } from 'vitest'
import { formatDateTime, formatFen, numberFormatter, relativeTime, setSiteTimeZone, siteTimeZoneLabel } from './format'
import { capsLockOn, isExternal, passwordProblem, validNewUsername, validUsername } from './validate'
import { pageTitle } from '../layout/Layout'

describe('formatting', () => {
  it('relative time in minutes, hours, then days', () => {
    const now = 1_000_000_000_000
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 分钟前')
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 小时前')
    expect(relativeTime(now - 2 * 86_400_000, now)).toBe('2 天前')
  })

  it('number suffixes k, M, G, T, P, E', () => {
    expect(numberFormatter(999)).toBe('999')
    expect(numberFormatter(1500)).toBe('1.5k')
    expect(numberFormatter(2_000_000)).toBe('2M')
    expect(numberFormatter(3e18)).toBe('3E')
  })

  it('fen as yuan without floating point', () => {
    expect(formatFen(0)).toBe('¥0.00')
    expect(formatFen(1234)).toBe('¥12.34')
    expect(formatFen(-5)).toBe('-¥0.05')
  })

  it('page title is the site title, "- " and the route title', () => {
    expect(pageTitle('文鉴', '论文查重')).toBe('文鉴 - 论文查重')
    expect(pageTitle('文鉴')).toBe('文鉴')
  })
})

describe('validation', () => {
  it('external links', () => {
    expect(isExternal('https://x.cn')).toBe(true)
    expect(isExternal('mailto:a@b.c')).toBe(true)
    expect(isExternal('tel:123')).toBe(true)
    expect(isExternal('/order/account')).toBe(false)
  })

  it("the template's username helper accepts only admin and editor", () => {
    expect(validUsername(' admin ')).toBe(true)
    expect(validUsername('editor')).toBe(true)
    expect(validUsername('amy')).toBe(false)
  })

  it('registration usernames follow the server rule', () => {
    expect(validNewUsername('张三同学')).toBe(true)
    expect(validNewUsername('abc')).toBe(false)
    expect(validNewUsername('has space')).toBe(false)
    expect(validNewUsername('x'.repeat(33))).toBe(false)
    // Look-alikes: Cyrillic а, Greek ο, full-width letters.
    expect(validNewUsername('\u0430dmin_01')).toBe(false)
    expect(validNewUsername('stud\u03bfnt')).toBe(false)
    expect(validNewUsername('ｓｔｕｄｅｎｔ')).toBe(false)
    expect(validNewUsername('a.b-c_d@x')).toBe(true)
  })

  it('new passwords need 8+ characters with letters and digits, without the user name', () => {
    expect(passwordProblem('abc1234')).toBe('密码至少需要 8 个字符')
    expect(passwordProblem('abcdefgh')).toBe('密码需同时包含字母和数字')
    expect(passwordProblem('12345678')).toBe('密码需同时包含字母和数字')
    expect(passwordProblem('        ')).toBe('密码不能全是空格')
    expect(passwordProblem('x1'.repeat(65))).toBe('密码不能超过 128 个字符')
    expect(passwordProblem('Student2024', 'student')).toBe('密码不能包含用户名')
    expect(passwordProblem('Passw0rd')).toBe('该密码过于常见，请换一个')
    expect(passwordProblem('strong-pass-42', 'student')).toBeNull()
    // Characters, not UTF-16 units: eight CJK characters and a digit are fine.
    expect(passwordProblem('论文查重很重要a1')).toBeNull()
  })

  it('caps lock', () => {
    expect(capsLockOn({ getModifierState: () => true })).toBe(true)
    expect(capsLockOn({})).toBe(false)
  })
})

describe('formatDateTime', () => {
  it('shows Beijing time whatever the browser zone', () => {
    expect(formatDateTime(0)).toBe('1970-01-01 08:00')
    expect(formatDateTime(Date.UTC(2026, 10, 23, 16, 30))).toBe('2026-11-24 00:30')
  })

  it('follows the site zone once configured, and ignores a zone the browser does not know', () => {
    setSiteTimeZone('Europe/London', 'Europe/London')
    expect(formatDateTime(Date.UTC(2026, 5, 25, 6, 3))).toBe('2026-06-25 07:03')
    setSiteTimeZone('Mars/Olympus', '火星')
    expect(siteTimeZoneLabel()).toBe('Europe/London')
    setSiteTimeZone('Asia/Shanghai', '北京时间')
    expect(formatDateTime(0)).toBe('1970-01-01 08:00')
    expect(siteTimeZoneLabel()).toBe('北京时间')
  })
})
