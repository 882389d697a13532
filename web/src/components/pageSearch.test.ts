import { describe, expect, it } from 'vitest'
import { menuGroups } from '../router/routes'
import { searchEntries, searchPages } from './pageSearch'

const entries = searchEntries(menuGroups)
const first = (q: string) => searchPages(entries, q)[0]?.path
const all = (q: string) => searchPages(entries, q).map((e) => e.path)

describe('header search', () => {
  it('is case-insensitive over titles', () => {
    expect(first('aigc')).toBe('/aigccheck/check')
    expect(first('AIGC')).toBe('/aigccheck/check')
    expect(all('aigc')).toContain('/proaigcsubmit/promachine')
    expect(all('ppt')).toEqual(expect.arrayContaining(['/aippt/ppt', '/aippt/list']))
    expect(all('PPT')).toEqual(all('ppt'))
  })

  it('matches route paths', () => {
    expect(all('/order')).toEqual(expect.arrayContaining(['/order/taocan', '/order/recharge', '/order/account']))
    expect(first('/ORDER/ACCOUNT')).toBe('/order/account')
    expect(first('aippt/list')).toBe('/aippt/list')
  })

  it('finds every menu title, hidden list pages included', () => {
    expect(first('查重记录')).toBe('/paper/report')
    expect(first('降重记录')).toBe('/papermachine/list')
    expect(first('首页')).toBe('/dashboard')
    for (const group of menuGroups) {
      for (const page of group.pages.filter((p) => !p.path.includes(':'))) {
        expect(all(page.meta.title ?? ''), page.meta.title).toContain(page.path)
      }
    }
  })

  it('ranks the page whose title is the query first, and finds nothing for nonsense', () => {
    expect(first('账户中心')).toBe('/order/account')
    expect(first('  论文降重 ')).toBe('/papermachinesubmit/papermachine')
    expect(searchPages(entries, 'zzzzqqq')).toEqual([])
    expect(searchPages(entries, '   ')).toEqual([])
  })
})
