import { describe, expect, it } from 'vitest'
import { activeHeaderKey, allPages, findPage, headerMenu, matchPattern } from './routes'
import { filterGroups } from './permission'
import { menuGroups } from './routes'
import { isWhitelisted } from './whitelist'
import { buildSearch } from '../components/pageSearch'

describe('route table', () => {
  it('holds every product route of spec §2', () => {
    const paths = allPages.map((p) => p.path)
    for (const p of [
      '/papercheck/check', '/aippt/ppt', '/aippt/ppttype/:id', '/aippt/list', '/aipaper/gc', '/aipaper/list',
      '/aipaper/outline/:id', '/aipaper/content/:id', '/paper/report', '/paper/submit/:id', '/papergc/gc',
      '/paperwirte/report', '/paperwirte/wirte/:id', '/paperwirte/biye', '/papermachinesubmit/papermachine',
      '/proaigcsubmit/promachine', '/proaigcsubmit/list', '/proaigcsubmit/content/:id', '/aigccheck/check',
      '/aigccheck/list', '/aigccheck/content/:id', '/papermachine/list', '/papermachine/cnki',
      '/papermachine/content/:id', '/cnki/cnki', '/nlp/machine', '/machine/list', '/aigcdown/machine',
      '/aigc/list', '/order/taocan', '/order/recharge', '/order/account',
    ]) {
      expect(paths).toContain(p)
    }
    expect(new Set(paths).size).toBe(paths.length)
  })

  it('hides detail pages and the hidden routes of the spec', () => {
    for (const p of allPages.filter((p) => p.path.includes(':'))) expect(p.meta.hidden).toBe(true)
    expect(findPage('/paper/report').page?.meta.hidden).toBe(true)
    expect(findPage('/paperwirte/biye').page?.meta.hidden).toBe(true)
  })

  it('matches parameterised paths', () => {
    expect(matchPattern('/aipaper/outline/:id', '/aipaper/outline/42')).toBe(true)
    expect(matchPattern('/aipaper/outline/:id', '/aipaper/outline')).toBe(false)
  })

  it('highlights the header entry of the current area', () => {
    expect(headerMenu.map((h) => h.title)).toEqual([
      '首页', '论文查重', '论文降重', '降AIGC', 'AIGC检测', '段落改写', '答辩PPT', '论文生成', '优惠套餐',
    ])
    expect(activeHeaderKey('/paper/report')).toBe('check')
    expect(activeHeaderKey('/aigccheck/content/3')).toBe('aigccheck')
    expect(activeHeaderKey('/order/account')).toBe('order')
    expect(activeHeaderKey('/login')).toBeUndefined()
  })

  it('gives admin every route and filters others by role', () => {
    const groups = [
      { key: 'a', title: 'A', icon: null, pages: [{ path: '/a', meta: {}, element: null }, { path: '/b', meta: { roles: ['editor'] }, element: null }] },
      { key: 'c', title: 'C', icon: null, roles: ['admin'], pages: [] },
    ]
    expect(filterGroups(groups, ['admin'])).toHaveLength(2)
    const visitor = filterGroups(groups, ['visitor'])
    expect(visitor.map((g) => g.key)).toEqual(['a'])
    expect(visitor[0].pages.map((p) => p.path)).toEqual(['/a'])
    // The console is for operators only, whatever the spec's route roles say.
    expect(filterGroups(menuGroups, ['admin'], true)).toEqual(menuGroups)
    const student = filterGroups(menuGroups, ['admin'])
    expect(student.map((g) => g.key)).toEqual(menuGroups.filter((g) => g.key !== 'admin').map((g) => g.key))
  })

  it('whitelists the spec paths and the phone QR page', () => {
    expect(isWhitelisted('/papercheck/check')).toBe(true)
    expect(isWhitelisted('/machine/list')).toBe(true)
    expect(isWhitelisted('/m/qr/abc')).toBe(true)
    expect(isWhitelisted('/aipaper/list')).toBe(false)
    expect(isWhitelisted('/order/account')).toBe(false)
  })

  it('searches titles and paths fuzzily', () => {
    const fuse = buildSearch(allPages.filter((p) => !p.meta.hidden).map((p) => ({ path: p.path, title: p.meta.title ?? '' })))
    expect(fuse.search('降重记录')[0].item.path).toBe('/papermachine/list')
    expect(fuse.search('aippt/list')[0].item.path).toBe('/aippt/list')
    expect(fuse.search('zzzzqqq')).toHaveLength(0)
  })
})
