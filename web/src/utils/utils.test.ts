import { describe, expect, it } from 'vitest'
import { formatFen, numberFormatter, relativeTime } from './format'
import { capsLockOn, isExternal, validNewUsername, validUsername } from './validate'
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

  it('caps lock', () => {
    expect(capsLockOn({ getModifierState: () => true })).toBe(true)
    expect(capsLockOn({})).toBe(false)
  })
})
